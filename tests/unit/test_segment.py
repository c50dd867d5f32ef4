"""Text as a reader sees it (issue 44): units of one kind each, spans of the original text."""

from __future__ import annotations

from citesum.chunking import sentence_spans
from citesum.segment import is_whole_sentence, segments
from timing import assert_linear


def _units(text: str) -> list[tuple[str, str]]:
    return [(unit.kind, " ".join(text[unit.start : unit.end].split())) for unit in segments(text)]


WRAPPED = """Triggers
--------

A trigger is activated when one of the triggers in which a package is
interested is activated by another package. The dpkg program then runs
the postinst script with the argument "triggered", e.g. when a file is
installed. See deb-triggers(5) for details.

  * dpkg-trigger: activates a trigger explicitly, for instance from a
    maintainer script.
  * Files in /usr/share/doc are watched by the "interest" directive.

Copyright (C) 2008 Ian Jackson
"""


def test_a_hard_wrapped_paragraph_is_cut_into_whole_sentences_not_lines() -> None:
    units = _units(WRAPPED)
    assert ("heading", "Triggers --------") in units  # the underline goes with its heading
    assert ("sentence", "A trigger is activated when one of the triggers in which a package is interested is "
                        "activated by another package.") in units
    # "e.g. when" does not end the sentence: the next word is lower-case
    assert ("sentence", 'The dpkg program then runs the postinst script with the argument "triggered", e.g. when '
                        "a file is installed.") in units
    assert ("item", "dpkg-trigger: activates a trigger explicitly, for instance from a maintainer script.") in units
    assert ("boilerplate", "Copyright (C) 2008 Ian Jackson") in units
    assert not any(text.startswith(("*", "-")) for _, text in units)  # markers are left out of the span
    assert [kind for kind, _ in units].count("sentence") == 2
    assert ("boilerplate", "See deb-triggers(5) for details.") in units  # where to read on, not a fact


def test_spans_are_offsets_into_the_original_text() -> None:
    for unit in segments(WRAPPED):
        piece = WRAPPED[unit.start : unit.end]
        assert piece == piece.strip() and piece
    # the chunker cuts passages at the same units
    assert [(s.start, s.end) for s in sentence_spans(WRAPPED)] == [(u.start, u.end) for u in segments(WRAPPED)]


MANUAL = """Next: Closure Example, Previous: The Closure API, Up: Using libffi   [Contents][Index]

4.4 Thread Safety

libffi is not completely thread-safe. However, many parts are, and if you follow some simple rules, you can use it safely in a multi-threaded program.

- - Function: ffi_status ffi_prep_cif (ffi_cif *cif, ffi_abi abi, unsigned int nargs, ffi_type *rtype)
Name     Type      Meaning
abi      ffi_abi   the calling convention

    ffi_call(&cif, FFI_FN(puts), &rc, values);
    return 0;
"""


def test_navigation_headings_definitions_tables_and_code_are_not_sentences() -> None:
    units = _units(MANUAL)
    kinds = dict((text, kind) for kind, text in units)
    assert kinds["Next: Closure Example, Previous: The Closure API, Up: Using libffi [Contents][Index]"] == "boilerplate"
    assert kinds["4.4 Thread Safety"] == "heading"
    assert kinds["libffi is not completely thread-safe."] == "sentence"  # its own capitalisation
    assert [kind for kind, text in units if "ffi_prep_cif" in text] == ["item"]
    assert not is_whole_sentence(next(text for _, text in units if "ffi_prep_cif" in text))
    assert [kind for kind, text in units if text.startswith(("Name", "abi"))] == ["table", "table"]
    assert [kind for kind, text in units if "ffi_call" in text] == ["code"]


def test_news_filler_is_boilerplate_and_abbreviations_do_not_cut() -> None:
    text = ("The mayor's office did not respond to a request for comment before publication. Dr. Smith said the "
            "U.S. pipes were old. A spokesperson declined to comment. Officials said more details would follow "
            "in the coming weeks. Rates rose 3.5 percent at St. Mary's.")
    assert _units(text) == [
        ("boilerplate", "The mayor's office did not respond to a request for comment before publication."),
        ("sentence", "Dr. Smith said the U.S. pipes were old."),
        ("boilerplate", "A spokesperson declined to comment."),
        ("boilerplate", "Officials said more details would follow in the coming weeks."),
        ("sentence", "Rates rose 3.5 percent at St. Mary's."),
    ]


def test_e_g_and_i_e_written_without_their_inner_dot_do_not_cut_and_a_browsers_name_can() -> None:
    # tio's README: "If the connection is lost (eg. device is unplugged), it will wait for the device to reappear"
    text = ("If the connection is lost (eg. device is unplugged), it will wait for the device to reappear. Use a "
            "terminal program, ie. Minicom or Picocom. The page renders in IE. Then it reloads.")
    assert [unit for kind, unit in _units(text)] == [
        "If the connection is lost (eg. device is unplugged), it will wait for the device to reappear.",
        "Use a terminal program, ie. Minicom or Picocom.",
        "The page renders in IE.",
        "Then it reloads.",
    ]


def test_an_elision_in_brackets_does_not_cut() -> None:
    # schema's README: "The Schema(...) parameter ignore_extra_keys causes ..." was cut after "(...)", and the
    # sentence stated from "parameter ignore_extra_keys"
    text = ("The Schema(...) parameter ignore_extra_keys causes validation to ignore extra keys in a dictionary. "
            "The quoted line [...] ends here. Then another sentence follows.")
    assert [unit for kind, unit in _units(text)] == [
        "The Schema(...) parameter ignore_extra_keys causes validation to ignore extra keys in a dictionary.",
        "The quoted line [...] ends here.",
        "Then another sentence follows.",
    ]


