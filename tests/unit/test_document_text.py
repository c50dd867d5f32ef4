"""Word and HTML documents read as a person reads them (issue 16): a Word body in its order with tables in
place, merged cells once, footnotes kept and running headers and footers left out; a web page's main content
without its navigation, paragraphs whole."""

from __future__ import annotations

from pathlib import Path

from citesum.ingest import IngestOptions, ingest_file
from citesum.types import Document
from fixtures import make_docx_with_notes
from timing import assert_linear


def _read(path: Path) -> Document:
    documents, report = ingest_file(path, path.name, IngestOptions())
    assert report.status == "ingested", report.reason
    return documents[0]


def _written(tmp_path: Path, name: str, text: str) -> Document:
    """The document read from a file ``name`` holding ``text`` (UTF-8)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return _read(path)


def _units(text: str) -> list[tuple[str, str]]:
    """The segmenter's units of ``text``: each one's kind and its words, whitespace collapsed."""
    from citesum.segment import segments

    return [(u.kind, " ".join(text[u.start:u.end].split())) for u in segments(text)]


def _unit_kinds(text: str) -> dict[str, str]:
    """Each unit's words (whitespace collapsed) to its kind."""
    return {words: kind for kind, words in _units(text)}


def test_a_word_body_is_read_in_order_with_its_footnotes_and_without_its_header(tmp_path: Path) -> None:
    path = tmp_path / "report.docx"
    make_docx_with_notes(path, ["Ferry traffic grew in 2023.", [["Route", "Boats"], ["North", "12"]],
                                "The table above counts the boats of each route."],
                         footnotes=["Counted by the harbour office in March."],
                         header="Harbour Report - Confidential", footer="Page")
    text = _read(path).text
    # before: the table came after every paragraph, the footnote was lost and nothing separated blocks
    assert text.index("Ferry traffic grew") < text.index("Route | Boats") < text.index("North | 12") < \
        text.index("The table above")
    assert text.endswith("Notes\n\n[1] Counted by the harbour office in March.")
    assert "Confidential" not in text


def test_a_merged_table_cell_is_read_once(tmp_path: Path) -> None:
    import docx

    path = tmp_path / "merged.docx"
    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 2)).text = "Sailings in 2023"
    for column, value in enumerate(["North", "South", "East"]):
        table.cell(1, column).text = value
    document.save(path)
    text = _read(path).text
    assert "Sailings in 2023 | Sailings in 2023" not in text  # before: once per column it spans
    assert text.splitlines()[0] == "Sailings in 2023" and "North | South | East" in text


PAGE = """<html><head><title>The reservoir - Town Water</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About the water board</a> | <a href="/contact">Contact us</a></nav>
<header><p>Town Water Board: serving the valley since 1890</p></header>
<main><h1>The reservoir</h1>
<p>The reservoir was
built in 1931 and holds
two million cubic metres of water.</p>
<p>It was enlarged in 1975, after a dry summer had left the town without water for three weeks.</p>
<table><tr><td>Year</td><td>Capacity</td></tr><tr><td>1931</td><td>2 Mm3</td></tr></table>
</main>
<aside>Related: <a href="/pipes">Pipes</a>, <a href="/meters">Meters</a></aside>
<footer>Copyright 2024 Town Water Board. All rights reserved. Privacy policy.</footer></body></html>"""


def test_a_web_page_keeps_its_main_content_without_navigation(tmp_path: Path) -> None:
    document = _written(tmp_path, "reservoir.html", PAGE)
    assert document.title == "The reservoir - Town Water"
    # before: the source's line breaks cut the sentence into three
    assert "The reservoir was built in 1931 and holds two million cubic metres of water." in document.text
    assert "It was enlarged in 1975" in document.text and "1931 | 2 Mm3" in document.text
    for boilerplate in ("About the water board", "Contact us", "serving the valley", "All rights reserved",
                        "Related"):
        assert boilerplate not in document.text  # before: all kept


def test_a_pages_title_is_its_own_not_its_icons(tmp_path: Path) -> None:
    """Sphinx's Furo theme puts its icons in the page as SVG symbols, each with a <title>; they had been
    appended to the page's title ("Performance - structlog 22.3.0 documentationContentsMenuExpandLight mode..."),
    which every passage's section then carried."""
    icons = "".join(f'<symbol id="svg-{n}" viewBox="0 0 24 24"><title>{name}</title><path d="M0 0h24"/></symbol>'
                    for n, name in enumerate(("Contents", "Menu", "Expand", "Light mode", "Dark mode")))
    page = (f'<!doctype html><html><head><meta charset="utf-8"><title>Performance - structlog 22.3.0 documentation'
            f'</title></head><body><svg xmlns="http://www.w3.org/2000/svg" style="display: none;">{icons}</svg>'
            '<article><h1>Performance</h1><p>Here are a few hints how to get the best performance out of structlog '
            'in production.</p><p>Set the cache_logger_on_first_use option to True so that loggers are assembled '
            'only once.</p><svg><title>Auto light/dark mode</title></svg></article></body></html>')
    document = _written(tmp_path, "performance.html", page)
    assert document.title == "Performance - structlog 22.3.0 documentation"
    assert "Light mode" not in document.text and "Set the cache_logger_on_first_use option" in document.text
    from citesum.ingest.formats import html_to_text

    # a page without a <title> of its own is not titled by an icon
    assert html_to_text('<html><body><svg><title>Menu</title></svg><p>Text.</p></body></html>')[0] == ""
    # a title wrapped in the page's source is one line (restic's Sphinx pages: "FAQ — restic 0.14.0\n
    # documentation", printed on two lines by the CLI and carried so by every section)
    assert html_to_text("<html><head><title>FAQ &mdash; restic 0.14.0\n    documentation</title></head>"
                        "<body><p>Text.</p></body></html>")[0] == "FAQ — restic 0.14.0 documentation"


def test_a_page_with_too_little_for_a_main_content_keeps_all_its_text(tmp_path: Path) -> None:
    assert _written(tmp_path, "short.html", "<html><body><p>Closed on Monday.</p></body></html>").text == (
        "Closed on Monday.")


# the shape of a Texinfo manual's page (makeinfo --html) and of a DocBook FAQ's chapter, as Debian ships them
TEXINFO_PAGE = """<!DOCTYPE html><html><head><title>Thread Safety (libffi)</title></head><body lang="en">
<div class="section" id="Thread-Safety">
<div class="header"><p>
Previous: <a href="Closure-Example.html" rel="prev">Closure Example</a>, Up: <a href="Using-libffi.html"
rel="up">Using libffi</a> &nbsp; [<a href="Index.html" title="Index" rel="index">Index</a>]</p>
</div>
<hr>
<span id="Thread-Safety-1"></span><h3 class="section">2.7 Thread Safety</h3>

<p><code>libffi</code> is not completely thread-safe.  However, many parts are,
and if you follow some simple rules, you can use it safely in a
multi-threaded program.
</p>
<ul>
<li> <code>ffi_prep_cif</code> may modify the <code>ffi_type</code> objects passed to
it.  It is best to ensure that only a single thread prepares a given
<code>ffi_cif</code> at a time.
</li></ul>
<span id="Closures-1"></span><h4 class="subsection">2.7.1 Closures</h4>
<p>Closures may be used from several threads at once, as long as each
thread owns the trampoline it calls through, which the library allocates.
</p>
</div></body></html>"""

def test_a_manual_pages_headings_are_kept_above_their_text(tmp_path: Path) -> None:
    path = tmp_path / "Thread-Safety.html"
    path.write_text(TEXINFO_PAGE.replace("</div></body>", '</div><div class="sidebar" role="navigation"><h3>Next '
                                         'topic</h3><p><a href="Index.html">The index of the manual</a></p></div>'
                                         "</body>"), encoding="utf-8")
    text = _read(path).text
    lines = [" ".join(line.split()) for line in text.splitlines()]
    # before: the extractor of main content dropped both, and the text below them lost what it is about
    for heading, first_words in [("2.7 Thread Safety", "libffi is not completely thread-safe."),
                                 ("2.7.1 Closures", "Closures may be used from several threads")]:
        assert heading in lines, text
        after = lines[lines.index(heading) + 1:]
        assert after[0] == "" and after[1].startswith(first_words), text  # its own line, a blank, its text
    assert "Next topic" not in text  # a sidebar's heading stays out with its sidebar
    # the segmenter then reads it as the heading of the sentences below

    kinds = _unit_kinds(text)
    assert kinds["2.7 Thread Safety"] == "heading" and kinds["2.7.1 Closures"] == "heading"


OPTIONS_PAGE = """<!DOCTYPE html><html><head><title>Command line invocation (Tiny C Compiler)</title></head>
<body lang="en"><div class="chapter" id="Invoke">
<div class="header"><p>Next: <a href="Clang.html" rel="next">C language support</a>, Up: <a href="index.html"
rel="up">Top</a> &nbsp; [<a href="Index.html" rel="index">Index</a>]</p></div><hr>
<h2 class="chapter">2 Command line invocation</h2>
<p>The compiler reads its options from the command line, and each is written below with what it does to the
program it builds.</p>
<p>Debugger options:</p>
<dl compact="compact">
<dt><samp>-g</samp></dt>
<dd><p>Generate run time debug information so that you get clear run time error messages.</p></dd>
<dt><samp>-b</samp></dt>
<dd><p>Generate additional support code to check memory allocations and array/pointer bounds. <samp>-g</samp> is
implied. Note that the generated code is slower and bigger in this case.</p></dd>
<dt><samp>-o <var>outfile</var></samp></dt>
<dt><samp>--output=<var>outfile</var></samp> &para;</dt>
<dd><p>Put object file, executable, or dll into output file <var>outfile</var>.</p></dd>
<dt><samp>-I <var>dir</var></samp></dt>
<dd><p><var>dir</var> is searched for include files before the standard directories.</p></dd>
<dt><code>--verbose</code><a class="headerlink" href="#verbose">#</a></dt>
<dd><p>Print each file's name as it is compiled.</p></dd>
<dt><samp>-W</samp></dt> or <dt><samp>--warn</samp></dt>
<dd><p>Warn of every construct that another compiler would refuse.</p></dd>
<dt><samp>-E</samp></dt>
<dd><pre class="example">tcc -E file.c</pre><p>Preprocess only, to standard output.</p></dd>
</dl>
<h2 class="chapter">3 Questions</h2>
<dl>
<dt>Why is the generated code slower with bound checks?</dt>
<dd><p>Every pointer operation calls a checking function of the run time library.</p></dd>
<dt><a href="#Invoke">2.1. Invoking the compiler</a></dt>
<dd><p>How the command line is read, option by option, before the first file is compiled.</p></dd>
</dl>
</div></body></html>"""


def test_a_definition_lists_term_opens_its_description(tmp_path: Path) -> None:
    """A manual's option table (Texinfo's, Sphinx's and DocBook's <dl>) is read as a person reads it: the option,
    then what it does. trafilatura made each <dt> and <dd> a list item of its own, so a bullet quoting "Generate
    additional support code to check memory allocations and array/pointer bounds." never said it was TCC's -b."""
    text = _written(tmp_path, "Invoke.html", OPTIONS_PAGE).text
    lines = [" ".join(line.split()) for line in text.splitlines()]
    assert "- -b: Generate additional support code to check memory allocations and array/pointer bounds. -g is " \
           "implied. Note that the generated code is slower and bigger in this case." in lines, text
    assert "- -g: Generate run time debug information so that you get clear run time error messages." in lines
    # a term's other spellings are named with it, its pilcrow left out
    assert "- -o outfile, --output=outfile: Put object file, executable, or dll into output file outfile." in lines
    assert "- -I dir: dir is searched for include files before the standard directories." in lines, text
    # a heading's permalink mark is no part of the term; text between two terms (not valid HTML) stays in the
    # text, where lxml keeps it
    assert any(line.startswith("- --verbose: Print each file's name as it is compiled.") for line in lines), text
    assert "- -W, --warn: Warn of every construct that another compiler would refuse." in lines, text
    assert "compiled. or" in " ".join(text.split()), text
    # a description that opens with code keeps its term above it, as does a question, or a line of contents
    assert "- -E" in lines and "- Why is the generated code slower with bound checks?" in lines, text
    assert not any(line.startswith(("- 2.1. Invoking the compiler:", "- -E:", "- Why is the generated code slower "
                                    "with bound checks?:")) for line in lines), text
    # the segmenter reads the option's description as its item's sentences, the option opening the first
    kinds = _unit_kinds(text)
    assert kinds["-b: Generate additional support code to check memory allocations and array/pointer bounds."] \
        == "item", kinds


def test_a_bullet_quoting_an_options_description_names_the_option(tmp_path: Path) -> None:
    from citesum.index.store import Index
    from citesum.pipeline import Pipeline

    path = tmp_path / "Invoke.html"
    path.write_text(OPTIONS_PAGE, encoding="utf-8")
    documents, _ = ingest_file(path, "tcc/Invoke.html", IngestOptions())
    index = Index.create(tmp_path / "ix")
    index.add(documents)
    summary = Pipeline(index).summarize("How do I get tcc to check array bounds and memory allocations?")
    assert [b.text for b in summary.bullets][:1] == [
        "-b: Generate additional support code to check memory allocations and array/pointer bounds."], summary


def test_headings_go_back_once_and_before_their_own_words() -> None:
    from citesum.ingest.formats import with_headings

    page = ("<html><body><h2>2.7 Thread Safety</h2><h3>2.7.1 Closures</h3><p><code>libffi</code>'s closures are "
            "<em>safe</em> to call from any thread.</p><p>Options are listed below. And more.</p><h2>Options</h2>"
            "<p>Options are listed below. For real.</p><ul><li><h4>Installation</h4></li><li>Installation notes are "
            "on the web site.</li></ul><h2>Kept</h2><p>A heading the extractor kept is not doubled.</p>"
            "<aside><h3>Next topic</h3><p>Chapter 13 and the rest of it</p></aside></body></html>")
    main = ("libffi's closures are safe to call from any thread.\nOptions are listed below. And more.\n"
            "Options are listed below. For real.\n- Installation notes are on the web site.\nKept\n"
            "A heading the extractor kept is not doubled.")
    assert with_headings(main, page) == (
        # a heading followed at once by another goes with it; inline markup does not hide the words after it
        "2.7 Thread Safety\n\n2.7.1 Closures\n\nlibffi's closures are safe to call from any thread.\n"
        # the words that follow it, not the same words earlier
        "Options are listed below. And more.\n\nOptions\n\nOptions are listed below. For real.\n"
        # before the line when only a list marker opens it
        "\nInstallation\n\n- Installation notes are on the web site.\n"
        # a heading the extractor kept is set apart as one put back is
        "\nKept\n\nA heading the extractor kept is not doubled.")
    assert with_headings("Some text.", "<h1>unclosed <b") == "Some text."  # what cannot be placed stays out
    # a Sphinx heading the extractor kept with its permalink mark is kept once (it was put back a second time)
    sphinx = ('<h2>Basic Value Options<a class="headerlink" href="#basic">\u00b6</a></h2><p>The most basic option '
              "is a value option, which accepts one argument.</p>")
    kept = "Basic Value Options\u00b6\nThe most basic option is a value option, which accepts one argument."
    assert with_headings(kept, sphinx) == kept.replace("\n", "\n\n")
    # getmail's troubleshooting page: a heading in lower case, kept by the extractor on a line of its own, was read
    # as the first words of the sentence below it ("getmail seems to take longer than expected to initialize If
    # getmail takes more than a few seconds ...")
    getmail = ("<p>The replacement strings are only replaced for a multidrop retriever.</p><h3>getmail seems to take "
               "longer than expected to initialize</h3><p>If getmail takes more than a few seconds to initialize, "
               "run the following command to test.</p>")
    main = ("The replacement strings are only replaced for a multidrop retriever.\ngetmail seems to take longer than "
            "expected to initialize\nIf getmail takes more than a few seconds to initialize, run the following "
            "command to test.")
    kinds = _unit_kinds(with_headings(main, getmail))
    assert kinds["getmail seems to take longer than expected to initialize"] == "heading", kinds


