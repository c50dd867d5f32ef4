"""One reader per file format. Each turns a file's bytes into documents or raises IngestError: UnreadableError
when the file could not be read (corrupt, encrypted, malformed: perhaps still being written), plain IngestError
when it was read and holds nothing to index."""

from __future__ import annotations

import bisect
import copy
import csv
import hashlib
import io
import json
import itertools
import lzma
import re
import sys
import zipfile
import zlib
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from citesum.errors import IngestError, UnreadableError
from citesum.ingest.asciidoc import asciidoc_markdown
from citesum.ingest.base import IngestOptions, decode_text, path_text
from citesum.ingest.pdf import FILE_DIGEST, NOTE_PAGES, PAGE_LABELS, PAGE_STARTS, clean_pages, read_pages
from citesum.segment import (CODE_FENCE, FAQ_ANSWER_WORDS, FAQ_QUESTION_WORDS, PERMALINK_MARKS, code_marks,
                             faq_labels, holds_fence, reads_as_title)
from citesum.types import Document

# A reader returns the documents of a file and the problems with parts it had to leave out.
Read = tuple[list[Document], list[str]]
Reader = Callable[[bytes, str, Path, IngestOptions], Read]


def _document(
    doc_id: str, title: str, text: str, path: Path, fmt: str, metadata: dict[str, Any] | None = None
) -> Document:
    return Document(id=doc_id, title=title, text=text, source=path_text(path), format=fmt, metadata=metadata or {})


def _stem(path: Path) -> str:
    """The file name without its extension, as storable text (see :func:`path_text`)."""
    return path_text(path.stem)


#: a text of at least this many words, of which fewer than this share are distinct, holds nothing to read (a new
#: user's trial: a 2 MB page of "a a a ..." became two thirds of the index's units); real documents of that size
#: use thousands of distinct words
_REPEATED_WORDS = 10_000
_DISTINCT_SHARE = 0.001


def _require_text(text: str) -> str:
    text = text.strip()
    if not text:
        raise IngestError("no text content")
    # a word takes two characters at least: once that many distinct words are seen, the text is not repetitive
    # (read word by word, not split whole: a large file's list of words would cost several times its size)
    enough = _DISTINCT_SHARE * (len(text) + 1) / 2
    if len(text) >= 2 * _REPEATED_WORDS - 1:
        seen: set[str] = set()
        words = 0
        for word in _WORD.finditer(text):
            words += 1
            seen.add(word.group())
            if len(seen) > enough:
                return text
        if words >= _REPEATED_WORDS and len(seen) < _DISTINCT_SHARE * words:
            raise IngestError(f"repetitive content: {words:,} words, {len(seen):,} of them distinct")
    return text


_WORD = re.compile(r"\S+")