def test_markdown_headings_fences_and_page_furniture() -> None:
    text = ("# Install\n\nRun the installer once. It needs no network.\n\n```\npip install citesum\n```\n\n"
            "Page 3 of 12\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert _units(text) == [
        ("heading", "# Install"), ("sentence", "Run the installer once."), ("sentence", "It needs no network."),
        ("code", "``` pip install citesum ```"), ("boilerplate", "Page 3 of 12"),
        ("table", "| a | b |"), ("table", "|---|---|"), ("table", "| 1 | 2 |"),
    ]


def test_a_line_of_prose_between_paragraphs_is_not_taken_for_a_heading() -> None:
    text = "The first paragraph ends here.\n\nThe manual lists the options\nthat the command accepts.\n"
    assert _units(text) == [("sentence", "The first paragraph ends here."),
                            ("sentence", "The manual lists the options that the command accepts.")]
    # a pointer is not a heading either: one unit, of its own kind
    text = "The first paragraph ends here.\n\nSee the manual for the options\nthat the command accepts.\n"
    assert _units(text) == [("sentence", "The first paragraph ends here."),
                            ("boilerplate", "See the manual for the options that the command accepts.")]


def test_commands_after_a_prompt_that_names_user_and_host_are_code() -> None:
    # nftables' README.Debian (a new user's trial): the commands were read as one sentence, and stated
    text = ("Try these basic commands to know more about nftables on your machine:\n\n"
            "user@debian:~$ sudo nft list ruleset\nuser@debian:~$ sudo nft flush ruleset\n\n"
            "joe@example.com maintains the rules; mail him if they do not load.\n")
    assert _units(text) == [
        ("sentence", "Try these basic commands to know more about nftables on your machine:"),
        ("code", "user@debian:~$ sudo nft list ruleset user@debian:~$ sudo nft flush ruleset"),
        ("sentence", "joe@example.com maintains the rules; mail him if they do not load.")]
    assert _units("(venv) user@host:~$ pip install foo\n") == [("code", "(venv) user@host:~$ pip install foo")]


def test_whole_sentences() -> None:
    assert is_whole_sentence("libffi is not completely thread-safe.")
    assert is_whole_sentence('He said "it works."')
    assert not is_whole_sentence("When one of the triggers in which a package is interested is")
    assert not is_whole_sentence("- Function: ffi_status ffi_prep_cif (ffi_cif *cif)")
    assert not is_whole_sentence("• Fast.")
    assert not is_whole_sentence("3.5.")
    # the rest of a sentence that code interrupted, after the author's ellipsis (attrs' documentation); a quotation
    # opening with one is a sentence still
    assert not is_whole_sentence("…while a namedtuple is intentionally behaving like a tuple which means the type "
                                 "of a tuple is ignored.")
    assert not is_whole_sentence("...and the rest of it follows here.")
    assert is_whole_sentence("… And so the story ends.")
    # the rest of a sentence that a block of code interrupted opens with a relative word in lower case
    # ("... you would write" | <code> | "which is quite a mouthful.")
    assert not is_whole_sentence("which is quite a mouthful for a single attribute.")
    assert not is_whole_sentence("where FILE is the name of the archive to read.")
    assert not is_whole_sentence("while the second form keeps the old value.")
    assert is_whole_sentence("Where FILE is omitted, the archive is read from standard input.")
    # a keyword's name may open a sentence in lower case
    assert is_whole_sentence("while loops run until their condition is false.")
    assert is_whole_sentence("where clauses filter the rows of a query.")


def test_html_text_a_paragraph_a_line_keeps_titles_and_sphinx_headings_apart() -> None:
    # what an HTML page's extraction gives: one paragraph a line, no blank line between them
    text = ("The previous paragraph is long enough to set the width of this block, as HTML text gives it.\n"
            "Can I delete Python?¶\n"
            "That depends on where Python came from.\n"
            "Client/Server Applications\n"
            "If there are many client programs sending SQL to the same database, use a client/server engine.\n")
    assert _units(text)[1:] == [
        ("heading", "Can I delete Python?"), ("sentence", "That depends on where Python came from."),
        ("heading", "Client/Server Applications"),
        ("sentence", "If there are many client programs sending SQL to the same database, use a client/server engine."),
    ]


def test_hostile_lines_are_cut_in_linear_time() -> None:
    # a regex that backtracks on a long run of spaces or dots would stall an upload for minutes
    import time

    for line in (" " * 200_000 + "x", "." * 200_000, "a" + "." * 200_000 + "b", ": " * 100_000, "| " * 100_000):
        started = time.perf_counter()
        segments(line)
        assert time.perf_counter() - started < 2.0, repr(line[:10])


def test_fields_notes_and_a_passage_that_starts_inside_a_line() -> None:
    assert _units("Note: the library is thread-safe.\nWarning: do not call it twice.\n") == [
        ("sentence", "Note: the library is thread-safe."), ("sentence", "Warning: do not call it twice.")]
    assert _units("Version: 1.2\nAuthor: Jane Doe\nLicense: MIT\n") == [
        ("table", "Version: 1.2"), ("table", "Author: Jane Doe"), ("table", "License: MIT")]
    # a passage cut after "... the zlib format. The format is" starts with a short line that is no title
    assert _units("The format is\ndescribed in three RFCs and has not changed since.\n") == [
        ("sentence", "The format is described in three RFCs and has not changed since.")]