def test_a_heading_is_not_taken_for_the_same_word_on_a_line_further_down() -> None:
    from citesum.ingest.formats import with_headings

    # Radicale's configuration reference: each section and option is a heading ("server", "hosts"), which the
    # extractor dropped; "server" is also a line of a diagram further down. Taken for the heading kept, that line
    # made every heading in between lost, and "Default: localhost:5232" no longer said which option it is
    page = ("<h3>Configuration</h3><p>All options are described.</p><h4>server</h4><p>The configuration options in "
            "this category are only relevant in standalone mode.</p><h5>hosts</h5><p>A comma separated list of "
            "addresses that the server will bind to.</p><p>Default: localhost:5232</p><h4>auth</h4><h5>type</h5>"
            "<p>The method to verify usernames and passwords.</p><h3>Architecture</h3><pre>client\n  |\nserver\n"
            "</pre><p>The client talks to the server.</p>")
    main = ("Configuration\nAll options are described.\nThe configuration options in this category are only relevant "
            "in standalone mode.\nA comma separated list of addresses that the server will bind to.\nDefault: "
            "localhost:5232\nThe method to verify usernames and passwords.\nArchitecture\n```\nclient\n  |\n"
            "auth\nserver\n```\nThe client talks to the server.")
    restored = with_headings(main, page)
    assert restored == (
        # a heading in lower case gets its level's mark: alone on its line, "hosts" reads as a line of text
        "Configuration\n\nAll options are described.\n\n#### server\n\nThe configuration options in this category "
        "are only relevant in standalone mode.\n\n##### hosts\n\nA comma separated list of addresses that the "
        "server will bind to.\nDefault: localhost:5232\n\n#### auth\n\n##### type\n\nThe method to verify usernames "
        "and passwords.\n\nArchitecture\n\n```\nclient\n  |\nauth\nserver\n```\nThe client talks to the server."
    ), restored
    kinds = _unit_kinds(restored)
    assert kinds["##### hosts"] == kinds["#### server"] == "heading", kinds
    # Gammu's FAQ: two answers open with the same words; the second's heading, kept right above its answer, is
    # where it was kept, not before the first answer
    page = ("<h3>Can I use Gammu to send MMS?</h3><p>MMS contains of two parts and Gammu can create the "
            "notification.</p><h3>Can I use Gammu to receive MMS?</h3><p>MMS contains of two parts and Gammu will "
            "receive the notification.</p>")
    main = ("Can I use Gammu to send MMS?\nMMS contains of two parts and Gammu can create the notification.\n"
            "Can I use Gammu to receive MMS?\nMMS contains of two parts and Gammu will receive the notification.")
    assert with_headings(main, page) == main.replace("\n", "\n\n")


def test_texinfos_navigation_between_nodes_is_left_out_of_the_text() -> None:
    from citesum.ingest.base import IngestOptions
    from citesum.ingest.formats import read_html

    # GNU SASL's manual on one page (Texinfo 6) and a node of a Texinfo 7 manual: a line of links to the next,
    # previous and parent nodes above every node stayed in the text, 55 of them on the one page
    def node(panel: str, up: str, title: str, text: str) -> str:
        return (f'<div class="{panel}"><p>Next: <a href="#n" accesskey="n" rel="next">Features</a>, Previous: <a '
                f'href="#p" accesskey="p" rel="prev">Overview</a>, Up: <a href="#u" accesskey="u" rel="up">{up}</a> '
                '&nbsp; [<a href="#SEC_Contents" rel="contents">Contents</a>][<a href="#Index" rel="index">Index'
                f'</a>]</p></div><h3>{title}</h3><p>{text}</p>')

    for panel in ("header", "nav-panel"):
        page = ("<html><head><title>GNU SASL</title></head><body>"
                + node(panel, "Introduction", "1.2 Implementation", "GNU SASL is written in pure ANSI C89 to be "
                       "portable to embedded and otherwise limited platforms, and the whole library fits in a small "
                       "footprint on an Intel x86 platform without any modifications to the code.")
                + node(panel, "Introduction", "1.3 Features", "GNU SASL might have a couple of advantages over other "
                       "libraries doing a similar job: it is free software, and it is thread-safe throughout.")
                + '<div class="header"><p>The header of a page that is no navigation stays.</p></div></body></html>')
        (document,), _ = read_html(page.encode(), "sasl", Path("gsasl.html"), IngestOptions())
        assert "Next:" not in document.text and "[Contents]" not in document.text, document.text
        assert "GNU SASL is written in pure ANSI C89" in document.text
        assert "it is free software, and it is thread-safe throughout." in document.text
        assert "The header of a page that is no navigation stays." in document.text
        # a page that opens with an XML declaration (XHTML) loses its navigation too
        (xhtml,), _ = read_html(('<?xml version="1.0" encoding="utf-8"?>\n' + page).encode(), "sasl",
                                Path("gsasl.xhtml"), IngestOptions())
        assert "Next:" not in xhtml.text and "GNU SASL is written in pure ANSI C89" in xhtml.text


def test_a_forms_tables_inside_table_cells_are_read_once(tmp_path: Path) -> None:
    import docx

    # a work procedure laid out as a form: its text sits in tables inside the cells of an outer table, one of
    # them in a cell merged across two rows
    document = docx.Document()
    outer = document.add_table(rows=2, cols=2)
    outer.cell(0, 0).text = "Task: Lay down tubulars"
    merged = outer.cell(0, 1).merge(outer.cell(1, 1))
    steps = merged.add_table(rows=2, cols=2)
    for r, (step, activity) in enumerate([("1", "Check the elevator and slip size before the lift."),
                                          ("2", "Latch the elevators to the stump and raise the string.")]):
        steps.cell(r, 0).text, steps.cell(r, 1).text = step, activity
    outer.cell(1, 0).add_table(rows=1, cols=1).cell(0, 0).text = "Wear a safety harness on the rig floor."
    path = tmp_path / "procedure.docx"
    document.save(path)
    text = _read(path).text
    # before: only "Task: Lay down tubulars"; every step and control was left out
    for row in ("1 | Check the elevator and slip size before the lift.",
                "2 | Latch the elevators to the stump and raise the string.", "Wear a safety harness on the rig floor."):
        assert text.count(row) == 1, text
    assert text.index("Task: Lay down tubulars") < text.index("1 | Check the elevator")


