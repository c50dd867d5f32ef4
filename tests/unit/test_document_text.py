"""Word and HTML documents read as a person reads them (issue 16): a Word body in its order with tables in
place, merged cells once, footnotes kept and running headers and footers left out; a web page's main content
without its navigation, paragraphs whole."""

from __future__ import annotations

from pathlib import Path

from citesum.ingest import IngestOptions, ingest_file
from citesum.types import Document
from fixtures import make_docx_with_notes


def _read(path: Path) -> Document:
    documents, report = ingest_file(path, path.name, IngestOptions())
    assert report.status == "ingested", report.reason
    return documents[0]


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
    path = tmp_path / "reservoir.html"
    path.write_text(PAGE, encoding="utf-8")
    document = _read(path)
    assert document.title == "The reservoir - Town Water"
    # before: the source's line breaks cut the sentence into three
    assert "The reservoir was built in 1931 and holds two million cubic metres of water." in document.text
    assert "It was enlarged in 1975" in document.text and "1931 | 2 Mm3" in document.text
    for boilerplate in ("About the water board", "Contact us", "serving the valley", "All rights reserved",
                        "Related"):
        assert boilerplate not in document.text  # before: all kept


def test_a_page_with_too_little_for_a_main_content_keeps_all_its_text(tmp_path: Path) -> None:
    path = tmp_path / "short.html"
    path.write_text("<html><body><p>Closed on Monday.</p></body></html>", encoding="utf-8")
    assert _read(path).text == "Closed on Monday."


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
    from citesum.segment import segments

    kinds = {" ".join(text[u.start:u.end].split()): u.kind for u in segments(text)}
    assert kinds["2.7 Thread Safety"] == "heading" and kinds["2.7.1 Closures"] == "heading"


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
        "\nInstallation\n\n- Installation notes are on the web site.\nKept\n"
        "A heading the extractor kept is not doubled.")
    assert with_headings("Some text.", "<h1>unclosed <b") == "Some text."  # what cannot be placed stays out
    # a Sphinx heading the extractor kept with its permalink mark is kept once (it was put back a second time)
    sphinx = ('<h2>Basic Value Options<a class="headerlink" href="#basic">\u00b6</a></h2><p>The most basic option '
              "is a value option, which accepts one argument.</p>")
    kept = "Basic Value Options\u00b6\nThe most basic option is a value option, which accepts one argument."
    assert with_headings(kept, sphinx) == kept


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