def test_a_cross_reference_is_boilerplate_not_a_fact() -> None:
    # from the Debian FAQ and SQLite's FAQ: each says where the answer is, not the answer
    text = ("See more in Section 7.9, \u201cWhat is meant by saying that a package Depends, Recommends, Suggests, "
            "Conflicts, Replaces, Breaks or Provides another package?\u201d. See How To Corrupt An SQLite Database "
            "File for further information. For more details on triggers, see the dpkg manual. Please refer to "
            "the policy for the rules. For more powerful pattern matching, you need a parser, such as GNU bison. "
            "Seeing the log is enough.")
    kinds = [kind for kind, _ in _units(text)]
    assert kinds == ["boilerplate", "boilerplate", "boilerplate", "boilerplate", "sentence", "sentence"]
    # "see" and "refer to" in instructions and facts that point nowhere
    text = ("For example, to see hidden files, run ls -a. For details of the protocol, the client must consult the "
            "server first. Refer to a disk by its UUID in /etc/fstab, so that renaming it does no harm. Please see "
            "a doctor if the fever lasts more than three days. See whether the file exists before you open it. For "
            "further discussion of the bug, which corrupted data in version 2.1, see the changelog.")
    assert [kind for kind, _ in _units(text)] == ["sentence"] * 5 + ["boilerplate"]
    # where more is told and nothing else (the floppy FAQ's link words, its link gone; lsof's FAQ; a web page)
    # points on too; what tells more besides, or another thing "more", is a fact
    text = ("More info about IBM Tinkpads on Linux can be found here. You can find more information on those "
            "topics in the answer to the next question. Further information is available at "
            "https://www.claws-mail.org/faq/. More details are available in the tio man page, and the default "
            "baud rate is 115200. More information is stored in the cache than before. Additional documentation "
            "is shipped in /usr/share/doc/tio.")
    assert [kind for kind, _ in _units(text)] == ["boilerplate"] * 3 + ["sentence"] * 3
    # a place a program writes to, or a second clause, an aside or a finite verb after the place, tells a fact
    text = ("Detailed information on each error is available in the log file /var/log/foo.log. Additional "
            "documentation is available in /usr/share/doc/tio/examples. More details are available in the man "
            "page and the default baud rate is 115200. More info can be found here (the default port is 8080). "
            "More information about the crash is available in dmesg, which shows the oops. More information can "
            "be found on the Debian Installer page, on the Wiki and on the debian-boot mailing list.")
    assert [kind for kind, _ in _units(text)] == ["sentence"] * 5 + ["boilerplate"]


def test_a_contents_page_names_sections_and_states_nothing() -> None:
    # flex's manual as PDF text gives its contents page: entries, dot leaders and page numbers run together
    text = ("Can I include comments in the \"rules\" section of the file? . . . . . . . . . 82 I get an error about "
            "undefined yywrap(). . . . . . . . . . . . . 82 How can I change the matching pattern at run time? . . "
            ". . . . . 82\n\nI get an error about undefined yywrap().\n\nYou must supply a yywrap() function of your "
            "own, or link to libfl.a (which provides one). He paused. . . and went on.")
    units = _units(text)
    assert ("heading", "82 I get an error about undefined yywrap().") in units
    dots = [kind for kind, unit in units if unit == "."]
    assert dots.count("boilerplate") == 28 and dots.count("sentence") == 2  # an ellipsis is no leader
    assert ("sentence", "You must supply a yywrap() function of your own, or link to libfl.a (which provides "
                        "one).") in units
    # an ellipsis is no leader: the sentence before it stays a sentence
    assert ("sentence", "He paused.") in units


def test_a_dotted_number_opens_its_sentence() -> None:
    # nano's FAQ: "4.6." numbers the question; cut off as a sentence of its own, a passage could start after it
    text = ("4.6. When I paste text into a document, each line gets indented further than the last. Why? And how "
            "can I stop this?\nYou have the autoindent feature turned on. It was added in version 1.2. Set it off.")
    units = _units(text)
    assert units[0] == ("sentence", "4.6. When I paste text into a document, each line gets indented further than "
                                    "the last.")
    assert ("sentence", "It was added in version 1.2.") in units and ("sentence", "Set it off.") in units


def test_a_document_describing_itself_states_nothing() -> None:
    # SQLite's page on its quirks opens so
    text = ("This document strives to highlight the principal differences between SQLite and other SQL "
            "implementations, as an aid to developers. This section outlines the rules. SQLite does not have a "
            "separate BOOLEAN data type.")
    assert [kind for kind, _ in _units(text)] == ["boilerplate", "boilerplate", "sentence"]


def test_a_tilde_underline_opens_no_code_block() -> None:
    # Valgrind's FAQ underlines its title with tildes; read as a fence, the rest of the FAQ was one block of code,
    # which the chunker then cut anywhere, so passages (and bullets) started inside sentences
    text = ("Valgrind FAQ\n~~~~~~~~~~~~\n\nPrior to version 3.4.0, the answer was \"we don't know\". As of 3.4.0, "
            "try using the\n--track-origins=yes option. It will run slower than usual.\n\n~~~\ncode here\n~~~\n")
    units = _units(text)
    assert units[0] == ("heading", "Valgrind FAQ ~~~~~~~~~~~~")  # the underline goes with its heading
    assert ("sentence", "As of 3.4.0, try using the --track-origins=yes option.") in units
    assert ("code", "~~~ code here ~~~") in units  # a fence after a blank line is still a fence


def test_code_fenced_within_its_line_opens_no_block() -> None:
    # structlog's performance page (Furo): a <pre> inside a list item is run into its line by the page's main
    # text; read as a fence that opens a block, the rest of the page down to the next fence was one unit of code,
    # and its answer ("Therefore, you can't set this option if ... multiprocessing.") was never a sentence
    text = ("- Set the cache_logger_on_first_use option to True so loggers are assembled only once:\n"
            "``` configure(cache_logger_on_first_use=True) ``` This has two drawbacks: \n"
            "  - Later calls of configure() don't have any effect on already cached loggers.\n"
            "  - The resulting bound logger is not pickleable.\n\n"
            "Therefore, you can't set this option if you plan on passing loggers around using multiprocessing.\n"
            "- Use a faster JSON serializer than the standard library.\n\n"
            "``` structlog.configure(processors=[]) ```\n\n"
            "It has the following properties.\n\n```\nimport structlog\n```\n")
    units = _units(text)
    assert ("code", "``` configure(cache_logger_on_first_use=True) ```") in units
    assert ("sentence", "Therefore, you can't set this option if you plan on passing loggers around using "
                        "multiprocessing.") in units
    assert ("item", "Use a faster JSON serializer than the standard library.") in units
    # a line that is one fenced block opens none either: the sentence after it stays a sentence
    assert ("code", "``` structlog.configure(processors=[]) ```") in units
    assert ("sentence", "It has the following properties.") in units
    assert ("code", "``` import structlog ```") in units