def test_tables_nested_past_the_limit_are_left_out_and_said(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    cell = document.add_table(rows=1, cols=1).cell(0, 0)
    for level in range(30):  # a hostile file: thirty tables, each inside the one cell of the last
        cell.text = f"level {level}"
        cell = cell.add_table(rows=1, cols=1).cell(0, 0)
    path = tmp_path / "deep.docx"
    document.save(path)
    documents, report = ingest_file(path, path.name, IngestOptions())
    assert report.status == "ingested" and "tables nested more than 8 deep in table cells" in report.reason
    assert "level 8" in documents[0].text and "level 9" not in documents[0].text


GETTEXT_FAQ = """<html><head><title>GNU gettext FAQ</title></head><body>
<h1>GNU gettext FAQ</h1>
<p>This is a list of Frequently Asked Questions about GNU gettext, written for people who use it to translate
the messages of their programs, and for the maintainers of packages that use it to do so.</p>
<h3>General</h3>
<p>Where is the mailing list? The bug-gettext list is archived on the web, and you may occasionally also see
bug-gnu-gettext, which is an alias of bug-gettext. Questions and bug reports are welcome there.</p>
<p>Where is the newest gettext source? The newest gettext release is available on ftp.gnu.org and its mirrors,
and prereleases are announced on the autotools-announce mailing list for those who want to test them.</p>
<p>If you want to live on the bleeding edge, you can also use the development sources, but note that building
from there requires a number of prerequisite tools that a release tarball does not need.</p>
<h3>Problems building GNU gettext</h3>
<h4><a name="building_install"></a>&ldquo;make install&rdquo; fails</h4>
&ldquo;<span style="font-family: monospace;">make install DESTDIR=<span
 style="font-style: italic;">/some/tempdir</span></span>&rdquo; can fail with
an error message relating to <span style="font-family: monospace;">libgettextlib</span>
or <span style="font-family: monospace;">libgettextsrc</span>, or can
silently fail to install <span style="font-family: monospace;">libgettextsrc</span>.<br>
<h4>On Solaris, I get a build error</h4>
libtool doesn't support linking C++ libraries with some versions of GCC. As a workaround, you can configure
gettext with the option <span style="font-family: monospace;">--disable-libasprintf</span>.<br>
<blockquote>If you have a backup copy of your database file, recover the information
  from your backup.
  <p>If you do not have a backup, recovery is very difficult.</p></blockquote>
<h4>How do I make use of gettext in my package?</h4>
It's not as difficult as it sounds. Here's the recipe for C or C++ based packages.<br>
<ul>
  <li>Add an invocation of <span style="font-family: monospace;">AM_GNU_GETTEXT([external])</span>
to the package's <span style="font-family: monospace;">configure.{ac,in}</span> file.</li>
  <li>In the source file defining the main() function of the program, add these lines to the header<br>
    <div style="margin-left: 40px;"><code><span style="font-family: monospace;">#include &lt;locale.h&gt;</span><br>
    <span style="font-family: monospace;">#include "gettext.h"</span></code><br>
    </div>
and these lines near the beginning of the main() function:<br>
    <div style="margin-left: 40px;"><code><span style="font-family: monospace;">setlocale (LC_ALL, "");</span>
    </code></div></li>
</ul>
</body></html>
"""


def test_text_outside_any_paragraph_is_kept(tmp_path: Path) -> None:
    # GNU gettext's FAQ puts each answer right after its <h4>, in no <p>: on the whole FAQ (not on this excerpt)
    # the main-content extractor dropped most of them. Each such run goes in a <p> of its own, where it stood
    import lxml.html

    from citesum.ingest.formats import _prepared

    page = lxml.html.document_fromstring(_prepared(GETTEXT_FAQ))
    paragraphs = [" ".join(p.text_content().split()) for p in page.iter("p")]
    assert ("“make install DESTDIR=/some/tempdir” can fail with an error message relating to libgettextlib or "
            "libgettextsrc, or can silently fail to install libgettextsrc.") in paragraphs
    assert "It's not as difficult as it sounds. Here's the recipe for C or C++ based packages." in paragraphs
    headings = [" ".join(h.text_content().split()) for h in page.iter("h4")]
    assert headings[0] == "“make install” fails"
    assert page.xpath("//h4[1]/following-sibling::*[1]")[0].tag == "p"  # the answer stays below its question
    text = " ".join(_written(tmp_path, "FAQ.html", GETTEXT_FAQ).text.split())
    assert ("“make install DESTDIR=/some/tempdir” can fail with an error message relating to libgettextlib or "
            "libgettextsrc, or can silently fail to install libgettextsrc.") in text
    assert "you can configure gettext with the option --disable-libasprintf." in text
    assert "If you have a backup copy of your database file, recover the information from your backup." in text
    assert "If you do not have a backup, recovery is very difficult." in text


def test_loose_text_is_put_in_paragraphs_in_linear_time() -> None:
    import time

    from citesum.ingest.formats import _prepared

    page = "<html><body>" + "".join(f"loose text number {i} that is long enough to be a paragraph<hr>"
                                     for i in range(40_000)) + "</body></html>"
    started = time.perf_counter()
    assert _prepared(page).count("<p>") == 40_000
    assert time.perf_counter() - started < 10  # 0.8 s here; a quadratic layout took 12 s
    assert _prepared("<p>nothing loose</p>") == "<p>nothing loose</p>"


def test_a_markdown_title_is_its_top_heading_in_either_syntax(tmp_path: Path) -> None:
    # sudo's TROUBLESHOOTING.md: an underlined title above "####" questions; unattended-upgrades' README.md
    # opens with a blank line
    sudo = tmp_path / "TROUBLESHOOTING.md"
    sudo.write_text("Troubleshooting tips and FAQ for Sudo\n=====================================\n\n#### When I "
                    "run sudo it says I am not allowed to run a command\n\nYou are not in the sudoers file.\n",
                    encoding="utf-8")
    assert _read(sudo).title == "Troubleshooting tips and FAQ for Sudo"
    readme = tmp_path / "README.md"
    readme.write_text("\nUnattended upgrades\n===================\n\nThis script upgrades packages.\n",
                      encoding="utf-8")
    assert _read(readme).title == "Unattended upgrades"
    assert _written(tmp_path, "notes.md", "Just a line of notes, no heading at all.\n").title == "notes"
    # rsnapshot's README.md: a build badge in the title, whose words ("Build Status") made "status" a subject
    # of every question that asked about a status
    badge = tmp_path / "rsnapshot.md"
    badge.write_text("RSNAPSHOT [![Build Status](https://api.travis-ci.org/rsnapshot/rsnapshot.png?branch=master)]"
                     "(https://travis-ci.org/rsnapshot/rsnapshot)\n---------\n\nrsnapshot is a filesystem snapshot "
                     "utility. See the [manual](docs/manual.md) for more.\n", encoding="utf-8")
    assert _read(badge).title == "RSNAPSHOT"


def test_a_markdown_tables_rows_are_table_rows(tmp_path: Path) -> None:
    # node_exporter's README: its tables of collectors came out a cell a paragraph, "Exposes ARP statistics from
    # /proc/net/arp." a sentence without the collector it is about, "arp" and "Linux" lines of their own
    readme = _written(tmp_path, "README.md", "## Collectors\n\nName     | Description | OS\n"
                      "---------|-------------|----\n"
                      "arp | Exposes ARP statistics from `/proc/net/arp`. | Linux\nbcache | Exposes bcache statistics "
                      "from `/sys/fs/bcache/`. | Linux\n\nSince v0.10 fail2ban supports the matching of IPv6 addresses."
                      "\n\n| | |\n|-|-|\n| | A note laid out in a table, beside an empty cell. |\n")
    lines = readme.text.splitlines()
    assert lines[lines.index("| Name | Description | OS |") + 1:][:2] == [
        "| arp | Exposes ARP statistics from /proc/net/arp. | Linux |",
        "| bcache | Exposes bcache statistics from /sys/fs/bcache/. | Linux |"], lines
    kinds = _unit_kinds(readme.text)
    assert kinds["| arp | Exposes ARP statistics from /proc/net/arp. | Linux |"] == "table", kinds
    # a row of one cell with text lays out a note, not data: it is read as its text
    assert kinds["A note laid out in a table, beside an empty cell."] == "sentence", kinds
    # rows of words as long as each other are rows, not fully justified prose cut into sentences
    long_rows = _written(tmp_path, "rows.md", "Name | Description\n-----|------------\nloadavg | Exposes the load "
                         "average of the whole system.\nmeminfo | Exposes the memory statistics of the machine.\n")
    assert set(_unit_kinds(long_rows.text).values()) == {"table"}, _unit_kinds(long_rows.text)


def test_a_table_read_as_rows_survives_code_open_rows_and_pipes_in_cells() -> None:
    from citesum.ingest.formats import html_to_text

    # a <pre> in a row's last cell (python-docx's index.rst: an image beside a code block) crashed the reader
    assert html_to_text("<table><tr><td>a</td><td><pre>x = 1</pre></td></tr></table><p>After.</p>",
                        table_rows=True)[1] == "a\n\n```\n\nx = 1\n```\n\nAfter."
    # rows and tables a page leaves open are ended with it, with no mark of their cells left in the text
    assert html_to_text("<table><tr><td>foo</td><td>bar</td></tr><tr><td>baz</td><td>qux</td>",
                        table_rows=True)[1] == "| foo | bar |\n| baz | qux |"
    # a cell that holds a "|" keeps it, escaped, as Markdown writes it in a cell
    assert html_to_text("<table><tr><td>a | b</td><td>c</td></tr></table>", table_rows=True)[1] == "| a \\| b | c |"


def test_a_markdown_headings_attributes_are_markup_not_text(tmp_path: Path) -> None:
    # libsamplerate's FAQ (Pandoc's syntax): "## Q6 : ... Why? {#Q006}". CommonMark keeps "{#Q006}" in the
    # heading's text, where it ended the line after the question, and the entry's question headed nothing
    faq = tmp_path / "faq.md"
    faq.write_text("# Frequently Asked Questions {#top}\n\n## Q6 : I reset the converter and put in 1000 samples, "
                   "but I get fewer out. Why? {#Q006}\n\nThe short answer is that there is a transport delay.\n\n"
                   "## Building {.unnumbered}\n\nRun make {#not-a-heading}\n\n## Formats {:.2f}\n\n```\n"
                   "# a comment {#kept}\n```\n",
                   encoding="utf-8")
    document = _read(faq)
    assert document.title == "Frequently Asked Questions"
    assert "I reset the converter and put in 1000 samples, but I get fewer out. Why?\n" in document.text
    assert "{#Q006}" not in document.text and "{.unnumbered}" not in document.text
    # only a heading's attributes are markup: a paragraph's braces and a code block's are text
    assert "Run make {#not-a-heading}" in document.text and "# a comment {#kept}" in document.text
    assert "Formats {:.2f}" in document.text  # a format, not attributes: its names are no identifiers


def test_front_matter_fenced_code_and_a_page_wrapped_in_font_are_read_as_written(tmp_path: Path) -> None:
    from citesum.ingest.formats import _prepared, markdown_title

    assert markdown_title("---\ntitle: My page\nlayout: post\n---\n\n## Install\n") == "My page"
    assert markdown_title("---\nlayout: post\n---\n\n## Install\n") == "Install"
    assert markdown_title("```\nfoo\n===\n```\n\n## Real title\n") == "Real title"
    # an old page's <font> around its whole body holds blocks: it is no run of loose text
    page = ("<html><body><font face=Arial><h1>Tool manual</h1><p>First paragraph of the manual is here.</p>"
            "<pre><code>a\nb</code></pre><p>Second paragraph, which is long enough.</p></font></body></html>")
    prepared = _prepared(page)
    assert prepared.count("<p>") == 2 and "<p>First paragraph" in prepared  # nothing new wrapped
    assert "<pre>\n```\n<code>a\nb</code>\n```\n</pre>" in prepared  # the code is fenced


#: an AsciiDoc FAQ as backup tools' sites write theirs: a header with attributes the title names, a block macro,
#: a comment block, an admonition, a literal paragraph, a listing with its source attribute, links with text, a
#: table, and a list item continued past a blank line
ASCIIDOC_FAQ = """= backup-tool: {page-name}
:page-name: F.A.Q.
:sectnums:
:toc: macro

link:.[Home,role="button round"] // *{page-name}*

toc::[]

////
Editors: keep the answers short.
////

== How much free space does a backup need?

When backing up, the tool needs free space in the mirror directory.
The amount required is usually a bit more than the size of the file getting backed up.

 0 No information given
 1 Fatal errors displayed

== How do I remove a file from the repository?

NOTE: Removed files cannot be restored.

Use `+backup-tool-delete <repo>/<file>+` to remove it.
See the https://example.org/manual[manual^] or <<space,the section on space>>.

[source,shell]
----
backup-tool-delete /srv/repo/videos
----

.Known limits
[cols="1,2"]
|===
|Limit |Value
|Path length |4096
|===

* Deleting a file keeps its metadata.
+
The metadata is removed on the next clean-up.
"""


def test_asciidoc_is_read_as_the_page_it_renders_to(tmp_path: Path) -> None:
    from citesum.segment import segments

    document = _written(tmp_path, "FAQ.adoc", ASCIIDOC_FAQ)
    # before: the raw markup, "{page-name}" in the title, ":sectnums:" and "toc::[]" as text
    assert document.title == "backup-tool: F.A.Q."
    text = document.text
    for markup in (":sectnums:", "toc::[]", "{page-name}", "////", "Editors:", "[source,shell]", "|===", "https://",
                   "<<", "^", "+backup"):
        assert markup not in text, markup
    units = _unit_kinds(text)
    # a section's title is a line of its own, as a Markdown page's is (a question heads its answer)
    assert "How much free space does a backup need?" in units
    assert units["Known limits"] == "heading"
    assert units["When backing up, the tool needs free space in the mirror directory."] == "sentence"
    assert units["Note: Removed files cannot be restored."] == "sentence"
    assert units["Use backup-tool-delete <repo>/<file> to remove it."] == "sentence"
    assert "See the manual or the section on space." in units
    assert units["Deleting a file keeps its metadata."] == "sentence"
    assert units["The metadata is removed on the next clean-up."] == "sentence"
    # the literal paragraph, the listing and the table are code, never sentences
    code = [text[u.start:u.end] for u in segments(text) if u.kind == "code"]
    assert any("0 No information given" in block for block in code)
    assert any("backup-tool-delete /srv/repo/videos" in block for block in code)
    assert any("Path length" in block for block in code)


def test_asciidoc_headers_lists_titles_and_code_read_as_asciidoctor_reads_them() -> None:
    from citesum.ingest.asciidoc import asciidoc_markdown
    from citesum.ingest.formats import read_asciidoc

    def units(source: str) -> tuple[str, list[tuple[str, str]]]:
        [document], _ = read_asciidoc(source.encode("utf-8"), "d", Path("a.adoc"), IngestOptions())
        text = document.text
        return document.title, _units(text)

    # the header's author and revision lines and its attributes are no text
    title, found = units("= Guide\nJane Doe <jane@example.org>\nv1.2, 2023-01-01\n:page-name: FAQ\n\nBody of the "
                         "{page-name}.")
    assert title == "Guide" and ("sentence", "Body of the FAQ.") in found and len(found) == 2, found
    # a title as plain text, and a BOM before it
    assert asciidoc_markdown("= Using <stdio.h> & `printf`\n\nText.")[0] == "Using <stdio.h> & printf"
    assert asciidoc_markdown("\ufeff= BOM Title\n\nText.")[0] == "BOM Title"
    # a list marker does not interrupt a paragraph; an indented list is a list, not code
    _, found = units("See the entry for version\n2. It explains the new default.\n\nTo install it:\n\n  . "
                     "Download the archive.\n  . Unpack it into /opt.")
    assert ("code", "Download the archive.") not in found and ("sentence", "Download the archive.") in found
    assert all(kind != "code" for kind, _ in found) and any("version 2." in text for _, text in found), found
    # two-line section titles, a link whose text holds code, a [source] paragraph
    _, found = units("NAME\n----\ngit-add - Add file contents to the index\n\nDESCRIPTION\n-----------\nThis "
                     "command updates the index using the content found in the working tree.\n\nSee "
                     "xref:cli.adoc[the `backup` command] for details.\n\n[source,bash]\necho hello | wc -c\n")
    assert ("heading", "DESCRIPTION") in found and ("sentence", "This command updates the index using the content "
                                                    "found in the working tree.") in found, found
    assert any(text == "See the backup command for details." for _, text in found), found
    assert ("code", "``` echo hello | wc -c ```") in found, found
    # a description list's term alone on its line: its indented description below is prose, not a literal
    _, found = units("Options\n\n*-M* _SIZE_, *--max-size* _SIZE_::\n\n    Set the maximum size of the files stored "
                     "in the\n    cache. Use 0 for no limit.\n\n    indented literal after prose\n")
    assert ("sentence", "Set the maximum size of the files stored in the cache.") in found, found
    assert ("code", "``` indented literal after prose ```") in found, found
    # a block of code that shows a Markdown fence is fenced by a longer one
    markdown = asciidoc_markdown("Intro.\n\n----\n```\nshown\n```\n----\n\nAfter.")[1]
    assert "````\n```\nshown\n```\n````" in markdown
    # a character reference is its character, in the title, the prose and a code span, as on the page; an "&"
    # that opens none is text (before, LTTng's README read "LTTng&#8209;tools", "&#8209;&#8209;disable&#8209;epoll")
    title, found = units("= LTTng&#8209;tools\n:nbh: &#8209;\n\nUse `{nbh}{nbh}disable{nbh}epoll` &mdash; R&D's "
                         "&#x2011;x &bogus; & more.\n")
    assert title == "LTTng\u2011tools", title
    assert ("sentence", "Use \u2011\u2011disable\u2011epoll \u2014 R&D's \u2011x &bogus; & more.") in found, found
    # HTML's older names without a semicolon are text: a URL's query, a title's "&copy"
    title, found = units("= Rates &amp Fees &copy 2024\n\nRun `curl 'http://h/?a=1&param=2&region=eu'` now.\n")
    assert title == "Rates &amp Fees &copy 2024", title
    assert ("sentence", "Run curl 'http://h/?a=1&param=2&region=eu' now.") in found, found


def test_asciidoc_conditionals_are_the_preprocessors_lines_not_text() -> None:
    from citesum.ingest.asciidoc import asciidoc_markdown

    # Asciidoctor's README: "endif::[]" right after a paragraph's line was read as its last words
    source = ("= Asciidoctor\n:release: 2.0\n\nifndef::env-github[]\nThis document is also available in: Deutsch | "
              "Fran\u00e7ais\nendif::[]\n\nifdef::env-github[]\nView it on GitHub.\nendif::[]\n\n"
              "ifdef::release,nothing[]\nThe release is set.\nendif::[]\nifdef::release+nothing[]\nBoth are set.\n"
              "endif::[]\n\nifeval::[{safe-mode-level} < 20]\nThe changelog follows.\nendif::[]\n\n"
              "ifdef::backend-html5[Shown when rendered as HTML.]\n")
    markdown = asciidoc_markdown(source)[1]
    assert "endif" not in markdown and "ifdef::" not in markdown and "ifeval" not in markdown, markdown
    # the page as Asciidoctor renders the file itself: GitHub's attribute is not set, the document's are
    assert "Deutsch | Fran\u00e7ais" in markdown and "View it on GitHub." not in markdown
    assert "The release is set." in markdown and "Both are set." not in markdown
    assert "The changelog follows." in markdown  # an expression is not evaluated: what it holds is kept
    # conditionals nested thousands deep are read in linear time
    assert_linear(lambda count: asciidoc_markdown("ifdef::a[]\nx\n" * count + "endif::[]\n" * count), 20_000)


def test_hostile_asciidoc_is_read_in_linear_time(tmp_path: Path) -> None:
    import time

    from citesum.ingest.asciidoc import asciidoc_markdown

    for hostile in ("[" * 200_000, "link:" * 50_000 + "[", "+a" * 100_000, "= " + "{x}" * 100_000,
                    "----\n" + "x\n" * 100_000, "`+" * 100_000, "* " * 100_000, ":a: {a}\n" * 20_000,
                    "a" * 100_000 + " [x]", "[a" * 100_000, "`" * 100_000, "<<a" * 100_000, " " * 100_000 + "a"):
        started = time.perf_counter()
        asciidoc_markdown(hostile)
        assert time.perf_counter() - started < 2.0, hostile[:20]
    # twice the input takes about twice the time, not four times
    for make in (lambda n: "== a" + "\t" * n + "b", lambda n: "x " + "a" * n + "::", lambda n: "a::" + "b[" * n,
                 lambda n: "link:" * n + "[", lambda n: "a" * n + " [x]"):
        assert_linear(lambda size: asciidoc_markdown(make(size)), 50_000, make(10))
    # values that name values ten deep: the output stays within a few times the input
    bomb = ":a0: xxxxxxxxxx\n" + "".join(f":a{k}: " + f"{{a{k - 1}}}" * 10 + "\n" for k in range(1, 12)) + "\n{a11}\n"
    assert len(asciidoc_markdown(bomb)[1]) < 100 * len(bomb)


#: a Sphinx project's FAQ page: a label, Sphinx's roles, a version note, a code block with Sphinx's options, a
#: table of contents, an API page directive and an inclusion of a file from disk
SPHINX_FAQ = """.. _faq:

Frequently Asked Questions
==========================

Python 2 Support?
-----------------

No! As of version 2.28.0, the library no longer supports Python 2.7. Use
:meth:`~library.Session.get` and see :ref:`the advanced page <advanced>` for more.

.. versionadded:: 2.1
   Sessions keep cookies across requests.

.. code-block:: python
   :linenos:

   session = library.Session()

.. toctree::
   :maxdepth: 2

   user/install

.. autoclass:: library.Session
   :members:

.. include:: /etc/hostname
"""


def test_restructuredtext_is_read_as_the_page_it_renders_to(tmp_path: Path) -> None:
    document = _written(tmp_path, "faq.rst", SPHINX_FAQ)
    # before: raw markup, ".. _faq:" and ":meth:`~library.Session.get`" in the text, the label as the title
    assert document.title == "Frequently Asked Questions"
    text = document.text
    for markup in (".. ", ":meth:", ":ref:", "<advanced>", "toctree", "autoclass", ":linenos:", "user/install",
                   "====", "----"):
        assert markup not in text, markup
    units = _unit_kinds(text)
    assert units["As of version 2.28.0, the library no longer supports Python 2.7."] == "sentence"
    assert units["Use get and see the advanced page for more."] == "sentence"
    assert units["New in version 2.1: Sessions keep cookies across requests."] == "sentence"
    assert units["Python 2 Support?"] in ("heading", "sentence")  # a question heads its answer either way
    assert any(kind == "code" and "session = library.Session()" in unit for unit, kind in units.items())
    assert Path("/etc/hostname").read_text().strip() not in text or not Path("/etc/hostname").exists()


def test_restructuredtext_docutils_cannot_render_is_read_as_plain_text_and_said(tmp_path: Path) -> None:
    from citesum.ingest import ingest_file

    path = tmp_path / "deep.rst"
    path.write_text("Deep lists\n==========\n\n" + "".join("  " * depth + "- item\n" for depth in range(400)),
                    encoding="utf-8")
    documents, report = ingest_file(path, "deep", IngestOptions())
    assert [d.title for d in documents] == ["Deep lists"] and "item" in documents[0].text
    assert "docutils could not render" in report.reason and "plain text" in report.reason


def test_restructuredtext_reads_nothing_from_disk_and_shows_sphinx_notes_as_sphinx_does(tmp_path: Path) -> None:
    from docutils.core import publish_parts

    from citesum.ingest.formats import html_to_text
    from citesum.ingest.rst import rst_html

    secret = tmp_path / "secret.svg"
    secret.write_text("<svg><text>SECRET-WORDS</text></svg>", encoding="utf-8")
    source = (f":orphan:\n\n:mod:`json` --- JSON encoder\n============================\n\n.. image:: {secret}\n"
              f"   :loading: embed\n\n.. figure:: {secret}\n   :loading: embed\n\n   The caption.\n\n"
              ".. deprecated:: 3.0\n   Use :func:`bar` instead.\n\n.. versionadded:: 2.1\n\n.. only:: html\n\n"
              "   Only text.\n\nRun :samp:`git checkout <branch>` first.\n")
    title, body = rst_html(source)
    text = html_to_text(body)[1]
    # an image docutils would embed is never read; the figure's caption is text
    assert "SECRET" not in body and "base64" not in body and "The caption." in text
    assert title == "json --- JSON encoder" and "orphan" not in text
    assert "Deprecated since version 3.0: Use bar instead." in text and "New in version 2.1." in text
    assert "Only text." in text and "html" not in text.replace("Only text.", "")
    assert "Run git checkout <branch> first." in text
    # docutils elsewhere in the process is as it was: an unknown role is not read as Sphinx's there
    plain = publish_parts("Use :unknownrole:`x` here.", writer="html5",
                          settings_overrides={"report_level": 5, "_disable_config": True})["html_body"]
    assert ":unknownrole:" in plain


def test_docbooks_nested_placeholders_are_read_in_place_once(tmp_path: Path) -> None:
    # a DocBook handbook's placeholders: <em class="replaceable"><code> inside <code> and inside a <span>
    page = tmp_path / "ch-common-tasks.html"
    page.write_text(
        "<html><body><div class='section'><p>For stock kernels this directory is <code class='filename'>"
        "/usr/src/linux-headers-<em class='replaceable'><code>uname</code></em></code>, provided by the <span "
        "class='package'>linux-headers-<em class='replaceable'><code>uname</code></em></span> package. Here <em "
        "class='replaceable'><code>uname</code></em> is the output of the <span class='command'><strong>uname -r"
        "</strong></span> command. More text here to make the paragraph long enough for the main content "
        "extractor to keep it around.</p><p>Another paragraph with some words in it, so that there is content."
        "</p></div></body></html>", encoding="utf-8")
    text = " ".join(_read(page).text.split())
    # before: "/usr/src/linux-headers-, provided by the linux-headers-unameuname package"
    assert ("this directory is /usr/src/linux-headers-uname, provided by the linux-headers-uname package. Here "
            "uname is the output of the uname -r command.") in text


def test_a_docbook_faqs_first_headings_come_back_when_its_answer_opens_a_list(tmp_path: Path) -> None:
    from citesum.ingest.formats import with_headings

    # the main-content extractor dropped the chapter's heading and its first question; the answer's first words
    # run, in the page, from a paragraph into a list, which the main content writes with a list marker
    html = ("<h1>5. Troubleshooting</h1><div><h3>5.1. I cannot connect to any websites. Why?</h3><p> There are "
            "several possibilities:</p><ul><li><p>The proxy is not running. Verify that it runs.</p></li></ul>"
            "<h3>5.2. Why am I getting a 503 error on every page?</h3><p>More than likely this is a problem with "
            "your TCP/IP networking.</p></div>")
    main = ("There are several possibilities:\n- The proxy is not running. Verify that it runs.\nMore than likely "
            "this is a problem with your TCP/IP networking.")
    restored = with_headings(main, html)
    # before: neither heading came back, as "possibilities:The" (the page's words run together) was looked for
    assert restored.startswith("5. Troubleshooting\n\n5.1. I cannot connect to any websites. Why?\n\nThere are")
    assert "\n\n5.2. Why am I getting a 503 error on every page?\n\nMore than likely" in restored


def _qanda_row(label: str, paragraphs: str, kind: str) -> str:
    return (f"<tr class='{kind}'><td align='left' valign='top'><a name='q{len(paragraphs)}'></a><p><b>{label}</b></p>"
            f"</td><td align='left' valign='top'>{paragraphs}</td></tr>")


def test_a_docbook_question_and_answer_table_is_read_as_its_questions_and_answers(tmp_path: Path) -> None:
    # DocBook lays out a <qandaset> as a table: a "Q:" cell beside the question, an "A:" cell beside the answer,
    # and a row listing the section's questions again as links (MPlayer's FAQ)
    rows = ("<tr class='qandadiv'><td colspan='2'><h3 class='title'>8.3. General questions</h3></td></tr>"
            "<tr class='toc'><td colspan='2'><dl><dt>Q: <a href='faq.html#q1'>How can I make MPlayer remember the "
            "options I use for a particular file?</a></dt><dt>Q: <a href='faq.html#q2'>Are there binary packages?"
            "</a></dt></dl></td></tr>"
            + _qanda_row("Q:", "<p>\nHow can I make <span class='application'>MPlayer</span> remember the options I "
                         "use for a particular file, e.g. movie.avi?\n</p>", "question")
            + _qanda_row("A:", "<p>\nCreate a file named movie.avi.conf with the file-specific options in it and "
                         "put it in ~/.mplayer or in the same directory as the file.\n</p>", "answer")
            + _qanda_row("Q:", "<p>Are there binary (RPM/Debian) packages of MPlayer?</p>", "question")
            + _qanda_row("A:", "<p>See the <a href='linux.html#debian'>Debian</a> and <a href='linux.html#rpm'>RPM"
                         "</a>\nsection for details.</p>", "answer"))
    page = tmp_path / "faq.html"
    page.write_text("<html><head><title>Chapter 8. Frequently Asked Questions</title></head><body><div "
                    "class='chapter'><h1>Chapter 8. Frequently Asked Questions</h1><div class='qandaset'><table "
                    f"border='0' style='width: 100%;'><tbody>{rows}</tbody></table></div></div></body></html>",
                    encoding="utf-8")
    text = _read(page).text
    words = " ".join(text.split())
    # before: "| Q: | How can I make MPlayer remember ... | " and the questions listed again in one row
    assert "|" not in text and words.count("How can I make MPlayer remember") == 1
    assert words.endswith(
        "8.3. General questions Q: How can I make MPlayer remember the options I use for a particular file, e.g. "
        "movie.avi? A: Create a file named movie.avi.conf with the file-specific options in it and put it in "
        "~/.mplayer or in the same directory as the file. Q: Are there binary (RPM/Debian) packages of MPlayer? A: "
        "See the Debian and RPM section for details.")
    # each label opens a line of its own, as an FAQ's "Q:" and "A:" lines are read
    assert [line.split()[0] for line in text.splitlines() if line[:2] in ("Q:", "A:")] == ["Q:", "A:", "Q:", "A:"]


def test_an_faqs_questions_marked_as_anchors_are_kept(tmp_path: Path) -> None:
    # dar's FAQ: each question a bold named anchor on a line of its own, its answer in a paragraph below
    entries = "".join(
        f"<a name='A{n}' id='A{n}'><b>{question}</b></a><br/>\n<p>\n{answer}\n</p>\n"
        for n, (question, answer) in enumerate([
            ("Dar hangs when using it with pipes, why?", "Dar can produce backups on its standard output, if you "
             "give '-' as basename. But it cannot read a backup from its standard input in direct access mode."),
            ("Can I use different filters between a full backup and a\n differential backup? Would not dar consider "
             "some file not included in\n the filter to be deleted?", "Yes, you can. No, there is no risk to have dar "
             "deleting the files that were not selected for the differential backup."),
            ("I cannot find the binary package for my distro, where to look for?", "For any binary package, ask "
             "your distro maintainer to include dar, and check on the web site of your distro for a dar package.")]))
    page = tmp_path / "FAQ.html"
    page.write_text(f"<html><body><div class=maintop><h2>Answers:</h2>\n{entries}</div></body></html>",
                    encoding="utf-8")
    text = " ".join(_read(page).text.split())
    # before: the questions were gone, each answer following the one above it
    for question in ["Dar hangs when using it with pipes, why?", "Can I use different filters between a full "
                     "backup and a differential backup? Would not dar consider some file not included in the filter "
                     "to be deleted?", "I cannot find the binary package for my distro, where to look for?"]:
        assert question in text, question


def test_an_faqs_titles_run_into_their_entries_are_set_apart(tmp_path: Path) -> None:
    # OpenOCD's FAQ, as Texinfo writes it: each entry a list item opening with its title in bold, run into the
    # question or the trouble; run in, "Missing: cygwin1.dll OpenOCD complains about ..." was no sentence, and the
    # Cygwin advice stayed under the entry about backslashes, as the answer to a question about them
    entries = ("<li> <b>Win32 Pathnames</b> Why don&rsquo;t backslashes work in Windows paths?\n\n"
               "<p>OpenOCD uses Tcl and a backslash is an escape char. Use { and }\naround Windows filenames.\n</p>\n"
               "</li><li> <b>Missing: cygwin1.dll</b> OpenOCD complains about a missing cygwin1.dll.\n\n"
               "<p>Make sure you have Cygwin installed. When using Cygwin, try launching\nOpenOCD from the Cygwin "
               "shell.\n</p>\n</li><li> <b>Data Aborts</b> When debugging with OpenOCD and GDB, I get lots of\n"
               "&quot;memory read caused data abort&quot;.\n\n<p>The errors are non-fatal, and are the result of "
               "GDB trying to trace\nstack frames beyond the last valid frame.\n</p></li>")
    page = ("<html><head><title>FAQ (OpenOCD User's Guide)</title></head><body><div class=\"chapter\">"
            "<h2 class=\"chapter\">FAQ</h2><ol>" + entries + "</ol>\n<p>Read the manual for more about the "
            "commands that configure the adapter and the target.</p></div></body></html>")
    units = _units(_written(tmp_path, "faq.html", page).text)
    for title in ("Win32 Pathnames", "Missing: cygwin1.dll", "Data Aborts"):
        assert ("heading", title) in units
    assert ("sentence", "Why don’t backslashes work in Windows paths?") in units
    assert ("sentence", "OpenOCD complains about a missing cygwin1.dll.") in units
    assert ("sentence", "The errors are non-fatal, and are the result of GDB trying to trace stack frames beyond "
                        "the last valid frame.") in units
    # a lone paragraph that opens with a bold name names its subject: it is read as before
    lone = _written(tmp_path, "lone.html", "<html><head><title>Editors</title></head><body><h1>Editors</h1><p><b>GNU"
                    "</b> Emacs is an extensible editor that many programmers use every day for their work.</p>"
                    "<p>Vim is another editor, a modal one, that many programmers use as well.</p></body></html>")
    assert ("sentence", "GNU Emacs is an extensible editor that many programmers use every day for their work.") \
        in _units(lone.text)


def test_an_faqs_labels_alone_on_their_lines_open_the_paragraphs_below_them(tmp_path: Path) -> None:
    # AWStats' FAQ: each entry a "PROBLEM:" and a "SOLUTION:" label alone on its line, its paragraph on the next;
    # the same short text forty times, of which the main-content extraction kept the first and dropped the rest
    entries = [("I want statistics but I have no access to my server log file.",
                "Because Frobstat reads logs, you must first make the server write one with a tracking script."),
               ("Frobstat seems to work (all counters look good) but no image is shown.",
                "If you use a directory called icons, the web server's own icons alias hides it, so call it icon."),
               ("I don't want to see my own IP address in the stats.",
                "You must edit the config file to change the SkipHosts parameter."),
               ("The update process takes hours on a large log file.",
                "Turn off the DNS lookup, which is the slowest part of the update process.")]
    body = "".join(f'<a name="E{n}"></a><br>\n<b><u>FAQ-{n} : ENTRY NUMBER {n}</u></b><br>\n'
                   f"<font class=CProblem>PROBLEM:</font><br>\n{problem}<br>\n"
                   f"<font class=CSolution>SOLUTION:</font><br>\n{solution}<br>\n<br>\n"
                   for n, (problem, solution) in enumerate(entries))
    page = tmp_path / "faq.html"
    page.write_text("<html><head><title>Frobstat FAQ</title></head><body><table><tr><td><b>Frobstat 7</b></td></tr>"
                    "</table><h1>Frequently Asked Questions</h1><u>QUESTIONS:</u><br><ul>"
                    + "".join(f'FAQ-{n} <a href="#E{n}">Entry number {n}</a><br>\n' for n in range(len(entries)))
                    + "</ul><hr>\n<b><u>FAQ-A : WHICH SYSTEMS ARE SUPPORTED ?</u></b><br>Frobstat works with:<br>\n"
                    "<li> All web servers that write a combined log.<br>\n<li> Most proxies.<br>\n" + body
                    + "</body></html>", encoding="utf-8")
    lines = [" ".join(line.split()) for line in _read(page).text.splitlines()]
    for problem, solution in entries:
        assert f"PROBLEM: {problem}" in lines and f"SOLUTION: {solution}" in lines, problem
    # a label in nested markup, or with a blank line after it, is joined too; a list's heading in the plural, a
    # label within a line and a legend's lower-case letter are no labels alone on their lines
    html = page.read_text(encoding="utf-8")
    for variant in (html.replace("<font class=CProblem>PROBLEM:</font>", "<font class=CProblem><b>PROBLEM:</b></font>"),
                    html.replace("PROBLEM:</font><br>", "PROBLEM:</font><br><br>")):
        page.write_text(variant, encoding="utf-8")
        lines = [" ".join(line.split()) for line in _read(page).text.splitlines()]
        assert all(f"PROBLEM: {problem}" in lines for problem, _ in entries)
    page.write_text("<html><body><h1>Frobstat FAQ</h1><p><u>QUESTIONS:</u><br>FAQ-0 How do I start it?</p>"
                    "<p>Status of the entry: <b>Problem:</b><br>Run make again after the change.</p>"
                    "<p>Figure 3 shows the probes. <b>a:</b><br>the input probe, before the filter.</p></body></html>",
                    encoding="utf-8")
    lines = [" ".join(line.split()) for line in _read(page).text.splitlines()]
    assert "FAQ-0 How do I start it?" in lines and "Run make again after the change." in lines, lines
    assert "the input probe, before the filter." in lines, lines


ASCIIDOCTOR_FAQ = """<html><head><title>Frobnicator FAQ</title></head><body><div id="content">
<div class="sect1">
<h2 id="keys"><a class="anchor" href="#keys"></a>5. Keyboard</h2>
<div class="sectionbody">
<div class="sect2">
<h3 id="keys_dead"><a class="anchor" href="#keys_dead"></a>5.1. The keyboard does not work at all, what can I do?</h3>
<div class="paragraph">
<p>First try to turn the keyboard on:</p>
</div>
<div class="listingblock">
<div class="content">
<pre class="nowrap">/keys enable</pre>
</div>
</div>
<div class="paragraph">
<p>If the keys still do nothing, check the LANG variable in your shell (look at
the output of <code>echo $LANG</code> in your terminal).
Some layouts are not supported.</p>
</div>
<div class="paragraph">
<p>You can test the keys in the terminal:</p>
</div>
<div class="listingblock">
<div class="content">
<pre class="nowrap">$ showkey -a</pre>
</div>
</div>
</div>
<div class="sect2">
<h3 id="keys_f13"><a class="anchor" href="#keys_f13"></a>5.2. Function keys above F12 do nothing, why?</h3>
<div class="paragraph">
<p>Some terminals send no escape sequence for the keys above F12, so the frobnicator
never sees them.</p>
</div>
<div class="paragraph">
<p>You should bind those keys in the terminal itself, as xterm allows.</p>
</div>
</div>
<div class="sect2">
<h3 id="keys_paste"><a class="anchor" href="#keys_paste"></a>5.3. How can I paste text when the mouse is grabbed?</h3>
<div class="paragraph">
<p>When the mouse is grabbed, you can hold <kbd>Shift</kbd> to select or
paste in the terminal, as if the frobnicator had not grabbed it.</p>
</div>
</div>
</div>
</div>
</div></body></html>"""


def test_an_asciidoctor_pages_sections_keep_their_answers(tmp_path: Path) -> None:
    # Asciidoctor puts an empty link to the section (<a class="anchor" href="#id"></a>) in each heading; with
    # it, the main-content extraction dropped WeeChat's FAQ's short sections whole, each answer below its heading
    page = tmp_path / "faq.html"
    page.write_text(ASCIIDOCTOR_FAQ, encoding="utf-8")
    text = " ".join(_read(page).text.split())
    for answer in ["Some terminals send no escape sequence for the keys above F12, so the frobnicator never sees them.",
                   "You should bind those keys in the terminal itself, as xterm allows.",
                   "When the mouse is grabbed, you can hold Shift to select or paste in the terminal, as if the "
                   "frobnicator had not grabbed it.", "5.2. Function keys above F12 do nothing, why?"]:
        assert answer in text, answer
    # a link that shows an image is still a link (only one that shows nothing is made plain)
    from citesum.ingest.formats import _prepared
    assert "<a href" in _prepared("<html><body><p>Logo: <a href='#top'><img src='logo.png' alt=''></a></p>"
                                  "</body></html>")


def test_a_table_of_values_stays_a_table(tmp_path: Path) -> None:
    # short first cells beside values: three cells a row, or two whose first is a bare number (an exit code's
    # row; Sphinx puts every cell's text in a <p>)
    three = "".join(f"<tr><td>{n}.</td><td>option{n}</td><td>value {n}</td></tr>" for n in range(1, 4))
    two = "".join(f"<tr><td><p>{code}</p></td><td><p>{meaning}</p></td></tr>"
                  for code, meaning in ((0, "success"), (1, "an error in the arguments"), (2, "a file not found")))
    for name, rows, expected in (("options.html", three, "option2 | value 2"),
                                 ("codes.html", two, "1 | an error in the arguments")):
        page = tmp_path / name
        page.write_text("<html><body><div><h1>Options</h1><p>These are the options that the program reads from its "
                        "configuration file at start-up, in the order below.</p><table>" + rows + "</table><p>Each "
                        "option is read once, and a later value replaces an earlier one.</p></div></body></html>",
                        encoding="utf-8")
        assert expected in _read(page).text, name


def test_an_answer_that_is_only_a_link_is_kept_and_many_anchors_read_in_linear_time(tmp_path: Path) -> None:
    from citesum.ingest.formats import _prepared

    rows = (_qanda_row("Q:", "<p>Where is the manual of the program kept on this system?</p>", "question")
            + _qanda_row("A:", "<p><a href='#manual'>The manual</a></p>", "answer")
            + _qanda_row("Q:", "<p>Is there a list of the options the program reads at start-up?</p>", "question")
            + _qanda_row("A:", "<p>Yes: the options are listed in the chapter on its configuration file.</p>",
                         "answer"))
    page = tmp_path / "faq.html"
    page.write_text(f"<html><body><div><h1>FAQ</h1><table border='0'>{rows}</table></div></body></html>",
                    encoding="utf-8")
    assert "A: The manual" in " ".join(_read(page).text.split())
    # each anchor made text in place: dropping each tag joined its text to the paragraph's again and again
    assert_linear(lambda n: _prepared("<html><body><p>" + "".join(f"<a name='a{i}'>word {i}</a> " for i in range(n))
                                      + "</p></body></html>"), 2000, "anchors")
    # a one-cell row of links to questions (a contents row) is read once, however many links it holds
    assert_linear(lambda n: _prepared("<html><body><table><tr><td>" + "".join(
        f"Q: <a href='#q{i}'>question {i}?</a><br>" for i in range(n)) + "</td></tr>" + rows + "</table></body></html>"),
        500, "links")




def test_inline_code_and_quotations_are_made_text_where_they_are_shown_and_stay_linear() -> None:
    from citesum.ingest.formats import _main_content

    filler = "<p>" + " ".join(f"Sentence {n} of the page, for its main content to be kept." for n in range(12)) + "</p>"

    def shown(body: str) -> str:  # what the main-content extraction keeps of the page
        return _main_content(f"<html><body><div>{filler}{body}{filler}</div></body></html>")

    # code over lines keeps its line breaks; a form's options around code stay out, as they were
    assert "def f():\n    return 1" in shown("<p>Run <span class=hl><code>def f():\n    return 1</code></span>.</p>")
    assert "fast" not in shown("<p>Pick <span><code>mode</code> <select><option>fast</option></select></span>.</p>")
    # an inline quotation is shown between quotation marks (w3m's FAQ read "How do I pronounce w3m ?")
    assert "How do I pronounce \u201cw3m\u201d?" in shown("<p>How do I pronounce <q>w3m</q>?</p>")
    assert "It's \u201cW-three-M\u201d." in shown("<p>It's <q>W-three-<b>M</b></q>.</p>")
    # a placeholder marked with a class trafilatura takes for page metadata is kept (getmail's pages, whose content
    # is a <div class="content">); what a class hides stays out
    getmail = (f'<html><body><div class="content">{filler}<p>A class object requires the parameter <span '
               f'class="meta">name</span>, but it was not found.<span class="sr-only hidden">Skip</span></p>'
               f'{filler}</div></body></html>')
    assert "requires the parameter name, but" in _main_content(getmail) and "Skip" not in _main_content(getmail)
    # linear in the paragraphs and the quotations of a page (both were quadratic: 23 s for 10,000 paragraphs)
    from citesum.ingest.formats import _prepared

    assert_linear(lambda count: _prepared("<html><body>" + "<p><span class=a>x</span> <q>y</q></p>" * count
                                          + "</body></html>"), 5000)
    assert_linear(lambda count: _prepared("<html><body><p>" + "<q>y</q> " * count + "</p></body></html>"), 5000)
    # linear, not quadratic (it was 0.5 s, then 1.8 s, then 6.8 s for 8000 codes)
    assert_linear(lambda count: shown("<p><span>" + "<code>x</code> " * count + "<br>end</span></p>"), 4000)


def test_a_chapters_heading_whose_text_was_lost_goes_above_its_first_sections() -> None:
    from citesum.ingest.formats import with_headings

    # a Texinfo manual: the chapter's heading is followed by its list of sections, which the main content
    # dropped, and then by the first section, whose heading the main content kept; a sidebar's heading without
    # a number stays out
    html = ("<h2>1 Introduction</h2><p>This document answers questions about R.</p>"
            "<h2>2 R Basics</h2><ul><li><a href='#a'>What is R?</a></li><li><a href='#b'>What machines does R "
            "run on?</a></li></ul>"
            "<h3>2.1 What is R?</h3><p>R is a system for statistical computation.</p>"
            "<h3>Next topic</h3><ul><li><a href='#b'>Installing</a></li></ul>"
            "<h3>2.2 What machines does R run on?</h3><p>R is being developed for Unix-like systems.</p>")
    main = ("1 Introduction\n\nThis document answers questions about R.\n\n2.1 What is R?\n\nR is a system for "
            "statistical computation.\n\n2.2 What machines does R run on?\n\nR is being developed for Unix-like "
            "systems.")
    restored = with_headings(main, html)
    # before: "2 R Basics" was left out
    assert "about R.\n\n2 R Basics\n\n2.1 What is R?" in restored
    assert "Next topic" not in restored


def test_a_page_laid_out_in_tables_is_read_as_its_content(tmp_path: Path) -> None:
    # libxml2's FAQ (a new user's trial): a menu cell beside the content, the content in a box of tables in
    # tables, its questions in a numbered list under headings; a table of values in it stays a table
    menu = "<ul><li><a href='index.html'>Home</a></li><li><a href='news.html'>News</a></li></ul>"
    content = ("<p>Table of Contents:</p><h3>License(s)</h3><ol>"
               "<li><em>Can I embed libxml2 in a proprietary application ?</em>\n    <p>Yes. The MIT License allows "
               "you to keep proprietary the changes you made to libxml.</p></li>"
               "<li><em>Where can I get libxml ?</em>\n    <p>The original distribution comes from xmlsoft.org or "
               "gnome.org.</p></li></ol><h3>Sizes</h3><table><tr><td>libxml2.so</td><td>1.8 MB</td></tr>"
               "<tr><td>xmllint</td><td>80 kB</td></tr></table>")
    page = tmp_path / "FAQ.html"
    page.write_text("<html><head><title>FAQ</title></head><body><table width='100%'><tr><td>"
                    "<h1>The XML C parser and toolkit of Gnome</h1></td></tr><tr><td width='200'>"
                    f"{menu}</td><td><table border='0'><tr><td><table><tr><td bgcolor='#fffacd'>{content}</td></tr>"
                    "</table></td></tr></table></td></tr></table></body></html>", encoding="utf-8")
    text = _read(page).text
    lines = [" ".join(line.split()) for line in text.splitlines()]
    # before: one table row, "| The XML C parser ... | Table of Contents: License(s) Can I embed libxml2 in a
    # proprietary application ? Yes. ...", each question run into its answer and the next question
    assert "License(s)" in lines
    question = next(i for i, line in enumerate(lines) if "Can I embed libxml2 in a proprietary application ?" in line)
    assert "Yes." not in lines[question]
    assert lines[question + 1].startswith("Yes. The MIT License allows you")
    assert any(line.startswith("| libxml2.so | 1.8 MB") for line in lines), lines


def test_a_docbook_faq_numbering_its_questions_is_read_as_its_questions_and_answers(tmp_path: Path) -> None:
    # D-Bus's FAQ (a new user's trial) and aptitude's: a "1." cell beside each question, an empty cell beside
    # each answer, the paragraphs' lines indented as the page's source writes them
    rows = "".join(
        f"<tr class='question'><td align='left' valign='top'><a name='q{n}'></a><p><b>{n}.</b></p></td>"
        f"<td align='left' valign='top'><p>\n          {question}\n        </p></td></tr><tr class='answer'>"
        f"<td align='left' valign='top'></td><td align='left' valign='top'><p>\n          {answer}\n        </p>"
        "</td></tr>"
        for n, (question, answer) in enumerate([
            ("What is D-Bus?", "In short, it is a system consisting of a wire protocol\n          and a bus daemon "
             "that allows applications to find\n\t    and monitor one another."),
            ("How is the reference implementation licensed? Can I use it in proprietary applications?",
             "The short answer is yes, you can use it in proprietary applications.")], start=1))
    page = tmp_path / "dbus-faq.html"
    page.write_text("<html><head><title>D-Bus FAQ</title></head><body><div class='article'><h1>D-Bus FAQ</h1>"
                    f"<div class='qandaset'><table border='0' style='width: 100%;'><tbody>{rows}</tbody></table>"
                    "</div></div></body></html>", encoding="utf-8")
    text = _read(page).text
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # before: "| 1. | What is D-Bus? |" and "|  | In short, ... |", table rows
    assert "|" not in text
    assert lines[-4:] == ["1. What is D-Bus?", "In short, it is a system consisting of a wire protocol and a bus "
                          "daemon that allows applications to find and monitor one another.",
                          "2. How is the reference implementation licensed? Can I use it in proprietary applications?",
                          "The short answer is yes, you can use it in proprietary applications."]


def test_a_table_unwrapped_keeps_every_cell_and_its_caption_and_an_odd_row_keeps_the_table() -> None:
    from citesum.ingest.formats import _prepared

    # a fresh-eyes review: a row of no cells crashed the labelled rows' reading (the page fell back to its whole
    # text); a row of three cells lost two; a layout table's caption was dropped
    labelled = "".join(f"<tr><td>{n}.</td><td><p>Step {n} of the install.</p></td></tr>" for n in (1, 2))
    for odd in ("<tr></tr>", "<tr><td>Note</td><td><p>Middle cell</p></td><td>Third cell value</td></tr>"):
        page = _prepared(f"<html><body><table>{labelled}{odd}</table></body></html>")
        assert "<table>" in page and ("Third cell value" in page) == ("Third" in odd)
    layout = _prepared("<html><body><table><caption>Table 3. Exit codes</caption><tr><td><h2>Menu</h2></td>"
                       "<td><p>0 means success.</p></td></tr></table></body></html>")
    assert "<table>" not in layout and layout.index("Table 3. Exit codes") < layout.index("Menu")


def test_an_asciidoc_documents_symmetric_title_loses_its_closing_marks() -> None:
    from citesum.ingest.asciidoc import asciidoc_markdown

    # a new user's trial: NTPsec's NEWS.adoc opens "= NTPsec project news =", and every citation named the
    # document "NTPsec project news =" (the closing marks were dropped from its sections' titles only)
    title, markdown = asciidoc_markdown("= NTPsec project news =\n\nThe news.\n\n== 2021-06-06: 1.2.1 ==\n\nMore.\n")
    assert title == "NTPsec project news"
    assert markdown.splitlines()[0] == "# NTPsec project news" and "## 2021-06-06: 1.2.1" in markdown.splitlines()
    assert asciidoc_markdown("= A = B\n\nText.\n")[0] == "A = B"  # an "=" inside the title is its own


LOGGING_PAGE = """<html><head><title>libvirt: Logging in the library and the daemon</title></head><body>
<nav><a href="/">Home</a> <a href="/docs.html">Docs</a> <a href="/news.html">News</a></nav>
<main><h1>Logging in the library and the daemon</h1>
<p>Similarly the daemon logging behaviour can be tuned using 3 config variables, stored in the configuration
file:</p>
<ul><li><p>log_level: accepts the following values:</p>
<ul><li><p>4: only errors</p></li><li><p>3: warnings and errors</p></li>
<li><p>2: information, warnings and errors</p></li><li><p>1: debug and everything</p></li></ul></li>
<li><p>log_filters: defines logging filters</p></li>
<li><p>log_outputs: defines logging outputs</p></li></ul>
<p>When starting the libvirt daemon, any logging environment variable settings will override settings in the
config file. Command line options take precedence over all.</p>
<pre>
log_outputs="1:file:/var/log/libvirt/libvirtd.log"
log_filters="1:qemu 1:libvirt"
</pre>
<p>If no outputs are defined for libvirtd, it will try to use the systemd journal when its socket exists, and
standard error otherwise, which is where the messages of the daemon go when it runs in the foreground.</p>
</main><footer>Copyright the libvirt project</footer></body></html>"""


def test_the_paragraph_after_a_list_in_a_pages_main_content_is_no_item_of_it(tmp_path: Path) -> None:
    # a new user's trial (libvirt's logging page): trafilatura writes one block a line, no blank line between
    # them, and the paragraph after the list went on its last item: "log_outputs: defines logging outputs When
    # starting the libvirt daemon, ..." was stated as a bullet, and every sentence after it was an item
    document = _written(tmp_path, "logging.html", LOGGING_PAGE)
    kinds = _unit_kinds(document.text)
    assert kinds["log_outputs: defines logging outputs"] == "item"
    assert kinds["When starting the libvirt daemon, any logging environment variable settings will override "
                 "settings in the config file."] == "sentence"
    assert kinds["Command line options take precedence over all."] == "sentence"
    assert kinds["4: only errors"] == "item"  # a nested list goes on its list
    # a code block's lines stay one block
    assert 'log_outputs="1:file:/var/log/libvirt/libvirtd.log"\nlog_filters="1:qemu 1:libvirt"' in document.text


def test_a_list_ends_only_where_a_block_opens_after_it() -> None:
    from citesum.ingest.formats import lists_ended

    # a review: an item trafilatura broke before a capital ("<li>Set the value to <br>TRUE ...") stays whole
    assert lists_ended("- Set the value to\nTRUE to enable it.\n- Save.") == "- Set the value to\nTRUE to enable it.\n- Save."
    # ...and a code fence with code on its own line opens no block that would keep the rule off after it
    assert lists_ended("``` make install ```\n- log_outputs: defines logging outputs\nWhen starting it, it reads them.") \
        == "``` make install ```\n- log_outputs: defines logging outputs\n\nWhen starting it, it reads them."
    # a block of code is left as it is
    fenced = "```\n- not an item\nA line of code\n```"
    assert lists_ended(fenced) == fenced


def test_an_item_whose_text_opens_with_a_paragraph_keeps_its_marker_with_its_text(tmp_path: Path) -> None:
    # the Performance Co-Pilot tutorial and libunistring's manual: an item whose text opens on a line of its own
    # in the page's source (<li>\n    If executing ...) read as a marker alone on its line, the item's text a
    # paragraph below it
    page = ("<html><head><title>Processor performance</title></head><body><div class=\"main\"><p>The state of a "
            "processor is told from what it was doing just before the clock interrupt came, as follows:</p><ul>"
            "<li>\n    If executing a userspace task, then\nthe state is user.\n</li><li>\n    If servicing an "
            "interrupt, then the state is irq.\n</li></ul><p>The main various aspects of a locale are the "
            "ones below, each a category of its own:</p><ul><li>\nThe character encoding and the character "
            "properties.  This is the\n<code>LC_CTYPE</code> category.\n</li><li>\nThe sorting rules for text.  "
            "This is the <code>LC_COLLATE</code> category.\n</li></ul><p>Programs read these categories from the "
            "environment when they start, and most of them never read them again.</p></div></body></html>")
    text = _written(tmp_path, "cpuperf.html", page).text
    assert "- \n" not in text, text
    assert "- The character encoding and the character properties.  This is the\nLC_CTYPE category." in text, text
    kinds = _unit_kinds(text)
    assert kinds["If servicing an interrupt, then the state is irq."] == "item", kinds
    assert kinds["The sorting rules for text."] == kinds["This is the LC_COLLATE category."] == "item", kinds
    # before: the paragraph after the list went on its last item
    assert kinds["Programs read these categories from the environment when they start, and most of them never read "
                 "them again."] == "sentence", kinds


def test_a_marker_alone_goes_with_the_line_below_unless_that_line_stands_apart() -> None:
    from citesum.ingest.formats import markers_joined

    assert markers_joined("- \nFirst, programs\nusing the library include it.") == \
        "- First, programs\nusing the library include it."
    # an FAQ's question below its marker, a heading, a fence, a table's row and another item stay on their lines
    for below in ("What should I put in user.name?", "## Setup", "```", "| a | b |", "- an item"):
        assert markers_joined(f"- \n{below}\nmore") == f"- \n{below}\nmore", below
    assert markers_joined("- \n3.\nmore") == "- \n3. more"  # (a marker below a marker is the one its text follows)
    # a question that wraps stays on its lines too; its answer, an item below it, gets its marker
    assert markers_joined("- \nWhat should I put\nin user.name?\n- \nYour name.") == \
        "- \nWhat should I put\nin user.name?\n- Your name."
    # a block of code is left as it is: a comment's " *" line, a YAML list's "-", a number alone
    for code in ("/**\n * Open the file.\n *\n */", "-\n  name: alpha", "10.\nprint(x)"):
        assert markers_joined(f"Code:\n```\n{code}\n```") == f"Code:\n```\n{code}\n```", code
    # a number alone on its line is an item's marker in a list, not in a paragraph
    assert markers_joined("Steps:\n1.\nOpen it.\n2.\nClose it.") == "Steps:\n1. Open it.\n2. Close it."
    assert markers_joined("The answer is\n10.\nThat is all.") == "The answer is\n10.\nThat is all."


#: an FAQ page whose questions are headings that end as sentences do, after the floppy driver's FAQ (Texinfo's
#: HTML of 2001): one kept by the extractor, one it drops (a DocBook FAQ's), and a question heading left as it is
FAQ_PAGE = """<html><head><title>Floppy FAQ</title></head><body>
<h1>Frequently asked questions about the floppy driver</h1>
<p>This FAQ answers the questions most often asked on the mailing list about formatting and reading floppies.</p>
<a name="mtools-wrong-fat-encoding-warning"></a>
<h4> Mtools says "fat_read: Wrong FAT encoding 12 16?" (or similar) when accessing a disk formatted with the
old mtools.</h4>
<p>mtools does some sanity checks on the size of the FAT. Unfortunately, these are too strict for certain disks
formatted with the old mtools, and for hard disk partitions formatted by DOS 6. Define the environment variable
MTOOLS_FAT_COMPATIBILITY to override this check.</p>
<h4>I can't fdformat the new formats.</h4>
<p>The new formats need a recent kernel. Upgrade the kernel to version 2.0 or later and run fdformat again.</p>
<h4>Why is my floppy drive so slow?</h4>
<p>A drive reads one track per turn of the disk. Interleaving the sectors does not help on modern drives.</p>
</body></html>"""


def test_a_web_pages_heading_that_ends_as_a_sentence_is_never_stated(tmp_path: Path) -> None:
    from citesum.index.store import Index
    from citesum.pipeline import Pipeline

    text = _written(tmp_path, "FAQ.html", FAQ_PAGE).text
    units = _units(text)
    kinds = dict((words, kind) for kind, words in units)
    # each heading that ends with a full stop keeps its level's mark and reads as a heading, the text under it as
    # sentences; a question's heading is left as the page writes it
    mtools = ('#### Mtools says "fat_read: Wrong FAT encoding 12 16?" (or similar) when accessing a disk formatted '
              'with the old mtools.')
    assert kinds[mtools] == "heading", units
    assert kinds["#### I can't fdformat the new formats."] == "heading", units
    assert "Why is my floppy drive so slow?" in text.splitlines(), text
    assert kinds["Define the environment variable MTOOLS_FAT_COMPATIBILITY to override this check."] == "sentence"
    # a heading the extractor dropped is put back marked too
    from citesum.ingest.formats import with_headings

    dropped = with_headings("The new formats need a recent kernel. Upgrade the kernel.", FAQ_PAGE)
    assert "\n\n#### I can't fdformat the new formats.\n\nThe new formats need" in "\n\n" + dropped, dropped
    # asked about it, the answer states the answer, never the heading that asks
    path = tmp_path / "FAQ.html"
    documents, _ = ingest_file(path, "fdutils/FAQ.html", IngestOptions())
    index = Index.create(tmp_path / "ix")
    index.add(documents)
    summary = Pipeline(index).summarize('An old floppy gives me "fat_read: Wrong FAT encoding" when I read it. '
                                        "Is there a way around that?")
    stated = [b.text for b in summary.bullets]
    assert not any("Mtools says" in bullet for bullet in stated), summary
    assert "Define the environment variable MTOOLS_FAT_COMPATIBILITY to override this check." in stated, summary


def test_a_furo_headings_permalink_is_no_part_of_the_heading(tmp_path: Path) -> None:
    # Sphinx's Furo theme shows "#" for a heading's permalink, where other themes show "¶": mypy's headings read
    # "Ignoring a whole file#", and a heading the extractor kept was put back a second time
    page = ('<html><head><title>Common issues</title></head><body><article role="main"><section>'
            '<h1>Common issues and solutions<a class="headerlink" href="#common" title="Link to this heading">#</a>'
            '</h1><p>This section has an example of a few common problems that you may encounter when using mypy, '
            'with their solutions.</p><section><h2>Ignoring a whole file<a class="headerlink" href="#ignoring" '
            'title="Link to this heading">#</a></h2><p>A <code>#&nbsp;type:&nbsp;ignore</code> comment at the top '
            'of a module (before any statements) has the effect of ignoring the whole module.</p><p>To only ignore '
            'errors, use a top-level comment instead of it, and keep checking the module.</p></section></section>'
            '</article></body></html>')
    text = _written(tmp_path, "common_issues.html", page).text
    units = _units(text)
    assert ("heading", "Ignoring a whole file") in units and ("heading", "Common issues and solutions") in units, units
    assert text.count("Ignoring a whole file") == 1, text
    assert not any(words.endswith("#") for _, words in units), units


def test_a_listings_comments_written_as_sentences_keep_it_code(tmp_path: Path) -> None:
    # Ninja's manual: a build file whose comments are sentences read as prose, its lines as the page's text
    page = ("<html><body><main><h1>Pools</h1><p>Pools allow you to allocate one or more rules or edges a finite "
            "number of concurrent jobs, which is more tightly restricted than the default parallelism. For "
            "example:</p><pre># No more than 4 links at a time.\npool link_pool\n  depth = 4\n"
            "# No more than 1 heavy object at a time.\npool heavy_object_pool\n  depth = 1\n"
            "rule link\n  command = gcc $in -o $out\n  pool = link_pool\n# The heavy object is built alone.\n"
            "build heavy.obj: cc heavy.cc\n  pool = heavy_object_pool</pre>"
            "<p>No matter what pools you specify, ninja will never run more concurrent jobs than the default "
            "parallelism.</p></main></body></html>")
    text = _written(tmp_path, "manual.html", page).text
    kinds = _unit_kinds(text)
    listing = [words for words, kind in kinds.items() if "No more than 4 links" in words]
    assert [kinds[words] for words in listing] == ["code"], kinds
    assert kinds["No matter what pools you specify, ninja will never run more concurrent jobs than the default "
                 "parallelism."] == "sentence", kinds


def test_a_restructuredtext_code_block_keeps_its_indentation(tmp_path: Path) -> None:
    # autopep8's README: its example of badly laid out Python came out flush left, every indented line of it
    readme = ("autopep8\n========\n\nBefore running autopep8.\n\n.. code-block:: python\n\n"
              "    import math, sys;\n\n    def example1():\n        ####This is a long comment. This should be "
              "wrapped to fit within 72 characters.\n        some_tuple=(   1,2, 3,'a'  );\n"
              "        return (some_tuple, math.pi)\n\nAfter running autopep8.\n\n::\n\n"
              "    def example1():\n        # This is a long comment.\n        some_tuple = (1, 2, 3, 'a')\n")
    text = _written(tmp_path, "README.rst", readme).text
    lines = text.splitlines()
    assert "    some_tuple=(   1,2, 3,'a'  );" in lines, text  # indented under its def, as written
    assert "    some_tuple = (1, 2, 3, 'a')" in lines, text
    kinds = _unit_kinds(text)
    assert not [words for words, kind in kinds.items() if "long comment" in words and kind != "code"], kinds


#: a Doxygen page, as alsa-lib's and GLFW's are made: each line of a block of code is a <div>, and each name in
#: it has a tooltip
DOXYGEN_PAGE = """<html><head><title>ALSA project - PCM plugins</title></head><body>
<div class="contents"><div class="textblock">
<h2><a class="anchor" id="pcm_plugins_slave"></a>Slave definition</h2>
<p>The slave plugin can be specified directly with a string or the definition can be entered inside a compound
configuration node.</p>
<div class="fragment"><div class="line"><a id="l00001" name="l00001"></a><span class="lineno">    1</span>\
pcm_slave.NAME {</div>
<div class="line">    pcm STR     # PCM name</div>
<div class="line">    rate INT    # Rate in Hz or "unchanged" string</div>
<div class="line">}</div>
</div><!-- fragment -->
<p>Example:</p>
<div class="fragment"><div class="line">pcm.rate44100Hz {</div>
<div class="line">    type plug</div>
<div class="line">    slave {</div>
<div class="line">        rate 44100</div>
<div class="line">    }</div>
<div class="line">}</div>
</div><!-- fragment -->
<h2><a class="anchor" id="init"></a>Initializing GLFW</h2>
<p>The library is initialized with <a class="el" href="#init">glfwInit</a>, which returns GLFW_FALSE if an error
occurred.</p>
<div class="fragment"><div class="line"><span class="keywordflow">if</span> (!<a class="code hl_function" \
href="#init">glfwInit</a>())</div>
<div class="line">{</div>
<div class="line">    <span class="comment">// Handle initialization failure</span></div>
<div class="line">}</div>
</div><!-- fragment -->
<div class="ttc" id="ainit"><div class="ttname"><a href="#init">glfwInit</a></div><div class="ttdeci">int \
glfwInit(void)</div><div class="ttdoc">Initializes the GLFW library.</div><div class="ttdef"><b>Definition:</b> \
glfw3.h:2010</div></div>
<p>A whole program, its body one a reader may fold away:</p>
<div class="fragment"><div class="line">int main(void)</div>
<div class="foldopen" id="foldopen00001" data-start="{" data-end="}">
<div class="line">{</div>
<div class="line">    glfwInit();</div>
<div class="line">    return 0;</div>
<div class="line">}</div>
</div>
</div><!-- fragment -->
<h2>Limiting planning time</h2>
<div class="fragment"><div class="line">extern void fftw_set_timelimit(double seconds);</div></div>
<p>This function instructs FFTW to spend at most seconds seconds (approximately) in the planner.</p>
</div></div></body></html>"""


def test_a_doxygen_block_of_code_is_read_whole_as_code(tmp_path: Path) -> None:
    text = _written(tmp_path, "pcm_plugins.html", DOXYGEN_PAGE).text
    # each block is fenced, every line kept (a line that recurs on the page was dropped: "}"), indented as written,
    # without its line number
    assert ("```\npcm.rate44100Hz {\n    type plug\n    slave {\n        rate 44100\n    }\n}\n```"
            in text), text
    assert "```\npcm_slave.NAME {\n    pcm STR     # PCM name\n" in text, text
    assert "```\nif (!glfwInit())\n{\n    // Handle initialization failure\n}\n```" in text, text
    # a function's body that a reader may fold away (Doxygen 1.9.7 on) is read with it
    assert "```\nint main(void)\n{\n    glfwInit();\n    return 0;\n}\n```" in text, text
    # a name's tooltip in the code is no text of the page
    assert "Initializes the GLFW library." not in text and "glfw3.h:2010" not in text, text
    # a heading the extractor lost goes back above the block of code its words open, not into it
    assert "Limiting planning time\n\n```\nextern void fftw_set_timelimit(double seconds);\n```" in text, text
    kinds = _unit_kinds(text)
    assert kinds["The slave plugin can be specified directly with a string or the definition can be entered inside "
                 "a compound configuration node."] == "sentence", kinds


def test_a_heading_put_back_goes_above_the_code_its_words_open() -> None:
    from citesum.ingest.formats import with_headings

    # FFTW's Texinfo page: the extractor lost a heading whose section opens with a block of code, and the heading
    # went back inside the block, as its first line of code
    page = ("<p>You can also use fftw_alignment_of to detect whether two arrays are equivalently aligned.</p>"
            "<h4>Limiting planning time</h4><pre>extern void fftw_set_timelimit(double seconds);</pre>"
            "<p>This function instructs FFTW to spend at most seconds seconds in the planner.</p>")
    main = ("You can also use fftw_alignment_of to detect whether two arrays are equivalently aligned.\n```\n"
            "extern void fftw_set_timelimit(double seconds);\n```\nThis function instructs FFTW to spend at most "
            "seconds seconds in the planner.")
    assert "aligned.\n\nLimiting planning time\n\n```\nextern void" in with_headings(main, page)
    # the words after a heading are found across a code fence ("This can be done with" above its code)
    page = ("<p>See the manual.</p><h1>How to permanently bind a variable to a register?</h1><p>This can be done "
            "with</p><pre>register unsigned char counter asm(\"r3\");</pre><p>Typically, it is safe.</p>")
    main = ("See the manual.\nThis can be done with\n```\nregister unsigned char counter asm(\"r3\");\n```\n"
            "Typically, it is safe.")
    assert ("See the manual.\n\nHow to permanently bind a variable to a register?\n\nThis can be done with\n```"
            in with_headings(main, page))
    # Shorewall's FAQ: a fence the extractor left on a line of code ("... bridge ```"), then a heading whose words
    # follow another block's closing fence: the heading goes right before its words, not above that block
    page = ("<p>Add this to the interfaces file:</p><pre>post-up /sbin/ip addr add 10.0.0.1 dev br0</pre>"
            "<h3>(FAQ 95) What is this $FW that I see in the configuration files?</h3>"
            "<p>It is the name of the firewall zone, fw by default.</p><pre>gate firewall</pre>"
            "<h3>(FAQ 98) How do I unsubscribe from the mailing list?</h3><p>Use the list's web page to leave "
            "it.</p>")
    main = ("Add this to the interfaces file:\n```\npost-up /sbin/ip addr add 10.0.0.1 dev br0 ```\n"
            "It is the name of the firewall zone, fw by default.\n```\ngate firewall\n```\n"
            "Use the list's web page to leave it.")
    restored = with_headings(main, page)
    assert ("\n\n(FAQ 95) What is this $FW that I see in the configuration files?\n\nIt is the name of the "
            "firewall zone" in restored), restored
    assert ("```\ngate firewall\n```\n\n(FAQ 98) How do I unsubscribe from the mailing list?\n\nUse the list's"
            in restored), restored


def test_a_fence_a_page_shows_in_its_text_does_not_turn_its_text_to_code() -> None:
    from citesum.ingest.formats import html_to_text

    # a Markdown page shows how to write a fence: that <pre> is no code block of its own, and its "```" lines
    # made the text after it keep its spaces, and the real code block after it lose its indentation
    page = ("<p>To show a fence in Markdown, indent it:</p><pre>```\nmake install\n```</pre>"
            "<p>After the example,\n   the paragraph goes on.<br>\n   A line after a break.</p>"
            "<pre>def f():\n    return 1\n</pre><p>The end.</p>")
    text = html_to_text(page)[1]
    assert "\nA line after a break.\n" in text and "```   After" not in text, text
    assert "def f():\n    return 1\n" in text, text


#: Festival's Texinfo page: an option's description holds a block of code, and the sentence after it
FESTIVAL_PAGE = """<html><head><title>Server/client API (Festival)</title></head><body>
<div class="nav-panel"><p>Next: <a href="Scheme-API.html">Scheme API</a>, Up: <a href="Server.html">Server</a></p></div>
<h3 class="section">28.3 Server/client API</h3>
<p>The client program festival_client offers several options to talk to a running Festival server. Each of them
is described here, with what it sends to the server and what it gives back to the user.</p>
<dl compact="compact">
<dt><span><code>--ttw</code></span></dt>
<dd><p>Text to wave is an attempt to make festival_client useful in many simple applications. It basically does
the following</p><div class="example lisp">
<pre class="lisp">(Parameter.set 'Wavefiletype '&lt;output type&gt;)
(tts_textall "
    &lt;file/stdin contents&gt;
")
</pre></div>
<p>Note that this is best used for small, single utterance texts as you have to wait for the whole text to be
synthesized before it is returned.</p></dd>
<dt><span><code>--async</code></span></dt>
<dd><p>This option in conjunction with --ttw causes the text to be synthesized utterance by utterance.</p></dd>
</dl>
<ul><li>Run the server first:<pre><code>festival --server</code>
<code>festival_client --ttw fred.txt</code></pre>Then wait for it to answer.</li></ul>
<table><tr><td>Example <pre>a
b</pre></td><td>The two lines of a cell.</td></tr></table>
<p>The client and the server may run on different machines, as long as the server allows the client's host.</p>
</body></html>"""


def test_a_block_of_code_in_a_list_item_keeps_its_lines(tmp_path: Path) -> None:
    text = _written(tmp_path, "Server_002fclient-API.html", FESTIVAL_PAGE).text
    # the extractor ran the code, its fences and the sentence after it into one line of the definition
    assert ("It basically does the following\n```\n(Parameter.set 'Wavefiletype '<output type>)\n(tts_textall \"\n"
            "    <file/stdin contents>\n\")\n```\nNote that this is best used") in text, text
    # a block in a list item, its lines each a <code>, and the item's text after it
    assert "Run the server first:\n```\nfestival --server\nfestival_client --ttw fred.txt\n```\nThen wait" in text, text
    kinds = _unit_kinds(text)
    assert kinds["Note that this is best used for small, single utterance texts as you have to wait for the whole "
                 "text to be synthesized before it is returned."] == "sentence", kinds
    # a table's row stays on its line, and no mark the lines were carried in is left
    assert not any(mark in text for mark in "\u241d\u241e\u241f"), text


def test_a_block_of_code_in_a_list_item_is_its_shown_lines_and_ends_the_item_as_its_text_would() -> None:
    from citesum.ingest.formats import _main_content, lists_ended

    intro = "<p>The words of this page, enough of them to make a paragraph of content that is kept.</p>"
    # the code's lines as shown: its copy button and script left out, its blank first and last lines dropped, its
    # indentation kept (no-break spaces too)
    page = (f"<html><body><div>{intro}<ul><li>Run:<pre><button class='copy'>Copy</button><code>\n\na\n&nbsp;&nbsp;b"
            "\n<script>var x=1;</script>\tc\n\n\n</code></pre>to see the output of the command</li></ul>"
            "<p>Other words about the page are written here in a paragraph of its own.</p></div></body></html>")
    main = lists_ended(_main_content(page))
    assert "- Run:\n```\na\n  b\n\tc\n```\nto see the output of the command\n\nOther words" in main, main
    # a list in a table's cell keeps its row on one line
    page = (f"<html><body><div>{intro}<table><tr><td><ul><li>Run:<pre>a b\n  c</pre>then go.</li></ul></td>"
            "<td>Second cell</td></tr></table></div></body></html>")
    assert "| Run: ``` a b c ``` then go. | Second cell |" in _main_content(page)


def test_a_page_that_writes_the_line_marks_is_read_as_it_was(tmp_path: Path) -> None:
    from citesum.ingest.formats import _main_content

    # a control picture that a block's lines are carried in, written by the page itself (or as a character
    # reference), is its text: it is not read back as a line break, and no mark is written on the page
    for mark in ("\u241e", "&#x241E;"):
        page = FESTIVAL_PAGE.replace("Each of them", f"Each of them ({mark} marks a record)")
        main = _main_content(page)
        assert "them (\u241e marks a record) is" in main, main
        assert "- Run the server first: ``` festival --server festival_client --ttw fred.txt ```" in main, main


def test_a_character_reference_a_page_shows_is_read_as_shown(tmp_path: Path) -> None:
    # Pango's markup page shows how to write a character reference: the main-content extractor decoded the
    # references of the text it gave once more, so "&#169; for ©" read "© for ©", and "&amp;" read "&"
    intro = ("<p>Pango uses GMarkup to parse this language, which means that XML features such as numeric "
             "character entities such as <code>&amp;#169;</code> for &#169; can be used too.</p>")
    # (in an element's tail too, after inline code; and CppUnit's "&registry" in a block of code)
    rest = ("<p>Write <code>&amp;amp;</code> for an ampersand, &amp;lt; for a less-than sign; AT&amp;T &lt;b&gt; "
            "stays as shown.</p><pre>TestFactoryRegistry &amp;registry = get();</pre>"
            "<p>Other words about the page are written here in a paragraph of its own, long enough.</p>")
    text = _written(tmp_path, "markup.html", f"<html><body><main><h1>Markup</h1>{intro}{rest}</main></body></html>"
                    ).text
    assert "numeric character entities such as &#169; for © can be used too." in text, text
    assert "Write &amp; for an ampersand, &lt; for a less-than sign; AT&T <b> stays as shown." in text, text
    assert "TestFactoryRegistry &registry = get();" in text, text
    # a page that writes the ampersand's mark itself is read as it was, the mark its own text, and a block of
    # code in its list item keeps its lines still
    item = "<ul><li>Run the server first: <pre>festival --server\nfestival_client x</pre> then go on.</li></ul>"
    marked = _written(tmp_path, "marked.html", "<html><body><main><h1>Markup</h1>"
                      f"<p>The sign \u2426 stands for a substitute.</p>{item}{intro}{rest}</main></body></html>").text
    assert "The sign \u2426 stands for a substitute." in marked, marked
    assert "```\nfestival --server\nfestival_client x\n```" in marked, marked


def test_a_json_ld_article_body_is_read_decoded_once() -> None:
    import json

    from citesum.ingest.formats import _main_content

    # a short page's article, which trafilatura reads from its JSON-LD, HTML-escaped there
    body = "Tom &amp; Jerry is a cartoon about a cat and a mouse; the cat chases the mouse through the house. " * 4
    data = json.dumps({"@context": "https://schema.org", "@type": "Article", "articleBody": body})
    main = _main_content(f'<html><head><script type="application/ld+json">{data}</script></head>'
                         "<body><div>Short.</div></body></html>")
    assert main.startswith("Tom & Jerry is a cartoon"), main


def test_a_table_cell_value_in_a_center_is_read(tmp_path: Path) -> None:
    # GeographicLib's Doxygen page on geoids centres each number of its tables (<td><center>0.6</center></td>):
    # the main-content extractor dropped every such value, so its table of data files read names only
    page = ("<html><head><title>Geoid height</title></head><body><div class=\"textblock\">"
            "<p>The geoid heights are computed using interpolation into a rectangular grid. These data files are "
            "available for download:</p><center><table class=\"doxtable\"><caption>Available geoid data files"
            "</caption><tr><th>name</th><th>geoid</th><th><center>grid</center></th><th><center>size (MB)</center>"
            "</th></tr><tr><td>egm84-30 </td><td>EGM84 </td><td><center>30'</center> </td><td><center>0.6</center>"
            " </td></tr><tr><td>egm96-5 </td><td>EGM96 </td><td><center>5'</center> </td><td><center> 19</center>"
            " </td></tr></table></center><p>The size column is the size of the uncompressed data, which is what "
            "the geoid takes in memory.</p><table><tr><th>option</th><th>meaning</th></tr><tr><td><label>-n</label>"
            "</td><td>the geoid's name</td></tr></table></div></body></html>")
    text = _written(tmp_path, "geoid.html", page).text
    assert "| name | geoid | grid | size (MB) |" in text, text
    assert "| egm84-30 | EGM84 | 30' | 0.6 |" in text, text
    assert "| egm96-5 | EGM96 | 5' | 19 |" in text, text
    assert "| -n | the geoid's name |" in text, text
    # two values a cell shows on two lines stay apart; a hidden one stays hidden
    two = _written(tmp_path, "two.html", page.replace("<center>0.6</center>", "<center>0.6</center><center>1.2"
                                                      "</center><label class=\"sr-only\">MB</label>")).text
    assert "| egm84-30 | EGM84 | 30' | 0.6 1.2 |" in two, two
    # a layout cell's content in a <main> is the page's content, read first, its paragraphs kept apart
    layout = ("<html><head><title>Guide</title></head><body><table><tr><td><a href=\"/\">Home</a> <a href=\"/a\">"
              "About</a></td><td><main><p>The first paragraph of the guide tells what the program does and who "
              "it is for.</p><p>The second paragraph of the guide tells how to install it on a new machine.</p>"
              "</main></td></tr></table></body></html>")
    read = _written(tmp_path, "layout.html", layout).text
    assert read.startswith("The first paragraph of the guide tells what the program does and who it is for.\n"
                           "The second paragraph of the guide tells how to install it on a new machine.\n"), read


def test_a_section_whose_heading_names_page_furniture_is_kept(tmp_path: Path) -> None:
    # LibTIFF's Sphinx manual: the section "TIFF Tags" is <section id="tiff-tags">, and the main-content
    # extractor dropped it whole as a page's list of tags; pandoc's, docutils' and Texinfo's sections are named so
    intro = ("<p>The library reads and writes images stored in the Tag Image File Format, one directory an image, "
             "and this page tells how a program uses it.</p>")
    sections = [("section", "", "tiff-tags", "TIFF Tags", "Tags are identified by a number that is usually a value "
                 "registered with the Aldus Corporation."),
                ("section", ' class="level2"', "related-work", "3 Related work", "Earlier readers of the format kept "
                 "every directory of a file in memory at once."),
                ("div", ' class="section"', "authors-1", "Authors", "The library was written by Sam Leffler at "
                 "Silicon Graphics and is kept by volunteers now."),
                ("div", ' class="section-level-extent"', "Comments", "2.4 Comments", "The program formats a "
                 "comment that opens in the first column as it formats the code around it.")]
    body = "".join(f"<{tag}{cls} id=\"{name}\"><h2>{heading}</h2><p>{sentence} It says so in the manual page "
                   f"of the library as well.</p></{tag}>" for tag, cls, name, heading, sentence in sections)
    page = (f"<html><head><title>Using The TIFF Library</title></head><body><div class=\"body\" role=\"main\">"
            f"<section id=\"using-the-tiff-library\"><h1>Using The TIFF Library</h1>{intro}{body}</section></div>"
            "<div id=\"sidebar\"><h3>Sidebar</h3><p>Quick search for the words of a page of this manual, "
            "across every page of the manual and its indexes.</p></div></body></html>")
    text = _written(tmp_path, "libtiff.html", page).text
    for _, _, _, heading, sentence in sections:
        assert heading in text and sentence in text, text
    # a page's sidebar, not one of its sections, is still left out, though its heading names it
    assert "Quick search" not in text, text
    # a page's one section named by its heading is a template's: a blog's readers' comments stay out
    post = ("<html><head><title>Notes on the format</title></head><body><article><h1>Notes on the format</h1>"
            f"{intro}<p>Each directory of the file is read once, and the strips of an image are read when asked "
            "for.</p></article><section id=\"comments\"><h2>3 Comments</h2><p>Buy cheap watches from our shop "
            "today, the best prices of the whole year on every model.</p></section></body></html>")
    text = _written(tmp_path, "post.html", post).text
    assert "strips of an image" in text and "cheap watches" not in text, text


def test_a_nested_list_of_linked_names_a_sentence_goes_on_with_is_kept() -> None:
    from citesum.ingest.formats import _main_content, _prepared

    # libFLAC's Doxygen page: an item's sentence goes on in a nested list of function names, each a link; the
    # extractor dropped the list as navigation
    names = [[f"FLAC__stream_decoder_init_{kind}{name}()" for name in ("stream", "FILE", "file")]
             for kind in ("", "ogg_")]
    linked = [" or ".join(f"<a class='el' href='#{name}'>{name}</a>" for name in row) for row in names]
    item = ("<li>The program initializes the instance to validate the settings and prepare for decoding using<ul>"
            f"<li>{linked[0]} for native FLAC,</li><li>{linked[1]} for Ogg FLAC</li></ul></li>")
    page = ("<html><body><div class='contents'><p>The basic usage of this decoder is as follows:</p><ul><li>The "
            f"program creates an instance of a decoder using <a class='el' href='#n'>new()</a>.</li>{item}<li>The "
            "program finishes the decoding, which flushes the input and output.</li></ul><p>In more detail, the "
            "program will create a new instance and then call the functions to override the default options.</p>"
            "</div></body></html>")
    main = _main_content(page)
    assert ("decoding using\n  - FLAC__stream_decoder_init_stream() or FLAC__stream_decoder_init_FILE() or "
            "FLAC__stream_decoder_init_file() for native FLAC,\n  - FLAC__stream_decoder_init_ogg_stream() or") in main, main
    # a table of contents keeps its links, wrapped in a <div> or not: the items it lists others under are links
    # alone, though those may write words beside their links
    contents = ("<ul><li><a href='#t'>Troubleshooting problems</a><div><ul><li><a href='#e'>Error messages</a> "
                "and warnings<ul><li><a href='#c'>Configuration error: missing parameter</a> <code>name</code> of a "
                "section</li></ul></li></ul></div></li></ul>")
    assert _prepared(f"<html><body>{contents}<p>Text.</p></body></html>").count("<a href") == 3
    # an item of links alone under a sentence is a menu's, not the sentence's
    menu = item.replace(" for native FLAC,", "").replace(" for Ogg FLAC", "").replace(" or ", "")
    assert _prepared(f"<html><body><ul>{menu}</ul><p>Text.</p></body></html>").count("href=") == 6


def test_a_table_in_a_list_item_is_read_as_its_rows(tmp_path: Path) -> None:
    # trafilatura ran such a table into the item's text, its cells not even spaced apart: FreedomBox's numbered
    # steps of a mesh connection ("Field Name Example Value Explanation Connection Name Mesh Join ..."), and the
    # list items that lay out a Javadoc page ("static java.lang.StringgetExtension(java.lang.String fileName)Gets")
    fields = "".join(f"<tr><td>{name}</td><td>{value}</td><td>{meaning}</td></tr>" for name, value, meaning in (
        ("Field Name", "Example Value", "Explanation"), ("Connection Name", "Mesh Join - BATMAN", "The name of the "
         "connection, shown in the list of connections"), ("Interface", "wlan0", "The Wi-Fi device to join with"),
        ("Flags", "a|b", "<div>Set by the</div><div>driver,</div> as a value<br>written on two lines")))
    steps = ("<ol><li><p>Create a new connection, then select the connection type as Wi-Fi. In the following dialog, "
             f"provide the following values:</p><div><table><tbody>{fields}</tbody></table></div><p>Save the connection"
             ". Join the mesh network by activating this newly created connection.</p></li><li><p>Create a second "
             "connection of the type Generic, for the BATMAN device itself.</p></li></ol>")
    summary = ("<ul class='blockList'><li class='blockList'><h3>Method Summary</h3><table><tr><th>Modifier and Type"
               "</th><th>Method</th><th>Description</th></tr><tr><td><code>static java.lang.String</code></td><th>"
               "<code><a href='#getExtension'>getExtension</a>(java.lang.String&nbsp;fileName)</code></th><td><div>"
               "Gets the extension of a fileName.</div></td></tr><tr><td><code>static boolean</code></td><th><code>"
               "<a href='#isExtension'>isExtension</a>(java.lang.String&nbsp;fileName)</code></th><td><div>Checks "
               "whether the extension of the fileName is that specified.</div></td></tr></table></li></ul>")
    laid_out = ("<ul><li>Two ways to join:<table><tr><td>By hand</td><td><p>Open the connection dialog of the "
                "mesh.</p><p>Then type its name.</p></td></tr></table></li></ul>")
    note = ("<ul><li><p>Choose a password for the database.</p><table><tr><td><img src='warning.png'></td><td>Keep "
            "this password safe, as a database whose password is lost cannot be opened again.</td></tr></table>"
            "</li></ul>")
    page = tmp_path / "mesh.html"
    page.write_text("<html><body><main><h1>Mesh networks</h1><p>FreedomBox can join an existing mesh network in "
                    f"your area or create a new one and share its Internet connection.</p>{steps}{summary}{note}"
                    f"{laid_out}"
                    "<p>Each connection is kept until it is deleted from the list of connections.</p></main></body>"
                    "</html>", encoding="utf-8")
    text = _read(page).text
    units = _units(text)
    for row in ("| Connection Name | Mesh Join - BATMAN | The name of the connection, shown in the list of "
                "connections |", "| static java.lang.String | getExtension(java.lang.String fileName) | Gets the "
                "extension of a fileName. |"):
        assert ("table", row) in units, text
    # a table whose cell holds paragraphs lays blocks out side by side: no row of values
    assert "Open the connection dialog of the mesh." in text and "| By hand |" not in text, text
    # a cell's lines and blocks are one value, spaced; a "|" in it is escaped, as in any table read as rows
    assert ("table", "| Flags | a\\|b | Set by the driver, as a value written on two lines |") in units, text
    assert ("sentence", "Save the connection.") in units, units
    assert "StringgetExtension" not in text and "Field Name Example Value" not in text
    # a note set beside its icon, one cell of text a row, is read as the item's text, not as a table's row
    assert ("item", "Keep this password safe, as a database whose password is lost cannot be opened "
            "again.") in units, units


def test_sphinxs_source_link_after_a_signature_is_left_out(tmp_path: Path) -> None:
    # python-can's API pages ended every signature with "[source]", the viewcode extension's link to the code
    signature = ('<dl class="py method"><dt class="sig sig-object py" id="can.Bus.recv"><span class="sig-name '
                 'descname"><span class="pre">recv</span></span><span class="sig-paren">(</span><em class="sig-param">'
                 '<span class="n"><span class="pre">timeout</span></span></em><span class="sig-paren">)</span><a '
                 'class="reference internal" href="../_modules/can/bus.html#Bus.recv"><span class="viewcode-link">'
                 '<span class="pre">[source]</span></span></a><a class="headerlink" href="#can.Bus.recv">¶</a></dt>'
                 '<dd><p>Block waiting for a message from the Bus, for at most timeout seconds.</p></dd></dl>')
    page = tmp_path / "bus.html"
    page.write_text('<html><body><div class="body"><h1>Bus<a class="headerlink" href="#bus">¶</a></h1><p>A bus '
                    'sends and receives the messages of one CAN channel, and is opened with its interface.</p>'
                    f'{signature}</div></body></html>', encoding="utf-8")
    text = _read(page).text
    assert "[source]" not in text
    assert "recv(timeout)" in text and "Block waiting for a message from the Bus, for at most timeout seconds." in text


def _doxygen_member(name: str, declaration_rows: str, text: str, labels: str = "") -> str:
    """A member's documentation as Doxygen writes it: its heading, its declaration laid out in a table (in a
    table of its labels, with ``labels``), then its description."""
    declaration = f'<table class="memname">{declaration_rows}</table>'
    if labels:
        declaration = (f'<table class="mlabels"><tr><td class="mlabels-left">{declaration}</td><td class="mlabels-'
                       f'right"><span class="mlabels"><span class="mlabel">{labels}</span></span></td></tr></table>')
    return (f'<h2 class="memtitle"><span class="permalink"><a href="#{name}">&#9670;&nbsp;</a></span>{name}()</h2>'
            f'<div class="memitem"><div class="memproto">{declaration}</div><div class="memdoc"><p>{text}</p>'
            '</div></div>')


def test_a_doxygen_members_declaration_is_code_under_its_heading(tmp_path: Path) -> None:
    # Box2D's b2Body page: each member's declaration, laid out a parameter a row, read as table rows, or, set
    # in a table beside its "inline" label, was lost, and so was every member's heading ("ApplyForce()")
    force = ('<tr><td class="memname">void b2Body::ApplyForce </td><td>(</td><td class="paramtype">const b2Vec2 '
             '&amp;&#160;</td><td class="paramname"><em>force</em>, </td></tr><tr><td class="paramkey"></td><td></td>'
             '<td class="paramtype">bool&#160;</td><td class="paramname"><em>wake</em>&#160;</td></tr><tr><td></td>'
             '<td>)</td><td></td><td></td></tr>')
    torque = ('<tr><td class="memname">void b2Body::ApplyTorque </td><td>(</td><td class="paramtype">float&#160;'
              '</td><td class="paramname"><em>torque</em></td><td>)</td></tr>')
    page = tmp_path / "classb2_body.html"
    page.write_text(
        '<html><body><div class="contents"><p>A rigid body. These are created via b2World::CreateBody, and each one '
        'holds the fixtures that give it a shape.</p><h2 class="groupheader">Member Function Documentation</h2>'
        + _doxygen_member("ApplyForce", force, "Apply a force at a world point. If the force is not applied at the "
                          "center of mass, it will generate a torque and affect the angular velocity.", "inline")
        + _doxygen_member("ApplyTorque", torque, "Apply a torque. This affects the angular velocity without "
                          "affecting the linear velocity of the center of mass.")
        + '</div></body></html>', encoding="utf-8")
    text = _read(page).text
    assert ("ApplyForce()\n\n```\nvoid b2Body::ApplyForce ( const b2Vec2 & force, bool wake ) [inline]\n```\n"
            "Apply a force at a world point.") in text, text
    assert "ApplyTorque()\n\n```\nvoid b2Body::ApplyTorque ( float torque )\n```\nApply a torque." in text, text
    assert "◆" not in text and "|" not in text
    units = _units(text)
    assert ("heading", "ApplyForce()") in units and ("code", "``` void b2Body::ApplyForce ( const b2Vec2 & force, "
                                                     "bool wake ) [inline] ```") in units, units


def test_a_heading_is_not_taken_for_the_one_line_of_code_it_names() -> None:
    from citesum.ingest.formats import with_headings

    # libgpiod's "anonymous enum": its declaration says what its heading does; the heading goes above the block,
    # and the block keeps its line. Between a block's closing fence and the next one's opening, a heading's line
    # is the heading
    page = ('<p>Check whether the line is free.</p><h2>anonymous enum</h2><pre>anonymous enum</pre><p>Available '
            'types of requests.</p><h2>Output a standard PDF</h2><pre>ocrmypdf --output-type pdf in.pdf out.pdf</pre>')
    main = ("Check whether the line is free.\n```\nanonymous enum\n```\nAvailable types of requests.\n```\n"
            "echo\n```\nOutput a standard PDF\n```\nocrmypdf --output-type pdf in.pdf out.pdf\n```")
    restored = with_headings(main, page)
    assert "free.\n\n## anonymous enum\n\n```\nanonymous enum\n```\nAvailable types" in restored, restored
    assert restored.count("Output a standard PDF") == 1, restored
    # Opus's Doxygen page: its summary of typedefs ("Typedefs", a table the extractor dropped) opens with the words
    # that declare the typedef further down; the summary's heading is not put inside that declaration's block,
    # and the member's heading, whose declaration Doxygen lays out in a table, goes above the block
    page = ('<h2>Typedefs</h2><table><tr><td>typedef struct OpusEncoder</td> <td>OpusEncoder</td></tr>\n<tr><td>'
            '</td> <td>Opus encoder state. More...</td></tr></table><p>Encodes Opus frames.</p><h2>OpusEncoder</h2>'
            '<div class="memproto"><table class="memname"><tr><td class="memname">typedef struct OpusEncoder '
            'OpusEncoder</td></tr></table></div><p>Opus encoder state.</p>')
    main = "Encodes Opus frames.\n```\ntypedef struct OpusEncoder OpusEncoder\n```\nOpus encoder state."
    restored = with_headings(main, page)
    assert "frames.\n\nOpusEncoder\n\n```\ntypedef struct OpusEncoder OpusEncoder\n```\nOpus" in restored, restored
    assert "```\n\nTypedefs" not in restored and "Typedefs\n\n```" not in restored, restored


def test_a_bold_label_on_its_own_markdown_line_stays_apart_from_the_text_below(tmp_path: Path) -> None:
    # Shairport Sync's troubleshooting guide: CommonMark joins "**Problem**" to the next line, and the label ran
    # into the sentence ("Problem When using a USB DAC ..."); a label in a sentence's line stays in it
    text = _written(tmp_path, "TROUBLESHOOTING.md", (
        "### Stuttering audio on certain USB DACs\n\n**Problem**\nWhen using a USB DAC on a Raspberry Pi, audio "
        "plays fine through other players but stutters when streamed.\n\n**Possible Solution**\nCheck the details "
        "of your USB DAC with 'aplay -l' first.\n\n**Note:** the buffer can also be made longer.\n\n**Do not delete "
        "the**\nconfiguration file while the player runs.\n\n**A label of five words here**\nThe text goes on.\n\n"
        "- **Cause**\n  When the list is tight, its label stays in its item.\n")).text
    units = _units(text)
    assert ("sentence", "When using a USB DAC on a Raspberry Pi, audio plays fine through other players but stutters "
            "when streamed.") in units, units
    assert ("sentence", "Check the details of your USB DAC with 'aplay -l' first.") in units, units
    assert "Problem When" not in text and "Possible Solution Check" not in text
    assert "Note: the buffer can also be made longer." in text
    assert "Do not delete the configuration file while the player runs." in text  # a wrapped sentence, no label
    assert "A label of five words here The text goes on." in text
    assert "Cause When the list is tight, its label stays in its item." in text


def test_two_sections_that_open_with_the_same_words_each_get_their_heading() -> None:
    from citesum.ingest.formats import with_headings

    # Icecast's URL authentication: "mount_add" and "mount_remove" both open with "This URL is for informing the
    # auth server of a stream"; both headings went before the first section, the second's text left without one
    page = ("<p>The options are described below in more detail.</p><h4>mount_add</h4><p>This URL is for informing the "
            "auth server of a stream starting.</p><h4>mount_remove</h4><p>This URL is for informing the auth server "
            "of a stream finishing.</p>")
    main = ("The options are described below in more detail.\nThis URL is for informing the auth server of a stream "
            "starting.\nThis URL is for informing the auth server of a stream finishing.")
    restored = with_headings(main, page)
    assert "\n\n#### mount_add\n\nThis URL is for informing the auth server of a stream starting." in restored, restored
    assert "\n\n#### mount_remove\n\nThis URL is for informing the auth server of a stream finishing." in restored


def test_a_docbook_pages_table_of_contents_is_left_out(tmp_path: Path) -> None:
    # FreedomBox's manual, Mutt's and APT's chapters: the links went, their title "Table of Contents" stayed as
    # the page's first line of text
    sections = [("id1", "Default setup", "In a fresh image of FreedomBox, the network is not configured at all "
                 "until the device boots for the first time."),
                ("id2", "Internet Connection Sharing", "FreedomBox shares the Internet connection of its external "
                 "interface with the machines on its internal network.")]
    links = "".join(f'<li><span class="section"><a href="#{anchor}">{title}</a></span></li>'
                    for anchor, title, _ in sections)
    body = "".join(f'<section class="section" id="{anchor}"><div class="titlepage"><div><div><h3 class="title">'
                   f'{title}</h3></div></div></div><p>{text}</p></section>' for anchor, title, text in sections)
    page = tmp_path / "Networks.part.html"
    page.write_text(
        '<section class="article" id="id0"><div class="titlepage"><div><div><h2 class="title">Networks</h2></div>'
        '</div><hr/></div><div class="toc"><div class="toc-title">Table of Contents</div><ul class="toc"><li><span '
        f'class="section"><a href="#id9">Networks</a></span><ul>{links}</ul></li></ul></div><section class="section" '
        'id="id9"><div class="titlepage"><div><div><h2 class="title">Networks</h2></div></div></div><p>This section '
        f'describes how networking is set up by default in FreedomBox and how you can customize it.</p>{body}'
        '</section></section>', encoding="utf-8")
    text = _read(page).text
    assert "Table of Contents" not in text, text
    assert "This section describes how networking is set up by default in FreedomBox" in text
    assert "\nDefault setup\n" in text
    # a box of that class that is mostly prose, not a list of links, is the page's text
    page.write_text('<div class="toc"><p>This page explains, in a few paragraphs of prose, how the network of the '
                    'box is set up, and how to <a href="#id1">change it</a>.</p></div>', encoding="utf-8")
    assert "how the network of the box is set up" in _read(page).text
