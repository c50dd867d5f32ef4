"""PDF text a person would quote: pages read with PDFium (``pypdfium2``), two-column pages column after column,
then the ligatures a TeX font without Unicode gave as codes made letters again (:func:`tex_font_codes`),
running headers, footers and page numbers removed, footnotes taken from a page's foot and set after the
paragraph they interrupted (:func:`footnotes`), words hyphenated at a line end joined again, and lines joined into
paragraphs (headings and list items kept apart, and the short lines of an example after the sentence that
introduces it with a colon fenced as code), with the offset where each page starts kept, so that a citation can
say on which page its evidence is.

What counts as a running header or footer (:func:`running_lines`, :func:`folio_offsets`): a block of up to
``EDGE_LINES`` lines at the top or bottom of a page, each a line whose letters recur at the edges of at least
3 pages and of half the pages between its first and last (OCR misreadings of it included), a page number, or a
short line beginning or ending with the page's printed number (a reference manual's "CallExternal 71").

Why PDFium (measured by ``benchmarks/ingest_quality.py`` on pypdf's test files and Debian's manuals, the first
40 pages of each, the same pages for each library): it reads pages many times faster than pypdf, pdfminer.six and
pdfplumber, and still does with this module's reading order and cleaning included. None of them joins lines
into paragraphs or drops running headers by itself (with each, many passages ended inside a sentence, and
running headers, footers and page numbers stayed in the text), so the cleaning here is what makes the text
quotable: it leaves far fewer of both, on files never looked at while it was written too. PDFium also marks
the hyphen of a word broken at a line end (U+FFFE) where the others give a "-" that may belong to the word. All
are under permissive licences (pypdf BSD, pdfminer.six and pdfplumber MIT, pypdfium2 Apache-2.0/BSD); PyMuPDF,
under the AGPL, was left out of the core install.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from citesum.segment import CODE_FENCE

#: where PDFium breaks a word at a line end (the hyphen it removes)
_SOFT_BREAK = "\ufffe"
#: a soft hyphen (U+00AD) in a text layer is a hyphen drawn on the page: a word processor's PDF (LibreOffice's)
#: maps its hyphen-minus glyph to it, so options ("-T"), ranges ("1-500") and names ("raxmlHPC-AVX") were not
#: found by the hyphen a reader types
_DRAWN_SOFT_HYPHEN = "\u00ad"
#: what PDFium gives for a list's bullet in some TeX-made PDFs (a C1 control, which no text writes): JAGS's,
#: Velvet's, GNU Prolog's and CFITSIO's manuals, their items run into the paragraph above them ("options such as:
#: \x88 The names of the C, C++, and Fortran compilers.")
_CONTROL_BULLET = re.compile(r"(?<!\S)\x88(?=\s)")  # (set apart by spaces, as a bullet is: no letter)
#: control characters in a text layer; U+0002 is the hyphen of some OCR layers (pypdf reads "-" there)
_CONTROL = re.compile(r"[\x00\x01\x03-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: the codes of a TeX font's ligatures and quotes where the PDF gives no Unicode for them (a Type 3 font drawn
#: from a TeX bitmap font names its glyphs "/a28", and PDFium passes the code on, "de\x1cned"): T1's (Cork's)
#: ligatures are 27-31, its quotes 16-17 and its dashes 21-22, OT1's ligatures 11-15 (but for its fl, 13: PDFium ends
#: lines with a carriage return, and writes one before the "c" of a copyright sign drawn as a circled c)
_T1_CODES = {"\x1b": "ff", "\x1c": "fi", "\x1d": "fl", "\x1e": "ffi", "\x1f": "ffl",
             "\x10": "\u201c", "\x11": "\u201d", "\x15": "\u2013", "\x16": "\u2014"}
_OT1_CODES = {"\x0b": "ff", "\x0c": "fi", "\x0e": "ffi", "\x0f": "ffl"}
#: a ligature's code in a word: next to a letter ("\x1cnal", "stu\x1b")
_T1_LIGATURE = re.compile(r"[\x1b-\x1f](?=[^\W\d_])|(?<=[^\W\d_])[\x1b-\x1f]")
_OT1_LIGATURE = re.compile(r"[\x0b\x0c\x0e\x0f](?=[^\W\d_])|(?<=[^\W\d_])[\x0b\x0c\x0e\x0f]")
_T1_PUNCTUATION = re.compile(r"[\x10\x11\x15\x16]")
#: a line that is only a page number: "12", "- 12 -", "Page 12", "page 3 of 40", "xii"
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-–—(\[]?\s*(?:\d{1,5}|[ivxlcdm]{1,7})\s*[-–—)\]]?"
                          r"(?:\s*(?:of|/)\s*\d{1,5})?$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"""[.!?:]["'”’)\]]*$""")
_LIST_ITEM = re.compile(r"^(?:[-–•*▪‣]|\d{1,3}[.)]|[a-z][.)]|\(\w{1,3}\))\s+\S")
#: a word in parentheses that opens a line, no list's number ("(gcc) is used."): it goes on the line above when
#: that line is the text's width and ends no sentence. GDB's prompt ("(gdb) print a[0]") opens a line of an
#: example
_PARENTHESIZED_WORD = re.compile(r"^\((?![ivx]+\))(?!gdb\))[a-z]{2,}\)\s")
_WORD_BEFORE_HYPHEN = re.compile(r"(\w+)-$")
_WORD_AFTER = re.compile(r"^(\w+)")
#: a line beginning or ending with a number (a page's number in its header or footer)
_FOLIO = re.compile(r"^(\d{1,5})\b(?!\.\d)|(?<![\d.,])\b(\d{1,5})$")
#: a header or footer line is short
_FOLIO_LINE = 100
_SECTION_NUMBER = re.compile(r"^\d+(?:\.\d+)*\.?\s+[A-Z]")
_INNER_BREAK = re.compile(r"(\w+)\ufffe(\w+)")
#: lines looked at for running headers (from the top) and footers (from the bottom) of each page: a header can
#: be a block ("Printed by...", a guideline's name, its version, a chapter)
EDGE_LINES = 4
#: the metadata field of a PDF document: the character offset where each of its pages starts
PAGE_STARTS = "page_starts"
#: the metadata field of a PDF document: (start, end, page) of each footnote (see :class:`CleanText`)
NOTE_PAGES = "note_pages"
#: the metadata field of a PDF document whose pages are numbered in print otherwise than 1, 2, ...: each page's
#: printed label ("xii", "16"), which a reader finds on the page and in a viewer
PAGE_LABELS = "page_labels"