def test_a_listing_below_its_colon_goes_on_over_a_blank_line_inside_it() -> None:
    # chrony's README.Debian: the second of "two important files" was read as a sentence of its own, and the
    # sentence that introduces them showed only the first
    text = ("It is filled by two important files:\n"
            "        -> clockd.conf (the daemon's settings, see clockd.conf(5)\n          for the directives)\n\n"
            "        -> clockd.keys (the keys used to sign the packets, see\n          the keyfile directive)\n\n"
            "We also provide hooks that take the daemon online when the link comes up.\n")
    units = _units(text)
    assert [kind for kind, _ in units] == ["sentence", "code", "sentence"], units
    assert "clockd.keys" in units[1][1]
    # a paragraph after the blank line that ends a sentence is prose of its own: the listing above stays code (a
    # fresh-eyes review: the first version took it in, and then read the whole as prose)
    assert _units("To install it, run:\n    make install\n\n    This copies the files into /usr/local.\n") == [
        ("sentence", "To install it, run:"), ("code", "make install"),
        ("sentence", "This copies the files into /usr/local.")]


def test_a_word_with_a_typographic_apostrophe_on_a_line_of_its_own_is_prose() -> None:
    # toolz's documentation (a new user's trial): a passage opened with "We’ve" on its line, read as code, and the
    # rest of the sentence was stated alone ("also included curried versions of ...")
    text = ("We’ve\nalso included curried versions of the standard Python higher order functions\nlike map, "
            "filter and reduce, so you’ll get them too.")
    assert _units(text) == [("sentence", "We’ve also included curried versions of the standard Python higher "
                                         "order functions like map, filter and reduce, so you’ll get them too.")]


def test_an_o_set_apart_by_two_spaces_marks_an_item() -> None:
    # SoX's README (a new user's trial): "The current release handles the following audio file formats:" above a
    # list of "o" items was a sentence introducing nothing, never stated
    text = ("The current release handles the following audio file formats:\n\n\n"
            "  o  Raw files in various binary formats\n  o  Amiga 8svx files\n    o  PCM, u-law, A-law\n\n"
            "o  sistema funciona bem quando o servidor responde.\n")
    assert _units(text) == [("sentence", "The current release handles the following audio file formats:"),
                            ("item", "Raw files in various binary formats"), ("item", "Amiga 8svx files"),
                            ("item", "PCM, u-law, A-law"),
                            # (at a line's start, a word of justified prose)
                            ("sentence", "o sistema funciona bem quando o servidor responde.")]


def test_an_indented_listing_after_a_colon_is_code() -> None:
    # Valgrind's quick start (HTML): a <pre> log keeps its indentation below "look like this:"
    text = ("Memory leak messages look like this:\n  ==19182== 40 bytes in 1 blocks are definitely lost\n"
            "  ==19182==    by 0x80483AB: main (a.c:11)\nThe stack trace tells you where the leaked memory was "
            "allocated.\n\n  A paragraph indented as a whole says this:\n  it goes on at the same depth.\n")
    units = _units(text)
    assert units[1][0] == "code"
    assert ("sentence", "The stack trace tells you where the leaked memory was allocated.") in units
    assert ("sentence", "A paragraph indented as a whole says this: it goes on at the same depth.") in units


def test_fences_ellipses_and_quotations_keep_their_kinds() -> None:
    # a short "~~~" below a line opens a code block; an ellipsis of four dots leads to words, not a page number;
    # an indented quotation below its colon ends its sentences and stays prose
    assert ("code", "~~~ pip install foo ~~~") in _units("run this:\n~~~\npip install foo\n~~~\nThen it works.")
    assert ("sentence", "He said the law was clear.") in _units("He said the law was clear. . . . The judge agreed.")
    quoted = _units("As the manual puts it:\n    The file is opened read-only. Writes to it fail with EBADF.\n")
    assert ("sentence", "Writes to it fail with EBADF.") in quoted


def test_a_sentence_that_introduces_a_listing_or_describes_its_text_states_nothing() -> None:
    # Debian's reference manual and smartmontools' HOWTO, asked by a new user: each was given as the answer
    text = ("Run the at(1) command to schedule a one-time job by the following.\n\n"
            "$ echo 'command -args'| at 3:40 monday\n\n"
            "This section contains examples of what to do when smartctl reports a bad block.\n\n"
            "These release notes contain information about the features of this release.\n\n"
            "The cron daemon executes scheduled commands at the times given in the crontab.\n")
    units = _units(text)
    assert ("boilerplate", "Run the at(1) command to schedule a one-time job by the following.") in units
    assert ("boilerplate", "This section contains examples of what to do when smartctl reports a bad block.") in units
    assert ("boilerplate", "These release notes contain information about the features of this release.") in units
    assert ("sentence", "The cron daemon executes scheduled commands at the times given in the crontab.") in units
    # a file that contains something is a fact, not the text describing itself
    assert _units("The file /etc/crontab contains the system-wide jobs.") == [
        ("sentence", "The file /etc/crontab contains the system-wide jobs.")]


