"""Layouts that ran code into sentences or sentences into tables (issue 44, sixth round): text formatted for a
terminal (overstruck bold), code fences of CommonMark in a Markdown FAQ, <pre> blocks of HTML manuals (in a
list item too, and on an XHTML page), a definition list's terms, fully justified text and a cross-reference to
a numbered section. Each example is cut from a real file of the realdocs benchmark's seventh split."""

from __future__ import annotations

from pathlib import Path

from citesum.ingest import IngestOptions, ingest_file
from citesum.segment import segments


def _text_units(text: str) -> list[tuple[str, str]]:
    """(kind, words) of each unit of ``text``."""
    return [(unit.kind, " ".join(text[unit.start:unit.end].split())) for unit in segments(text)]


def _units(path: Path) -> list[tuple[str, str]]:
    documents, report = ingest_file(path, path.name, IngestOptions())
    assert report.status == "ingested", report.reason
    return _text_units(documents[0].text)


def _bold(words: str) -> str:
    return "".join(f"{c}\b{c}" if c.strip() else c for c in words)


def test_overstruck_text_reads_once_and_is_not_taken_for_binary(tmp_path: Path) -> None:
    # Postfix's DEBUG_README, formatted by nroff: headings in bold, a few in every screenful
    headings = "".join(f"{_bold('Purpose of this document')}\n\n{'-' * 70}\n\nThe methods vary from making "
                       "Postfix log a lot of detail, to running some\ndaemon processes under control of a call "
                       "tracer or debugger.\n\n" for _ in range(3))
    path = tmp_path / "DEBUG_README"
    path.write_bytes((_bold("Postfix Debugging Howto") + "\n\n" + headings + "_\bu_\bn_\bd_\be_\br a\n")
                     .encode())
    units = _units(path)
    assert ("heading", "Postfix Debugging Howto") in units  # was "PPoossttffiixx DDeebbuuggggiinngg HHoowwttoo"
    assert ("heading", "Purpose of this document") in units
    assert ("sentence", "The methods vary from making Postfix log a lot of detail, to running some daemon "
                        "processes under control of a call tracer or debugger.") in units
    assert not any("\b" in text for _, text in units)


def test_a_markdown_code_fence_right_below_a_line_is_code(tmp_path: Path) -> None:
    # cryptsetup's FAQ: fences at the start of a line inside a paragraph, and indented inside a list item
    path = tmp_path / "FAQ.md"
    path.write_text("# FAQ\n\n  To just quickly wipe file systems (old data may remain), use\n```\n"
                    "    wipefs -a <target device>\n```\n  This can take a while.\n\n"
                    "  * **6.2 How do I backup a LUKS header?**\n\n  Simply repack the changed directory. While "
                    "in tmp/, do\n  the following:\n  ```\n  find . | cpio --create --format='newc' | gzip > "
                    "../new_initrd\n  ```\n  Rename \"new_initrd\" and move it to /boot. That is it.\n",
                    encoding="utf-8")
    units = _units(path)
    # Python-Markdown read the fences as inline code and ran each command into the sentence after it
    assert ("code", "``` wipefs -a <target device> ```") in units
    assert ("sentence", "This can take a while.") in units
    assert ("code", "``` find . | cpio --create --format='newc' | gzip > ../new_initrd ```") in units
    assert ('sentence', 'Rename "new_initrd" and move it to /boot.') in units
    assert not any("wipefs" in text or "cpio" in text for kind, text in units if kind != "code")


BORG = """<html><body><main><h1>Frequently asked questions</h1>
<p>If you'ld decide to ignore this and accept unsafe operation for this repository, you could delete the
manifest-timestamp and the local cache:</p>
<pre>borg config repo id   # shows the REPO_ID
rm ~/.config/borg/security/REPO_ID/manifest-timestamp
borg delete --cache-only REPO</pre>
<p>This is an unsafe and unsupported way to use borg, you have been warned.</p>
<p>Borg keeps a cache of the chunks stored in the repository, and rebuilds it when the repository was
modified by another client since the cache was last updated.</p>
</main></body></html>"""


def test_a_pre_block_of_an_html_manual_is_code_not_the_start_of_the_next_sentence(tmp_path: Path) -> None:
    path = tmp_path / "faq.html"
    path.write_text(BORG, encoding="utf-8")
    units = _units(path)
    assert ("sentence", "This is an unsafe and unsupported way to use borg, you have been warned.") in units
    assert [kind for kind, text in units if "borg delete --cache-only REPO" in text] == ["code"]