def read_text(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """A text file, titled as :func:`read_plain` titles one, else by its name without the extension."""
    text = _require_text(decode_text(data))
    return [_document(doc_id, header_subject(text) or text_title(text) or _stem(path), text, path, "txt")], []


def text_title(text: str) -> str:
    """The title a plain text file opens with: its first unit when that is a heading (a short line standing
    alone, or underlined), whitespace collapsed and any Markdown ``#`` dropped; "" otherwise."""
    from citesum.segment import segments

    first = segments(text[:2000])[:1]
    if not first or first[0].kind != "heading":
        return ""
    heading = text[first[0].start : first[0].end].splitlines()[0]  # without its underline
    return " ".join(heading.split()).lstrip("#").strip()


#: markup read as plain text, and the line that holds its title (else its first heading, else its file name)
_MARKUP_TITLES = {
    ".tex": re.compile(r"\\title\s*(?:\[[^\]]*\])?\s*\{([^{}]+)\}"),
    ".org": re.compile(r"^#\+TITLE:[ \t]*(.+)$", re.MULTILINE | re.IGNORECASE),
}
#: source code and configuration, read as plain text under their file name
SOURCE_EXTENSIONS = (".c", ".cc", ".cfg", ".cpp", ".cs", ".css", ".go", ".h", ".hpp", ".ini", ".java", ".js",
                     ".kt", ".lua", ".php", ".pl", ".py", ".r", ".rb", ".rs", ".scala", ".sh", ".sql", ".swift",
                     ".toml", ".ts", ".yaml", ".yml")


def read_markup(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """LaTeX and Org as plain text, titled by their own title line (``\\title{}`` without nested braces,
    ``#+TITLE:``), else their first heading (an underlined line), else the file name."""
    text = _require_text(decode_text(data))
    pattern = _MARKUP_TITLES.get(path.suffix.lower())
    found = pattern.search(text[:20_000]) if pattern is not None else None
    title = " ".join(found.group(1).split()) if found else text_title(text)
    return [_document(doc_id, title or _stem(path), text, path, path.suffix.lower().lstrip("."))], []


def read_source(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """Source code and configuration as plain text, titled by the file's name (``setup.py``): its first line
    is code, not a title."""
    text = _require_text(decode_text(data))
    return [_document(doc_id, path_text(path.name), text, path, path.suffix.lower().lstrip("."))], []


#: conventional names of plain-text files that have no extension or an extension of their own
#: (README.Debian, NEWS.gz's unpacked NEWS, INSTALL.txt is .txt already)
PLAIN_TEXT_NAMES = frozenset({"AUTHORS", "BUGS", "CHANGELOG", "CHANGES", "CONTRIBUTING", "COPYING", "COPYRIGHT",
                              "CREDITS", "FAQ", "HACKING", "HISTORY", "HOWTO", "INSTALL", "LICENCE", "LICENSE", "NEWS",
                              "NOTICE", "README", "RELEASE-NOTES", "THANKS", "TODO"})


def read_plain(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """A file without a known extension whose content is text (README, NEWS, README.Debian): read as plain
    text, titled by the subject of the mail or news headers it opens with (a Usenet FAQ), else by its first
    heading, else by its file name; binary content is refused as such."""
    text = _require_text(decode_text(data))
    title = header_subject(text) or text_title(text) or path_text(path.name)
    return [_document(doc_id, title, text, path, "txt")], []


#: the header lines a mail or a news posting opens with ("Newsgroups: comp.mail.mh", "Subject: ..."), each of
#: which may go on in indented lines
_HEADERS = re.compile(r"(?:[A-Za-z][\w-]*:[ \t][^\n]*\n(?:[ \t]+\S[^\n]*\n)*){2,}")
_SUBJECT = re.compile(r"^Subject:[ \t]*(\S[^\n]*(?:\n[ \t]+\S[^\n]*)*)", re.MULTILINE)  # folded lines too


def header_subject(text: str) -> str:
    """The subject of the mail or news headers ``text`` opens with (two header lines or more): "MH Frequently
    Asked Questions (FAQ) with Answers" for nmh's FAQ, posted to comp.answers; "" without one."""
    headers = _HEADERS.match(text.lstrip("\ufeff")[:5000])
    subject = _SUBJECT.search(headers.group(0)) if headers else None
    return " ".join(subject.group(1).split()) if subject else ""


def plain_text_name(name: str) -> bool:
    """Whether a file of this name, with no reader for its extension, is read as plain text: it has no
    extension, or its stem is a conventional plain-text name (README.FHS, changelog.Debian), or ends with one
    after a dash or an underscore, as a copied file is renamed (openssh-README.Debian), or its extension is one
    written in capitals (minicom's "minicom.FAQ", "sane.README"; not a Debian package's "foo.install" or an
    upload's "x.changes")."""
    stem, dot, extension = name.partition(".")
    return bool(stem) and (not dot or re.split(r"[-_]", stem)[-1].upper() in PLAIN_TEXT_NAMES
                           or stem.upper() in PLAIN_TEXT_NAMES
                           or (extension.isupper() and extension in PLAIN_TEXT_NAMES))


#: a code fence on a line of its own, as put around a <pre> block
_FENCE_ON_ITS_LINE = f"\n{CODE_FENCE}\n"
#: what marks, until the text is joined, a fence that :class:`_HTMLText` put around a <pre>
_PUT = "\x00"
#: where this parser puts a table's cell in a row it writes as a line (the mark is no text of the page)
_CELL_PUT = "\x01"
_CODE_FENCE_PUT = f"\n{CODE_FENCE}{_PUT}\n"
_SENTENCE_CLOSE = re.compile(r"""[a-z)][.!?]["')]*(?:\s|$)""")


#: the share of a block's characters that code's marks make, under which a block of sentences is prose
_PROSE_MARKS = 0.03
#: a line of a program's comment: "#" or "//" opens it
_COMMENT_LINE = re.compile(r"^[ \t]*(?:#|//).*$", re.MULTILINE)


def reads_as_prose(block: str) -> bool:
    """Whether a preformatted block holds prose (an old page's whole text in a <pre>, a quoted letter, a Markdown
    paragraph indented four spaces) rather than code, a command or a program's output: at least two sentences
    end in it, out of its comments, and either one or more for every four of its lines or almost none of its
    characters are code's marks. A command's comment ("# shows the REPO_ID") ends none, and the sentences of a
    program's comments are no prose around it: autopep8's example of badly laid out Python, its comments
    written as sentences, read as prose, and lost its indentation."""
    lines = [line for line in block.splitlines() if line.strip()]
    ends = len(_SENTENCE_CLOSE.findall(_COMMENT_LINE.sub("", block)))
    if ends < 2:
        return False
    return 4 * ends >= len(lines) or code_marks(block) < _PROSE_MARKS


def is_fenced(block: str, following: str) -> bool:
    """Whether a <pre> holding ``block``, with ``following`` the text that goes on right after it in the same
    paragraph or the next ("" when a heading, a list or other code comes first), goes between code fences: not
    when it reads as prose, nor when it is a single line that a sentence goes on after in lower case ("To
    deactivate a virtual environment, type: [deactivate] into the terminal."), nor when it holds code fences of
    its own (a Markdown example of a fenced block), which the segmenter then reads."""
    if reads_as_prose(block) or holds_fence(block):
        return False
    one_line = len([line for line in block.splitlines() if line.strip()]) == 1
    return not (one_line and following.lstrip()[:1].islower())


#: what may stand between a one-line <pre> and the words a sentence goes on with: a paragraph, and the inline
#: elements in it. Any other element (a heading, a list, a table, other code, a script) ends the sentence first.
_RUNS_ON = frozenset({"p", "div", "span", "a", "code", "em", "strong", "b", "i", "tt", "kbd", "samp", "var"})


#: elements that have no end tag (and no text)
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr"})


def _class_test(name: str) -> str:
    """An XPath test of whether an element has class ``name`` (among others)."""
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def _with_class(name: str, tag: str = "*", within: str = "") -> str:
    """An XPath to the ``tag`` elements of class ``name`` (among others), in the document or ``within`` the
    element the path starts from (".")."""
    return f"{within}//{tag}[{_class_test(name)}]"


def _has_class(attrs: list[tuple[str, str | None]], name: str) -> bool:
    """Whether an element's attributes, as :class:`HTMLParser` gives them, give it class ``name`` (among
    others): what :func:`_with_class` finds in a parsed page."""
    return name in (dict(attrs).get("class") or "").split()


#: a Sphinx heading's (or definition's) permalink
_PERMALINK_XPATH = _with_class("headerlink", "a")
#: DocBook's table of contents at the top of a page (trafilatura left its title, "Table of Contents", as a line
#: of text above the page's: FreedomBox's manual, Mutt's and APT's chapters)
_DOCBOOK_CONTENTS = _with_class("toc", "div")
#: the least share of a table of contents' words that are its links' (the rest: its title)
_CONTENTS_LINK_SHARE = 0.6


def _link_text_share(element: Any) -> float:
    """The share of ``element``'s words that are in its links."""
    words = len(element.text_content().split())
    return sum(len(link.text_content().split()) for link in element.iter("a")) / words if words else 0.0


#: the "[source]" link Sphinx's viewcode extension puts after each signature of an API's page (python-can's
#: "class can.interfaces.socketcan.SocketcanBus(channel='', ...)[source]")
_VIEWCODE_LINK = _with_class("viewcode-link", "span")


class _Decoration:
    """Whether a parser is inside an element marked ``aria-hidden="true"``, what a page shows for decoration and
    a screen reader does not read, such as a heading's permalink marks (Texinfo's "# TOC" after each heading),
    or inside a Sphinx heading's permalink (``<a class="headerlink">``): "¶", an icon, or the Furo theme's "#",
    which ended each of mypy's headings ("Ignoring a whole file#"), or Doxygen's (``<span class="permalink">``),
    the "◆" that opens each member's heading."""

    def __init__(self) -> None:
        self._tag: str | None = None
        self._depth = 0

    @property
    def inside(self) -> bool:
        return self._tag is not None

    def start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            return
        if self._tag is None:
            permalink = ((tag == "a" and _has_class(attrs, "headerlink"))
                         or (tag == "span" and _has_class(attrs, "permalink")))  # Doxygen's "◆" before a member
            if ("aria-hidden", "true") in attrs or permalink:
                self._tag, self._depth = tag, 1
        elif tag == self._tag:
            self._depth += 1

    def end(self, tag: str) -> None:
        if tag == self._tag:
            self._depth -= 1
            if not self._depth:
                self._tag = None


class _HTMLText(HTMLParser):
    """Visible text of an HTML page, with block elements as line breaks and the page's <title> kept apart (the
    first one outside an <svg>: an icon's <title> names the icon, and Furo's inline icons are titled
    "Contents", "Light mode", ...; no other <title> is text). As in a browser, a line break in the source is a
    space (outside <pre>): paragraphs stay whole instead of breaking into the source's lines (each line break
    ends a sentence for chunking). A <pre> block of code keeps its lines between code fences
    (:data:`CODE_FENCE`), so no sentence runs into it or out of it, each line as written (autopep8's README,
    reStructuredText read through this text, lost its examples' indentation). With ``table_rows``, a table's row
    of cells that hold no block is a line of its own, its cells between "|" (``| arp | Exposes ARP statistics.
    | Linux |``), as a table row is written in Markdown; otherwise, and for a row whose cells hold paragraphs or
    lists, or of one cell with text (a page, or a note, laid out in a table), each cell is a block of its own."""

    _SKIP = {"script", "style", "noscript", "template", "svg", "head"}
    _BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre",
              "blockquote", "table", "ul", "ol", "header", "footer", "td", "th"}
    _CELLS = {"td", "th"}

    def __init__(self, table_rows: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._table_rows = table_rows
        self._tables = 0  # how many tables the parser is inside
        self._rows: list[tuple[int, int]] = []  # each open row's table depth and where in parts it starts
        self.title = ""
        self._skip_depth = 0
        self._pre_depth = 0
        self._pre_start = 0  # where the outermost <pre> began in parts
        self._unfenced: tuple[int, int] | None = None  # the places in parts of a closed <pre>'s fences
        self._in_title = False
        self._titled = False  # whether the page's <title> has ended
        self._svg_depth = 0
        self._hidden = _Decoration()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._unfenced is not None and tag not in _RUNS_ON:
            self._fence("")  # a heading, a list or other code comes before any sentence goes on
        self._hidden.start(tag, attrs)
        if tag == "svg":
            self._svg_depth += 1
        if tag == "title" and not self._svg_depth and not self._titled:
            self._in_title = True
        elif tag in self._SKIP or tag == "title":  # (another <title> is no text of the page either)
            self._skip_depth += 1
        elif tag == "pre":
            self._pre_depth += 1
            if self._pre_depth == 1:
                self._pre_start = len(self.parts)
                self.parts.append("")  # the opening fence, once the block is known to be code
        if self._table_rows and tag in ("table", "tr", *self._CELLS):
            self._table_start(tag)
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def _table_start(self, tag: str) -> None:
        if tag == "table":
            self._tables += 1
            self.parts.append("\n")
            return
        if tag == "tr":
            self._row_end()  # (a row's end tag may be left out)
            self.parts.append("\n")
            self._rows.append((self._tables, len(self.parts)))
        elif self._rows and self._rows[-1][0] == self._tables:
            self.parts.append(_CELL_PUT)
        else:  # a cell outside any row
            self.parts.append("\n")

    def _row_end(self, any_table: bool = False) -> None:
        """The open row of the innermost table (or, ``any_table``, the last one open) as a line of cells, or its
        cells as blocks when one holds a block."""
        if not self._rows or (self._rows[-1][0] != self._tables and not any_table):
            return
        if self._unfenced is not None:  # a <pre> that ends the row: its fences are put before the row is joined
            self._fence("")
        _, start = self._rows.pop()
        row = "".join(self.parts[start:])
        cells = row.split(_CELL_PUT)[1:]
        # a row of one cell with text lays out a note or a badge, not data: its text is a block
        if any("\n" in cell for cell in cells) or sum(bool(cell.strip()) for cell in cells) < 2:
            self.parts[start:] = [row.replace(_CELL_PUT, "\n"), "\n"]
        else:
            shown = (" ".join(cell.split()).replace("|", "\\|") for cell in cells)
            self.parts[start:] = ["| " + " | ".join(shown) + " |"]

    def handle_endtag(self, tag: str) -> None:
        self._hidden.end(tag)
        if tag == "svg" and self._svg_depth:
            self._svg_depth -= 1
        if tag == "title" and self._in_title:
            self._in_title, self._titled = False, True
        elif (tag in self._SKIP or tag == "title") and self._skip_depth:
            self._skip_depth -= 1
        elif tag == "pre" and self._pre_depth:
            self._pre_depth -= 1
            if not self._pre_depth:
                self.parts.append("")  # the closing fence, once the text after the block is known
                self._unfenced = (self._pre_start, len(self.parts) - 1)
        if self._table_rows and tag in ("table", "tr"):
            self._row_end()
            if tag == "table" and self._tables:
                self._tables -= 1
                self.parts.append("\n")  # (a row's line ends where the next row's starts: rows are lines)
        elif tag in self._BLOCK and not (self._table_rows and tag in self._CELLS):
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip_depth and not self._hidden.inside:
            if data.strip() and self._unfenced is not None:
                self._fence(data)
            data = data.replace(_PUT, "").replace(_CELL_PUT, "")  # (the marks this parser puts are its own)
            self.parts.append(data if self._pre_depth else re.sub(r"\s+", " ", data))

    def _fence(self, following: str) -> None:
        opening, closing = self._unfenced or (0, 0)
        self._unfenced = None
        block = "".join(self.parts[opening:closing])
        if is_fenced(block, following):
            self.parts[opening] = self.parts[closing] = _CODE_FENCE_PUT
        elif not reads_as_prose(block):  # a command in the middle of a sentence: the breaks around it go
            for around in (range(opening - 1, -1, -1), range(closing, len(self.parts))):
                for number in itertools.takewhile(lambda n: not self.parts[n].strip(), around):
                    self.parts[number] = " "

    def text(self) -> str:
        while self._rows:  # rows and tables a page leaves open
            self._row_end(any_table=True)
        if self._unfenced is not None:  # a <pre> the page ends with
            self._fence("")
        lines: list[str] = []
        code = False  # between the fences of a <pre>: its lines keep their indentation and their spaces
        for line in "".join(self.parts).split("\n"):
            if line == CODE_FENCE + _PUT:  # (a "```" line the page writes is no fence this parser put)
                code = not code
                lines.append(CODE_FENCE)
            else:
                lines.append(line.rstrip() if code else re.sub(r"[ \t\r\f\v]+", " ", line).strip())
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def html_to_text(html: str, table_rows: bool = False) -> tuple[str, str]:
    """(title, visible text) of an HTML string; ``table_rows``: see :class:`_HTMLText`."""
    parser = _HTMLText(table_rows)
    parser.feed(html)
    parser.close()
    return " ".join(parser.title.split()), parser.text()


def read_html(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """The page's main content: navigation, sidebars, headers and footers left out by ``trafilatura``; the whole
    visible text when it finds no main content. Chosen by measurement on Python's documentation pages, which
    mark their main content (measured by benchmarks/ingest_quality.py): trafilatura kept more of the main
    content's words than readability-lxml, and no boilerplate; the whole text keeps all of it, boilerplate
    included. On pages held out (Debian's DocBook manuals, looked at only after the choice) it led as well. The
    headings it drops are put back (:func:`with_headings`)."""
    html = decode_text(data)
    title, text = html_to_text(html)
    main = _main_content(html)
    if main and _one_part_of_prose(main, text):
        main = ""
    if main:
        main = lists_ended(markers_joined(with_headings(main, html)))
    text = without_node_navigation(main or text, html)
    return [_document(doc_id, title or _stem(path), _require_text(text), path, "html")], []


#: a list item's marker: a bullet, or a number
_BULLET_MARKER, _NUMBER_MARKER = r"[-*•]", r"\d+[.)]"
#: a list item's line as trafilatura writes it ("- log_outputs: defines logging outputs", "  - 4: only errors")
_ITEM_LINE = re.compile(rf"[ \t]*(?:{_BULLET_MARKER}|{_NUMBER_MARKER})[ \t]+\S")
#: a line that is a code fence and nothing else (a fence with code on its line opens and closes no block)
_FENCE_ONLY = re.compile(r"[ \t]*```[\w+-]*[ \t]*$")
#: a line that is a code block's fence alone, in a text
_FENCE_LINE = re.compile(r"^[ \t]*```[\w+-]*[ \t]*$", re.MULTILINE)
#: a line ending with a word a sentence goes on after ("Set the value to" / "TRUE to enable it.")
_GOES_ON_WORD = re.compile(r"\b(?i:a|an|the|to|of|and|or|for|with|in|on|at|by|from|as|is|are|be|that|than|into|"
                           r"its|your|their|this|these|if|when|which|but|not|no)\s*$")


#: a list item's marker alone on its line ("- ", "3."): trafilatura writes an item whose text opens with a
#: paragraph or a line break so, the text on the lines below
_MARKER_ONLY = re.compile(rf"[ \t]*(?:{_BULLET_MARKER}|(?P<number>{_NUMBER_MARKER}))[ \t]*$")
#: how many lines below a marker a question may wrap over before its question mark
_QUESTION_LINES = 3


def _opens_question(lines: Sequence[str]) -> bool:
    """Whether ``lines`` (the :data:`_QUESTION_LINES` lines below a marker) open with a question: the first line
    that ends a sentence or a clause ends with a question mark, each line after the first going on
    in lower case ("What should I put" / "in user.name?"; AWStats' list of FAQ titles, "FAQ-COM025 How to use
    AWStats with no server log" above "FAQ-COM050 What is the log size limit ...?", is no question)."""
    for at, line in enumerate(lines):
        end = line.rstrip()[-1:]
        if not end or _ITEM_LINE.match(line) or _MARKER_ONLY.match(line) or (at and not line.lstrip()[:1].islower()):
            return False
        if end in ".!?:;":
            return end == "?"
    return False


def markers_joined(main: str) -> str:
    """``main`` (trafilatura's text of a page) with each list item's marker that stands alone on its line put
    before the text of the line below: igraph's tutorial read "- " above "First, programs using the igraph
    library should include ...", and the Performance Co-Pilot tutorial each state of a processor so, its item a
    paragraph of its own. A question below its marker stays on its line (an FAQ's entry, its answer an item
    below it: Git's FAQ), as do a heading, a code fence, a table's row and another item. A block of code is
    left as it is (a comment's " *" line, a YAML list's "-"), and a number alone on its line is an item's
    marker only in a list ("The answer is" / "10." is no item)."""
    lines = main.split("\n")
    out: list[str] = []
    fenced = False
    for number, line in enumerate(lines):
        marker = _MARKER_ONLY.match(out[-1]) if out and not fenced else None
        in_list = marker is not None and (not marker.group("number") or len(out) < 2 or out[-2].rstrip().endswith(":")
                                          or bool(_ITEM_LINE.match(out[-2]) or _MARKER_ONLY.match(out[-2])))
        if in_list and line.strip() and not (
                _ITEM_LINE.match(line) or _FENCE_ONLY.match(line) or _MARKER_ONLY.match(line)
                or line.lstrip().startswith(("#", "|")) or _opens_question(lines[number:number + _QUESTION_LINES])):
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
            continue
        if _FENCE_ONLY.match(line):
            fenced = not fenced
        out.append(line)
    return "\n".join(out)


def lists_ended(main: str) -> str:
    """``main`` (trafilatura's text of a page, one line a block, no blank line between blocks) with a blank line
    after each list, where a line that is no item follows an item: read as hard-wrapped text, the paragraph
    after a list went on its last item ("log_outputs: defines logging outputs When starting the libvirt daemon,
    ..."), and every sentence after it was an item of the list. Only a line that opens with a capital letter
    ends a list: trafilatura keeps some of a page's line breaks inside an item ("the package is" / "usually
    called libpq-dev."), and an item ending with a comma, a hyphen, an opening parenthesis or a colon goes on,
    as does an FAQ's question numbered as an item, its answer below it ("Can I embed libxml2 ...?" / "Yes. ..."),
    and one ending with a word a sentence goes on after ("Set the value to" / "TRUE to enable it.").
    An indented line (a nested item), a code fence and a code block's lines are left as they are; the line right
    after a block of code that an item holds (:func:`_mark_lines`) is the item's text going on, and ends the
    list as the item's line would."""
    lines = main.split("\n")
    out: list[str] = []
    fenced = False
    in_item = False  # whether the line is an item's (its own line, or its text after a block of code it holds)
    opened_in_item = False  # whether the block of code the line is in opened in an item
    item_goes_on = False  # whether the line comes right after a block of code that an item holds
    for line, following in zip(lines, [*lines[1:], ""]):
        out.append(line)
        if _FENCE_ONLY.match(line):
            if not fenced:
                opened_in_item = in_item
            fenced = not fenced
            item_goes_on = not fenced and opened_in_item
            in_item = False
            continue
        in_item = not fenced and (bool(_ITEM_LINE.match(line)) or item_goes_on)
        item_goes_on = False
        if (in_item and following[:1].isupper() and not _ITEM_LINE.match(following)
                and not line.rstrip().endswith((",", "-", "(", ":", "?")) and not _GOES_ON_WORD.search(line)):
            out.append("")
    return "\n".join(out)


#: main content kept below this share of the page's visible words, of a page that is this share prose, and with
#: at least this many words left out, is one part of a long page: see :func:`_one_part_of_prose`
_PART_SHARE = 0.25
_PROSE_SHARE = 0.4
_PART_LEFT_OUT_WORDS = 500
#: a sentence of prose within a line of a page's visible text: a capital, some words, and a full stop after a word
#: ("Lintian is a Debian package checker."); a link's title in an index or a contents list, on a line of its own,
#: has none. (Bounded: a page of lines without a full stop is read once, not once from every capital.)
_PROSE_SENTENCE = re.compile(r"[A-Z][^.!?\n]{30,400}?[a-z)][.!?](?=\s|$)")


def _one_part_of_prose(main: str, text: str) -> bool:
    """Whether trafilatura kept one part of a page of prose as its main content: Lintian's manual, one docutils
    page of nested sections, kept one subsection of 3,099 of its 35,000 characters, and a question about the rest
    found nothing. A page whose visible text is mostly sentences is all main content; an index or a contents page,
    whose words are mostly its links' titles, is not (Python's documentation holds such pages, whose main content
    is under a quarter of their words and whose prose is under a fifth of them). Drawn from that one page of a
    new user's trial, with 60% for the share of prose; the next trial's apcupsd manual (docutils too: 47,000
    words, 8% of them kept, and its NIS chapter lost) is 57% prose, for its tables of directives, so the share is
    40%, halfway between the two manuals and the pages of links, the highest of which is 19% prose. Of the 930
    HTML pages looked at (Python's documentation, the Debian Reference, every realdocs split and the trials'
    folders), it changes those two manuals only."""
    words = len(text.split())
    kept = len(main.split())
    if kept >= _PART_SHARE * words or words - kept < _PART_LEFT_OUT_WORDS:
        return False
    prose = sum(len(sentence.split()) for sentence in _PROSE_SENTENCE.findall(text))
    return prose >= _PROSE_SHARE * words


@dataclass
class _PageHeading:
    """A heading of a page: its words, its level (1 for <h1>), the first characters of the text after it, and
    whether that text opens with a block of code (a <pre>, or Doxygen's block of <div> lines)."""

    text: str
    level: int
    after: str = ""
    code_follows: bool = False


class _Headings(HTMLParser):
    """The page's headings (<h1>-<h6>), each with the start of the text after it."""

    _SKIP = _HTMLText._SKIP  # what a browser does not show
    _HEADING = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[_PageHeading] = []
        self._heading: list[str] | None = None
        self._level = 0
        self._skip_depth = 0
        self._hidden = _Decoration()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._hidden.start(tag, attrs)
        if tag in self._SKIP:
            self._skip_depth += 1
        elif tag in self._HEADING:
            self._heading = []
            self._level = int(tag[1])
        else:
            if self._heading is None and self.found and not self.found[-1].after.strip() and _opens_code(tag, attrs):
                self.found[-1].code_follows = True
            if tag in _BLOCKS or tag == "br":
                self._part_words()

    def _part_words(self) -> None:
        """A block's edge parts the words on either side of it ("possibilities:</p><ul><li>Privoxy")."""
        if self._heading is None and self.found and len(self.found[-1].after) < _HEADING_ANCHOR_CHARACTERS:
            self.found[-1].after += " "

    def handle_endtag(self, tag: str) -> None:
        self._hidden.end(tag)
        if tag in _BLOCKS and tag not in self._HEADING:
            self._part_words()
        if tag in self._SKIP and self._skip_depth:
            self._skip_depth -= 1
        elif tag in self._HEADING and self._heading is not None:
            heading = _heading_text("".join(self._heading))
            if heading:
                self.found.append(_PageHeading(heading, self._level))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._skip_depth or self._hidden.inside:
            return
        if self._heading is not None:
            self._heading.append(data)
        elif self.found and len(self.found[-1].after) < _HEADING_ANCHOR_CHARACTERS:
            self.found[-1].after += data  # "<code>libffi</code>'s" is one word


def _opens_code(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    """Whether the element opens a block of code: a <pre>, Doxygen's <div class="fragment">, or its table of a
    member's declaration (:func:`_as_declaration` makes it a <pre>)."""
    return (tag == "pre" or (tag == "div" and _has_class(attrs, "fragment"))
            or (tag == "table" and _has_class(attrs, "memname")))


#: how many words after a heading find its place in the main content, and how much of the text after it is kept
#: to find them in
_HEADING_ANCHOR_WORDS = 6
_HEADING_ANCHOR_CHARACTERS = 200


def with_headings(main: str, html: str) -> str:
    """The main content with the headings it lost put back. trafilatura drops the headings of many manual
    pages (Texinfo's numbered sections, a DocBook FAQ's questions), and a heading says what the text below it
    is about: each heading missing from ``main`` is put on a line of its own right before the words that follow
    it in the page (found in order, whitespace aside); a heading followed at once by another goes with it. A
    heading whose text the main content does not hold (a sidebar's "Next topic") stays out. A heading it kept on
    a line of its own is set apart by blank lines, as one put back is. A heading that ends as a sentence does
    gets its level's Markdown mark (:func:`_marked`)."""
    parser = _Headings()
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # an unparsable page keeps what trafilatura found
        return main
    lines = {_heading_text(line) for line in main.splitlines()}
    flat = " ".join(main.split())
    out: list[str] = []
    done = 0  # main is copied up to here
    opened = 0  # where the text the last heading put back opens: the next one's text opens past it
    pending: list[_PageHeading] = []  # headings with no text of their own before the next heading
    anchors = _anchor_words(parser.found)
    fences = [line.start() for line in _FENCE_LINE.finditer(main)]  # where each fence line of a code block starts
    for found_heading, anchor_words in zip(parser.found, anchors):
        heading = found_heading.text
        on_its_lines = _heading_line(heading)  # however wrapped, a permalink mark after it
        kept_as_line = heading in lines or (heading in flat and on_its_lines.search(main) is not None)
        kept = on_its_lines.search(main, done) if kept_as_line else None
        if kept is not None and _between_fences(main, kept, fences):  # a block's one line of code, not the heading
            kept_as_line, kept = False, None  # (libgpiod's "anonymous enum", declared as its heading says)
        if kept is not None and anchor_words:
            # a line of the same words past the text the heading opens, and not followed by it, is not the heading
            # kept, but a later line (Radicale's section "server", a word on a line of its own in a diagram pages
            # below): taken for it, every heading in between was lost. The heading is put back before its text,
            # as a lost one is. Its text's first words may also open an earlier answer (Gammu's FAQ answers how to
            # send an MMS and how to receive one with the same words)
            anchor = _anchor_pattern(anchor_words)
            before = anchor.search(main, done, kept.start())
            after = anchor.search(main, kept.end(), kept.end() + _HEADING_ANCHOR_CHARACTERS)
            kept_as_line = before is None or after is not None
        if kept_as_line:
            # a numbered chapter's heading whose text the main content lost (its list of sections) goes right
            # before its first section's heading, which the main content kept ("2 R Basics" above "2.1 What is R?")
            chapters = [waiting for waiting in pending if _NUMBERED_HEADING.match(waiting.text)]
            if kept is not None:
                # the kept heading is set apart, as a heading put back is: trafilatura gives a heading a line of
                # its own, with no blank line, and a heading in lower case ("getmail seems to take longer than
                # expected to initialize") then read as the first words of the sentence below it
                out.append(main[done:kept.start()])
                out.append(_gap(out) + "".join(f"{_marked(chapter)}\n\n" for chapter in chapters)
                           + _marked(found_heading, as_kept=kept.group().strip()) + "\n\n")
                done = kept.end()
                while main.startswith("\n", done):
                    done += 1
            pending = []
            continue
        words = _own_words(found_heading)
        if len(words) < 2:
            pending.append(found_heading)
            continue
        # (two sections may open with the same words: Icecast's "mount_add" and "mount_remove" both open with
        # "This URL is for informing the auth server of a stream", and both headings went before the first)
        found = _anchor_pattern(words).search(main, max(done, opened))
        if found is not None and not found_heading.code_follows and _opens_code_block(main, found, fences):
            # words of prose or of a table found only where a block of code opens (and runs out of it) are another
            # part of the page's: Opus's Doxygen summary of its typedefs opens with the words that declare the
            # typedef further down
            found = None
        if found is None:
            # a numbered heading waits for the next one found (a sidebar's "Next topic" has no number)
            pending = ([*(waiting for waiting in pending if _NUMBERED_HEADING.match(waiting.text)), found_heading]
                       if _NUMBERED_HEADING.match(heading) else [])
            continue
        line_start = max(main.rfind("\n", 0, found.start()) + 1, done)
        # before its line when only a list marker opens the line ("- Installation ..."), else right before it
        at = line_start if re.fullmatch(r"[\s\W]{0,4}", main[line_start:found.start()]) else found.start()
        if found_heading.code_follows:  # a block of code the heading titles: the heading goes above its fence
            fence_start = main.rfind("\n", 0, max(line_start - 1, 0)) + 1
            if done <= fence_start < line_start and _FENCE_ONLY.fullmatch(main, fence_start, line_start - 1):
                at = fence_start
        out.append(main[done:at])
        out.append(_gap(out) + "\n\n".join(map(_marked, [*pending, found_heading])) + "\n\n")
        pending = []
        done, opened = at, found.start() + 1
    out.append(main[done:])
    return "".join(out)


def _line_above(text: str, start: int) -> str:
    """The line of ``text`` above the one ``start`` is on ("" on the first line)."""
    line_start = text.rfind("\n", 0, start) + 1
    return text[text.rfind("\n", 0, max(line_start - 1, 0)) + 1 : max(line_start - 1, 0)] if line_start else ""


def _between_fences(text: str, found: re.Match[str], fences: Sequence[int]) -> bool:
    """Whether what ``found`` matched in ``text`` is a line alone between two code fences, the one above opening
    a block (an even number of fences above it, ``fences`` being where each fence line of ``text`` starts): a
    block's one line, not the text between two blocks."""
    line_end = text.find("\n", found.end())
    below = text[line_end + 1 : (text.find("\n", line_end + 1) + 1 or len(text) + 1) - 1] if line_end >= 0 else ""
    above = text.rfind("\n", 0, max(text.rfind("\n", 0, found.start()), 0)) + 1
    return (bool(_FENCE_ONLY.fullmatch(_line_above(text, found.start())) and _FENCE_ONLY.fullmatch(below))
            and bisect.bisect_left(fences, above) % 2 == 0)


def _opens_code_block(text: str, found: re.Match[str], fences: Sequence[int]) -> bool:
    """Whether what ``found`` matched in ``text`` opens right below a code fence that opens a block (an even
    number of fences above it, ``fences`` being where each fence line of ``text`` starts) and runs past the fence
    that closes it: it starts in a block of code. (Below a closing fence, it opens the text after a block.)"""
    above = text.rfind("\n", 0, max(text.rfind("\n", 0, found.start()), 0)) + 1
    return (bool(_FENCE_ONLY.fullmatch(_line_above(text, found.start()))) and CODE_FENCE in found.group()
            and bisect.bisect_left(fences, above) % 2 == 0)


def _own_words(heading: _PageHeading) -> list[str]:
    """The first words of the text right after a heading, which find its place in the main content."""
    return heading.after.split()[:_HEADING_ANCHOR_WORDS]


def _anchor_words(headings: Sequence[_PageHeading]) -> list[list[str]]:
    """For each heading, the first words of the text it opens: its own, or, for a heading followed at once by
    another ("auth" right above "type"), those of the first heading after it that has text (none: [])."""
    anchors: list[list[str]] = []
    going_on: list[str] = []
    for heading in reversed(headings):
        words = _own_words(heading)
        if len(words) >= 2:
            going_on = words
        anchors.append(going_on)
    return anchors[::-1]


def _anchor_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """The words in the main content: they may run over a list's start ("possibilities:\n- Privoxy"), or a code
    block's ("This can be done with\n```\nregister unsigned char ...")."""
    return re.compile(_BETWEEN_WORDS.join(map(re.escape, words)))


#: a heading that ends as a sentence does ("Mtools says ... when accessing a disk formatted with the old mtools.",
#: "The open command doesn't work."), not as a question
_ENDS_AS_SENTENCE = re.compile(r"""[.!]["'”’)\]]*$""")


def _marked(heading: _PageHeading, as_kept: str = "") -> str:
    """The heading on a line of its own; one that ends as a sentence does, opened by its level's Markdown mark
    ("#### Mtools says ..."): the page's text keeps no other mark of which lines were headings, and read as text
    such a line is a sentence, which an answer could state as a fact of the page (the floppy FAQ's question
    "Mtools says "fat_read: Wrong FAT encoding 12 16?" (or similar) when accessing a disk formatted with the old
    mtools." stated for an answer to it). So does one in lower case that would not be read as a title standing
    alone (:func:`~citesum.segment.reads_as_title`): a word or two ("hosts", "max_connections", Radicale's
    options) reads as a line of text, and the sentences under it had no section of their own. Other headings
    read as headings without the mark (short, or a question), and are left as the page writes them:
    ``as_kept``, the lines the main content kept it on, when it did."""
    if _ENDS_AS_SENTENCE.search(heading.text) or heading.text[:1].islower() and not reads_as_title(heading.text):
        return f"{'#' * heading.level} {heading.text}"
    return as_kept or heading.text


#: what may stand between two words of a page in its main content: whitespace, a list's marker, a code fence
_BETWEEN_WORDS = r"\s+(?:(?:[-*•]|" + re.escape(CODE_FENCE) + r")\s+)?"


def _gap(out: list[str]) -> str:
    """The line breaks that put what comes next on a line of its own, after what ``out`` has copied."""
    copied = "".join(out[-2:])
    return "" if not copied or copied.endswith("\n\n") else "\n" if copied.endswith("\n") else "\n\n"


#: a manual's numbered section heading ("2 R Basics", "4.5.1. Preparation")
_NUMBERED_HEADING = re.compile(r"\d{1,3}(?:\.\d{1,3})*\.?\s+\S")


def _heading_text(text: str) -> str:
    """A heading's words, without the permalink marks that Sphinx puts after it ("¶", or an icon font's)."""
    return " ".join(text.translate(_PERMALINK_MARKS).split())


_PERMALINK_MARKS = str.maketrans({mark: " " for mark in PERMALINK_MARKS})


def _heading_line(heading: str) -> re.Pattern[str]:
    """``heading`` on lines of its own, however wrapped (a permalink mark may follow it)."""
    return re.compile(r"(?m)^[ \t]*" + r"\s+".join(map(re.escape, heading.split())) + r"[ \t\u00b6\uf0c1]*$")


#: what a page's author marks as not its main content (HTML5 elements and ARIA roles); trafilatura keeps a
#: site's <header> when the article is short. A header or footer inside the article is the article's own.
_NOT_MAIN_CONTENT = ["//nav", "//aside", "//header[not(ancestor::article or ancestor::main)]",
                     "//footer[not(ancestor::article or ancestor::main)]",
                     "//*[@role='navigation' or @role='banner' or @role='contentinfo' or @role='complementary']"]
#: Texinfo's navigation between nodes: "Next: ..., Previous: ..., Up: ... [Contents][Index]" above every node, a
#: <div class="header"> (Texinfo 6) or "nav-panel" (Texinfo 7) holding links to the next, previous or parent node
_NODE_NAVIGATION = (f"//div[({_class_test('header')} or {_class_test('nav-panel')})"
                    " and .//a[@rel='next' or @rel='prev' or @rel='up']]")


def without_node_navigation(text: str, html: str) -> str:
    """``text`` without the lines of Texinfo's navigation between nodes (:data:`_NODE_NAVIGATION`). They stayed in
    the text a line a node, as boilerplate a passage had to make room for (GNU SASL's manual on one page holds 55).
    They are taken out of the text extracted, not out of the page given to the extractor: without them, it took
    some short node pages' main content for another part (libffi's "Missing Features" lost its list)."""
    import lxml.html

    try:
        root = lxml.html.fromstring(_XML_DECLARATION.sub("", html, count=1))  # (lxml refuses one in a str)
    except Exception:  # (lxml raises many kinds of errors on odd pages)
        return text
    lines = {" ".join(element.text_content().split()) for element in root.xpath(_NODE_NAVIGATION)}
    lines.discard("")
    if not lines:
        return text
    kept = [line for line in text.split("\n") if " ".join(line.split()) not in lines]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def _main_content(html: str) -> str:
    """The text of the page's main content, or "" when trafilatura finds none (or cannot parse the page)."""
    import logging

    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)  # it logs every page it finds too short
    # a page that writes a mark itself (as a character or as a reference: "&#x241E;") has none of its kind written
    # for it: the line marks and the ampersand's are told apart, so a page that writes one keeps the other
    unescaped = unescape(html)
    lines_marked = not _LINE_MARKS.search(unescaped)
    ampersands_marked = _AMPERSAND_MARK not in unescaped
    try:
        # favor_recall: on the Python documentation pages it kept more of the content at the same precision
        main = trafilatura.extract(_prepared(html, lines_marked, ampersands_marked), include_tables=True,
                                   include_comments=False, favor_recall=True, prune_xpath=_NOT_MAIN_CONTENT) or ""
    except Exception:  # lxml raises many kinds of errors on odd pages: the whole text then
        return ""
    return _marks_restored(main, lines_marked, ampersands_marked)


#: elements that start a block of their own: text between them, outside any of them, is a paragraph of its own
_BLOCKS = frozenset({"address", "article", "aside", "blockquote", "center", "dd", "details", "dir", "div", "dl",
                     "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
                     "header", "hr", "li", "main", "menu", "nav", "noscript", "ol", "p", "pre", "script", "section",
                     "style", "table", "ul"})
#: where a page may hold text outside any paragraph
_LOOSE_TEXT_HOLDERS = ("body", "div", "blockquote", "section", "article", "main", "center")
#: the shortest loose text made a paragraph (shorter runs are labels, separators and the like)
_LOOSE_TEXT_CHARACTERS = 40


_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")


def _prepared(html: str, lines_marked: bool = False, ampersands_marked: bool = False) -> str:
    """The page made ready for trafilatura, which keeps the text of paragraphs and a <pre>'s lines:

    * each run of text that stands outside any paragraph (directly under <body> or a <div>, between headings,
      lists and tables, with its links and <br>s) is put in a <p> of its own. trafilatura drops such runs: GNU
      gettext's FAQ, written with an answer right after each <h4>, lost most of its answers, and zlib's usage
      example and gnuplot's pages their first paragraphs;
    * each <pre> block of code is put between code fences (:data:`CODE_FENCE`), as :class:`_HTMLText` does:
      borg's FAQ ran "borg delete --cache-only REPO" into the sentence after it;
    * what is marked ``aria-hidden="true"`` (a heading's permalink marks) is left out, as a screen reader leaves
      it: ffmpeg's Texinfo pages ended every heading with "# TOC"; so is the "◆" that opens each of Doxygen's
      member headings;
    * a Sphinx heading's permalink reads "¶", whatever its theme shows: the segmenter leaves that mark out of the
      heading, and the Furo theme's "#" ended each of mypy's headings ("Ignoring a whole file#"); the "[source]"
      link after each of an API page's signatures is left out;
    * Doxygen's block of code, a <div> a line, is a <pre> of its lines (:func:`_as_preformatted`), and the
      tooltip Doxygen gives each name in it, shown under the pointer only, is left out;
    * inline code outside a <pre> that holds markup of its own, or sits in other inline markup, is made its plain
      text: DocBook's placeholders (``<code>/usr/src/linux-headers-<em><code>uname</code></em></code>``) came out
      of trafilatura lost ("/usr/src/linux-headers-") or twice ("linux-headers-unameuname");
    * an inline quotation (<q>) is its text between quotation marks, as a browser shows it: w3m's FAQ read "How do
      I pronounce w3m ?", its quoted name set apart and unquoted;
    * inline markup in a paragraph, a list item or a cell loses its class and id, which trafilatura reads as a
      block's: getmail's pages mark a placeholder ``<span class="meta">name</span>``, which it dropped as page
      metadata ("requires the parameter , but it was not found").
    * a section's ``id`` made of its heading is left out (:func:`_heading_ids_dropped`): trafilatura took
      LibTIFF's section "TIFF Tags", ``id="tiff-tags"``, for a page's list of tags, and dropped it;
    * an anchor (``<a name="A1">``, no ``href``) is its text: it marks a place to link to, and trafilatura, taking
      it for a link, dropped dar's FAQ questions, each a bold anchor on a line of its own; so is a link with
      nothing in it to click (Asciidoctor's ``<a class="anchor" href="#id"></a>`` in each heading), for which
      trafilatura dropped some short sections of WeeChat's FAQ whole, the answers below their headings;
    * a table that only lays out labelled paragraphs (DocBook's questions and answers: a "Q:" cell beside the
      question's paragraph, an "A:" cell beside the answer's) is made those paragraphs, each opened by its label
      ("Q: How can I make MPlayer remember ...?"), as a reader reads them; its rows of in-page links only (the
      questions listed again) are left out. MPlayer's FAQ came out as a table of "| Q: | ... |" rows;
    * an FAQ entry's label alone on its line ("PROBLEM:", "SOLUTION:") opens the paragraph below it
      (:func:`_label_joined`);
    * a title run into its entry's first sentence, in bold (:func:`_run_in_titles`: OpenOCD's Texinfo FAQ, "<li>
      <b>Data Aborts</b> When debugging with OpenOCD and GDB ..."), is set on a line of its own, above its entry
      as a section's title is (a list item so titled is laid out as a block, not as an item). Run in, it made
      each entry's first sentence a fragment ("Missing: cygwin1.dll OpenOCD complains about ..."), and an entry
      that states its trouble did not end the entry before it;
    * a table that lays the page out (a cell of it holds a heading or another table: a menu beside the content,
      the content in a box) is made its cells' content, cell after cell (:func:`_unwrap_layout`). libxml2's FAQ,
      a page of tables in tables, came out as one table cell with every question run into its answer;
    * a table in a list item, a definition or a quotation is a paragraph of its rows, each a line of its cells
      between "|" (:func:`_rows_marked`), when line marks are written: trafilatura ran its cells into the item;
    * Doxygen's declaration of a member, laid out in a table a parameter a row, is a <pre> of the declaration
      on one line (:func:`_as_declaration`), and DocBook's table of contents is left out (:data:`_DOCBOOK_CONTENTS`);
    * a table cell's value wrapped in markup that trafilatura drops from a cell (:data:`_CELL_VALUE_WRAPPERS`) is
      the cell's own (:func:`_cell_value_unwrapped`): GeographicLib's Doxygen tables of geoids read with every
      number and link left out;
    * with ``lines_marked``, a block of code in a list item, a definition or a quotation is its text, its line
      breaks, spaces and tabs written as marks that :func:`_marks_restored` reads back (:func:`_mark_lines`);
    * with ``ampersands_marked``, each ampersand of the page's text is written as a mark too
      (:func:`_mark_ampersands`): trafilatura decodes the character references of the text it gives once
      more, so Pango's "<code>&amp;#169;</code> for ©" read "© for ©", and "<code>&amp;amp;</code>" read "&".
      A page with an ampersand in its text is then always given to trafilatura as lxml writes it again (its
      doctype left out), which reads as the page did.

    The page as it was when nothing changed (or it cannot be parsed)."""
    import lxml.html

    try:
        # lxml refuses a str that declares its encoding (XHTML's "<?xml ... encoding=...?>", as DocBook writes)
        root = lxml.html.document_fromstring(_XML_DECLARATION.sub("", html, count=1))
    except Exception:  # lxml raises many kinds of errors on odd pages
        return html
    changed = False
    for hidden in root.xpath("//*[@aria-hidden='true']|" + _DOXYGEN_PERMALINK):  # decoration, not words
        hidden.drop_tree()
        changed = True
    for permalink in root.xpath(_PERMALINK_XPATH):  # Furo's "#" as the "¶" that other themes show
        mark = permalink.text_content().strip()
        if mark and mark not in tuple(PERMALINK_MARKS):  # (an icon font's link shows no text)
            for child in permalink:
                child.drop_tree()
            permalink.text = PERMALINK_MARKS[0]
            changed = True
    for contents in root.xpath(_DOCBOOK_CONTENTS):  # a list of links to the page's sections, and its title
        if _link_text_share(contents) >= _CONTENTS_LINK_SHARE:
            contents.drop_tree()
            changed = True
    for source in root.xpath(_VIEWCODE_LINK):  # Sphinx's "[source]" after a signature: a link, not its words
        link = source.getparent()
        (link if link is not None and link.tag == "a" and link.text_content() == source.text_content()
         else source).drop_tree()
        changed = True
    for tooltip in root.xpath(_DOXYGEN_TOOLTIP):  # shown only while the pointer is over a name in the code
        tooltip.drop_tree()
        changed = True
    for signature in root.xpath(_DOXYGEN_SIGNATURE):  # a member's declaration, laid out a parameter a row
        _as_declaration(signature)
        changed = True
    for fragment in root.xpath(_DOXYGEN_FRAGMENT):  # a block of code as a <div> a line
        changed |= _as_preformatted(fragment)
    for quotation in list(root.iter("q")):  # a browser shows an inline quotation between quotation marks
        _quote(quotation)
        changed = True
    for inline in root.xpath(_NAMED_INLINE_MARKUP):  # a word's markup in a paragraph is no page furniture
        if not _HIDDEN_CLASS.search(inline.get("class", "")):
            for name in ("class", "id"):
                inline.attrib.pop(name, None)
            changed = True
    changed |= _heading_ids_dropped(root)  # "TIFF Tags" is no tag list, though its id says "tags"
    for anchor in root.xpath(_NO_LINK):  # a place to link to, or a link that shows nothing to follow
        _unlinked(anchor)
        changed = True
    for item in root.xpath(_NESTED_ITEM):  # the names a sentence's list goes on with, each linked to its entry
        changed |= _names_unlinked(item)
    for label in _labels_on_their_lines(root):  # "PROBLEM:" above its paragraph opens that paragraph
        changed |= _label_joined(label)
    for table in list(root.iter("table")):  # (outer tables first: a layout's cells may hold more layout)
        changed |= _unwrap_labelled_rows(table) or _unwrap_layout(table)
    if lines_marked:  # a table in a list item: its rows, not its cells run together
        for table in list(root.iter("table")):
            changed |= _held_in_running_text(table) and _rows_marked(table)
    for wrapper in root.xpath(_CELL_VALUE_WRAPPERS):  # "<td><center>0.6</center></td>": trafilatura drops 0.6
        changed |= _cell_value_unwrapped(wrapper)
    for terms in _defined_terms(root):  # "-b" above "Generate additional support code ..." opens it
        changed |= _term_joined(terms)
    for title in _run_in_titles(root):  # "<li><b>Data Aborts</b> When debugging ..." sets its title apart
        line_break = lxml.html.Element("br")
        line_break.tail, title.tail = title.tail, None  # (an element's tail comes before what is added next)
        title.addnext(line_break)
        if title.getparent().tag == "li":  # an entry set out as a section, its title above it (not an item's)
            title.getparent().tag = "div"
        changed = True
    plain: dict[Any, bool] = {}
    for code in list(root.iter(*_INLINE_CODE)):
        changed |= _flatten_inline_code(code, root, plain)
    for holder in list(root.iter(*_LOOSE_TEXT_HOLDERS)):
        changed |= _wrap_loose_runs(holder)
    for block in list(root.iter("pre")):
        broken = _breaks_as_lines(block)  # (first: a <br> is a line of the block whose lines are counted)
        fenced = _fence_code(block)
        changed |= broken | fenced
        if fenced and lines_marked and _held_in_running_text(block):
            _mark_lines(block)
    if ampersands_marked:
        changed |= _mark_ampersands(root)
    return lxml.html.tostring(root, encoding="unicode") if changed else html


#: what a line break, a space and a tab of a block of code in a list item, a definition or a quotation are
#: written as for trafilatura, which joins such a block's lines into one line of the item's text and keeps these
#: marks (control pictures, which no page's code writes): Festival's "--ttw" option ran its Scheme code, with
#: the fences around it, and the sentence after it into one line ("``` (Parameter.set ...) ``` Note that ...")
_LINE_MARK, _SPACE_MARK, _TAB_MARK = "\u241e", "\u241f", "\u241d"
#: what an ampersand of a page's text is written as for trafilatura, which decodes the character references in
#: the text it gives once more (``xmltotxt``'s unescape, and ``line_processing``'s "&nbsp;", "&#13;" and
#: "&#10;"): a control picture too, which no page's text writes
_AMPERSAND_MARK = "\u2426"
_LINE_MARKS = re.compile(f"[{_LINE_MARK}{_SPACE_MARK}{_TAB_MARK}]")
#: a marked line break, with the space trafilatura puts between the block and the item's text around it
_MARKED_LINE_BREAK = re.compile(f" ?{_LINE_MARK} ?")
#: where trafilatura runs a block of code into the text around it (a table's cell keeps its row on one line; a
#: term, <dt>, is made text before blocks are looked at: :func:`_term_joined`)
_RUNNING_TEXT = frozenset({"li", "dd", "blockquote"})
_ROW_CELLS = frozenset({"td", "th"})
#: what a block of code may hold that a browser does not show as its text (a copy button, a script)
_NOT_CODE_TEXT = ("script", "style", "noscript", "template", "svg", "button", "textarea", "select", "input")
#: the blank lines a block's text opens with
_OPENING_BLANK_LINES = re.compile(r"\A(?:[ \t\xa0]*\n)+")


def _held_in_running_text(block: Any) -> bool:
    """Whether ``block`` (a <pre>, a table) is in a list item, a definition or a quotation
    (:data:`_RUNNING_TEXT`), and in no table's cell."""
    above = {up.tag.lower() for up in block.iterancestors() if isinstance(up.tag, str)}
    return bool(above & _RUNNING_TEXT) and not above & _ROW_CELLS


def _mark_lines(block: Any) -> None:
    """Replace the fenced <pre> ``block``'s content with its plain text (trafilatura keeps no markup of a block
    of code), its line breaks, spaces and tabs (its fences' too) written as the marks :func:`_marks_restored`
    reads back (:data:`_LINE_MARK`); a no-break space is a space. The blank lines the code opens or ends with
    are none of it (a page writes "<pre>\\n"): read back, they stood between a fence and the code."""
    for hidden in list(block.iter(*_NOT_CODE_TEXT)):
        hidden.drop_tree()  # (its tail, the code after it, stays)
    text = block.text_content()
    if text.startswith(_FENCE_ON_ITS_LINE) and text.endswith(_FENCE_ON_ITS_LINE):  # (as :func:`_fence_code` puts)
        code = _OPENING_BLANK_LINES.sub("", text[len(_FENCE_ON_ITS_LINE) : -len(_FENCE_ON_ITS_LINE)], count=1)
        text = f"{_FENCE_ON_ITS_LINE}{code.rstrip()}{_FENCE_ON_ITS_LINE}"
    for inner in list(block):
        block.remove(inner)
    block.text = (text.replace("\n", _LINE_MARK).replace(" ", _SPACE_MARK).replace("\xa0", _SPACE_MARK)
                  .replace("\t", _TAB_MARK))


def _mark_ampersands(root: Any) -> bool:
    """Write each ampersand of the text the page ``root`` shows as :data:`_AMPERSAND_MARK`, so that trafilatura
    decodes no character reference a second time; whether it had any. A script's or a style's own text is left
    as it is."""
    found = False
    for element in root.iter():
        # a script's or a style's text is no text the page shows: JSON-LD's is HTML-escaped, and trafilatura
        # decodes it once on purpose when it falls back to it (its tail is the page's text)
        names = ("tail",) if element.tag in ("script", "style") else ("text", "tail")
        for name in names:
            value = getattr(element, name)
            if value and "&" in value:
                setattr(element, name, value.replace("&", _AMPERSAND_MARK))
                found = True
    return found


def _marks_restored(text: str, lines: bool = True, ampersands: bool = True) -> str:
    """``text`` with the marks :func:`_mark_lines` (when ``lines``) and :func:`_mark_ampersands` (when
    ``ampersands``) wrote read back as the line breaks, spaces, tabs and ampersands they stand for; the space
    trafilatura put beside a line break goes."""
    if lines:
        text = _MARKED_LINE_BREAK.sub("\n", text).replace(_SPACE_MARK, " ").replace(_TAB_MARK, "\t")
    return text.replace(_AMPERSAND_MARK, "&") if ampersands else text


#: inline markup with a class or an id, inside a paragraph, a list item, a definition, a cell or a heading (a
#: code block's markup is the code's); one step over the elements, each looking at its ancestors (a union of a
#: path per block and element took quadratic time)
_NAMED_INLINE_MARKUP = (
    "//*[" + " or ".join(f"self::{inline}" for inline in ("span", "em", "strong", "b", "i", "var", "cite", "dfn",
                                                            "abbr", "small", "sub", "sup"))
    + "][@class or @id][" + " or ".join(f"ancestor::{block}" for block in ("p", "li", "dd", "dt", "td", "th", "h1",
                                                                           "h2", "h3", "h4", "h5", "h6"))
    + "][not(ancestor::pre)]")
#: a section of a page, named by an ``id`` that its generator makes of its heading: docutils and Sphinx
#: (``<section id="tiff-tags">``, ``<div class="section" id=...>``), pandoc (``class="level2"``), Texinfo
#: (``class="section-level-extent"``)
_SECTIONS = "//*[@id][self::section or self::div]"
#: a class that names a ``<div>`` a section: docutils' "section", DocBook's "chapter", pandoc's "level2",
#: Texinfo's "section-level-extent" (a class token, not part of one: "sidebar-section" is no section)
_SECTION_CLASS = re.compile(r"(?:^|\s)(?:section|chapter|level\d|[a-z]+-level-extent)(?=\s|$)")
#: a heading's number ("3.1 ", "A.2. ") that the id its generator makes of it leaves out
_HEADING_NUMBER = re.compile(r"^\s*(?:\d+|[A-Z](?=\.))(?:\.\d+)*\.?\s+")
#: the first heading in an element
_FIRST_HEADING = "(.//h1|.//h2|.//h3|.//h4|.//h5|.//h6)[1]"
#: a number a generator adds to an id made of a heading that another heading of the page already gave
_REPEAT_NUMBER = re.compile(r"[-_]\d+$")
#: a class that hides what it marks: trafilatura leaves it out, and so should the text
_HIDDEN_CLASS = re.compile(r"\b(?:hidden|hide|invisible|d-none|sr-only|visually-hidden|screen-reader-text)\b",
                           re.IGNORECASE)


#: what a cell of a table that lays a page out holds, and a table of values' cells do not: a heading, a table
_LAYOUT_IN_CELL = "|".join(f"./td//{tag}|./th//{tag}" for tag in ("h1", "h2", "h3", "h4", "h5", "h6", "table"))


def _unwrap_layout(table: Any) -> bool:
    """Replace ``table`` with its caption and its cells' content, each a <div> in reading order, when it lays
    the page out: one of its own cells holds a heading or a table (:func:`_prepared`; a table of values with a
    table in a cell is read so too, its rows as blocks). Whether it was replaced."""
    import lxml.html

    rows = table.xpath(_OWN_ROWS)
    if not any(row.xpath(_LAYOUT_IN_CELL) for row in rows):
        return False
    holder = lxml.html.Element("div")
    holder.text = table.text
    for caption in table.xpath("./caption"):  # what the table is, above its cells
        holder.append(_cell_content(caption))
    for row in rows:
        for cell in row:
            if isinstance(cell.tag, str) and cell.tag.lower() in ("td", "th"):
                holder.append(_cell_content(cell))
    holder.tail = table.tail
    table.getparent().replace(table, holder)
    return True


def _as_declaration(table: Any) -> None:
    """Replace Doxygen's ``table`` of a member's declaration with a <pre> of the declaration on one line, its
    words spaced as the page's ("void b2Body::ApplyForce ( const b2Vec2 & force, bool wake )", which
    :func:`with_headings` finds after the member's heading, as it finds a section's words). Read as a
    table, each parameter was a row ("| void b2Body::ApplyForceToCenter | ( | const b2Vec2 & | force, |"), or,
    in a table of the member's labels ("inline"), the declaration was lost."""
    import lxml.html

    declaration = " ".join(" ".join(cell.text_content() for cell in table.xpath(".//td|.//th")).split())
    labelled = table.xpath(f"ancestor::table[{_class_test('mlabels')}][1]")
    if labelled:  # the table that sets the member's labels beside it: the labels go after it, as Doxygen shows them
        labels = [" ".join(label.text_content().split()) for label in labelled[0].xpath(_DOXYGEN_LABEL)]
        declaration += "".join(f" [{label}]" for label in labels if label)
        table = labelled[0]
    block = lxml.html.Element("pre")
    block.text = declaration
    block.tail = table.tail
    table.getparent().replace(table, block)


def _rows_marked(table: Any) -> bool:
    """Replace ``table`` with a paragraph of its text as :class:`_HTMLText` reads a table with ``table_rows`` (its
    caption, then each row a line of its cells between "|"), the line breaks written as :data:`_LINE_MARK`;
    whether it was replaced. trafilatura runs a table held in a list item, a definition or a quotation into the
    text around it, its cells not even spaced apart: FreedomBox's table of a mesh connection's fields, inside a
    numbered step, read "Field Name Example Value Explanation Connection Name Mesh Join - BATMAN ...", and
    Commons IO's Javadoc summaries, in the list items that lay its page out, "static java.lang.StringgetExtension
    (java.lang.String fileName)Gets the extension of a fileName.static ...". A cell's <div>, <p> and <br> are
    spaces in its value. A table with a cell that holds blocks (a list, code, several paragraphs; Sphinx puts a
    value in a paragraph of its own), or with no row of two cells with text, is left as it is: its cells are no
    row's values (awstats' FAQ lays out a table of steps so, which trafilatura reads as rows)."""
    import lxml.html

    cells = [row.xpath("./td|./th") for row in table.xpath(_OWN_ROWS)]
    filled = [sum(bool(cell.text_content().strip()) for cell in row) for row in cells]
    if max(filled, default=0) < 2 or any(cell.xpath(_BLOCK_IN_CELL) or len(cell.xpath(".//p")) > 1
                                         for row in cells for cell in row):
        return False  # (a note beside its icon, or a box around code, is laid out in a table of one cell a row)
    for row in cells:  # a cell's text in a <div> (Javadoc's) or a <p> (Sphinx's), its lines, are one value
        for cell in row:
            for part in list(cell.iter("div", "p", "br")):
                part.tail = " " + (part.tail or "")
                if part.tag == "br":
                    part.drop_tag()
                else:
                    part.tag = "span"
    _, text = html_to_text(lxml.html.tostring(table, encoding="unicode", with_tail=False), table_rows=True)
    paragraph = lxml.html.Element("p")
    paragraph.text = "".join(f"{_LINE_MARK}{line}" for line in text.split("\n") if line.strip()) + _LINE_MARK
    paragraph.tail = table.tail
    table.getparent().replace(table, paragraph)
    return True


#: a table's own rows, not a nested table's
_OWN_ROWS = "./tr|./thead/tr|./tbody/tr|./tfoot/tr"
#: what makes a table's cell no value of a row (a row of such cells is blocks laid out side by side)
_BLOCK_IN_CELL = ".//ul|.//ol|.//dl|.//pre|.//table|.//blockquote|.//h1|.//h2|.//h3|.//h4|.//h5|.//h6"


def _cell_content(cell: Any) -> Any:
    """A <div> of what table ``cell`` holds, its white space outside <pre> collapsed as the cell showed it (a
    paragraph's lines as the page's source indents them, "For instance, you can find apt (but not\\n\\t
    aptitude or ..." in aptitude's FAQ, would otherwise read as a list's items and code), and a line break
    kept where white space meets a block (libxml2's FAQ: "<em>Licensing Terms for libxml</em>\\n <p>")."""
    import lxml.html

    part = lxml.html.Element("div")
    part.text = cell.text
    part.extend(list(cell))
    kept = {inner for pre in part.iter("pre") for inner in pre.iter() if inner is not pre}
    for element in part.iter():
        if element in kept:
            continue
        block = isinstance(element.tag, str) and element.tag.lower() in _BLOCKS
        if element.text and element.tag != "pre":
            element.text = _SPACES.sub(" ", element.text)
        if element.tail and element is not part:
            element.tail = _SPACES.sub(" ", element.tail)
            if block:  # the line break after a block
                element.tail = re.sub(r"^ ", "\n", element.tail)
        if block and element is not part:  # and before it
            before = element.getprevious()
            if before is not None and before.tail:
                before.tail = re.sub(r" $", "\n", before.tail)
            elif before is None and element.getparent().text:
                parent = element.getparent()
                parent.text = re.sub(r" $", "\n", parent.text)
    return part


_SPACES = re.compile(r"\s+")


#: a label that opens a paragraph laid out in a table cell beside it: "Q:", "A:", "8.1.2." (a bare number, "0",
#: is a value: an exit code's row)
_ROW_LABEL = re.compile(r"(?:Q|A|Question|Answer)\s*[:.]|\d{1,3}(?:\.\d{1,3})*\.")
#: elements a cell holds when it holds paragraphs, not a value
_CELL_BLOCKS = ("p", "div", "pre", "ul", "ol", "dl", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6")


#: markup that trafilatura drops from a table's cell with what it holds, when the table is in a <div> (a Doxygen
#: page centres every number of GeographicLib's tables of geoids: "<td><center>0.6</center></td>"), where it wraps
#: a value: no paragraph, list or other block (a <main> holding a layout cell's paragraphs is the page's content,
#: which trafilatura finds by it)
_CELL_VALUE_WRAPPERS = (
    "//*[self::center or self::label or self::section or self::article or self::main]"
    "[ancestor::td or ancestor::th][not(ancestor::pre)]"
    "[not(" + " or ".join(f".//{block}" for block in (*_CELL_BLOCKS, "table")) + ")]")


def _cell_value_unwrapped(wrapper: Any) -> bool:
    """Make the value that ``wrapper`` (:data:`_CELL_VALUE_WRAPPERS`) holds in a table's cell the cell's own, as
    a browser shows it: a block (<center>, <section>, ...) a <div> of its own, so that two values stay apart,
    and an inline <label> its text. A wrapper that hides what it holds is left as it is. Whether it changed."""
    if _HIDDEN_CLASS.search(wrapper.get("class", "")) or wrapper.get("hidden") is not None:
        return False
    if wrapper.tag == "label":
        wrapper.drop_tag()
        return True
    wrapper.tag = "div"
    wrapper.attrib.clear()
    # a block's white space at its ends is no part of the value (" 19"): the page's source sets the value apart
    wrapper.text = (wrapper.text or "").lstrip()
    if len(wrapper):
        wrapper[-1].tail = (wrapper[-1].tail or "").rstrip()
    else:
        wrapper.text = wrapper.text.rstrip()
    return True


def _unwrap_labelled_rows(table: Any) -> bool:
    """Replace ``table`` with its paragraphs when it lays out labelled paragraphs (:func:`_prepared`): every
    row is one cell spanning the table (a row of links to places in pages only, the questions listed again, is
    left out), or a label cell (:data:`_ROW_LABEL`) or an empty one (D-Bus's FAQ numbers its questions, "1.",
    and leaves its answers' label cells empty) beside a cell of paragraphs, and at least two rows are
    labelled. A table of values is left as it is: a row of three cells, or of two whose first is no label ("0"
    beside "success", even in paragraphs). Whether it was replaced."""
    import lxml.html

    laid_out: list[tuple[str, Any]] = []  # (label, the cell of paragraphs) or ("", a spanning cell)
    for row in table.xpath(_OWN_ROWS):
        cells = [cell for cell in row if isinstance(cell.tag, str) and cell.tag.lower() in ("td", "th")]
        if len(cells) == 1 and _links_only(row):
            continue
        label = " ".join(cells[0].text_content().split()) if len(cells) == 2 else ""
        if len(cells) == 1:
            laid_out.append(("", cells[0]))
        elif (len(cells) == 2 and (not label or _ROW_LABEL.fullmatch(label))
              and any(cells[1].find(f".//{block}") is not None for block in _CELL_BLOCKS)):
            laid_out.append((label, cells[1]))  # (an answer numbered with its question has an empty label cell)
        else:
            return False
    if sum(1 for label, _ in laid_out if label) < 2:
        return False
    holder = lxml.html.Element("div")
    for label, cell in laid_out:
        part = _cell_content(cell)
        if label:
            opening = next((block for block in part.iter(*_CELL_BLOCKS) if block is not part), None)
            if opening is not None and opening.tag.lower() == "p":
                opening.text = f"{label} {(opening.text or '').lstrip()}"
            else:
                part.text = f"{label} {(part.text or '').lstrip()}"
        for link in list(part.iter("a")):  # content, not navigation: trafilatura drops a short answer for
            _unlinked(link)                 # its links ("See the Debian and RPM section for details.")
        holder.append(part)
    holder.tail = table.tail
    table.getparent().replace(table, holder)
    return True


#: an anchor without a link, and a link that holds nothing to see (no text, no image)
_NO_LINK = "//a[not(@href) or (not(*) and not(normalize-space()))]"


#: inline markup that may hold an FAQ entry's label ("<font class=CProblem>PROBLEM:</font>"), and such a label:
#: "Q:", "A:", or a word an FAQ labels its questions or answers with (with a capital, or in capitals)
_LABEL_MARKUP = frozenset({"font", "b", "strong", "span", "em", "i", "u"})
#: markup within a line: a label after one of these is not alone on its line
_INLINE = _LABEL_MARKUP | {"a", "abbr", "big", "cite", "code", "img", "kbd", "q", "s", "small", "sub", "sup", "tt",
                           "var"}
_LABEL = re.compile(faq_labels(FAQ_QUESTION_WORDS + FAQ_ANSWER_WORDS, "Q|A") + ":")


def _labels_on_their_lines(root: Any) -> list[Any]:
    """The outermost inline elements of ``root`` that hold only an FAQ entry's label (:data:`_LABEL`), outside
    code."""
    found = []
    for element in root.iter(*_LABEL_MARKUP):
        parent = element.getparent()
        text = "".join(element.itertext()).strip()
        if (not _LABEL.fullmatch(text) or (parent is not None and parent.tag in _LABEL_MARKUP
                                             and "".join(parent.itertext()).strip() == text)):
            continue  # no label, or one its parent holds whole (the outermost is joined)
        if not _inside(element, "pre"):
            found.append(element)
    return found


def _label_joined(label: Any) -> bool:
    """When the inline element ``label``, an FAQ entry's label, stands alone on its line ("<br><font>PROBLEM:
    </font><br>"), the line breaks after it are dropped: the label opens the paragraph after it, as "Q:" opens a
    question ("PROBLEM: AWStats seems to work ... but I have no image shown."). Each label on its own line is the
    same short text, and trafilatura keeps one text of a page once: AWStats' FAQ kept its first "PROBLEM:" and
    "SOLUTION:" of forty. Whether anything changed."""
    before = label.getprevious()
    opens_line = (not (label.getparent().text or "").strip() if before is None
                  else before.tag not in _INLINE and not (before.tail or "").strip())
    line_break = label.getnext()
    if not opens_line or line_break is None or line_break.tag != "br" or (label.tail or "").strip():
        return False
    while line_break is not None and line_break.tag == "br" and not (label.tail or "").strip():
        label.tail = " " + (line_break.tail or "").lstrip()  # the text after the break goes on the label's line
        label.getparent().remove(line_break)
        line_break = label.getnext()
    return True


#: the most words of a title run into its entry's first sentence
_RUN_IN_TITLE_WORDS = 6
#: the blocks whose first words may be a title run in
_RUN_IN_HOLDERS = ("li", "p", "dd")


def _run_in_titles(root: Any) -> list[Any]:
    """The bold titles run into the first sentence of their entries: each the first thing in a list item, a
    paragraph or a definition (nothing but spaces before it), of at most ``_RUN_IN_TITLE_WORDS`` words with no
    stop, colon or question mark at its end, right before a capital that opens the sentence (nothing between
    them but spaces: "<b>Win32 Pathnames</b> Why don't backslashes work ...?"). A page sets its entries out
    alike: at least two blocks under one parent open so, or none is taken (a lone "<b>GNU</b> Emacs is ..."
    names its subject)."""
    by_parent: dict[Any, list[Any]] = {}
    for holder in root.iter(*_RUN_IN_HOLDERS):
        first = holder[0] if len(holder) else None
        if first is None or first.tag not in ("b", "strong") or (holder.text or "").strip() or len(first):
            continue
        words = " ".join((first.text or "").split())
        tail = (first.tail or "").lstrip()
        if (words and len(words.split()) <= _RUN_IN_TITLE_WORDS and words[-1] not in ".:?!;,"
                and tail[:1].isupper() and tail != (first.tail or "")):
            by_parent.setdefault(holder.getparent(), []).append(first)
    return [title for titles in by_parent.values() if len(titles) >= 2 for title in titles]


#: the longest term of a definition list that opens its description (longer ones are signatures and questions)
_TERM_CHARACTERS = 60
#: a term that asks, or ends a sentence (an FAQ written as a definition list, its question in each <dt>), or a
#: numbered contents line ("2.1. Installing"); an option's "..." is no sentence's end
_NO_TERM = re.compile(r"[?!]\s*$|\s\S*[^\W\d]\.\s*$|^\d+(?:\.\d+)*\.?\s")


def _defined_terms(root: Any) -> list[list[Any]]:
    """Each run of <dt> elements of ``root`` followed by its <dd> (a term, or a term and its other spellings:
    "-o FILE", "--output=FILE"), outside code."""
    runs: list[list[Any]] = []
    for description in root.iter("dd"):
        terms = []
        before = description.getprevious()
        while before is not None and before.tag == "dt":
            terms.insert(0, before)
            before = before.getprevious()
        if terms and not _inside(description, "pre"):
            runs.append(terms)
    return runs


def _term_joined(terms: list[Any]) -> bool:
    """When the <dt> elements ``terms`` name what the <dd> after them describes (short terms: an option, a value,
    a field; not a question, a sentence, a signature or a contents line), they open its first paragraph, as
    "term: description", and are dropped: trafilatura made each a list item of its own, and the option went
    missing from a bullet quoting its description ("Generate additional support code to check memory
    allocations and array/pointer bounds." said nothing of TCC's "-b"). A <dd> that opens with code, a list or
    a table keeps its term above it. Whether anything changed."""
    texts = [" ".join(term.text_content().translate(_PERMALINK_MARKS).split()).rstrip("#").rstrip() for term in terms]
    if not all(texts) or any(len(text) > _TERM_CHARACTERS or _NO_TERM.search(text) for text in texts):
        return False
    if any(term.xpath(".//a[@href]") and "".join(term.xpath(".//a[@href]//text()")).strip() == text
           for term, text in zip(terms, texts)):
        return False  # a contents line, a link and nothing else
    holder = terms[-1].getnext()  # the description, or the paragraph it opens with
    while not (holder.text or "").strip() and len(holder) and holder[0].tag in ("p", "div"):
        holder = holder[0]
    opens_inline = len(holder) and holder[0].tag in _INLINE_MARKUP
    if not (holder.text or "").strip() and not opens_inline:
        return False  # the description opens with code, a list or a table, or holds nothing
    label = ", ".join(texts)
    holder.text = label + ("" if label.endswith(":") else ":") + " " + (holder.text or "").lstrip()
    for term in terms:
        term.drop_tree()  # (its tail stays)
    return True


def _inside(element: Any, tag: str) -> bool:
    """Whether ``element`` is inside a ``tag`` element (a <pre>'s code, a <textarea>'s lines)."""
    return any(isinstance(up.tag, str) and up.tag.lower() == tag for up in element.iterancestors())


#: a list's item in another list's item
_NESTED_ITEM = "//li//li"
#: the fewest words outside its links that make an item of linked names part of a sentence, and an item above it
#: a sentence's
_WORDS_BESIDE_LINKS = 2
_WORDS_OF_A_SENTENCE = 4


def _words_beside_links(item: Any) -> tuple[int, list[Any]]:
    """The words the list item ``item`` writes outside its links, and its links: its own, not those of a list in
    it (wrapped in another element or not), each element looked at once."""
    words, links = len((item.text or "").split()), []
    pending = list(item)
    while pending:
        element = pending.pop()
        words += len((element.tail or "").split())
        if not isinstance(element.tag, str) or element.tag.lower() in ("ul", "ol"):
            continue
        if element.tag.lower() == "a" and element.get("href") is not None:
            links.append(element)  # (its words are a link's)
        else:
            words += len((element.text or "").split())
            pending.extend(element)
    return words, links


def _names_unlinked(item: Any) -> bool:
    """Make the links of the nested list item ``item`` their text when it writes words of its own beside them
    (:data:`_WORDS_BESIDE_LINKS`) and the item it is listed under writes a sentence of its own
    (:data:`_WORDS_OF_A_SENTENCE`); whether it did. A sentence in an item goes on in a list of names, each linked
    to its entry, with words between them (libFLAC's "... prepare for decoding using" over "FLAC__stream_decoder_
    init_stream() or FLAC__stream_decoder_init_FILE() ... for native FLAC,"): trafilatura drops such a list as
    navigation, for its links. A menu's or a table of contents' items are links alone, under links."""
    words, links = _words_beside_links(item)
    if not links or words < _WORDS_BESIDE_LINKS:
        return False
    above = item.xpath("ancestor::li[1]")
    if not above or _words_beside_links(above[0])[0] < _WORDS_OF_A_SENTENCE:
        return False
    for link in links:
        _unlinked(link)
    return True


def _unlinked(link: Any) -> None:
    """Make the <a> element ``link`` a plain <span> of its text, in place (dropping the tag would join its text
    to its parent's, again for each link: quadratic time on a page of many)."""
    link.tag = "span"
    for name in ("href", "name", "id", "class"):
        link.attrib.pop(name, None)


def _links_only(row: Any) -> bool:
    """Whether a row's text is all links to places in pages, and labels (the questions below listed again, each
    a link)."""
    if not row.xpath(".//a[contains(@href, '#')]"):
        return False
    # the text outside those links, read once (a contents row may hold thousands of them)
    rest = " ".join(row.xpath(".//text()[not(ancestor::a[contains(@href, '#')])]"))
    return not _ROW_LABEL.sub(" ", rest).strip()


#: Doxygen's block of code, a <div> a line (not a <pre>), and the tooltip it gives each name in it
_DOXYGEN_FRAGMENT = _with_class("fragment", "div")
_DOXYGEN_TOOLTIP = _with_class("ttc", "div")
#: the table in which Doxygen lays out a member's declaration above its description, a parameter a row
_DOXYGEN_SIGNATURE = _with_class("memname", "table")
#: the "◆" that opens each member's heading, a link to it
_DOXYGEN_PERMALINK = _with_class("permalink", "span")
#: a label Doxygen sets beside a member's declaration ("inline", "static", "virtual")
_DOXYGEN_LABEL = _with_class("mlabel", "span", within=".")
#: a line of a Doxygen block (in the block, or in a part of it that a reader may fold away), and its number
_DOXYGEN_LINE = _with_class("line", "div", within=".")
_DOXYGEN_LINE_NUMBER = _with_class("lineno", within=".")


def _as_preformatted(fragment: Any) -> bool:
    """Make Doxygen's block of code ``fragment`` a <pre> of its lines' text, in place; whether it did. Each line
    is a <div>, so trafilatura read the block as paragraphs: it dropped a line that recurs on the page ("}",
    "type plug") and most of GLFW's examples, and no code fence held the rest; a line's number is left out. A
    function's body that a reader may fold away (Doxygen 1.9.7 on: a <div class="foldopen"> in the block) is
    read with it."""
    lines = []
    for line in fragment.xpath(_DOXYGEN_LINE):
        for number in line.xpath(_DOXYGEN_LINE_NUMBER):
            number.drop_tree()
        lines.append(line.text_content().rstrip())
    if not any(line.strip() for line in lines):  # an empty one, or one of another layout: left as it is
        return False
    tail = fragment.tail
    fragment.clear()
    fragment.tag, fragment.text, fragment.tail = "pre", "\n".join(lines), tail
    return True


def _named_by_heading(section: Any) -> bool:
    """Whether ``section`` (:data:`_SECTIONS`) is a section whose ``id`` its generator made of its first heading:
    the id's letters are the heading's, its number aside ("tiff-tags" for "3.1 TIFF Tags¶", "Comments-1" for
    a page's second "Comments")."""
    if section.tag != "section" and not _SECTION_CLASS.search(section.get("class", "")):
        return False
    headings = section.xpath(_FIRST_HEADING)
    if not headings:
        return False
    id_letters = re.sub(r"[\W_]+", "", _REPEAT_NUMBER.sub("", section.get("id", "")).lower())
    heading_letters = re.sub(r"[\W_]+", "", _HEADING_NUMBER.sub("", headings[0].text_content()).lower())
    return bool(id_letters) and id_letters == heading_letters


def _heading_ids_dropped(root: Any) -> bool:
    """Drop the ``id`` of each section of ``root`` named by its heading (:func:`_named_by_heading`), when the
    page names two sections or more so, as a manual's generator does, and say whether any was. trafilatura
    drops, whole, a section whose id holds a word that names page furniture where a site's template writes it
    ("tags", "related", "author", "menu", "nav", "footer", "share", "sidebar", "button", "hidden" and more):
    LibTIFF's Sphinx manual lost its section "TIFF Tags" (``id="tiff-tags"``), heading and all. An id its
    heading gives says what the section is about, not what part of the page it is. A page's one section so
    named is a template's (a blog's ``<section id="comments">`` above its readers' comments): it stays out."""
    named = [section for section in root.xpath(_SECTIONS) if _named_by_heading(section)]
    if len(named) < 2:
        return False
    for section in named:
        del section.attrib["id"]
    return True


def _quote(quotation: Any) -> None:
    """Make the <q> element ``quotation`` a <span> of its content between quotation marks (in place: dropping
    the tag joins its text to its parent's, again for each quotation, in quadratic time)."""
    quotation.text = "\u201c" + (quotation.text or "")
    children = list(quotation)
    if children:
        children[-1].tail = (children[-1].tail or "") + "\u201d"
    else:
        quotation.text += "\u201d"
    quotation.tag = "span"


#: inline elements of code, and the inline markup they may sit in
_INLINE_CODE = ("code", "tt", "kbd", "samp", "var")
_INLINE_MARKUP = frozenset({"a", "abbr", "b", "cite", "code", "dfn", "em", "i", "kbd", "mark", "q", "s", "samp",
                            "small", "span", "strong", "sub", "sup", "tt", "u", "var"})


def _flatten_inline_code(code: Any, root: Any, plain: dict[Any, bool]) -> bool:
    """Make an inline code element outside a <pre> its plain text when it holds markup of its own or sits in
    other inline markup (nested placeholders, as DocBook writes them): the text stays where it was, once. Only
    markup that is all inline and shown is made text (a <select>'s options or a hidden <span> are not the
    page's words), and code that runs over lines keeps its element, so its line breaks stay. ``plain`` keeps
    what is known of each element, so a page is read in linear time."""
    ancestors = list(code.iterancestors())
    # in a <pre>, or inside markup an earlier code's flattening took apart (its top is no longer the page)
    if not ancestors or ancestors[-1] is not root or any(a.tag == "pre" for a in ancestors):
        return False
    if not _plain_inline(code, plain):
        return False
    if len(code) == 0 and code.getparent().tag not in _INLINE_MARKUP:
        return False
    holder = code
    if "\n" not in code.text_content():
        # the outermost inline markup around it, inside its paragraph, made one run of text
        while holder.getparent() is not None and _plain_inline(holder.getparent(), plain):
            holder = holder.getparent()
    text = holder.text_content()
    tail = holder.tail
    for child in list(holder):
        holder.remove(child)
    holder.text, holder.tail = text, tail
    return True


def _plain_inline(element: Any, plain: dict[Any, bool]) -> bool:
    """Whether ``element`` and all it holds are inline markup a reader sees (no block, line break, form
    control, image or hidden part), each element looked at once. ``plain`` is keyed by the elements themselves,
    which keeps each one's proxy alive (lxml makes a new one, perhaps at a freed one's id, for a node no
    reference holds)."""
    key = element
    if key not in plain:
        attributes = element.attrib
        plain[key] = (isinstance(element.tag, str) and element.tag in _INLINE_MARKUP
                      and "hidden" not in attributes
                      and "none" not in attributes.get("style", "").replace(" ", "").lower().split("display:")[1:2]
                      and all(_plain_inline(child, plain) for child in element))
    return plain[key]


def _breaks_as_lines(block: Any) -> bool:
    """Write each <br> of the <pre> ``block`` as the line break it shows; whether there was one. trafilatura
    dropped the rest of a block opened with one (the floppy driver FAQ's "<pre><code><br>"), and its closing
    fence with it, so the page's prose after it was read as code."""
    breaks = list(block.iter("br"))
    for line_break in breaks:
        before = line_break.getprevious()
        text = "\n" + (line_break.tail or "")
        if before is not None:
            before.tail = (before.tail or "") + text
        else:
            parent = line_break.getparent()
            parent.text = (parent.text or "") + text
        line_break.getparent().remove(line_break)
    return bool(breaks)


def _fence_code(block: Any) -> bool:
    """Put a <pre> (outside any other) between code fences when :func:`is_fenced`; whether it was."""
    if _inside(block, "pre"):
        return False
    if not is_fenced(block.text_content(), _text_going_on(block)):
        return False
    block.text = _FENCE_ON_ITS_LINE + (block.text or "")
    if len(block):
        block[-1].tail = (block[-1].tail or "") + _FENCE_ON_ITS_LINE
    else:
        block.text += _FENCE_ON_ITS_LINE
    return True


#: how many enclosing elements a <pre> is looked out of for the text after it (Sphinx puts it in two <div>s)
_LOOKED_OUT_OF = 3


def _text_going_on(block: Any) -> str:
    """The text right after ``block`` that a sentence may go on with: its tail, or else the first text of the
    next element when that is a paragraph (:data:`_RUNS_ON`), looked for from the block and from up to
    :data:`_LOOKED_OUT_OF` of its enclosing elements when it ends them; "" when something else comes first.
    Looked up locally, so a page of many <pre> blocks costs each one a few steps."""
    node = block
    for _ in range(_LOOKED_OUT_OF + 1):
        if node.tail and node.tail.strip():
            return str(node.tail)
        following = node.getnext()
        if following is not None:
            if not isinstance(following.tag, str) or following.tag.lower() not in _RUNS_ON:
                return ""
            return str(following.text or "") or next((t for t in following.itertext() if t.strip()), "")
        node = node.getparent()
        if node is None:
            return ""
    return ""


def _wrap_loose_runs(holder: Any) -> bool:
    """Put each long enough run of ``holder``'s content outside its block children (its own text, a block
    child's tail, the inline children up to the next block child) in a new <p> where it stood, its line breaks
    made spaces as a browser shows them. The children are laid out again in one pass. Whether any was."""
    import lxml.html

    children = list(holder)
    blocks = [_is_block(child) for child in children]  # each child looked at once
    laid_out: list[Any] = []
    paragraph = None  # the <p> that the inline children met go into, while a long enough run lasts
    wrapped: list[Any] = []  # the new <p>s

    def opened(text: str | None, start: int) -> Any:
        """A new <p> for a run that starts with ``text`` and the inline children from ``children[start]`` up to
        the next block, when the run is long enough; else None."""
        inline_numbers = itertools.takewhile(lambda number: not blocks[number], range(start, len(children)))
        inline = [children[number] for number in inline_numbers]
        words = " ".join(((text or "") + "".join(n.text_content() + (n.tail or "") for n in inline)).split())
        if len(words) < _LOOSE_TEXT_CHARACTERS:
            return None
        new = lxml.html.Element("p")
        new.text = re.sub(r"\s+", " ", text) if text else text
        laid_out.append(new)
        wrapped.append(new)
        return new

    if holder.text and holder.text.strip():
        paragraph = opened(holder.text, 0)
        if paragraph is not None:
            holder.text = None
    for number, child in enumerate(children):
        if blocks[number]:
            laid_out.append(child)
            paragraph = None
            if child.tail and child.tail.strip():
                paragraph = opened(child.tail, number + 1)
                if paragraph is not None:
                    child.tail = None
        elif paragraph is None and (number == 0 or blocks[number - 1]):  # a run starts here
            paragraph = opened(None, number)
            if paragraph is None:
                laid_out.append(child)
            else:
                paragraph.append(child)
        elif paragraph is None:
            laid_out.append(child)
        else:
            paragraph.append(child)
    if not wrapped:
        return False
    for node in wrapped:  # (a run holds no block, so no <pre>; a <textarea> keeps its lines)
        for inner in node.iterdescendants():
            if not _inside(inner, "textarea"):
                if inner.tag != "textarea":
                    inner.text = re.sub(r"\s+", " ", inner.text) if inner.text else inner.text
                inner.tail = re.sub(r"\s+", " ", inner.tail) if inner.tail else inner.tail
    holder[:] = laid_out
    return True


def _is_block(node: Any) -> bool:
    """Whether ``node`` starts a block of its own: a block element, an inline one that holds blocks (an old
    page's <font> around its whole body), or a comment or processing instruction (no text)."""
    if not isinstance(node.tag, str) or node.tag.lower() in _BLOCKS:
        return True
    return any(isinstance(inner.tag, str) and inner.tag.lower() in _BLOCKS for inner in node.iterdescendants())


def markdown_title(source: str) -> str:
    """The title of a Markdown text: its first heading of the highest level it uses ("Troubleshooting tips and
    FAQ for Sudo" underlined with =, above "#### Why does sudo ...?"), in either syntax, or its front matter's
    ``title:``; "" without one. Fenced code and the front matter are no headings. Read line by line, in linear
    time on any line."""
    lines = source[:50_000].splitlines()
    if lines and lines[0].strip() in ("---", "+++"):  # front matter: "title: ..." in it names the page
        closing = next((n for n in range(1, len(lines)) if lines[n].strip() == lines[0].strip()), None)
        if closing is not None:
            for line in lines[1:closing]:
                key, _, value = line.partition(":" if lines[0].strip() == "---" else "=")
                if key.strip().lower() == "title" and value.strip().strip("\"'"):
                    return " ".join(value.strip().strip("\"'").split())
            lines = lines[closing + 1:]
    headings: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not stripped:
            continue
        if stripped.startswith("#"):
            marks = len(stripped) - len(stripped.lstrip("#"))
            text = stripped[marks:].rstrip(" \t#").strip()
            if 1 <= marks <= 6 and stripped[marks:marks + 1] in (" ", "\t") and text:
                headings.append((marks, text))
            continue
        following = lines[number + 1].strip() if number + 1 < len(lines) else ""
        if len(following) >= 3 and set(following) in ({"="}, {"-"}) and not stripped.startswith((">", "|", "-")):
            headings.append((1 if following[0] == "=" else 2, stripped))
    if not headings:
        return ""
    top = min(level for level, _ in headings)
    return _inline_text(_without_attributes(next(text for level, text in headings if level == top)))


#: a Markdown image (a README's build badge); a link, whose text stays
_MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _inline_text(markdown: str) -> str:
    """A heading's text as the page shows it: images left out, links as their text, whitespace collapsed
    ("RSNAPSHOT [![Build Status](https://...png)](https://...)" is "RSNAPSHOT")."""
    shown = _MARKDOWN_LINK.sub(r"\1", _MARKDOWN_IMAGE.sub("", markdown))
    return " ".join(shown.split())


def read_markdown(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """Markdown rendered by CommonMark's rules (markdown-it-py, with tables) and read as HTML. CommonMark is what
    the files' authors write for: a code fence opens a block right below a paragraph's line and inside a list
    item (cryptsetup's FAQ), where Python-Markdown read it as inline code and ran the commands into the
    sentences around them."""
    from markdown_it import MarkdownIt

    source = decode_text(data)
    markdown = MarkdownIt("commonmark").enable("table")
    tokens = markdown.parse(source)
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type == "heading_open" and inline.children:  # (the HTML is rendered from the children)
            last = inline.children[-1]
            if last.type == "text":
                last.content = _without_attributes(last.content)
    tokens = _run_in_labels_apart(tokens)
    _, text = html_to_text(markdown.renderer.render(tokens, markdown.options, {}), table_rows=True)
    return [_document(doc_id, markdown_title(source) or _stem(path), _require_text(text), path, "md")], []


def _run_in_labels_apart(tokens: list[Any]) -> list[Any]:
    """The Markdown ``tokens`` with each paragraph that opens with a bold label alone on its source line ("**Problem**"
    above "When using a USB DAC ...") made two paragraphs, the label's and the text's. CommonMark joins a line
    to the next one, so the label ran into the sentence below it ("Problem When using a USB DAC on a Raspberry Pi
    audio plays fine ...": Shairport Sync's troubleshooting guide), and that sentence read as a fragment; a label
    followed by a blank line was already a paragraph of its own. The text below opens with a capital (a bold line
    that wraps a sentence, "**Do not delete the**" above "configuration file ...", is no label); a tight list's
    item, whose paragraphs are not written, is left as it is."""
    out: list[Any] = []
    for token in tokens:
        children = token.children or []
        start = next((i for i, child in enumerate(children) if not (child.type == "text" and not child.content)),
                     len(children))
        label = children[start : start + 3]
        rest = children[start + 3 :]
        while rest and rest[0].type == "text" and not rest[0].content.strip():
            rest = rest[1:]
        if (token.type != "inline" or not out or out[-1].type != "paragraph_open" or out[-1].hidden
                or [child.type for child in label] != ["strong_open", "text", "strong_close"]
                or len(label[1].content.split()) > _LABEL_WORDS or len(rest) < 2 or rest[0].type != "softbreak"
                or rest[1].type != "text" or not rest[1].content[:1].isupper()):
            out.append(token)
            continue
        opening = out[-1]
        out.append(token.copy(children=children[: start + 3], content=label[1].content))
        out.append(opening.copy(type="paragraph_close", tag="p", nesting=-1))
        out.append(opening.copy())
        out.append(token.copy(children=rest[1:], content=""))
    return out


#: the most words of a bold label run into its paragraph's text
_LABEL_WORDS = 4


#: the attributes Pandoc, kramdown and PHP Markdown Extra let a heading end with ("## Q6 : ... Why? {#Q006}",
#: "{.unnumbered}", "{-}", "{: #setup}"): markup, which CommonMark leaves in the heading's text. Its names are
#: identifiers: "{:.2f}" (a format) and "{.c,.h}" (a shell's braces) are text
_ATTRIBUTE = r"(?:[#.][A-Za-z][\w:-]*|[A-Za-z][\w-]*=\S+)"
_HEADING_ATTRIBUTES = re.compile(r"[ \t]+(?<!\\)\{(?::?[ \t]*" + _ATTRIBUTE + r"(?:[ \t]+" + _ATTRIBUTE
                                 + r")*[ \t]*|-)\}[ \t]*$")


def _without_attributes(heading: str) -> str:
    return _HEADING_ATTRIBUTES.sub("", heading)


def read_rst(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """reStructuredText rendered by docutils, Sphinx's roles and directives read as Sphinx shows them
    (:mod:`citesum.ingest.rst`), and read as HTML is; titled by its title, else the file name."""
    from citesum.ingest.rst import rst_html

    source = _require_text(decode_text(data))
    try:
        title, body = rst_html(source)
    except Exception as exc:  # docutils gave up (halt_level is off: nesting too deep for its recursion, ...)
        problem = f"docutils could not render the reStructuredText ({type(exc).__name__}); read as plain text"
        return [_document(doc_id, text_title(source) or _stem(path), source, path, "rst")], [problem]
    _, text = html_to_text(body, table_rows=True)
    return [_document(doc_id, title or text_title(text) or _stem(path), _require_text(text), path, "rst")], []


def read_asciidoc(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """AsciiDoc rewritten as Markdown (:mod:`citesum.ingest.asciidoc`) and read as Markdown is, titled by its
    ``= Title``, else its first heading, else the file name."""
    title, markdown = asciidoc_markdown(decode_text(data))
    [document], problems = read_markdown(markdown.encode("utf-8"), doc_id, path, options)
    return [_document(doc_id, title or document.title, document.text, path, "adoc")], problems


#: where a PDF's end-of-file marker is looked for: at its end, after which a few bytes may follow
_PDF_TAIL = 1024


def _unreadable_pdf(data: bytes, error: str) -> str:
    """Why PDFium could not open a PDF, as its reader says it: a file without a PDF's header is another kind of
    file; one that stops before its end-of-file marker was cut short (a download or a copy that did not
    finish); else PDFium's reason, without its own framing
    ("Failed to load document (PDFium: Data format error).")."""
    if b"%PDF-" not in data[:_PDF_TAIL]:  # (a PDF's header may follow a few bytes of something else)
        return "not a PDF (it does not start as a PDF does, with %PDF-: a file of another kind named .pdf?)"
    if b"%%EOF" not in data[-_PDF_TAIL:]:
        return ("corrupt PDF (it stops before its end-of-file marker: cut short by a download or a copy that did "
                "not finish?)")
    reason = re.search(r"PDFium: ([^)]+)", error)
    return f"corrupt PDF (PDFium cannot read it: {(reason.group(1) if reason else error).strip().rstrip('.').lower()})"


def read_pdf(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """Paragraphs of the PDF without its running headers, footers and page numbers (see :mod:`pdf`); the
    metadata keeps where each page starts (``page_starts``), so evidence can be given a page."""
    import pypdfium2

    try:
        read = read_pages(data)
    except pypdfium2.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise UnreadableError("encrypted PDF (a password is required)") from exc
        raise UnreadableError(_unreadable_pdf(data, str(exc))) from exc
    pages, title, labels = read.pages, read.title, read.labels
    clean = clean_pages(pages, read.display_lines)
    if not clean.text:
        raise IngestError("PDF has no extractable text (scanned images need OCR first)")
    # pages with no text layer are scanned images: what they say is not in the index, and a question about it
    # would only be abstained on, so the report names them
    blank = sum(len(page.strip()) < _TEXTLESS_PAGE for page in pages)
    problems = ([f"{blank} of {len(pages)} pages, which have no text layer (scanned pages need OCR first)"]
                if blank and 2 * blank >= len(pages) else [])
    return [_document(doc_id, title or _stem(path), clean.text, path, "pdf",
                      {"pages": len(pages), PAGE_STARTS: clean.page_starts,
                       **({NOTE_PAGES: [list(span) for span in clean.note_pages]} if clean.note_pages else {}),
                       # (kept only when print numbers the pages otherwise than their order does)
                       **({PAGE_LABELS: labels} if labels != [str(n) for n in range(1, len(labels) + 1)]
                          and any(labels) else {}),
                       FILE_DIGEST: hashlib.sha256(data).hexdigest()})], problems


#: the fewest characters of a page with a text layer (a scanned page may carry a stamp or a page number)
_TEXTLESS_PAGE = 20


#: bytes inflated at a time while an archive is checked: all of it the check holds in memory at once
_ZIP_BLOCK = 64 * 1024
#: what reading a part can raise on bad data: a bad CRC or header, a truncated or invalid stream (zlib, bz2 as
#: OSError, lzma), an encrypted part (RuntimeError), an unknown compression method (NotImplementedError)
_BAD_PART_ERRORS = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, RuntimeError,
                    NotImplementedError)


#: the compression methods of the parts of an Office Open XML package (ECMA-376 part 2: stored or deflated)
_PACKAGE_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


def check_zip(data: bytes, options: IngestOptions, kind: str) -> None:
    """Refuse a corrupt archive or one that inflates past the limits (a zip bomb).

    Every part is inflated here, a block at a time, and counted by the bytes it gives, not by the sizes its
    headers declare: a bomb declares small ones. Inflating stops as soon as the archive passes the limits or a
    part passes its declared size. A part that gives more than it declares is refused, so the parser, which
    reads the same parts and trusts those sizes (zipfile inflates a whole part in one call), inflates no more
    than was counted here."""
    limit, over_limit = _inflation_limit(len(data), options)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise UnreadableError(f"corrupt {kind} (not a valid zip archive)") from exc
    inflated = 0
    with archive:
        for info in archive.infolist():
            if info.compress_type not in _PACKAGE_COMPRESSIONS:
                # bzip2 and LZMA parts are inflated by zipfile without a bound on what one read gives; an Office
                # package holds only stored and deflated parts
                raise UnreadableError(f"{kind} part '{info.filename}' is compressed with method "
                                      f"{info.compress_type}, which no {kind} writer uses (stored or deflated only)")
            try:
                size = _inflated_size(archive, info, stop_past=min(info.file_size, limit - inflated))
            except _BAD_PART_ERRORS as exc:
                raise UnreadableError(f"corrupt {kind} (part '{info.filename}': {exc})") from exc
            if size > info.file_size:
                raise IngestError(f"{kind} part '{info.filename}' inflates to more than the {info.file_size:,} "
                                  "bytes its headers declare: refused as a possible zip bomb")
            inflated += size
            if inflated > limit:
                raise IngestError(f"{kind} inflates to more than {over_limit}: refused as a possible zip bomb")


def _inflation_limit(archive_bytes: int, options: IngestOptions) -> tuple[int, str]:
    """The bytes an archive of ``archive_bytes`` may inflate to, the tighter of the absolute and the ratio limit,
    and how to say it. The ratio is taken to the archive's own size: compressed sizes are declared too, and
    parts can share their compressed data."""
    by_ratio = int(options.max_compression_ratio * archive_bytes)
    if options.max_uncompressed_bytes <= by_ratio:
        return options.max_uncompressed_bytes, f"{options.max_uncompressed_bytes:,} bytes"
    return by_ratio, f"{options.max_compression_ratio:.0f} times its {archive_bytes:,} bytes"


def _inflated_size(archive: zipfile.ZipFile, info: zipfile.ZipInfo, stop_past: int) -> int:
    """The bytes part ``info`` inflates to, counted a block at a time; counting stops once past ``stop_past``.
    At the end of the part zipfile checks its CRC-32 (a failure raises BadZipFile)."""
    # zipfile cuts a part at its declared size: declare none, so that it inflates all the part's data
    undeclared = copy.copy(info)
    undeclared.file_size = sys.maxsize
    size = 0
    with archive.open(undeclared) as part:
        while size <= stop_past and (block := part.read(_ZIP_BLOCK)):
            size += len(block)
    return size


def read_docx(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """The body in reading order: paragraphs and headings as paragraphs, tables row by row (``cell | cell``,
    a merged cell once), then the footnotes and endnotes under "Notes". Headers and footers repeat on every
    page (a running title, page numbers): they are left out of the text."""
    check_zip(data, options, "DOCX")
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        blocks = []
        problems: list[str] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                blocks += _table_rows(item, problems)
            elif item.text.strip():
                blocks.append(" ".join(item.text.split()))
        notes = _docx_notes(document)
    except Exception as exc:  # python-docx raises KeyError/ValueError/PackageNotFoundError on bad parts
        raise UnreadableError(f"corrupt DOCX ({type(exc).__name__}: {exc})") from exc
    if notes:
        blocks += ["Notes", *notes]
    title = document.core_properties.title or _stem(path)
    return [_document(doc_id, title, _require_text("\n\n".join(blocks)), path, "docx")], problems


def _table_rows(table: Any, problems: list[str], depth: int = 0) -> list[str]:
    """A table's rows (``cell | cell``), each followed by the rows of the tables nested in its cells (a form
    lays its text out in tables inside table cells, which a cell's own text leaves out), at most
    ``_NESTED_TABLES`` deep; what lies deeper is left out and said in ``problems``."""
    rows = []
    seen: set[Any] = set()  # a merged cell is repeated for each column and row it spans: its tables are read once
    for row in table.rows:
        cells: list[str] = []
        nested: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if not cells or text != cells[-1]:  # python-docx repeats a merged cell for each column it spans
                cells.append(text)
            if cell._tc in seen:  # the elements are kept, so their identities hold
                continue
            seen.add(cell._tc)
            if cell.tables and depth == _NESTED_TABLES:
                problem = f"tables nested more than {_NESTED_TABLES} deep in table cells"
                if problem not in problems:
                    problems.append(problem)
                continue
            for inner in cell.tables:
                nested += _table_rows(inner, problems, depth + 1)
        while cells and not cells[-1]:  # "T2 | " for a row whose last cells are empty
            cells.pop()
        if any(cells):
            rows.append(" | ".join(cells))
        rows += nested
    return rows


#: how deep tables inside table cells are read: a form nests two or three; a hostile file many more
_NESTED_TABLES = 8


def _docx_notes(document: Any) -> list[str]:
    """The footnotes and endnotes, in order ("[n] text"), from their parts of the package."""
    from xml.etree import ElementTree

    namespace = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    notes = []
    for part in document.part.package.iter_parts():
        if str(part.partname) not in ("/word/footnotes.xml", "/word/endnotes.xml"):
            continue
        for note in ElementTree.fromstring(part.blob):
            number = int(note.get(f"{namespace}id", "0"))
            text = " ".join("".join(t.text or "" for t in note.iter(f"{namespace}t")).split())
            if number > 0 and text:  # ids -1 and 0 are the separator lines, not notes
                notes.append(f"[{len(notes) + 1}] {text}")
    return notes


def render_rows(header: list[str], rows: list[list[str]], rows_per_block: int) -> str:
    """Rows as text, in blocks that each repeat the header, so every passage knows its columns."""
    header_line = " | ".join(header)
    blocks: list[str] = []
    for start in range(0, len(rows), rows_per_block):
        lines = [header_line]
        for row in rows[start : start + rows_per_block]:
            lines.append(" | ".join(f"{name}: {value}" for name, value in zip(header, row) if str(value).strip()))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def read_delimited(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    text = decode_text(data)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        rows = [row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if any(c.strip() for c in row)]
    except csv.Error as exc:
        raise UnreadableError(f"malformed {path.suffix.lstrip('.').upper()} ({exc})") from exc
    if len(rows) < 2:
        raise IngestError("table has no data rows")
    header = [h.strip() or f"column{i + 1}" for i, h in enumerate(rows[0])]
    body = render_rows(header, rows[1:], options.rows_per_block)
    return [_document(doc_id, _stem(path), body, path, path.suffix.lower().lstrip("."), {"rows": len(rows) - 1})], []


def read_xlsx(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    check_zip(data, options, "XLSX")
    import openpyxl

    try:
        # read-only streams the rows instead of building every cell in memory (a large sheet stays small)
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:
        raise UnreadableError(f"corrupt XLSX ({type(exc).__name__}: {exc})") from exc
    documents = []
    try:
        for sheet in workbook.worksheets:
            # Read-only mode trusts the sheet's recorded size, which some writers get wrong (rows were missed:
            # openpyxl's bug304.xlsx); forget it and read every row there is.
            sheet.reset_dimensions()
            rows = [
                ["" if v is None else str(v) for v in row]
                for row in sheet.iter_rows(values_only=True)
                if any(v is not None and str(v).strip() for v in row)
            ]
            if len(rows) < 2:
                continue
            header = [h.strip() or f"column{i + 1}" for i, h in enumerate(rows[0])]
            documents.append(
                _document(
                    f"{doc_id}#{sheet.title}", f"{_stem(path)} — {sheet.title}",
                    render_rows(header, rows[1:], options.rows_per_block), path, "xlsx",
                    {"sheet": sheet.title, "rows": len(rows) - 1},
                )
            )
    finally:
        workbook.close()
    if not documents:
        raise IngestError("workbook has no sheet with data rows")
    return documents, []


def _json_records(data: bytes, path: Path) -> Iterator[tuple[int, Any]]:
    text = decode_text(data)
    if path.suffix.lower() == ".jsonl":
        for line_number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    yield line_number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UnreadableError(f"line {line_number}: invalid JSON ({exc.msg})") from exc
        return
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnreadableError(f"invalid JSON ({exc.msg} at line {exc.lineno})") from exc
    records = parsed if isinstance(parsed, list) else [parsed]
    yield from enumerate(records, start=1)


def read_json(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> Read:
    """Records of a .json (object or list) or .jsonl file; id/title/text field names are configurable. A record
    whose id repeats an earlier one is left out and reported (one id, one document)."""
    documents = []
    problems = []
    first_of: dict[str, int] = {}
    for number, record in _json_records(data, path):
        if not isinstance(record, dict):
            problems.append(f"record {number} is not an object")
            continue
        text = record.get(options.json_text_field)
        if not isinstance(text, str) or not text.strip():
            problems.append(f"record {number} has no text in field '{options.json_text_field}'")
            continue
        record_id = _valid_text(str(record.get(options.json_id_field, number)))
        if record_id in first_of:
            problems.append(f"record {number} repeats the id '{record_id}' of record {first_of[record_id]} "
                            "(the first is kept)")
            continue
        first_of[record_id] = number
        extra = {k: _valid_text(v) if isinstance(v, str) else v for k, v in record.items()
                 if k not in (options.json_text_field,) and _is_scalar(v)}
        title = _valid_text(str(record.get(options.json_title_field) or f"{_stem(path)} #{record_id}"))
        documents.append(_document(f"{doc_id}#{record_id}", title, _valid_text(text.strip()), path,
                                   path.suffix.lower().lstrip("."), extra))
    if not documents:
        raise IngestError("; ".join(problems[:3]) or "no records")
    return documents, problems


def _valid_text(text: str) -> str:
    """JSON may spell a lone UTF-16 surrogate (``"\\ud800"``), which no stored or printed text can hold:
    it becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


READERS: dict[str, Reader] = {
    ".txt": read_text,
    ".text": read_text,
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".rst": read_rst,
    ".rest": read_rst,
    ".adoc": read_asciidoc,
    ".asciidoc": read_asciidoc,
    ".html": read_html,
    ".htm": read_html,
    ".pdf": read_pdf,
    ".docx": read_docx,
    ".csv": read_delimited,
    ".tsv": read_delimited,
    ".xlsx": read_xlsx,
    ".json": read_json,
    ".jsonl": read_json,
    **{extension: read_markup for extension in _MARKUP_TITLES},
    **{extension: read_source for extension in SOURCE_EXTENSIONS},
}