def test_a_stop_named_in_quotes_ends_no_sentence() -> None:
    # socat's FAQ: the "!" that bash expands was cut off as a sentence of its own, and its answer lost its subject
    text = ("A: '!' is appearently used by your shell as history expansion character. Say\n\"set +H\" and add this "
            "line to your (bash) profile. A \"?\" matches one character.")
    assert [unit for kind, unit in _units(text)] == [
        "'!' is appearently used by your shell as history expansion character.",  # ("A:" labels it)
        "Say \"set +H\" and add this line to your (bash) profile.", "A \"?\" matches one character."]
    # nor one in quotes in brackets: socat's question, stated as the asker's, was cut after '"!!")'
    assert len(_units('Q: When I specify a dual address (two partial addresses linked with "!!") on\nthe command '
                      'line, I get some message "event not found".')) == 1
    # a quotation that ends with its own stop still ends the sentence, and so does a quoted stop before a sentence
    assert len(_units("He shouted 'no!' Then he left the room.")) == 2
    assert len(_units("The answer was '?' Then it crashed.")) == 2
    # nor one in TeX's quotes: NSD's README, hard-wrapped, was cut after "the ``.''"
    assert _units("Unless this option is\n        specified, NSD will refuse to serve the ``.'' zone as a\n"
                  "        misconfiguration safeguard.") == [
        ("sentence", "Unless this option is specified, NSD will refuse to serve the ``.'' zone as a misconfiguration "
                     "safeguard.")]


def test_a_title_in_lower_case_standing_alone_is_a_heading() -> None:
    # getmail's troubleshooting page, its headings set apart as a web page's reader sets them
    text = ("The replacement strings are only replaced for a multidrop retriever.\n\ngetmail seems to take longer "
            "than expected to initialize\n\nIf getmail takes more than a few seconds to initialize, run this.")
    assert _units(text)[1] == ("heading", "getmail seems to take longer than expected to initialize")
    # a line standing alone that is a command, a field, a signature, an answer or prose is not one
    for line in ["make install", "foo = bar", "thanks, john", "-- john smith", "yes, under the GPL",
                 "and then it works fine", "ldconfig -v"]:
        text = f"The first paragraph ends here.\n\n{line}\n\nThe next paragraph starts here."
        assert _units(text)[1][0] != "heading", line
    # nor a title-like line above a paragraph that does not open as a sentence does
    assert _units("First paragraph ends here.\n\nlibffi closures and threads\n\n$ make check\n")[1][0] != "heading"


def test_an_option_may_open_a_whole_sentence_and_a_stray_marker_may_not() -> None:
    # before: every unit opening with "-" was a list marker's
    for option in ["--lf, --last-failed - to only re-run the failures.", "-n  Do not resolve host names.",
                   "--log-level=DEBUG prints every request.", "--color[=WHEN] colors the output.",
                   "-H  Follows symbolic links."]:
        assert is_whole_sentence(option), option
    for stray in ["- - Function: ffi_status ffi_prep_cif (ffi_cif *cif).", "- the item text.", "-rw-r--r-- 1 root.",
                  "-- end of the list.", "-This is a bullet without a space.", "--This is an aside in prose."]:
        assert not is_whole_sentence(stray), stray


def test_a_piece_cut_from_a_long_sentence_is_not_a_whole_sentence() -> None:
    # before: the passage cut from an over-long run of text started a "sentence" at "would be ..."
    for piece in ["would be if you have some specific reason to require this Make-like behavior of not rebuilding.",
                  "and the rest of the options are read from the file.", "whereby the file is locked."]:
        assert not is_whole_sentence(piece), piece
    # a sentence may open with a command's name in lower case, or with a compound
    for sentence in ["ufw has full support for IPv6, and it is enabled by default.",
                     "python -m pip uninstall followed by one or more package names will remove the packages.",
                     "at runs commands at a later time.", "If you run it twice, it stops.",
                     "which python prints the path of the interpreter.", "in-place editing is done with sed -i.",
                     "on-disk caches are kept in ~/.cache."]:
        assert is_whole_sentence(sentence), sentence


def test_an_indented_listing_after_a_colon_and_a_blank_line_is_code() -> None:
    # tmux's README: the address a sentence ends by pointing at, after a blank line and indented by a tab
    units = _units("tmux depends on libevent 2.x, available from:\n\n\thttps://github.com/libevent/libevent\n\n"
                   "It also depends on ncurses.\n")
    assert units[:2] == [("sentence", "tmux depends on libevent 2.x, available from:"),
                         ("code", "https://github.com/libevent/libevent")]
    # NetHack's Guidebook: a paragraph whose first line is indented deeper than its others stays prose
    guide = _units("          Your abilities will vary with your background and training:\n\n"
                   "               Archeologists understand dungeons pretty well; this  enables\n"
                   "          them  to  move  quickly.\n")
    assert ("sentence", "Archeologists understand dungeons pretty well; this enables them to move quickly.") in guide
    # a title's colon heads a section: yt-dlp's option table under "Geo-restriction:" is not shown as its code
    options = _units("Geo-restriction:\n\n    --geo-bypass          Bypass geographic restriction via faking\n"
                     "                          X-Forwarded-For HTTP header\n")
    assert not any(kind == "code" for kind, _ in options)


def test_a_sentence_a_block_ends_without_a_colon_introduces_it() -> None:
    # hdparm's README (a new user's trial): the command ends the sentence that asks for it; it had been a heading
    # over a "sentence" that is a command
    units = _units("You can get the acoustic setting by typing\n\n\thdparm -M /dev/hda \n\n"
                   "To set the most quiet mode use\n\n\thdparm -M 128 /dev/hda\n\n"
                   "Now test different values and try to hear the difference.\n")
    assert units == [("sentence", "You can get the acoustic setting by typing"), ("code", "hdparm -M /dev/hda"),
                     ("sentence", "To set the most quiet mode use"), ("code", "hdparm -M 128 /dev/hda"),
                     ("sentence", "Now test different values and try to hear the difference.")]
    # a sentence that goes on after its block, in lower case, is left as it was; so are titles above code
    around = _units("If you see lines like\n\n\tkernel: hdb: task_no_data_intr: status=0x51\n\n"
                    "in your syslog, then your disk does not support it.\n")
    assert around[0] == ("heading", "If you see lines like")
    # the text (or a passage) may end with the block (a fresh-eyes review: a last line break hid it)
    assert _units("To set the most quiet mode use\n\n\thdparm -M 128 /dev/hda\n") == [
        ("sentence", "To set the most quiet mode use"), ("code", "hdparm -M 128 /dev/hda")]
    for title in ["Q6 -- Additional information sources", "Building From Source", "Installing on Linux systems"]:
        assert _units(f"{title}\n\n    make install\n\nIt takes a minute.\n")[0] == ("heading", title), title