MUTT = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter 9. Performance Tuning</title></head><body>
<div class="chapter"><h1>Performance Tuning</h1><div class="sect1"><h2>Reading and Writing Mailboxes</h2>
<p>Mutt's performance when reading mailboxes can be improved in two ways:</p><ol>
<li><p>For remote folders (IMAP and POP) as well as folders using one-file-per message storage (Maildir
and MH), Mutt's performance can be greatly improved using header caching.</p></li>
<li><p>Mutt provides the $read_inc and $write_inc variables to specify at which rate to update progress
counters. It can be tuned on a folder-basis using folder-hooks:</p><pre class="screen">
<span class="comment"># use very high $read_inc to speed up reading hcache'd maildirs</span>
folder-hook . 'set read_inc=1000'
<span class="comment"># use lower value for reading slower remote IMAP folders</span>
folder-hook ^imap 'set read_inc=100'</pre></li></ol><p>
These settings work on a per-message basis. However, as messages may greatly differ in size, even
per-folder settings of the increment variables may not be desirable.</p></div></div></body></html>"""


def test_a_pre_block_inside_a_list_item_of_an_xhtml_page_is_code(tmp_path: Path) -> None:
    # mutt's DocBook manual: the page declares its encoding (lxml then refused it, so nothing was prepared),
    # and the page's main text runs a list item's lines together, the <pre>'s too
    path = tmp_path / "tuning.html"
    path.write_text(MUTT, encoding="utf-8")
    units = _units(path)
    assert [kind for kind, text in units if "read_inc=1000" in text] == ["code"]
    # the page's main text puts the paragraph after the list right below the item's last line, with no blank
    # line: it is the paragraph after the list, not the list's last item (it was an item until lists_ended())
    assert ("sentence", "These settings work on a per-message basis.") in units


def test_a_pre_block_opened_with_a_line_break_ends_where_it_ends(tmp_path: Path) -> None:
    # the floppy driver FAQ's "<pre><code><br>": the page's main text lost the rest of the block and its closing
    # fence, so every paragraph after it, to the next block of code, was read as code and never stated
    path = tmp_path / "FAQ.html"
    path.write_text("<html><head><title>Floppy FAQ</title></head><body>\n"
                    "<h4> How should I describe the Xdf formats in /etc/mtools?</h4>\n"
                    " The following /etc/mtools lines allow to access all disks, including\nXdf:\n"
                    "<pre><code><br>\n drive a: file=\"/dev/fd0\" use_xdf=1\n drive b: file=\"/dev/fd1\" use_xdf=1\n"
                    "</code></pre>\n\n However, the use_xdf flag slightly slows down initial access to non\n"
                    "Xdf disks.<p>\n"
                    "<h4> I have an IBM Thinkpad :-(</h4>\n Don't panic. Add the line 'floppy=thinkpad' to your lilo "
                    "boot parameters.<p>\n</body></html>\n", encoding="utf-8")
    units = _units(path)
    assert [text for kind, text in units if kind == "code"] == [
        '``` drive a: file="/dev/fd0" use_xdf=1 drive b: file="/dev/fd1" use_xdf=1 ```']
    assert ("sentence", "However, the use_xdf flag slightly slows down initial access to non Xdf disks.") in units
    assert ("sentence", "Add the line 'floppy=thinkpad' to your lilo boot parameters.") in units


def test_a_definition_lists_term_after_a_lone_marker_is_not_run_into_the_heading_above() -> None:
    # git's FAQ (asciidoc's <dl>) as its main text comes out: a marker alone on its line, the term below it
    text = ("Configuration\n- \nWhat should I put in user.name?\n- You should put your personal name, generally "
            "a form using a given name and family name.\n- \nWhat does http.postBuffer really do?\n- This option "
            "changes the size of the buffer that Git uses when pushing data to a remote over HTTP or HTTPS.\n")
    units = _text_units(text)
    assert ("heading", "Configuration") in units  # was the sentence "Configuration - What should I put in ...?"
    assert ("sentence", "What should I put in user.name?") in units
    assert ("sentence", "What does http.postBuffer really do?") in units  # was the item "- What does ..."


SCREEN = """A:   This is a known  bug.  Unfortunatly  there   is   no   easy   fix
     because  this  is specified in the POSIX  standard.  When  a  new
     window is created Screen opens  up  a  new  session  because  the
     window    has    to  get   the  pty  as a controlling terminal (a
     session  can  only  have  one  controlling  terminal).  With  the
     setsid()   call the   process also    creates   a   new   process
     group.
