"""PDF text a person would quote: paragraphs whole, no running headers, footers or page numbers, hyphenation
undone, two columns read one after the other, and the page of each character kept (issue 16)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from citesum.ingest import IngestOptions, ingest_file
from citesum.ingest.pdf import PAGE_STARTS, clean_pages, page_of
from citesum.types import Document
from fixtures import make_pdf_pages

SIEGE = ("From Vicksburg all who could not be expected to take part in the defence were sent away before the "
         "siege began, and the garrison laid in what stores of corn and bacon the country still held. ")
PAGES_OF_TEXT = [
    SIEGE + "On the first day the gunboats came down the river and opened fire on the upper batteries.",
    "The batteries answered until dark. The visitors who had come from Jackson to see the fleet left at once, "
    "and the streets were empty by the evening.",
    "General Pemberton rode along the lines in the morning and ordered the trenches to be deepened where "
    "the ground was soft. The men worked through the night.",
    "A well-known officer of the engineers reported that the works on the left could hold for a month, "
    "if the water in the cisterns lasted.",
    "By the end of the week the town had learned to live underground, in caves dug into the hillsides.",
]


def _book(pages: list[str], *, width: int = 70) -> bytes:
    """A PDF book: each page has a running header (the page number and the book's title, on alternate sides),
    its text wrapped at ``width`` characters, and a page number at the foot."""
    rendered = []
    for number, text in enumerate(pages, start=1):
        folio = str(number * 2 + 50)
        header = f"{folio} THE SIEGE OF VICKSBURG." if number % 2 else f"THE SIEGE OF VICKSBURG. {folio}"
        placed = [(72, 750, header)] + [(72, 700 - 14 * i, line) for i, line in enumerate(textwrap.wrap(text, width))]
        rendered.append(placed + [(300, 40, folio)])
    return make_pdf_pages(rendered)


def _read(tmp_path: Path, data: bytes, name: str = "book.pdf") -> Document:
    path = tmp_path / name
    path.write_bytes(data)
    documents, report = ingest_file(path, name, IngestOptions())
    assert report.status == "ingested", report.reason
    return documents[0]


def test_running_headers_and_page_numbers_go_and_sentences_stay_whole(tmp_path: Path) -> None:
    document = _read(tmp_path, _book(PAGES_OF_TEXT))
    text = document.text
    assert "SIEGE OF VICKSBURG" not in text  # before: on every page
    assert not any(str(n) in text.split() for n in range(52, 62, 2)), text  # page numbers
    for page in PAGES_OF_TEXT:  # before: broken into lines ("... take part in the")
        for sentence in page.split(". "):
            assert sentence.strip().rstrip(".") in text, sentence
    assert document.metadata["pages"] == 5


def test_page_starts_say_on_which_page_a_sentence_is(tmp_path: Path) -> None:
    document = _read(tmp_path, _book(PAGES_OF_TEXT))
    starts = document.metadata[PAGE_STARTS]
    assert len(starts) == 5 and starts[0] == 0 and starts == sorted(starts)
    for number, page in enumerate(PAGES_OF_TEXT, start=1):
        first_words = page[:40]
        assert page_of(starts, document.text.index(first_words)) == number
        assert page_of(starts, document.text.index(first_words) + 30) == number


def test_a_word_hyphenated_at_a_line_end_is_joined_again_and_a_compound_keeps_its_hyphen() -> None:
    clean = clean_pages(["The vis-\nitors came from Jackson to see the fleet and left the well-\nknown "
                         "hotel at once.\nThey were not the first visitors, and the well-known hotel was full.",
                         "A page of other text about the river.", "And a third page."])
    assert "The visitors came from Jackson" in clean.text
    assert "left the well-known hotel at once" in clean.text
    assert clean.dehyphenated == 1


def test_a_soft_hyphen_drawn_on_the_page_is_the_hyphen_a_reader_types() -> None:
    # RAxML's manual, made by LibreOffice, maps its hyphen glyph to U+00AD: its options were no "-f"
    soft = "\u00ad"
    clean = clean_pages([f"{soft}f b draw bipartition information on a tree provided with {soft}t (typically the "
                         f"best{soft}\nknown ML tree) based on multiple trees (e.g., from a bootstrap) in a file "
                         f"specified by {soft}z\nExample: raxmlHPC {soft}f b {soft}t ref {soft}z trees {soft}m GTRCAT "
                         f"{soft}n TEST", f"DNA, gene1 = 1{soft}500", "A third page about the best-known tree."])
    assert soft not in clean.text
    assert ("-f b draw bipartition information on a tree provided with -t (typically the best-known ML tree)"
            in clean.text)
    assert "raxmlHPC -f b -t ref -z trees -m GTRCAT -n TEST" in clean.text
    assert "DNA, gene1 = 1-500" in clean.text


def test_hyphenation_in_a_pdf_is_undone(tmp_path: Path) -> None:
    lines = ["The vis-", "itors who had come from Jackson to see the fleet left the well-",
             "known hotel at once. They were not the first visitors to the well-known hotel."]
    text = _read(tmp_path, make_pdf_pages([[(72, 700 - 14 * i, line) for i, line in enumerate(lines)]])).text
    assert "The visitors who had come from Jackson" in text  # before: "The vis-\nitors"
    assert "left the well-known hotel at once" in text


def test_a_heading_set_larger_than_the_text_is_a_paragraph_of_its_own(tmp_path: Path) -> None:
    # RAxML's manual (a word processor's PDF): its 12-point section headings have no number a contents page
    # lists and follow a 10-point line that ends with a link, not a sentence's end; the heading ran into that
    # line and the sentence below it ("... ijkey=VTEqgUJYCDcf0kP II. Getting help RAxML support is provided ...")
    lines = [("When using RAxML please cite the paper, open access at the link:", 10),
             ("http://bioinformatics.oxfordjournals.org/content/early/2014/01/21/btu033", 10),
             ("II. Getting help", 12),
             ("RAxML support is provided via the RAxML Google group, which has a search function.", 10),
             ("Before posting, read this manual first, and search the group to see if your issue was", 10),
             ("discussed. A dedicated server is described at", 10),
             ("http://epa.h-its.org/raxml/placement-manual.pdf", 12),
             ("in all its detail.", 10)] + [("The likelihood of a tree is computed under the model chosen.", 10)] * 3
    # a contents page lists the heading in the text's size, on another page: it does not count against it
    contents = [(72, 700, "Contents", 12), (72, 680, "I. About RAxML", 10), (72, 664, "II. Getting help", 10),
                (72, 648, "III. Compiling RAxML", 10)]
    pages = [contents, [(72, 700 - 16 * i, text, size) for i, (text, size) in enumerate(lines)]]
    text = _read(tmp_path, make_pdf_pages(pages)).text
    assert "\n\nII. Getting help\n\nRAxML support is provided" in text, text
    # a line set large in a sentence that goes on in lower case below it (a link) does not end the paragraph
    assert "described at http://epa.h-its.org/raxml/placement-manual.pdf in all its detail." in text, text


def test_two_columns_written_line_by_line_across_the_page_are_read_column_after_column(tmp_path: Path) -> None:
    left = textwrap.wrap("The left column tells of the river. It rose in the spring and flooded the lower town "
                         "for three weeks, and the people moved to the hills.", 38)
    right = textwrap.wrap("The right column tells of the railway. It reached the town in 1850 and carried cotton "
                          "to the coast until the war closed the line.", 38)
    # the content stream alternates: left line 1, right line 1, left line 2, ... (each at its own place)
    placed = [(72, 760, "A History of the Town")]
    for i in range(max(len(left), len(right))):
        if i < len(left):
            placed.append((72, 700 - 14 * i, left[i]))
        if i < len(right):
            placed.append((330, 700 - 14 * i, right[i]))
    text = _read(tmp_path, make_pdf_pages([placed])).text
    assert "It rose in the spring and flooded the lower town for three weeks" in text  # before: interleaved
    assert "It reached the town in 1850 and carried cotton to the coast" in text
    assert text.index("A History of the Town") < text.index("The left column") < text.index("The right column")


def test_wide_lines_in_a_row_on_a_two_column_page_keep_out_the_letters_of_their_neighbours(tmp_path: Path) -> None:
    # GNU Parallel's tutorial: a paragraph across the page on a page that is in two columns elsewhere was read
    # with the tails and tops of its letters in the gaps between its lines ("wait for the ypg, ff G pp pg j G
    # remaining jobs to finish")
    left = textwrap.wrap("The left column tells of the river. It rose in the spring and flooded the lower town "
                         "for three weeks, and the people moved to the hills. " * 5, 38)
    right = textwrap.wrap("The right column tells of the railway. It reached the town in 1850 and carried cotton "
                          "to the coast until the war closed the line. " * 5, 38)
    wide = ["If you send GNU parallel the TERM signal, GNU parallel will stop spawning new jobs and wait for the",
            "remaining jobs to finish. If you send it the TERM signal again, GNU parallel will kill all jobs."]
    # lines set close, as that tutorial sets them (their letters reach into each other's), or with a gap between
    for spacing, size in [(9.42, 10), (9.5, 10), (10, 11), (11, 12)]:
        placed = [(72, 760 - spacing * i, line) for i, line in enumerate(wide)]
        for i in range(max(len(left), len(right))):
            if i < len(left):
                placed.append((72, 700 - 14 * i, left[i]))
            if i < len(right):
                placed.append((330, 700 - 14 * i, right[i]))
        text = _read(tmp_path, make_pdf_pages([placed], font_size=size)).text
        assert "wait for the remaining jobs to finish." in " ".join(text.split()), (spacing, size, text[:300])
        assert "It rose in the spring and flooded the lower town for three weeks" in text


def test_a_heading_that_a_few_pages_begin_with_is_content_not_a_running_header() -> None:
    pages = [f"Arguments\nx the value on page {n}.\nMore text of page {n} that goes on." if n % 5 == 0 else
             f"Other heading {n}\nText of page {n}, long enough to be a line of the body." for n in range(20)]
    clean = clean_pages(pages)
    assert clean.text.count("Arguments") == 4


def test_a_page_without_text_keeps_its_place_in_the_page_starts() -> None:
    clean = clean_pages(["First page text.", "", "Third page text."])
    assert len(clean.page_starts) == 3
    assert page_of(clean.page_starts, clean.text.index("Third")) == 3


def test_a_sections_title_heading_a_page_inside_a_sentence_is_its_running_header() -> None:
    # a build tool's user guide: each page carries its section's title at its top, without the section's
    # number; a page break in mid-sentence put it between "But if the problem" and "weren't obvious"
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
             "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor",
             "whiskey", "xray", "yankee", "zulu"]

    def filler(page: int, part: int) -> str:  # lines of their own on each page, none recurring
        return "".join(f"The {words[page * 7 + part * 4 + n]} line is a sentence of its own.\n" for n in range(4))

    title = "28.1. Why is That Target Being Rebuilt? the --debug=explain Option"
    contents = f"Contents\n{filler(0, 0)}{title} .... 168\n{filler(0, 1)}"
    body = (f"Troubleshooting\n{filler(1, 0)}{title}\n{filler(1, 1)}In this example, the underlying cause is "
            "obvious. But if the problem")
    after = (f"Why is That Target Being Rebuilt? the --debug=explain Option\nweren't obvious, it would be helpful "
             f"to specify the --debug=explain option.\n{filler(2, 0)}")
    clean = clean_pages([contents, body, after])
    # before: "But if the problem Why is That Target Being Rebuilt? the --debug=explain Option weren't obvious"
    assert "But if the problem weren't obvious, it would be helpful" in clean.text
    # the numbered heading stays, and so does the title where no sentence runs across it
    assert "28.1. Why is That Target Being Rebuilt? the --debug=explain Option" in clean.text
    kept = clean_pages([contents, body.replace("But if the problem", "That is all."), after])
    assert kept.text.count("Why is That Target Being Rebuilt?") == 3


def test_a_numbered_steps_words_going_on_a_sentence_at_a_pages_top_stay() -> None:
    # a step "1. Install the compiler toolchain" on one page; two pages on, a sentence runs across the page
    # break with the same words in lower case: content, not a running header
    first = "Setting up\n\nTo build the project, follow these steps in order.\n\n1. Install the compiler toolchain\n"
    second = "Some more prose that fills this page. If the build fails, you probably forgot to"
    third = "install the compiler toolchain\nbefore you ran make; go back to step one.\n"
    assert "you probably forgot to install the compiler toolchain before you ran make" in clean_pages(
        [first, second, third]).text


def test_a_footnote_goes_after_the_paragraph_it_interrupts_and_a_line_like_it_stays(tmp_path: Path) -> None:
    # a TeX manual's page: the paragraph goes on over the page, the notes at the foot of the first page are set
    # with their numbers right before their text, as superscripts are read, and the words they mark carry them
    first = ["Biber sorts names with the Unicode Collation Algorithm and keeps the sorting of lists8 and options7,",
             "so that it can be compared with BibTeX only loosely. Biber is written in Perl and does a great",
             "deal more than BibTeX, which is",
             "7A rather tricky unbounded loop but with a guaranteed eventual stable exit state.",
             "8This is multi-field sort with an embedded cache for performance, kept over",
             "runs of the program."]
    second = ["written in C. One of its test cases is a file of 2150 entries, which it reads in thirty seconds.",
              "3D output is not drawn by Biber at all, and no part of it needs a graphics card."]
    pages = [[(72, 700 - 14 * i, line) for i, line in enumerate(first)] + [(300, 40, "7")],
             [(72, 700 - 14 * i, line) for i, line in enumerate(second)] + [(300, 40, "8")]]
    document = _read(tmp_path, make_pdf_pages(pages))
    text = document.text
    # before: "... more than BibTeX, which is 7A rather tricky unbounded loop ... 8This is multi-field sort ..."
    assert "does a great deal more than BibTeX, which is written in C." in text, text
    paragraphs = text.split("\n\n")
    assert "[8] This is multi-field sort with an embedded cache for performance, kept over runs of the program." \
        in paragraphs, paragraphs
    assert paragraphs.index("[8] This is multi-field sort with an embedded cache for performance, kept over runs "
                            "of the program.") > [n for n, p in enumerate(paragraphs) if "written in C." in p][0]
    assert "[7] A rather tricky unbounded loop but with a guaranteed eventual stable exit state." in paragraphs
    # set after the paragraph, on page 2's text, a note is still on the page it is printed on
    from citesum.ingest.pdf import NOTE_PAGES

    starts, notes = document.metadata[PAGE_STARTS], document.metadata[NOTE_PAGES]
    assert page_of(starts, text.index("[8] This is multi-field")) == 2  # where its place in the text is
    assert page_of(starts, text.index("[8] This is multi-field"), notes) == 1
    assert page_of(starts, text.index("[7] A rather"), notes) == 1
    assert page_of(starts, text.index("written in C."), notes) == 2
    # a line that opens with a number and marks no word above it is no note: it stays where it is
    assert "3D output is not drawn by Biber at all" in text and "[3]" not in text


def test_footnotes_at_a_pages_foot_are_found_and_a_parts_table_is_not() -> None:
    from citesum.ingest.pdf import footnotes

    page = ["The --dot-include option takes a list. To output in SVG17 use dot after installing GraphViz,",
            "as most users will never need14 more.", "14For details on the options, see http://search.cpan.org/",
            "3ACollate&mode=all", "17Scalable Vector Graphics"]
    assert footnotes(page) == [2, 3, 4]
    table = ["The devices of the 18F family are listed below.", "18F6620 18F6621 18F6622", "18F6720 18F6722"]
    assert footnotes(table) == []
    # numbers that open a line and follow a digit of a name above are no notes
    for foot in (["Scenes are drawn by python3 itself.", "3D scenes are drawn by the GPU."],
                 ["The driver reads ext4 and IPv6 settings.", "4K recordings need a fast disk."],
                 ["The driver reads ext4 and IPv6 settings.", "6To4 tunnels are not supported."]):
        assert footnotes(foot) == [], foot
    # a mark set after the stop of a sentence
    assert footnotes(["The cache is kept between runs of the program.7", "7See the reference manual."]) == [1]


def test_commands_shown_after_the_sentence_introducing_them_are_an_example_not_prose(tmp_path: Path) -> None:
    lines = ["Most options can be given in a long or a short form. When the option requires an argument, the",
             "long form is followed by an equals sign and then the argument. For example, the configuration",
             "file option can be given in two ways:",
             "biber --configfile=somefile.conf",
             "biber -g somefile.conf",
             "With the backend=biber option, Biblatex switches its backend interface and passes all the options",
             "relevant to the operation of Biber in a control file. The usual way to call Biber is simply with",
             "the control file as its only argument. The default value of the option is one of these:",
             "- the name of the control file;",
             "- the name of the document.",
             "A short answer follows the colon:",
             "forty-two.",
             "That is the whole of it, and the paragraph goes on as any other paragraph of the manual does here.",
             "The fields of each entry are these:",
             "name",
             "The name of the package.",
             "version"]
    text = _read(tmp_path, make_pdf_pages([[(72, 700 - 14 * i, line) for i, line in enumerate(lines)]])).text
    # before: "biber --configfile=somefile.conf biber -g somefile.conf With the backend=biber option, ..."
    assert "ways:\n\n```\nbiber --configfile=somefile.conf\nbiber -g somefile.conf\n```\n\nWith the backend" in text, text
    from citesum.segment import segments

    units = {text[u.start:u.end]: u.kind for u in segments(text)}
    assert units["With the backend=biber option, Biblatex switches its backend interface and passes all the options "
                 "relevant to the operation of Biber in a control file."] == "sentence"
    # a list after a colon stays a list, and a line of prose after one stays prose
    assert text.count("```") == 4 and "- the name of the control file;" in text
    assert "forty-two." in text and "```\nforty-two." not in text
    # a sentence of prose ends an example: it is stated, not kept as code
    assert "these:\n\n```\nname\n```\n\nThe name of the package." in text, text


def test_a_pdf_whose_pages_are_mostly_scans_is_indexed_and_the_report_says_so(tmp_path: Path) -> None:
    from citesum.ingest import ingest_paths

    # a manual of six pages, four of them scanned images (no text layer), the page number alone on one
    pages = [[(72, 700, "The live system boots from a USB stick or a DVD.")], [], [(300, 40, "3")], [], [],
             [(72, 700, "Chapter six says how to build an image with lb build.")]]
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "manual.pdf").write_bytes(make_pdf_pages(pages))
    (folder / "book.pdf").write_bytes(_book(PAGES_OF_TEXT))
    documents, report = ingest_paths([folder])
    assert {d.id for d in documents} == {"manual.pdf", "book.pdf"}
    reasons = {Path(f.path).name: f.reason for f in report.files}
    # before: indexed silently, and every question about the scanned pages only abstained
    assert reasons["manual.pdf"] == ("1 part(s) left out: 4 of 6 pages, which have no text layer (scanned pages need "
                                     "OCR first)")
    assert reasons["book.pdf"] == ""


def test_a_contents_pages_entries_and_the_headings_it_lists_stand_apart() -> None:
    # a LibreOffice manual (aprx): its contents page came out as one paragraph, and a heading it lists ran into
    # the line above it, which ends no sentence ("... googlegroups.com 2 Configuration Examples")
    contents = ("Table of Contents\n1 What is APRX?.................................................. 5\n"
                "2 Configuration Examples........................................ 7\n"
                "2.1 Minimal Configuration of Rx-iGate.............................. 8\n")
    body = ("The program reports telemetry statistics on every interface it has, which can be used to estimate "
            "radio channel loading.\nEmail list for support: aprx-software (at) googlegroups.com\n"
            "2 Configuration Examples\nBasis of Aprx configuration is in understanding how interfaces and message "
            "flows depend on each other.\n")
    text = clean_pages([contents, body]).text
    paragraphs = text.split("\n\n")
    assert "1 What is APRX?.................................................. 5" in paragraphs
    assert "2.1 Minimal Configuration of Rx-iGate.............................. 8" in paragraphs
    assert "googlegroups.com\n\n2 Configuration Examples\n\nBasis of Aprx configuration" in text
    # a numbered line that no contents entry lists goes on the sentence it is in
    lines = ("The nightly job builds every package of the project from its sources, and after that the tests run\n"
             "2 Configuration passes each night, one for each radio.\n")
    assert "the tests run 2 Configuration passes each night" in clean_pages([contents, lines]).text


def test_a_word_doxygen_breaks_with_its_mark_at_a_line_end_is_whole_again() -> None:
    # Doxygen's LaTeX sets "←-" where it breaks a word or a name at a line's end
    text = clean_pages(["There is also support for generating output in RTF (MS-Word), Post←-\nScript, hyperlinked "
                        "PDF, and man pages. Install bison from https://sourceforge.←-\nnet/projects/winflexbison/ "
                        "first.\n"]).text
    assert "output in RTF (MS-Word), PostScript, hyperlinked PDF" in text
    assert "https://sourceforge.net/projects/winflexbison/" in text and "←" not in text
    # an arrow that is text stays: "Press ←" above "and the cursor moves left."
    assert "Press ← and the cursor moves left" in clean_pages(["Press ←\nand the cursor moves left.\n"]).text


def test_lines_with_dots_in_them_are_no_contents_entries() -> None:
    from citesum.ingest.pdf import _contents_entry

    for entry in ["1 What is APRX?.......... 5", "Preface ........ ix", "3.1 The “mycall” Parameter....... 16"]:
        assert _contents_entry(entry), entry
    for line in ["He paused.... did", "the values 1, 2, 3, .... 10", "X" + ". " * 4000 + "!"]:
        assert not _contents_entry(line), line[:20]


def test_a_heading_naming_the_command_its_paragraph_opens_with_stands_apart() -> None:
    """Ubuntu's packaging guide heads a section "Set up pbuilder" over "pbuilder allows you to build packages
    ...": the paragraph's first word is in lower case, and the heading had been read into its first sentence
    ("Set up pbuilder pbuilder allows you ...")."""
    line = "You can build packages in a clean room, which keeps the build honest about what it needs from the system."
    page = ("The tools are installed from the archive like any other package on the system you work on.\n"
            "Set up pbuilder\n"
            "pbuilder allows you to build packages locally on your machine. It serves a couple of purposes\n"
            f"{line}\n")
    paragraphs = clean_pages([page]).text.split("\n\n")
    assert "Set up pbuilder" in paragraphs, paragraphs
    assert any(p.startswith("pbuilder allows you to build packages locally on your machine.") for p in paragraphs)
    # a short line that a sentence in lower case goes on from is still one sentence
    wrapped = ("The tools are installed from the archive like any other package on the system you work on.\n"
               "Install the toolchain\n"
               "quickly, before the build starts, or the build stops at its first compiler call and says why.\n")
    assert "Install the toolchain quickly, before" in clean_pages([wrapped]).text


def test_a_sections_numbered_title_and_its_first_sub_sections_stand_apart() -> None:
    """The Muttprint manual's PDF read "2. Installation 2.1. System requirements" as one line: a numbered title
    opens with a digit, not a capital, so the heading above it was run into it."""
    body = "Muttprint was realized in the programming language Perl which requires a functioning Perl interpreter."
    page = ("It looks better than plain text and is comparable with the printing of well-known mail clients.\n"
            f"2. Installation\n2.1. System requirements\n{body}\n")
    paragraphs = clean_pages([page]).text.split("\n\n")
    assert "2. Installation" in paragraphs and "2.1. System requirements" in paragraphs, paragraphs
    assert body in paragraphs, paragraphs
    # a number that is no sub-section's goes on as before ("2" is no section of "21", nor "2.1" of "2.10")
    text = clean_pages([page.replace("2.1. System requirements", "21 Bar graphs")]).text
    assert "2. Installation 21 Bar graphs" in text, text
    text = clean_pages([page.replace("2. Installation\n2.1.", "2.1 Installation\n2.10")]).text
    assert "2.1 Installation 2.10 System requirements" in text, text


def test_a_tex_fonts_ligatures_given_as_their_codes_are_letters_again() -> None:
    # a Type 3 font drawn from a TeX bitmap font gives no Unicode: PDFium passes on the glyph's code, here T1's
    # (fi 28, fl 29, ff 27, ffi 30, quotes 16 and 17), as in the dasm manual
    t1 = clean_pages(["Each line gives\r\na symbol name, its \x1cnal resolved address/value, and a \x1dag \x1celd. "
                      "The o\x1bset is su\x1ecient; see the \x10Symbol List\x11 below \x15 it is ba\x1fed\r\n"
                      "by none.\r\n"]).text
    assert ("its final resolved address/value, and a flag field. The offset is sufficient; see the \u201cSymbol "
            "List\u201d below \u2013 it is baffled by none.") in t1
    # OT1's codes (fi 12, ff 11): its fl, 13, is a carriage return to PDFium and stays one
    ot1 = clean_pages(["Name the output \x0cle with -o, and the\r\nbu\x0ber is written when it is full.\r\n"]).text
    assert "Name the output file with -o, and the buffer is written when it is full." in ot1
    # codes outside words in a document whose words hold none are a formula's delimiters: they go, as before
    formula = clean_pages(["The derivative is \x10 v(x) \x11 over the interval.\r\n"]).text
    assert "\u201c" not in formula and "The derivative is v(x) over the interval." in formula


def test_a_bullet_given_as_a_control_code_opens_a_list_item() -> None:
    # PDFium gives U+0088 for the bullets of some TeX-made manuals (JAGS's installation manual, as here): read as
    # nothing, each item ran into the sentence above it ("options such as:  The names of the C, C++, ...")
    clean = clean_pages(["1.1 Configure options\r\nAt configure time you also have the option of defining options "
                         "such as:\r\n\x88 The names of the C, C++, and Fortran compilers.\r\n\x88 Optimization "
                         "flags for the compilers. JAGS is optimized by default if the GNU compiler\r\n(gcc) is used."
                         "\r\n\x88 Installation directories.\r\n"]).text
    lines = clean.split("\n")
    assert "At configure time you also have the option of defining options such as:" in lines, clean
    assert "\u2022 The names of the C, C++, and Fortran compilers." in lines, clean
    assert ("\u2022 Optimization flags for the compilers. JAGS is optimized by default if the GNU compiler (gcc) is "
            "used.") in lines, clean
    assert "\x88" not in clean
    # set in a word it is no bullet (a MacRoman "à" read as Latin-1): it stays as it was
    assert "voil\x88 tout" in clean_pages(["Et voil\x88 tout ce qu'il faut savoir.\r\n"]).text
    # "(gcc)" opening a line is the wrapped sentence's, but a debugger's prompt opens a line of its example
    example = clean_pages(["Since the array has been allocated dynamically, gdb does not know its size; you must "
                           "give it with\r\n(gdb) print a[0]@(argc - 1)\r\n"]).text
    assert "(gdb) print a[0]@(argc - 1)" in example.split("\n"), example


def test_a_file_name_given_as_a_pdfs_title_is_no_title(tmp_path: Path) -> None:
    # pypdf's scanned sample is titled "Binder1.pdf" by the tool that bound it; dvipdfm titles CFITSIO's manual
    # "cfitsio.dvi": a reader shown those names learns nothing the file's own name does not say better
    page = [[(72, 720, "The siege of Vicksburg lasted from May to July 1863, and ended with the city's surrender.")]]
    for name, title, expected in (("vicksburg.pdf", "Binder1.pdf", "vicksburg"),
                                  ("cfitsio.pdf", "cfitsio.dvi", "cfitsio"),
                                  ("report.pdf", "Microsoft Word - Annual report 2023.docx", "report"),
                                  ("siege.pdf", "The Siege of Vicksburg", "The Siege of Vicksburg")):
        path = tmp_path / name
        path.write_bytes(make_pdf_pages(page, title=title))
        documents, report = ingest_file(path, name, IngestOptions())
        assert report.status == "ingested", report.reason
        assert documents[0].title == expected, (title, documents[0].title)


def test_a_chapters_title_under_its_pages_number_stays_and_headers_holding_the_number_go() -> None:
    # LaTeX-Mk's manual (Texinfo): a chapter a page, each page's number alone at its top, the chapter's title
    # below it; the chapters' numbers counted on with the pages, read as a second way of numbering them, and every
    # chapter's title went as a header, as did "1 Introduction" under the "1" of the first page
    titles = ["Introduction", "Targets", "Variables", "HTML Output", "Using LaTeX-Mk Recursively",
              "Obtaining LaTeX-Mk", "Installing LaTeX-Mk", "Feedback"]
    pages = ["LaTeX-Mk\nFor version 2.1, 28 December 2010\nDan McMahill",
             "i\nTable of Contents\n" + "\n".join(f"{n} {title} .... {n + 1}" for n, title in enumerate(titles, 1))]
    for number, title in enumerate(titles, 1):
        page = len(pages) - 1  # the printed number (the first chapter takes two pages)
        pages.append(f"{page}\n{number} {title}\nThe {title.lower()} chapter tells one thing on page {page}.\n"
                     f"Its {['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth'][number - 1]} "
                     "section goes on with a second sentence.")
        if number == 1:  # the chapter's second page, its running header holding the page's number
            pages.append(f"Chapter 1: Introduction {page + 1}\nThe introduction goes on over its second page.")
    # a page of the last chapter whose line opens with the number the chapters' numbering would give it
    pages.append(f"Chapter 8: Feedback {len(pages) - 1}\n{len(pages) - 2} settings are read from the site file.\n"
                 "Each of them is told in the chapter on variables.")
    text = clean_pages(pages).text
    for number, title in enumerate(titles, 1):
        assert f"\n{number} {title}\n" in f"\n{text}\n", (title, text)
    assert "Chapter 1: Introduction" not in text and "Chapter 8: Feedback" not in text, text
    assert "The introduction goes on over its second page." in text
    assert "9 settings are read from the site file." in text, text


def test_a_chapters_title_that_reads_as_its_running_header_stays_on_its_first_page() -> None:
    # Maxima's book: a chapter's first page shows "CHAPTER 3" above its title and its number alone at its foot;
    # its other pages carry "CHAPTER 3. THE BASICS 30" as their header. The two title lines read together as that
    # header, and went
    things = ["apples", "boats", "clouds", "doors", "eagles", "fields", "gates", "hills", "islands", "jars"]
    pages = []
    for chapter, title in ((2, "Interfaces"), (3, "The Basics")):
        pages.append(f"CHAPTER {chapter}\n{title}\nThis chapter opens with a sentence on {things[chapter]}.\n"
                     f"{len(pages) + 20}")
        for more in range(4):
            pages.append(f"CHAPTER {chapter}. {title.upper()} {len(pages) + 20}\nThis page of the chapter tells of "
                         f"{things[len(pages) % 10]} and {things[(len(pages) + chapter) % 10]}.")
    text = clean_pages(pages).text
    assert "CHAPTER 3" in text and "The Basics" in text and "Interfaces" in text, text
    assert "THE BASICS" not in text and "INTERFACES" not in text, text
    assert text.count("This page of the chapter tells of") == 8, text
    # a guide whose every page shows its number alone at its foot ("Page 12") has no chapter's first page: its
    # running header broken over two lines goes, as on its other pages
    guide = [f"User Guide Chapter 11 Graphics\nThis page of the guide tells of {thing}.\nPage {n + 1}"
             for n, thing in enumerate(things[:8])]
    guide[5] = f"User Guide\nChapter 11 Graphics\nThis page of the guide tells of {things[5]}.\nPage 6"
    text = clean_pages(guide).text
    assert "User Guide" not in text and "Chapter 11" not in text, text
    assert text.count("This page of the guide tells of") == 8, text