def test_a_sphinx_heading_leaves_its_permalink_mark_out() -> None:
    # Pygments' FAQ (a new user's trial): "What is Pygments?¶" headed the answer, and the page showed the mark
    text = "Pygments FAQ\u00b6\n\nWhat is Pygments?\u00b6\n\nPygments is a syntax highlighting engine.\n\nUsage \uf0c1\n"
    assert _units(text) == [("heading", "Pygments FAQ"), ("heading", "What is Pygments?"),
                            ("sentence", "Pygments is a syntax highlighting engine."), ("heading", "Usage")]


def test_a_part_saying_how_it_was_made_states_nothing() -> None:
    # sharutils' manual (a new user's trial) ends each option's section with AutoGen's note; a sentence about a
    # file of the package is a fact
    units = _units("This section was generated by AutoGen,\nusing the agtexi-cmd template and the option "
                   "descriptions for the unshar program.\n\nThis document was generated using makeinfo.\n\n"
                   "The file is generated from your control file, and is used when unpacking the source.\n")
    assert [kind for kind, _ in units] == ["boilerplate", "boilerplate", "sentence"]


def test_answers_labelled_a_with_a_full_stop_leave_the_label_out_where_questions_are_labelled_q() -> None:
    # xinetd's FAQ (a new user's trial) and abcde's: "Q. ..." above "A. ...", the label kept in every bullet
    faq = ("Q. What is xinetd ?\nA. xinetd is a replacement for inetd, the internet services daemon.\n"
           "Q. Is it compatible with inetd ?\nA. No, its configuration file has a different format.\n")
    assert [text for kind, text in _units(faq) if kind == "sentence"] == [
        "Q. What is xinetd ?", "xinetd is a replacement for inetd, the internet services daemon.",
        "Q. Is it compatible with inetd ?", "No, its configuration file has a different format."]
    # without questions so labelled, "A." is a writer's initial
    assert _units("A. Smith wrote the first version of the parser.\n") == [
        ("sentence", "A. Smith wrote the first version of the parser.")]


def test_authorship_and_a_fence_written_in_prose_stay_sentences() -> None:
    # a fresh-eyes review: who wrote a manual is a fact; prose holding one mark of code between two fences is
    # prose that writes them
    assert _units("This manual was created by Jane Doe and Bob Roe in 1998.\n") == [
        ("sentence", "This manual was created by Jane Doe and Bob Roe in 1998.")]
    fence = "In Markdown, type ``` then write your text and/or notes, and close it with ``` again to end it.\n"
    assert [kind for kind, _ in _units(fence)] == ["sentence"]


def test_a_definition_lists_terms_head_their_descriptions() -> None:
    # DejaGnu's manual as a web page's text gives its <dt> and <dd>: the description never repeats its term
    text = ("runtest flags the outcome of each test as one of these cases.\n- PASS\n- The most desirable outcome: "
            "the test was expected to succeed and did succeed.\n- XFAIL\n- A test failed, but it was expected to "
            "fail. This result indicates no change in a known bug.\n")
    assert _units(text) == [
        ("sentence", "runtest flags the outcome of each test as one of these cases."), ("term", "PASS"),
        ("item", "The most desirable outcome: the test was expected to succeed and did succeed."),
        ("term", "XFAIL"), ("item", "A test failed, but it was expected to fail."),
        ("item", "This result indicates no change in a known bug.")]
    # a list of short items, one short item above a sentence, or numbered steps keep their items
    assert [kind for kind, _ in _units("- Fast\n- Small\n- Cheap\n")] == ["item"] * 3
    assert [kind for kind, _ in _units("- Fast\n- It is written in C.\n")] == ["item", "item"]
    steps = "1. Install the dependencies\n2. Run make. This builds it.\n3. Install it\n4. Run make install.\n"
    assert {kind for kind, _ in _units(steps)} == {"item"}
    # a list that a sentence introduces with a colon is shown with it, as its items
    introduced = "Each test ends as one of these:\n- PASS\n- The test passed.\n- FAIL\n- The test failed.\n"
    assert [kind for kind, _ in _units(introduced)] == ["sentence"] + ["item"] * 4


def test_a_plain_texts_numbered_section_titles_are_headings_and_a_numbered_list_stays_items() -> None:
    # a README.Debian's numbered FAQ: each entry's title (one line or two) above the paragraph that answers it
    faq = ("Common problems\n---------------\n\n"
           "6) Apache does not pass Authorization header to CGI scripts\n\n"
           "This is intentional to avoid security holes. If you really want to change it,\n"
           "you can use mod_rewrite.\n\n"
           '8) Message "apache2: bad user name ${APACHE_RUN_USER}" when starting apache2\n'
           "directly\n\n"
           "Use apache2ctl (it accepts all the same options as apache2).\n\n"
           '9) A PUT with mod_dav_fs fails with "Unable to PUT new contents for /...\n'
           '[403, #0]" even if Apache has permission to write the file.\n\n'
           "Apache also needs write permission to the directory containing the file.\n\n"
           "(10) Server: Enable support for SSH tunneling\n\n"
           "Restart the server to let it reread its configuration.\n")
    units = _units(faq)
    assert ("heading", "6) Apache does not pass Authorization header to CGI scripts") in units
    assert ("heading", '8) Message "apache2: bad user name ${APACHE_RUN_USER}" when starting apache2 directly') \
        in units
    assert ("heading", "(10) Server: Enable support for SSH tunneling") in units
    # an entry's trouble told as a statement, set out as the titles around it are, is a title too
    assert ("heading", '9) A PUT with mod_dav_fs fails with "Unable to PUT new contents for /... [403, #0]" even '
                       'if Apache has permission to write the file.') in units
    assert ("sentence", "Use apache2ctl (it accepts all the same options as apache2).") in units
    assert not [text for kind, text in units if kind == "item"]
    # steps of a numbered list, with or without a blank line between them, are items; so is a step that ends
    # as a sentence does
    steps = ("To install:\n\n1. Unpack the archive.\n\n2. Run the installer:\n\n"
             "The installer asks for a folder.\n\n3) Pick a folder\n4) Confirm it\n\nThen it is done.\n")
    assert [kind for kind, _ in _units(steps) if kind in ("heading", "item")] == ["item"] * 4
    # a passage may hold one section of the document's several: its title is a heading still
    assert _units(faq[faq.index("8)"):])[0][0] == "heading"