@dataclass(frozen=True)
class CleanText:
    text: str
    #: character offset in ``text`` where each page starts (page n starts at page_starts[n - 1])
    page_starts: list[int]
    #: lines removed as running headers, footers or page numbers
    removed_lines: int
    #: words joined again across a line end where they had been hyphenated
    dehyphenated: int
    #: (start, end, page) of each footnote: set after the paragraph it interrupts, which may go on to a later
    #: page, it is on the page it was printed on, whichever page's range its place in the text falls in
    note_pages: list[tuple[int, int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class PdfPages:
    """What :func:`read_pages` reads of a PDF."""

    #: the text of each page in reading order
    pages: list[str]
    #: the document's title, or ""
    title: str
    #: each page's printed label ("xii", "16"), or "" where the file gives none
    labels: list[str]
    #: for each page, the keys (:func:`_key`) of its lines set larger than the document's text: its headings and
    #: titles (:func:`display_lines`)
    display_lines: list[frozenset[str]] = field(default_factory=list)


def read_pages(data: bytes) -> PdfPages:
    """The pages' text, the title, the page labels and the lines set large; raises ``pypdfium2.PdfiumError`` on a
    corrupt file or one that needs a password. PDFium is not thread-safe: one thread at a time."""
    import pypdfium2

    document = pypdfium2.PdfDocument(data)
    try:
        pages, labels = [], []
        sized: list[list[tuple[str, float]]] = []
        for number in range(len(document)):
            page = document[number]
            textpage = page.get_textpage()
            whole = str(textpage.get_text_range())
            pages.append(_reading_order(textpage, *page.get_size(), whole))
            sized.append(_sized_lines(textpage, whole))
            textpage.close()
            page.close()
            labels.append(document.get_page_label(number) or "")
        return PdfPages(pages, metadata_title(document.get_metadata_dict().get("Title") or ""), labels,
                        display_lines(sized))
    finally:
        document.close()


def _sized_lines(textpage: Any, text: str) -> list[tuple[str, float]]:
    """Each line of the page's text (in the content stream's order) with the size most of its letters are set in
    (a larger initial or a symbol does not make a line large), read from the letters among 2 ×
    :data:`_SIZE_SAMPLES` characters spread over the line. A letter's size is its font's size scaled by the
    letter's matrix: cairo sets its text in a 1-point font and scales it so. ``text``: the page's text in PDFium's
    order; where it does not hold a character for each of the page's (a glyph without Unicode, as TeX's fonts
    have, is left out of it), the page's characters are read one by one."""
    import pypdfium2.raw as pdfium

    count = textpage.count_chars()
    if len(text) != count:
        text = "".join(chr(pdfium.FPDFText_GetUnicode(textpage.raw, index) or 0xFFFD) for index in range(count))
    matrix = pdfium.FS_MATRIX()

    def size(index: int) -> float:
        pdfium.FPDFText_GetMatrix(textpage.raw, index, matrix)
        scale = math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c)) or 1.0
        return round(pdfium.FPDFText_GetFontSize(textpage.raw, index) * scale, 1)

    lines: list[tuple[str, float]] = []
    for line in re.finditer(r"[^\r\n]+", text):
        start, end = line.span()
        letters = [index for index in range(start, end, max(1, (end - start) // (2 * _SIZE_SAMPLES)))
                   if text[index].isalpha()]
        if letters:
            lines.append((line.group(), Counter(map(size, letters)).most_common(1)[0][0]))
    return lines


#: about how many letters of a line are looked at for its size
_SIZE_SAMPLES = 8
def metadata_title(title: str) -> str:
    """The title a PDF's metadata gives, or "" when it is the name of the file the PDF was made from, which a
    tool writes there for want of one ("Binder1.pdf", "cfitsio.dvi", "Microsoft Word - report.docx"): the PDF is
    then titled as one without a title is."""
    title = " ".join(title.split())
    return "" if _FILE_NAME_TITLE.fullmatch(title) else title


#: a file's name given as a PDF's title, by Acrobat's binder, dvipdfm or a word processor's printer driver
_FILE_NAME_TITLE = re.compile(r"(?i)(?:microsoft (?:word|excel|powerpoint) - )?[^/\\]*[\w)-]\."
                              r"(?:pdf|dvi|ps|eps|tex|docx?|odt|rtf|xlsx?|pptx?|indd|qxd|txt|html?)|untitled")


#: how much larger than the document's text a line's letters are set for the line to be a heading's or a title's
_DISPLAY_SIZE = 1.15


def display_lines(pages: Sequence[Sequence[tuple[str, float]]]) -> list[frozenset[str]]:
    """For each page, the keys of its lines set larger than the document's text (the size most of its letters are
    set in): a manual's section headings, which a word processor's PDF sets on a line of their own with no other
    mark (RAxML's 12-point "II. Getting help" under a 10-point line that ends with a link, run into it). A line
    of a few letters (:data:`_NAMING_LETTERS`) that the page also sets as often at a smaller size is none (an
    equation's "x" between its exponents, each set on a line of its own); a longer one is, though a contents list
    names it in the text's size."""
    keyed = [[(_key(line), size) for line, size in lines] for lines in pages]
    letters: Counter[float] = Counter()
    for lines in keyed:
        for key, size in lines:
            letters[size] += len(key)
    if not letters:
        return [frozenset() for _ in pages]
    text_size = letters.most_common(1)[0][0]
    display = []
    for lines in keyed:
        large, other = Counter[str](), Counter[str]()
        for key, size in lines:
            if key:
                (large if size >= _DISPLAY_SIZE * text_size else other)[key] += 1
        display.append(frozenset(key for key, count in large.items()
                                 if len(key) >= _NAMING_LETTERS or count > other[key]))
    return display


#: the fewest letters of a line that name it: fewer (an equation's "x", a unit) may be set at any size
_NAMING_LETTERS = 4


def _reading_order(textpage: Any, width: float, height: float, whole: str) -> str:
    """A page's text in reading order. PDFium gives the order of the content stream, which some writers fill
    line by line across both columns of a page; on a two-column page each column is read whole instead, band
    by band between the lines that span both (a title, a wide figure caption, a footer). A band is read within
    bounds that keep out the letters of the lines next to it (see the loop). ``whole``: the page's text in
    PDFium's order."""
    rects = np.array([textpage.get_rect(i) for i in range(textpage.count_rects())], dtype=float).reshape(-1, 4)
    gutter = _gutter(rects, width)
    if gutter is None:
        return whole
    parts: list[str] = []
    top = height
    middles = (rects[:, 1] + rects[:, 3]) / 2
    wide = sorted(rects[(rects[:, 0] < gutter) & (rects[:, 2] > gutter)].tolist(), key=lambda rect: -rect[3])
    for number, (left, bottom, right, band_top) in enumerate(wide):
        # PDFium reads a letter that reaches into the bounds read: set close, two wide lines in a row gave the
        # tails and tops of each other's letters ("wait for the ypg, ff G pp pg j G remaining jobs"), and so did
        # the gap between them. The columns between the previous wide line and this one are read when a line of
        # text is there, and a wide line is read up to where the lines next to it reach into it.
        if band_top < top and ((middles > band_top) & (middles < top)).any():
            parts += [textpage.get_text_bounded(0, band_top, gutter, top),
                      textpage.get_text_bounded(gutter, band_top, width, top)]
        reach_top, reach_bottom = band_top, bottom
        if number and _reaches_into(wide[number - 1], wide[number]):
            reach_top = wide[number - 1][1] - _CLEAR
        if number + 1 < len(wide) and _reaches_into(wide[number], wide[number + 1]):
            reach_bottom = wide[number + 1][3] + _CLEAR
        parts.append(textpage.get_text_bounded(0, reach_bottom, width, reach_top))
        top = min(top, bottom)
    parts += [textpage.get_text_bounded(0, 0, gutter, top), textpage.get_text_bounded(gutter, 0, width, top)]
    return "\n".join(part for part in parts if part.strip())


#: how far past a neighbouring line's edge a line is read from (points)
_CLEAR = 0.01


def _reaches_into(upper: list[float], lower: list[float]) -> bool:
    """Whether the line of ``upper`` (left, bottom, right, top) and the one of ``lower`` below it overlap by
    their letters' tails and tops, not as two pieces of one line do (by most of their height)."""
    if upper[1] >= lower[3]:  # the upper line's bottom is above the lower one's top
        return False
    overlap = min(upper[3], lower[3]) - max(upper[1], lower[1])
    return 0 < overlap < 0.5 * min(upper[3] - upper[1], lower[3] - lower[1])


def _gutter(rects: np.ndarray, width: float) -> float | None:
    """The x of the gap between two columns of text, or None for a page that is not in two columns: a vertical
    line in the middle of the page that (nearly) no piece of text crosses, with a fifth or more of the text on
    each side, side by side."""
    if len(rects) < 6:
        return None
    candidates = np.linspace(0.3 * width, 0.7 * width, 81)
    crossing = ((rects[:, 0][None, :] < candidates[:, None]) & (rects[:, 2][None, :] > candidates[:, None])).sum(1)
    best = int(np.argmin(crossing))
    x = float(candidates[best])
    left, right = rects[rects[:, 2] <= x], rects[rects[:, 0] >= x]
    if crossing[best] > max(1, 0.05 * len(rects)) or min(len(left), len(right)) < 0.2 * len(rects):
        return None
    # side by side: the columns share most of their height (not a caption beside a figure)
    overlap = min(left[:, 3].max(), right[:, 3].max()) - max(left[:, 1].min(), right[:, 1].min())
    shorter = min(left[:, 3].max() - left[:, 1].min(), right[:, 3].max() - right[:, 1].min())
    return x if shorter > 0 and overlap >= 0.5 * shorter else None


def _key(line: str) -> str:
    """A line as a running header or footer repeats it: its letters only (the page number, spacing and
    punctuation change from page to page)."""
    return "".join(c for c in line.lower() if c.isalpha())


def running_lines(pages: list[list[str]]) -> set[str]:
    """Keys of running headers and footers: lines near the top or bottom of pages that recur on at least 3
    pages and on at least half the pages from their first to their last (a chapter's header, or a book's on
    every other page; not a heading such as "Arguments" that a page happens to begin with now and then). A
    line that differs from a recurring one by a character or two (OCR: "VICKSBUEG", "SIEGE OP") counts as it."""
    if len(pages) < 3:
        return set()
    found: dict[str, list[int]] = {}
    for number, lines in enumerate(pages):
        for key in {_key(line) for line in lines[:EDGE_LINES] + lines[-EDGE_LINES:]}:
            if len(key) >= 3:
                found.setdefault(key, []).append(number)
    # groups of the keys seen on two pages or more, each with the keys near it (OCR variants that recur too)
    groups: dict[str, list[str]] = {}
    where: dict[str, set[int]] = {}
    by_initial: defaultdict[str, list[str]] = defaultdict(list)  # _near needs the same first letter
    for key, numbers in sorted(found.items(), key=lambda item: -len(item[1])):
        if len(numbers) < 2:
            break  # a line seen once starts no group: content, not a header
        home = next((group for group in by_initial[key[0]] if _near(key, group)), None)
        if home is None:
            home = key
            groups[home], where[home] = [], set()
            by_initial[key[0]].append(home)
        groups[home].append(key)
        where[home].update(numbers)
    running = set()
    for home, keys in groups.items():
        pages_of = sorted(where[home])
        if len(pages_of) >= 3 and len(pages_of) >= 0.5 * (pages_of[-1] - pages_of[0] + 1):
            running.update(keys)
    # a line seen once that is near a running one is a misread of it ("VICKSBUEG")
    homes = [home for home in groups if home in running]
    running.update(key for key, numbers in found.items()
                   if len(numbers) == 1 and any(_near(key, home) for home in homes))
    return running


def section_titles(pages: list[list[str]]) -> set[str]:
    """Keys of the titles of numbered sections ("28.1. Why is That Target Being Rebuilt? ...", a contents
    page's entry too), 15 letters or more: a title a page may carry at its top as its running header."""
    return {key for lines in pages for line in lines
            if (found := _NUMBERED_TITLE.match(line.strip())) and len(key := _key(found.group(1))) >= _TITLE_LETTERS}


def contents_headings(pages: list[list[str]]) -> set[str]:
    """Keys of the numbered headings a contents page lists ("2 Configuration Examples....... 7" lists "2
    Configuration Examples"), number included: where one of them is a line of its own in the text, it is that
    heading, even where the line before it ends no sentence ("... googlegroups.com" above "2 Configuration
    Examples")."""
    return {_key(found.group(1)) + number.group(0).rstrip(".") for lines in pages for line in lines
            if (found := _contents_entry(line.strip())) and (number := _LEADING_NUMBER.match(found.group(1)))}


def _contents_entry(line: str) -> re.Match[str] | None:
    """``line`` as a contents page's entry (:data:`_CONTENTS_ENTRY`), or None (as for a line too long for one)."""
    return _CONTENTS_ENTRY.match(line) if len(line) <= _CONTENTS_LINE else None


def _stands_apart(line: str, headings: set[str]) -> bool:
    """Whether ``line`` is a paragraph of its own: a contents page's entry, or a heading that page lists."""
    if _contents_entry(line):
        return True
    number = _LEADING_NUMBER.match(line)
    return number is not None and _key(line) + number.group(0).rstrip(".") in headings


#: the mark LaTeX manuals made by Doxygen set where they break a word or a name at a line's end ("Post←-" above
#: "Script", "https://sourceforge.←-" above "net/..."): the word goes on, as where PDFium marks a break
_BREAK_MARK = re.compile(r"←-$")
#: a contents page's entry: a title opening with a number or a capital, its dot leader and its page number, in
#: figures or a whole roman numeral ("3.1 The “mycall” Parameter....... 16", "Preface ........ ix")
_CONTENTS_ENTRY = re.compile(r"([\dA-Z].*?)\s*(?:\.\s?){4,}+\s*(?<!\w)(?:\d{1,4}|[ivxlc]{1,6})$")
#: the longest line read as a contents page's entry (a title and its leader fill one line)
_CONTENTS_LINE = 240
#: a heading's section number ("3.6.1", "2.", "12"), its dot at the end left out when compared
_LEADING_NUMBER = re.compile(r"\d{1,3}(?:\.\d{1,3})*\.?(?=\s+\S)")


def _title_in_sentence(lines: list[str], dropped: set[int], before: list[str], titles: set[str]) -> set[int]:
    """The position of a section's title, without its number, at the top of a page where it splits a
    sentence: the page before ends inside one and the line below it goes on in lower case ("But if the problem"
    / "Why is That Target Being Rebuilt? the --debug=explain Option" / "weren't obvious, ..."). It is the
    section's running header, on too few pages to recur; the numbered heading keeps its number and stays."""
    kept = [n for n, line in enumerate(lines) if line.strip() and n not in dropped]
    last_before = next((line.strip() for line in reversed(before) if line.strip()), "")
    if len(kept) < 2 or not last_before or _SENTENCE_END.search(last_before):
        return set()
    top, below = lines[kept[0]].strip(), lines[kept[1]].strip()
    if top[:1].isupper() and _key(top) in titles and below[:1].islower():  # "install the ..." goes on a sentence
        return {kept[0]}
    return set()


#: a numbered section's title ("28.1. Why is ...", "6.1.2 Using Time Stamps ..."), with a contents page's
#: dot leader and page number after it left out
_NUMBERED_TITLE = re.compile(r"\d{1,3}(?:\.\d{1,3})*\.?\s+(\S.*?)(?:\s*(?:\.\s?){3,}.*)?$")
#: the fewest letters of a title taken for a running header
_TITLE_LETTERS = 15


def folio_offsets(pages: list[list[str]]) -> set[int]:
    """How a page's printed number follows its position: the offsets (printed number - page index) found in
    lines that begin or end with a number near the top or bottom of at least 3 pages. A reference manual's
    header names the topic of the page ("CallExternal 71"): it never recurs, but its number counts on. A page
    whose first or last line is a number alone, at an offset such lines give on 3 pages, counts that line only:
    LaTeX-Mk's manual, of one-page chapters, counted its chapters' numbers on with its pages, and lost each
    chapter's title ("5 Using LaTeX-Mk Recursively" below its page's "17")."""
    alone = _offsets(enumerate(_number_alone(lines) for lines in pages))
    return _offsets((index, _number_alone(lines, index, alone) or _edges(lines)) for index, lines in enumerate(pages))


def _offsets(pages: Iterable[tuple[int, list[str]]]) -> set[int]:
    """The offsets (number - page index) of the numbers that the given lines of the given pages begin or end
    with, on at least 3 pages."""
    counts: Counter[int] = Counter()
    for index, lines in pages:
        counts.update({number - index for line in lines for number in _edge_numbers(line)})
    return {offset for offset, seen in counts.items() if seen >= 3}


def _edges(lines: list[str]) -> list[str]:
    """A page's top and bottom lines, where its headers, footers and number are (its lines are not blank)."""
    return lines[:EDGE_LINES] + lines[-EDGE_LINES:]


def _number_alone(lines: list[str], index: int | None = None, offsets: set[int] | None = None) -> list[str]:
    """The page's first and last lines (``lines`` are not blank) that are a number alone ("12", "Page 12"),
    where a page's number stands; with the page's ``index`` and the document's folio ``offsets``, only one that
    is this page's number. (A number set between dashes or in a roman numeral gives no offset: none counts.)"""
    alone = [line for line in dict.fromkeys([*lines[:1], *lines[-1:]]) if _PAGE_NUMBER.match(line.strip())]
    if index is None or offsets is None:
        return alone
    return [line for line in alone if any(number - index in offsets for number in _edge_numbers(line))]


def _edge_numbers(line: str) -> set[int]:
    """The numbers a short line begins or ends with ("72 capabilities", "CallExternal 71")."""
    if len(line) > _FOLIO_LINE:
        return set()
    return {int(number) for pair in _FOLIO.findall(line.strip()) for number in pair if number}


def _near(key: str, other: str) -> bool:
    if key == other:
        return True
    if len(key) < 8 or abs(len(key) - len(other)) > max(1, len(other) // 10) or key[0] != other[0]:
        return False
    from difflib import SequenceMatcher

    matcher = SequenceMatcher(None, key, other, autojunk=False)
    return matcher.real_quick_ratio() >= 0.9 and matcher.quick_ratio() >= 0.9 and matcher.ratio() >= 0.9


def tex_font_codes(pages: list[str]) -> list[str]:
    """The pages with the ligatures (and, in T1, the quotes and dashes) that a TeX font without Unicode gave as
    its codes written out ("\x1cnal" is "final"). Which of TeX's encodings the document's fonts use is told by
    which codes its words hold more of. In a T1 document its quotes and dashes are set wherever they are; a
    ligature's code outside a word, and every code of a document whose words hold none, is left for the control
    characters' cleaning. A math font's Greek letters share these codes, and in such a document may read as
    ligatures or dashes ("\x16s", 5 microseconds, as "\u2014s"), where they were dropped before."""
    t1 = sum(len(_T1_LIGATURE.findall(page)) for page in pages)
    ot1 = sum(len(_OT1_LIGATURE.findall(page)) for page in pages)
    if not t1 and not ot1:
        return pages
    if t1 >= ot1:
        return [_T1_PUNCTUATION.sub(lambda m: _T1_CODES[m[0]], _T1_LIGATURE.sub(lambda m: _T1_CODES[m[0]], page))
                for page in pages]
    return [_OT1_LIGATURE.sub(lambda m: _OT1_CODES[m[0]], page) for page in pages]


def clean_pages(pages: list[str], display: Sequence[frozenset[str]] = ()) -> CleanText:
    """Join the pages' lines into paragraphs (see the module docstring). ``display``: for each page, the keys of
    its lines set larger than the text (:func:`display_lines`); a paragraph ends where the size changes, a
    heading's lines kept together."""
    pages = [_CONTROL.sub("", _CONTROL_BULLET.sub("•", page.replace("\x02", _SOFT_BREAK)
                                                   .replace(_DRAWN_SOFT_HYPHEN, "-")))
             for page in tex_font_codes(pages)]
    split = [[line.rstrip() for line in page.replace("\r\n", "\n").replace("\r", "\n").split("\n")] for page in pages]
    nonblank = [[line for line in lines if line.strip()] for lines in split]
    running, offsets = running_lines(nonblank), folio_offsets(nonblank)
    titles = section_titles(nonblank)
    headings = contents_headings(nonblank)
    # the words as the document writes them; the parts of a word PDFium marks as broken are not a use of it
    vocabulary = Counter(re.findall(r"\w+(?:-\w+)*", " ".join(pages).replace(_SOFT_BREAK, " ").lower()))
    kept: list[list[str]] = []
    notes: list[list[str]] = []  # each page's footnotes, taken from its foot
    removed = 0
    alone = [_number_alone(lines, index, offsets) for index, lines in enumerate(nonblank)]
    # pages that show their number alone, where most carry it in a header, open chapters (as a book's do)
    openers = sum(map(bool, alone)) < len(pages) / 2
    for index, lines in enumerate(split):
        # a page that shows its number alone has no header that holds it: a line there that opens with the number
        # is the page's text (LaTeX-Mk's "1 Introduction", under the "1" of its first page); and a chapter's first
        # page has, at its other edge, the chapter's title, set as the running header words it ("CHAPTER 3" above
        # "The Basics - What you need to know to operate in Maxima", the page's "29" at its foot, reads as
        # "CHAPTER 3. THE BASICS - ... 30"), not a header broken over two lines (ReportLab's "User Guide" /
        # "Chapter 11 Graphics" above "Page 118", every page of it numbered alone)
        numbers = alone[index] if openers else []  # (a page numbered alone has lines)
        number_at_top = bool(numbers) and nonblank[index][0] in numbers
        number_at_foot = bool(numbers) and nonblank[index][-1] in numbers
        folios = set() if alone[index] else {index + offset for offset in offsets}
        drop = (_edge_run(lines, running, folios, reverse=False, pairs=not number_at_foot)
                | _edge_run(lines, running, folios, reverse=True, pairs=not number_at_top))
        drop |= _title_in_sentence(lines, drop, kept[-1] if kept else [], titles)
        removed += len(drop)
        remaining = [line for n, line in enumerate(lines) if n not in drop]
        foot = footnotes(remaining)
        notes.append(_notes([remaining[n] for n in foot]))
        kept.append([line for n, line in enumerate(remaining) if n not in foot])
    widths = [len(line.strip()) for lines in kept for line in lines if line.strip()]
    # the width a wrapped line runs to: code, tables and headings make the median line shorter than that
    full = (statistics.quantiles(widths, n=10, method="inclusive")[-1] if len(widths) > 1
            else widths[0] if widths else 0)
    parts: list[str] = []
    length = 0
    starts: list[int] = []
    joined = 0
    last, soft_last, pending_break = "", False, False
    last_large = False  # whether the last line is set large (``display``)
    opens = True  # whether the last line began a paragraph or followed a sentence's end
    # footnotes, with their pages, to go after the paragraph they interrupt (it may go on over the page)
    waiting: list[tuple[str, int]] = []
    note_pages: list[tuple[int, int, int]] = []

    def set_notes(glue: str) -> None:
        nonlocal length
        for note, page in waiting:
            parts.extend((glue, note))
            length += len(glue)
            note_pages.append((length, length + len(note), page + 1))
            length += len(note)
            glue = "\n\n"
        waiting.clear()

    example = False  # whether the last line was one of an example's (fenced as code)
    for page_number, (lines, page_notes) in enumerate(zip(kept, notes)):
        large_here = display[page_number] if page_number < len(display) else frozenset()
        page_start = None
        for line in lines:
            text = " ".join(line.split())
            if not text:
                pending_break = bool(parts)  # a blank line ends the paragraph
                continue
            text = _BREAK_MARK.sub(_SOFT_BREAK, text)  # Doxygen's LaTeX marks a word it breaks: "Post←-"
            soft_end = text.endswith(_SOFT_BREAK)
            inner = text[:-1] if soft_end else text
            joined += inner.count(_SOFT_BREAK)  # PDFium joined the line itself: "vis\ufffeitors"
            body = _INNER_BREAK.sub(lambda m: m.group(1) + _hyphen(m.group(1), m.group(2), vocabulary) + m.group(2),
                                    inner).replace(_SOFT_BREAK, "")
            next_opens = True
            large = bool(large_here) and _key(body) in large_here
            if parts:
                glue, rejoined = ("\n\n", False) if pending_break else _glue(last, soft_last, body, full, vocabulary,
                                                                             opens)
                # a paragraph ends where the size changes (a heading set large, :func:`display_lines`), but for a
                # line that opens in lower case: a sentence going on over a link set large ("... is described at"
                # / "http://.../manual.pdf for a nice and detailed" / "description of these models.")
                if glue == " " and (_stands_apart(last, headings) or _stands_apart(body, headings)
                                    or large != last_large and not body[:1].islower()):
                    glue = "\n\n"
                if example and not pending_break and _example_line(body, full) and not _prose_line(body):
                    glue, rejoined = "\n", False  # the example goes on, line by line
                elif example:  # a line of prose, a heading, a list or a blank line ends it
                    parts.append("\n" + CODE_FENCE)
                    length += 1 + len(CODE_FENCE)
                    glue, rejoined, example = "\n\n", False, False
                elif last.endswith(":") and _example_line(body, full) and not _SENTENCE_END.search(body):
                    # a command shown after the sentence that introduces it ("... can be given in two ways:")
                    glue, rejoined, example = f"\n\n{CODE_FENCE}\n", False, True
                next_opens = glue == "\n\n" or bool(_SENTENCE_END.search(last))
                if glue == "\n\n" and waiting:
                    set_notes("\n\n")
                if rejoined and not soft_last:  # a plain hyphen ends the previous line: it goes
                    parts[-1] = parts[-1][:-1]
                    length -= 1
                joined += rejoined
                parts.append(glue)
                length += len(glue)
            if page_start is None:
                page_start = length
            parts.append(body)
            length += len(body)
            last, soft_last, pending_break, opens, last_large = body, soft_end, False, next_opens, large
        starts.append(length if page_start is None else page_start)
        waiting.extend((note, len(starts) - 1) for note in page_notes)  # (the page's number from 0)
    if example:
        parts.append("\n" + CODE_FENCE)
    if waiting:
        set_notes("\n\n" if parts else "")
    return CleanText("".join(parts), starts, removed, joined, note_pages)


#: a footnote's first line: its number set right before its text's first word ("7A rather tricky ...", "14For
#: details ..."; not a part number, "18F6620", a URL's escape, "3ACollate", nor "3D scenes", "6To4 tunnels")
_FOOTNOTE = re.compile(r"([1-9]\d?)(?=[AI]\s|[A-Z][a-z]+(?![\w-]))")
#: the lines at a page's foot looked at for its footnotes
FOOT_LINES = 8


def footnotes(lines: list[str]) -> list[int]:
    """The positions of a page's footnotes (the running footer and page number already taken off): the lines
    from the first note among its last ``FOOT_LINES`` to its end. A note's first line opens with its number set
    right before its text, and the number marks a word above it on the page, as a superscript is read: set
    right after a word or its stop ("... the sorting of lists8", "... is SVG17 which", "... state.7"). Its
    other lines go with it. A page whose foot holds no such line has none ("3D graphics ..." marks nothing)."""
    order = [n for n, line in enumerate(lines) if line.strip()]
    for position, n in enumerate(order[-FOOT_LINES:], start=max(0, len(order) - FOOT_LINES)):
        found = _FOOTNOTE.match(lines[n].strip())
        if found is None:
            continue
        above = "\n".join(lines[:n])
        if re.search(rf"[^\W\d_][.,;:)\]’'\"]?{found.group(1)}(?!\d)", above):
            return order[position:]
    return []


def _notes(lines: list[str]) -> list[str]:
    """Footnote lines as paragraphs, one a note ("[7] A rather tricky ..."): a line that opens with a number
    higher than the note before starts one, the others go on with it."""
    notes: list[str] = []
    number = 0
    for line in lines:
        text = " ".join(line.split())
        found = _FOOTNOTE.match(text)
        if found and int(found.group(1)) <= number:  # notes count up: a lower number goes on with a note
            found = None
        if found:
            number = int(found.group(1))
        if found or not notes:
            notes.append(f"[{found.group(1)}] {text[found.end():]}" if found else text)
        elif notes[-1].endswith(_SOFT_BREAK):
            notes[-1] = notes[-1][:-1] + text
        else:
            notes[-1] += " " + text
    return [note.replace(_SOFT_BREAK, "") for note in notes]


def _edge_run(lines: list[str], running: set[str], folios: set[int], *, reverse: bool, pairs: bool = True
              ) -> set[int]:
    """The positions of the running lines and page numbers at the top (or bottom) of a page: the lines from the
    edge inward while each is one (a block of them, up to ``EDGE_LINES``); a recurring line below the page's
    text is content. A header broken over two lines ("THE SIEGE OF" / "VICKSBURG. 49") counts as one, with
    ``pairs``; a line that begins or ends with the page's printed number (one of ``folios``) is a header too."""
    order = [n for n in (range(len(lines) - 1, -1, -1) if reverse else range(len(lines))) if lines[n].strip()]
    run: set[int] = set()
    step = 0
    while step < min(len(order), EDGE_LINES):
        line = lines[order[step]].strip()
        if _key(line) in running or _PAGE_NUMBER.match(line) or _edge_numbers(line) & folios:
            run.add(order[step])
            step += 1
            continue
        if pairs and step + 1 < len(order):
            pair = sorted(order[step:step + 2])
            if _key(lines[pair[0]] + lines[pair[1]]) in running:
                run.update(pair)
                step += 2
                continue
        break
    return run


def _hyphen(before: str, after: str, vocabulary: Counter[str]) -> str:
    """What joins two parts of a word broken at a hyphen at a line end: "-" for a compound the document writes
    so elsewhere ("well-known"), else nothing ("vis-itors" is "visitors")."""
    whole, compound = (before + after).lower(), f"{before}-{after}".lower()
    return "-" if vocabulary[compound] > vocabulary[whole] else ""


def _glue(previous: str, soft_break: bool, line: str, full_width: float,
          vocabulary: Counter[str], previous_opens: bool = False) -> tuple[str, bool]:
    """What goes between the previous line and ``line`` (the previous line's hyphen at its end taken off when
    PDFium marked it, ``soft_break``): nothing (a word broken at the line end joined again: then True), a
    hyphen (a compound broken at its hyphen), a space (the same paragraph) or a blank line (a new paragraph).
    ``previous_opens``: the previous line began a paragraph or followed a sentence's end."""
    if soft_break or (previous.endswith("-") and line[:1].islower()):
        before = _WORD_BEFORE_HYPHEN.search(previous if not soft_break else previous + "-")
        after = _WORD_AFTER.match(line)
        if before and after and _hyphen(before.group(1), after.group(1), vocabulary):
            return ("-" if soft_break else ""), False  # a plain hyphen is still there
        if soft_break or (before and after):
            return "", True
    short = len(previous) < 0.7 * full_width
    if (short and _SENTENCE_END.search(previous)) or (_LIST_ITEM.match(line)
                                                       and (short or _SENTENCE_END.search(previous)
                                                            or not _PARENTHESIZED_WORD.match(line))):
        return "\n\n", False
    # a heading ("Details", "2.3 Arguments") stands apart from the text before and after it, and from the title
    # of its first sub-section below it ("2. Installation" above "2.1. System requirements")
    # ...and so is a line well short of the text's width that opens after a sentence's end and ends no sentence,
    # before one that starts with a capital ("Invoked as an interactive login shell, or with --login" above "When
    # Bash is invoked ..."): a paragraph's wrapped lines run to the width, and its last line ends its sentence. A
    # short line inside a sentence (ragged or OCR'd text, before a name) is no heading
    if (_SENTENCE_END.search(previous) and _is_heading(line, full_width)) or \
            (_is_heading(previous, full_width, 0.7 if previous_opens else 0.5)
             and (line[:1].isupper() or _numbers_within(previous, line)
                  or previous_opens and _names_again(previous, line))):
        return "\n\n", False
    return " ", False


def _numbers_within(heading: str, line: str) -> bool:
    """Whether ``line`` opens with a section number within the one ``heading`` opens with ("2.1." under "2.",
    "10.3.1" under "10.3"), before a word: a sub-section's title under its section's."""
    above, below = _LEADING_NUMBER.match(heading), _LEADING_NUMBER.match(line)
    return bool(above and below) and below.group().startswith(above.group().rstrip(".") + ".")


def _names_again(heading: str, line: str) -> bool:
    """Whether ``line`` opens with a word in lower case that ``heading`` ends with: a command's name that heads
    its section and opens its first sentence ("Set up pbuilder" above "pbuilder allows you to build packages
    locally ..."), a sentence that no capital opens."""
    first, last = line.split(maxsplit=1)[:1], heading.split()[-1:]
    return bool(first) and first[0][:1].islower() and first[0].rstrip(",.:;") == last[0].rstrip(",.:;")


#: a line ending in a word that needs what follows ("A report creeps into camp that" above "Johnston is
#: coming"): a sentence going on, not a heading
_ENDS_OPEN = re.compile(r"\b(?:a|an|the|and|or|but|nor|of|to|in|on|at|by|for|with|from|that|which|who|whom|whose|as|"
                        r"is|are|was|were|be|been|if|than|then|so|into|onto|over|under|upon|about|its|their|his|her|"
                        r"our|your|my|this|these|those|not|no|when|where|while)$", re.IGNORECASE)


def _example_line(line: str, full_width: float) -> bool:
    """Whether ``line`` may be a line of an example (a command, what a program prints): well short of the text's
    width, and neither a list item nor a heading."""
    return len(line) < _EXAMPLE_WIDTH * full_width and not _LIST_ITEM.match(line) and not _is_heading(line, full_width)


def _prose_line(line: str) -> bool:
    """Whether ``line`` is a sentence of prose, not a line of an example: three words or more from a capital to
    a stop, none of them a command's or a program's marks ("Password for david: <- Type your old password.")."""
    return (line[:1].isupper() and len(line.split()) >= 3 and bool(_SENTENCE_END.search(line))
            and not _CODE_MARKS.search(line))


#: what a line of an example holds and a sentence of prose seldom does
_CODE_MARKS = re.compile(r"[<>$%#=/\\{}|`]|:\s|\(\)")
#: the share of the text's width an example's line stays under: a paragraph's wrapped lines run to the width
_EXAMPLE_WIDTH = 0.6


def _is_heading(line: str, full_width: float, share: float = 0.5) -> bool:
    """A line shorter than ``share`` of the text's width that starts with a capital or a section number and
    ends neither a sentence nor with a word that needs what follows (:data:`_ENDS_OPEN`)."""
    return (len(line) < share * full_width and not _SENTENCE_END.search(line) and not line.endswith(",")
            and not _ENDS_OPEN.search(line) and (line[:1].isupper() or bool(_SECTION_NUMBER.match(line))))


def page_of(page_starts: list[int], offset: int, note_pages: Sequence[Sequence[int]] = ()) -> int:
    """The page (from 1) that character ``offset`` of the text is on: a footnote's (``note_pages``, see
    :class:`CleanText`), or the page whose range holds it."""
    from bisect import bisect_right

    for start, end, page in note_pages:
        if start <= offset < end:
            return page
    return max(1, bisect_right(page_starts, offset))


# ---- the printed page -----------------------------------------------------------------------------------------

#: the metadata field of a PDF document: the SHA-256 of its file, so that a file read again later (to show a
#: page as printed) is known to be the one that was indexed
FILE_DIGEST = "sha256"
#: the widest page image drawn, in pixels
MAX_PAGE_WIDTH = 2000
#: the most pixels a page image has (a US Letter page at the widest is about 5 million)
MAX_PAGE_PIXELS = 8_000_000


@dataclass(frozen=True)
class PrintedPage:
    """One page of a PDF as printed: its number, the document's page count, its size in points, and the boxes
    (fractions of the page's width and height, from its top left: x0, y0, x1, y1) of the characters of a text
    found on it."""

    page: int
    pages: int
    width: float
    height: float
    boxes: list[tuple[float, float, float, float]]


def page_png(data: bytes, page: int, width: int = 1000) -> bytes:
    """Page ``page`` (1-based) of the PDF in ``data`` drawn ``width`` pixels wide, as a PNG."""
    import pypdfium2

    document = pypdfium2.PdfDocument(data)
    try:
        drawn = _page(document, page)
        page_width, page_height = drawn.get_size()
        scale = min(max(width, 100), MAX_PAGE_WIDTH) / page_width
        # a page of odd proportions (a long strip) is drawn smaller: never more than MAX_PAGE_PIXELS in all
        scale = min(scale, (MAX_PAGE_PIXELS / (page_width * page_height)) ** 0.5)
        pixels = drawn.render(scale=scale, rev_byteorder=True).to_numpy()
        return png_bytes(pixels[:, :, :3])
    finally:
        document.close()


def printed_page(data: bytes, page: int, text: str | None = None) -> PrintedPage:
    """Page ``page`` (1-based) of the PDF in ``data``, with the boxes of ``text`` where it is printed on it
    (none when it is not found there). The text is looked for letter by letter, whatever lies between them:
    the extracted text joins lines and hyphenated words and drops running headers, the page does not."""
    import pypdfium2

    document = pypdfium2.PdfDocument(data)
    try:
        drawn = _page(document, page)
        width, height = drawn.get_size()
        boxes: list[tuple[float, float, float, float]] = []
        if text:
            textpage = drawn.get_textpage()
            for start, end in _find_letters(_char_text(textpage), text):
                for number in range(textpage.count_rects(start, end - start)):
                    left, bottom, right, top = textpage.get_rect(number)
                    boxes.append((_fraction(left, width), _fraction(height - top, height),
                                  _fraction(right, width), _fraction(height - bottom, height)))
        return PrintedPage(page, len(document), width, height, boxes)
    finally:
        document.close()


def _char_text(textpage: Any) -> str:
    """The page's text one character per PDFium character index, the indices its boxes are asked by (the text
    of ``get_text_range`` is counted in text indices, which need not be the same)."""
    import pypdfium2.raw as pdfium

    return "".join(chr(pdfium.FPDFText_GetUnicode(textpage.raw, i) or 0xFFFD) for i in range(textpage.count_chars()))


def _page(document: Any, page: int) -> Any:
    from citesum.errors import IngestError

    if not 1 <= page <= len(document):
        raise IngestError(f"the PDF has {len(document)} page(s); there is no page {page}")
    return document[page - 1]


def _fraction(value: float, whole: float) -> float:
    return round(min(max(value / whole, 0.0), 1.0), 5)


def _letters(text: str) -> tuple[str, list[int]]:
    """The letters and digits of ``text``, lower-cased and compatibility-normalised (a ligature "ﬁ" is "fi"),
    with the position in ``text`` each came from."""
    import unicodedata

    letters: list[str] = []
    origin: list[int] = []
    for position, character in enumerate(text):
        for letter in unicodedata.normalize("NFKC", character).lower():
            if letter.isalnum():
                letters.append(letter)
                origin.append(position)
    return "".join(letters), origin


#: a run of the text's words marked on a page holds at least this many letters (shorter runs are found by chance)
_RUN_LETTERS = 12


def _find_letters(page_text: str, text: str) -> list[tuple[int, int]]:
    """[start, end) ranges of the characters of ``page_text`` that hold ``text``'s letters in order: the whole
    text when it is there; else each longest run of its words that is (a sentence printed across two pages, or
    whose extracted text holds a character read differently or a stray word of the margin)."""
    page_letters, origin = _letters(page_text)
    wanted, _ = _letters(text)
    if not wanted:
        return []
    at = page_letters.find(wanted)
    if at >= 0:
        return [(origin[at], origin[at + len(wanted) - 1] + 1)]
    words = [letters for word in text.split() if (letters := _letters(word)[0])]
    ranges, first = [], 0
    while first < len(words):
        run, found, last = "", -1, first
        for last in range(first, len(words)):
            longer = run + words[last]
            where = page_letters.find(longer)
            if where < 0:
                break
            run, found = longer, where
        else:
            last = len(words)
        if found >= 0 and len(run) >= _RUN_LETTERS:
            ranges.append((origin[found], origin[found + len(run) - 1] + 1))
            first = max(last, first + 1)
        else:
            first += 1
    return ranges


def png_bytes(pixels: np.ndarray) -> bytes:
    """An RGB image (height x width x 3, uint8) as a PNG file (no imaging library is needed for this)."""
    import struct
    import zlib

    height, width, _ = pixels.shape
    rows = np.hstack([np.zeros((height, 1), dtype=np.uint8), pixels.reshape(height, width * 3)])

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + chunk(b"IEND", b""))