"""

TABLE = """Option      Default     Meaning
-a          off         show all files, hidden ones too
-l          on          list one file per line
"""


def test_fully_justified_prose_is_sentences_and_aligned_columns_stay_a_table() -> None:
    # screen's FAQ pads its words out to the right margin: its runs of spaces were read as table columns
    units = _text_units(SCREEN)
    assert ("sentence", "Unfortunatly there is no easy fix because this is specified in the POSIX "
                        "standard.") in units
    assert ("sentence", "With the setsid() call the process also creates a new process group.") in units
    assert "table" not in [kind for kind, _ in units]
    assert {unit.kind for unit in segments(TABLE)} == {"table"}


def test_a_cross_reference_to_a_numbered_section_does_not_end_the_sentence() -> None:
    text = ("Furthermore, NAMED <id> stores the text of the heading for use later on when linking to it (see "
            "“3.3. Creating internal links”). If headings are being numbered, the heading number is prepended.")
    units = [(unit.kind, text[unit.start:unit.end]) for unit in segments(text)]
    assert units == [("sentence", text[:text.index(" If")]), ("sentence", text[text.index("If"):])]


def test_a_one_line_command_that_a_sentence_goes_on_after_stays_in_the_sentence(tmp_path: Path) -> None:
    # Python's venv tutorial and borg's FAQ show a command on a line of its own in the middle of a sentence
    page = tmp_path / "venv.html"
    page.write_text("<html><body><main><h1>Virtual Environments and Packages</h1><p>Activating the virtual "
                    "environment will change your shell's prompt to show what virtual environment you're using."
                    "</p><p>To deactivate a virtual environment, type:</p><div class='highlight'><pre>deactivate\n"
                    "</pre></div><p>into the terminal.</p><p>Managing packages is done with a program called pip, "
                    "which installs the latest version of a package by default.</p></main></body></html>",
                    encoding="utf-8")
    assert ("sentence", "To deactivate a virtual environment, type: deactivate into the terminal.") in _units(page)
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nTo deactivate a virtual environment, type:\n\n```\ndeactivate\n```\n\ninto the "
                     "terminal.\n\nTo create one, run:\n\n```\npython3 -m venv tutorial-env\n```\n\nThis creates "
                     "the tutorial-env directory.\n", encoding="utf-8")
    units = _units(notes)
    assert ("sentence", "To deactivate a virtual environment, type: deactivate into the terminal.") in units
    assert ("code", "``` python3 -m venv tutorial-env ```") in units  # a capital after it: the command is apart
    assert ("sentence", "This creates the tutorial-env directory.") in units


def test_what_a_review_found_read_as_before(tmp_path: Path) -> None:
    # a one-line command followed by a heading (lower case) or by another block is code, not a sentence's end
    markdown = tmp_path / "start.md"
    markdown.write_text("# Start\n\nStart the server with this command:\n\n```\nfoo serve\n```\n\n## options\n\n"
                        "Install the package with pip first:\n\n```\npip install foo\n```\n\n```\nfoo --init\n```\n\n"
                        "~~~\n```python\nrm -rf /tmp/cache\n```\n~~~\n", encoding="utf-8")
    units = _units(markdown)
    assert ("sentence", "Start the server with this command:") in units and ("code", "``` foo serve ```") in units
    assert ("sentence", "Install the package with pip first:") in units
    assert ("code", "``` pip install foo ```") in units and ("code", "``` foo --init ```") in units
    # an example of a fenced block keeps its own fences: they pair as they are written
    assert ("code", "```python rm -rf /tmp/cache ```") in units
    # a Markdown paragraph indented four spaces (CommonMark's code block) that reads as prose stays prose
    indented = tmp_path / "indented.md"
    indented.write_text("# Notes\n\n" + "    this paragraph was pasted with an indent of four spaces and it goes on\n" * 4
                        + "    and ends here. Then another sentence starts and it goes on\n"
                        + "    for a while longer without any marks of code in it at all\n" * 3 + "    and ends.\n",
                        encoding="utf-8")
    assert [kind for kind, _ in _units(indented)].count("sentence") == 2
    # an HTML page's script after its last <pre> is no sentence going on
    page = tmp_path / "install.html"
    page.write_text("<html><body><main><h1>Install</h1><p>Install it with this command:</p><pre>pip install foo"
                    "</pre></main><script>window.x = 1;</script></body></html>", encoding="utf-8")
    assert ("code", "``` pip install foo ```") in _units(page)


def test_a_table_of_figures_a_quote_closing_at_a_number_and_prose_writing_a_fence_read_as_before() -> None:
    top = ("PID   USER     PR  NI  VIRT   RES   SHR S  %CPU  %MEM  TIME+ COMMAND\n"
           "1234  root     20   0  1024   512   256 S   1.0   0.1  0:01.00 sshd-a\n"
           "5678  www      20   0  2048  1024   512 R   2.5   0.2  0:02.00 nginx-\n")
    assert {unit.kind for unit in segments(top)} == {"table"}  # equal rows of figures are no justified prose
    quoted = 'He counted to "3." Then he stopped counting at all.'
    assert [quoted[u.start:u.end] for u in segments(quoted)] == ['He counted to "3."', "Then he stopped counting at all."]
    fence = "In Markdown, type ``` on a line to open a code block and ``` again to close it."
    assert [(u.kind, fence[u.start:u.end]) for u in segments(fence)] == [("sentence", fence)]
    finding = "This guide shows that memory use grows linearly with the number of open files."
    assert [u.kind for u in segments(finding)] == ["sentence"]


FFMPEG = """<html><head><title>FFmpeg FAQ</title></head><body><div class="contents"><h1>FFmpeg FAQ</h1>
<h2 class="chapter">1 General Questions<span class="pull-right"><a class="anchor hidden-xs" href="#General"
aria-hidden="true">#</a> <a class="anchor hidden-xs"href="#toc-General" aria-hidden="true">TOC</a></span></h2>
<h3 class="section">1.1 Why doesn&rsquo;t FFmpeg support feature [xyz]?<span class="pull-right"><a class="anchor
hidden-xs" href="#Why" aria-hidden="true">#</a> <a class="anchor hidden-xs"href="#toc-Why" aria-hidden="true">TOC</a>
</span></h3>
<p>Because no one has taken on that task yet. FFmpeg development is driven by the tasks that are important to
the individual developers. If there is a feature that is important to you, the best way to get it implemented is
to undertake the task yourself or sponsor a developer.</p></div></body></html>"""


def test_what_a_page_hides_from_screen_readers_is_no_part_of_its_headings(tmp_path: Path) -> None:
    # ffmpeg's FAQ (Texinfo 7): each heading ended in "# TOC", its permalink marks
    page = tmp_path / "faq.html"
    page.write_text(FFMPEG, encoding="utf-8")
    documents, _ = ingest_file(page, page.name, IngestOptions())
    lines = [line.strip() for line in documents[0].text.splitlines()]
    assert "1 General Questions" in lines and "1.1 Why doesn’t FFmpeg support feature [xyz]?" in lines
    assert "TOC" not in documents[0].text  # was "1 General Questions# TOC"
    from citesum.ingest.formats import html_to_text  # the whole page's text, when it has no main content

    lines = [line.strip() for line in html_to_text(FFMPEG)[1].splitlines()]
    assert "1 General Questions" in lines and not any("TOC" in line for line in lines)


def test_python_code_fenced_within_a_line_is_code() -> None:
    # Werkzeug's Sphinx pages (a new user's trial): a class's description puts its example <pre> in the
    # definition's list item, one line; Python has few of code's marks, and it was read as a sentence
    line = ("- Enables debugging support for a given application: ``` from werkzeug.debug import DebuggedApplication "
            "from myapp import app app = DebuggedApplication(app, evalex=True) ``` The evalex argument allows "
            "evaluating expressions in any frame of a traceback.")
    units = [(u.kind, line[u.start:u.end]) for u in segments(line)]
    assert units[1] == ("code", "``` from werkzeug.debug import DebuggedApplication from myapp import app app = "
                                "DebuggedApplication(app, evalex=True) ```")
    assert units[2] == ("item", "The evalex argument allows evaluating expressions in any frame of a traceback.")