def test_a_numbered_title_underlined_is_a_heading() -> None:
    # cryptsetup's README.Debian underlines its numbered sections; read as items, each section's first sentences
    # had no title and the titles were stated as facts
    text = ("1. Introduction into Cryptsetup for Debian\n------------------------------------------\n\n"
            " Cryptsetup is a command-line interface for configuring encrypted block\n"
            "devices via dm-crypt, a kernel device-mapper target.\n\n"
            "2. Encrypted swap partition(s)\n------------------------------\n\n"
            " An encrypted swap partition prevents spying on plaintext secrets (passwords)\n"
            "that may be written to disk when memory is swapped to disk.\n")
    units = _units(text)
    assert units[0] == ("heading", "1. Introduction into Cryptsetup for Debian " + "-" * 42)
    assert ("heading", "2. Encrypted swap partition(s) " + "-" * 30) in units
    assert ("sentence", "An encrypted swap partition prevents spying on plaintext secrets (passwords) that may be "
                        "written to disk when memory is swapped to disk.") in units
    assert not [unit for unit in units if unit[0] == "item"]
    # mdadm's FAQ: a title on two lines, underlined with tildes (read as a code fence, the answers were code)
    faq = ("22. So how do I find out which other device(s) can fail without killing the\narray?\n" + "~" * 77
           + "\n  Please see README.checkarray and the thread on the list.\n")
    units = _units(faq)
    assert units[0] == ("heading", "22. So how do I find out which other device(s) can fail without killing the "
                                   "array? " + "~" * 77)
    assert "code" not in [kind for kind, _ in units]
    # a step wrapped over two lines above a short rule, or above another heading, stays a step
    wrapped = "1. Unpack the archive into a folder of your\n   choice\n---\n\nThen run it.\n"
    assert _units(wrapped)[0] == ("item", "Unpack the archive into a folder of your")
    assert _units("1. Install it\nUsage\n=====\n\nRun it.\n")[:2] == [("item", "Install it"),
                                                                       ("heading", "Usage =====")]
    # a rule far shorter than the step above it, as a Markdown list may be followed by one, underlines nothing
    steps = "1. Unpack the archive into a folder of your choice\n---\n\nThen run it.\n"
    assert _units(steps)[0][0] == "item"


def test_a_bulleted_title_standing_alone_above_its_paragraph_is_a_heading() -> None:
    # Pure-FTPd's FAQ: each entry's title is a lone bullet above the asker's question and its answer; read as an
    # item, "\"Sorry, I can't trust you\"." was stated as the answer to a question about that message
    faq = ("* How to restrict access to dot files ?\n\n-> Users can read them.\n\nUse -X.\n\n\n\n"
           "* Compilation with MySQL.\n\n-> The server doesn't compile with MySQL.\n\n"
           "Add the path to libmysqlclient.so to /etc/ld.so.conf .\n\n\n\n"
           "* \"Sorry, I can't trust you\".\n\n"
           "-> When a user tries to log in, he gets \"Sorry, I can't trust you\". But his\n"
           "login/password pair is right.\n\nThat message can means two things:\n\n"
           "- The user has a shell that isn't listed in /etc/shells.\n"
           "- The user's uid is in the forbidden range.\n")
    units = _units(faq)
    assert ("heading", "How to restrict access to dot files ?") in units
    # the others set out alike are titles too, those that end with a stop as well
    assert ("heading", "Compilation with MySQL.") in units
    assert ("heading", "\"Sorry, I can't trust you\".") in units  # its bullet left out, as an item's is
    assert [text for kind, text in units if kind == "item"] == [
        "The user has a shell that isn't listed in /etc/shells.", "The user's uid is in the forbidden range."]
    # a loose list's items stay items: one under another, or the paragraph below indented as the item's own, or
    # introduced by a sentence ending with a colon
    loose = "Features:\n\n* Fast and small\n\n* Safe\n\nIt runs anywhere.\n"
    assert [kind for kind, _ in _units(loose)] == ["sentence", "item", "item", "sentence"]
    # the curl FAQ: a loose list's last item, below an item that runs on over two lines
    curl = ("  They are usually:\n\n  * Set an environment variable (LD_LIBRARY_PATH for example) where ld.so\n"
            "    should check for libs\n\n  * Adjust the system's config to check for libs in the directory\n"
            "    where you have put the library (like Linux's /etc/ld.so.conf)\n\n"
            "  'man ld.so' and 'man ld' will tell you more details\n")
    assert [kind for kind, _ in _units(curl)] == ["sentence", "item", "item", "sentence"]
    markdown = "Usage\n=====\n\n* Fast and small\n\n  It reads the file once.\n"
    assert [kind for kind, _ in _units(markdown)][1] == "item"
    # a list of one item right under its heading (a README's requirements, a changelog's release) is a list
    assert _units("## Requirements\n\n* Python 3.8 or newer\n\nInstall it with pip.\n")[1][0] == "item"
    changes = "1.2.0\n-----\n\n- Fix a crash on empty input\n\nThanks to all contributors.\n"
    assert [kind for kind, _ in _units(changes)] == ["heading", "item", "sentence"]
    # a sub-list's items, set in deeper, end no title below them
    nested = "* Title one\n\nAnswer one.\n\n  * sub a\n  * sub b\n\n* Title two\n\nAnswer two.\n"
    assert ("heading", "Title two") in _units(nested)
    # linear in the titles and in the lines around them
    assert_linear(lambda count: segments("* A title\n\nIts answer.\n\n" * count + "a" * count + ":\n" + "\n" * count),
                  2_000)


def test_a_stop_inside_a_quoted_message_ends_no_sentence_when_the_sentence_goes_on() -> None:
    text = ('9) A PUT with mod_dav_fs fails with "Unable to PUT new contents for /...\n'
            '[403, #0]" even if Apache has permission to write the file.\n\n'
            'Apache also needs write permission to the directory.\n')
    assert _units(text)[0] == ("item", 'A PUT with mod_dav_fs fails with "Unable to PUT new contents for /... '
                                       '[403, #0]" even if Apache has permission to write the file.')
    # a quotation that holds whole sentences, a capital after its stop, is cut as before; an inch mark is no quote
    assert _units('He wrote "It failed. Then it worked." and left early.')[0] == ("sentence", 'He wrote "It failed.')
    assert len(_units('It has a 3.5" drive. [1] It was sold in 1990 "as is".')) == 2
    # linear in a paragraph's stops, however many a quotation holds open
    assert_linear(lambda count: segments('He said "' + "a. b. " * count + 'done." and left.\n'), 10_000)


def test_a_root_prompt_and_a_listings_comments_are_code_and_a_markdown_heading_stays_one() -> None:
    # LXC's README.Debian: a root shell's commands, indented, under the sentence that introduces them
    lxc = ("1) User namespaces\n\nThe Linux kernel must have unprivileged user namespaces enabled.\n"
           "To check run this command:\n\n  # sysctl kernel.unprivileged_userns_clone\n"
           "  kernel.unprivileged_userns_clone = 1\n\nIf it reports 0 instead 1, it's disabled. To enable it:\n\n"
           "  # echo kernel.unprivileged_userns_clone=1 > /etc/sysctl.d/unpriv-usernd.conf\n  # sysctl -p\n")
    units = _units(lxc)
    assert ("code", "# sysctl kernel.unprivileged_userns_clone kernel.unprivileged_userns_clone = 1") in units
    assert ("code", "# echo kernel.unprivileged_userns_clone=1 > /etc/sysctl.d/unpriv-usernd.conf # sysctl -p") in units
    assert not [text for kind, text in units if kind == "heading" and text.startswith("#")]
    # a command at the line's start, after a single mark, is one too (msmtp's README.Debian)
    assert _units("The permissions can be adjusted that way:\n\n# chmod 0640 /etc/msmtprc\n\nThat is all.\n")[1] == (
        "code", "# chmod 0640 /etc/msmtprc")
    # a configuration's comments, each over the setting it explains, and a comment's empty line (abcde's FAQ,
    # wpasupplicant's README.Debian): one listing, no heading
    config = ("   # Correct output type:\n   OUTPUTTYPE=\"wv\"\n\n# All network information is in the file given.\n#\n"
              "iface eth1 inet dhcp wpa-conf /path/to/wpa_supplicant.conf\n")
    assert [kind for kind, _ in _units(config)] == ["code", "code"]
    # a sentence under a commented-out rule is not what the comment comments on (xorriso's README)
    rule = ('# KERNEL=="sd*|hd*", ENV{UDISKS_PRESENTATION_NOPOLICY}="0"\nCopying the recognition criterion from\n'
            "/etc/udev/rules.d/70-persistent-cd.rules one can prevent automounting a single drive, too.\n")
    assert ("sentence", "Copying the recognition criterion from /etc/udev/rules.d/70-persistent-cd.rules one can "
            "prevent automounting a single drive, too.") in _units(rule)
    # Markdown's headings, standing apart, are headings: a title, a program's name, a question
    markdown = ("# tio\n\nA serial device I/O tool.\n\n## Startup and Configuration\n\nThe package starts it.\n\n"
                "```\n# apt install tio\n```\n\n### Why does it hang?\nIt waits for the device.\n")
    headings = [text for kind, text in _units(markdown) if kind == "heading"]
    assert headings == ["# tio", "## Startup and Configuration", "### Why does it hang?"]
    # a heading right above another level's heading, a fence, a badge, a command or a table is one too
    for below in ("## Installation", "```sh\npip install tio\n```", "[![Build](https://ci.example/b.svg)](x)",
                  "$ tio /dev/ttyUSB0", "| a | b |\n|---|---|"):
        assert _units(f"# tio\n{below}\n")[0] == ("heading", "# tio"), below
    # a wrapped sentence under a command is prose, not the line the command comments on
    wrapped = _units("    # make install\nAfter this (as root) you may\nrun the program as usual.\n")
    assert wrapped[-1] == ("sentence", "After this (as root) you may run the program as usual.")


def test_a_listing_between_two_cut_here_lines_is_code() -> None:
    # the Dovecot wiki's example: its comment would be a heading, its settings prose; Pure-FTPd's FAQ's script
    text = ("The most important SSL settings are (in 'conf.d/10-ssl.conf'):\n\n"
            "---%<-------------------------------------------------------------------------\nssl = yes\n\n"
            "# Preferred permissions: root:root 0444\nssl_cert = </etc/ssl/certs/dovecot.pem\n"
            "---%<-------------------------------------------------------------------------\n\n"
            "The '<' is mandatory. Not using it will cause an error.\n\n"
            "---------------------------- Cut here ----------------------------\n"
            "tc qdisc add dev \"$NIC\" parent 1:10 sfq quantum 1514b\n"
            "---------------------------- Cut here ----------------------------\n")
    assert [kind for kind, _ in _units(text)] == ["sentence", "code", "sentence", "sentence", "code"]
    # a cut line without its pair marks nothing: the prose after it stays prose
    lone = _units("-----Cut\nThe example is left out here. It is in the source.\n")
    assert "code" not in [kind for kind, _ in lone] and lone[-1] == ("sentence", "It is in the source.")
