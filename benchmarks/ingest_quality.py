"""Real documents in, clean text out: ingestion of real-world files and the quality of the text it gives.

The files are not ours, so they are fetched, never committed (into ``--files``, once):
  * the source distributions of pypdf 7.1.0 (72 test PDFs: odd writers, encrypted, damaged, scanned with OCR)
    and python-docx 1.2.0 (47 .docx test files), from PyPI (``pip download --no-binary :all: --no-deps``);
  * Debian 12's documentation packages r-doc-pdf, gnuplot-doc and asymptote-doc (the R manuals, including the
    2,400-page reference manual, gnuplot's and Asymptote's manuals: TeX-made, with running headers, page
    numbers and hyphenation), python3.11-doc (530 HTML pages of Python's documentation) and debian-reference-en
    (the Debian Reference as a DocBook-made PDF and 15 HTML pages), with ``apt-get download``. Copies of one
    file under two paths are counted once.

Measured:
  1. ingestion as ``citesum index`` runs it (``ingest_file``): files ingested, skipped by reason, pages/s;
  2. PDF extraction, the libraries side by side on the same pages (each PDF cut to its first ``--max-pages``
     pages, so that the slow libraries finish): pypdf (plain: what citesum used before; and its layout mode),
     pdfminer.six, pdfplumber, pypdfium2 (plain text), and citesum (pypdfium2 in reading order, cleaned by
     ``citesum.ingest.pdf``). For each: pages/s and text quality —
       - passages ending inside a sentence: the text cut into citesum's 100-token passages (a line break ends
         a sentence for the chunker, as it must for lists and headings), the share of passages whose last
         character is not . ! ? : or ; (with closing quotes or brackets);
       - running headers, footers and page numbers left: the reference is found in pypdf's plain text (a
         different library from the one citesum uses): lines among the first or last two of a page that recur
         so (letters, with any number) on at least 3 pages and a quarter of the pages (headers, footers), and
         lines that are only a page number. One is "left" when the first or last 200 characters of that page's
         text in an output still hold it (its letters and numbers, or the number as a word); reported per 100
         pages and as a share of the output's lines;
       - words split by hyphenation: a word broken at a line end ("vis-" then "itors"), i.e. letters, a hyphen,
         a line break or space, and lower-case letters whose joined form is a word of the same document; the
         share of the output's words. (A word joined again but left with its hyphen, "vis-itors", is not
         counted: compounds such as "floating-point" look the same.)
  3. DOCX: the reader before (paragraphs, then every table at the end, no notes) and now (body order, tables
     in place, footnotes and endnotes): passages ending inside a sentence, characters, notes found.
  4. HTML (Python's documentation, made by Sphinx, which marks each page's main content as such: the
     reference): the reader before (all visible text), now (trafilatura's main content) and readability-lxml:
     word-level precision (the share of the output that is main content, not navigation, sidebars, footers)
     and recall (the share of the main content kept), on the pages as they are and stripped of their semantic
     mark-up (<main>, <nav>, role="main"...), as an older site would be. Held out: the Debian Reference's
     DocBook pages (the reference: its chapter, appendix or preface body without the table of contents),
     looked at only after trafilatura was chosen on the Sphinx pages.

The PDF cleaning's rules were written looking at pypdf's test files and some of the Debian manuals
(``SEEN_WHILE_TUNING``); ``held_out`` in the results gives the numbers of the Debian PDFs never looked at.

Run: python benchmarks/ingest_quality.py [--files .bench-cache/realfiles] [--max-pages 40]
Writes: benchmarks/results/ingest_quality.json
"""

from __future__ import annotations

import argparse
import hashlib
import io
import re
import signal
import subprocess
import sys
import tarfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, write_result  # noqa: E402

SDISTS = ["pypdf==7.1.0", "python-docx==1.2.0"]
DEBIAN_PACKAGES = ["r-doc-pdf", "gnuplot-doc", "asymptote-doc", "python3.11-doc", "debian-reference-en"]
#: the Debian PDFs whose text was looked at while the cleaning (citesum.ingest.pdf) was written and its rules
#: chosen; the other Debian PDFs are held out (``held_out`` in the results). All of pypdf's files count as seen.
SEEN_WHILE_TUNING = {"R-intro.pdf", "refman.pdf", "fullrefman.pdf", "gnuplot.pdf", "R-admin.pdf", "R-lang.pdf",
                     "asy-latex.pdf", "CAD.pdf"}
#: a library that takes longer than this on one (cut) PDF is counted as failing on it
PER_FILE_SECONDS = 120
EDGE_CHARS = 200
_NOT_KEPT = re.compile(r"[^a-z#]")
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-–—(\[]?\s*(\d{1,5}|[ivxlcdm]{1,7})\s*[-–—)\]]?$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"""[.!?:;]["'”’)\]]*$""")
#: a word broken at a line end: its parts with a line break or space after the hyphen, or PDFium's mark of
#: such a hyphen (U+FFFE, or U+0002 in some OCR layers) between them; "floating-point" with no space is a
#: compound, not a split
_SPLIT = re.compile(r"([A-Za-z]+)(?:-\s+|[\ufffe\x02]\s*)([a-z]+)")
_WORD = re.compile(r"[A-Za-z]+")


# ---- fetching the files ----------------------------------------------------------------------------------------
def fetch(folder: Path) -> dict[str, list[Path]]:
    """The real files by set: {"pypdf": PDFs, "docx": .docx, "debian-pdf": PDFs, "debian-html": HTML pages}."""
    sdists, debian = folder / "sdist", folder / "debian"
    if not (sdists / ".done").exists():
        sdists.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
                        "--dest", str(sdists), *SDISTS], check=True)
        for archive in sdists.glob("*.tar.gz"):
            with tarfile.open(archive) as tar:
                tar.extractall(sdists / "x", filter="data")
        (sdists / ".done").touch()
    sets = {"pypdf": sorted((sdists / "x").glob("pypdf-*/**/*.pdf")),
            "docx": sorted((sdists / "x").glob("python_docx-*/**/*.docx"))}
    if not (debian / ".done").exists():
        debian.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(["apt-get", "download", *DEBIAN_PACKAGES], cwd=debian, check=True, capture_output=True)
            for package in debian.glob("*.deb"):
                subprocess.run(["dpkg-deb", "-x", str(package), str(debian / "x")], check=True)
            (debian / ".done").touch()
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"note: the Debian documentation could not be fetched ({exc}); measuring the PyPI files only")
            return sets
    sets["debian-pdf"] = _unique(sorted((debian / "x").rglob("*.pdf")))
    sets["debian-html"] = _unique(sorted((debian / "x" / "usr/share/doc/python3.11/html").rglob("*.html")))
    sets["docbook-html"] = _unique(sorted((debian / "x" / "usr/share/debian-reference").glob("*.en.html")))
    return sets


def _unique(paths: list[Path]) -> list[Path]:
    seen: set[str] = set()
    out = []
    for path in paths:
        if path.is_symlink() or not path.is_file():
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(path)
    return out


# ---- 1. ingestion as citesum runs it ---------------------------------------------------------------------------
def ingestion(paths: list[Path]) -> dict[str, Any]:
    from citesum.ingest import IngestOptions, ingest_file

    reasons: Counter[str] = Counter()
    ingested = pages = 0
    skipped = []
    start = time.perf_counter()
    for path in paths:
        documents, report = ingest_file(path, path.name, IngestOptions())
        if report.status == "ingested":
            ingested += 1
            pages += sum(int(d.metadata.get("pages", 0)) for d in documents)
        else:
            reasons[re.sub(r"\s*\(.*", "", report.reason)] += 1
            skipped.append({"file": path.name, "reason": report.reason})
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {"files": len(paths), "ingested": ingested, "skipped": len(skipped),
                           "skipped_by_reason": dict(reasons.most_common()), "skipped_files": skipped,
                           "seconds": round(seconds, 2), "files_per_s": round(len(paths) / seconds, 1)}
    if pages:
        out |= {"pages": pages, "pages_per_s": round(pages / seconds, 1)}
    return out


# ---- 2. PDF libraries side by side -----------------------------------------------------------------------------
def _cut(data: bytes, max_pages: int) -> tuple[bytes, int] | None:
    """The PDF's first ``max_pages`` pages as a new (unencrypted) PDF, or None when PDFium cannot open it."""
    import pypdfium2

    try:
        source = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError:
        return None
    pages = min(len(source), max_pages)
    if pages == 0:
        return None
    cut = pypdfium2.PdfDocument.new()
    cut.import_pages(source, list(range(pages)))
    buffer = io.BytesIO()
    cut.save(buffer)
    cut.close()
    source.close()
    return buffer.getvalue(), pages


def _pypdf(mode: str) -> Callable[[bytes], list[str]]:
    def extract(data: bytes) -> list[str]:
        from pypdf import PdfReader

        return [page.extract_text(extraction_mode=mode) or "" for page in PdfReader(io.BytesIO(data)).pages]
    return extract


def _pdfminer(data: bytes) -> list[str]:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextContainer

    return ["".join(element.get_text() for element in page if isinstance(element, LTTextContainer))
            for page in extract_pages(io.BytesIO(data))]


def _pdfplumber(data: bytes) -> list[str]:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return [page.extract_text() or "" for page in pdf.pages]


def _pdfium(data: bytes) -> list[str]:
    import pypdfium2

    document = pypdfium2.PdfDocument(data)
    try:
        return [document[n].get_textpage().get_text_range() for n in range(len(document))]
    finally:
        document.close()


def _citesum(data: bytes) -> tuple[str, list[int]]:
    from citesum.ingest.pdf import clean_pages, read_pages

    read = read_pages(data)
    clean = clean_pages(read.pages, read.display_lines)
    return clean.text, clean.page_starts


LIBRARIES: dict[str, Callable[[bytes], Any]] = {
    "pypdf (plain; citesum before)": _pypdf("plain"), "pypdf (layout mode)": _pypdf("layout"),
    "pdfminer.six": _pdfminer, "pdfplumber": _pdfplumber, "pypdfium2 (plain)": _pdfium, "citesum (now)": _citesum,
}
LICENCES = {"pypdf (plain; citesum before)": "BSD-3-Clause", "pypdf (layout mode)": "BSD-3-Clause",
            "pdfminer.six": "MIT", "pdfplumber": "MIT", "pypdfium2 (plain)": "Apache-2.0 or BSD-3-Clause (PDFium)",
            "citesum (now)": "pypdfium2: Apache-2.0 or BSD-3-Clause"}


class _Timeout(Exception):
    pass


def _timed(extract: Callable[[bytes], Any], data: bytes) -> tuple[Any, float]:
    def expire(signum: int, frame: Any) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(PER_FILE_SECONDS)
    try:
        start = time.perf_counter()
        result = extract(data)
        return result, time.perf_counter() - start
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _page_texts(result: Any) -> tuple[str, list[str]]:
    """(the whole text, each page's text) of a library's output; raw pages are joined by a blank line, as
    citesum joined pypdf's pages before."""
    if isinstance(result, tuple):
        text, starts = result
        ends = starts[1:] + [len(text)]
        return text, [text[start:end] for start, end in zip(starts, ends)]
    return "\n\n".join(page.strip() for page in result if page.strip()), list(result)


def _edge_key(text: str) -> str:
    """A line as it recurs from page to page: lower-case letters, each run of digits as "#" (a page number, a
    date), nothing else."""
    return _NOT_KEPT.sub("", re.sub(r"\d+", "#", text.lower()))


def reference_edges(pages: list[str]) -> list[tuple[set[str], set[str]]]:
    """For each page: (the keys of its running headers/footers, its page numbers) found in pypdf's text."""
    lines = [[line.strip() for line in page.splitlines() if line.strip()] for page in pages]
    seen: defaultdict[str, set[int]] = defaultdict(set)
    for number, page in enumerate(lines):
        for line in page[:2] + page[-2:]:
            key = _edge_key(line)
            if sum(c.isalpha() for c in key) >= 4:
                seen[key].add(number)
    running = {key for key, where in seen.items() if len(where) >= 3 and len(where) >= 0.25 * len(pages)}
    out = []
    for page in lines:
        edges = page[:2] + page[-2:]
        headers = {_edge_key(line) for line in edges} & running
        numbers = {match.group(1) for line in edges if (match := _PAGE_NUMBER.match(line))}
        out.append((headers, numbers))
    return out


def quality(text: str, pages: list[str], reference: list[tuple[set[str], set[str]]]) -> dict[str, float]:
    from citesum.chunking import chunk_passages
    from citesum.tokens import get_tokenizer
    from citesum.types import Document

    passages = chunk_passages(Document(id="d", title="d", text=text), get_tokenizer())
    inside = sum(not _SENTENCE_END.search(p.text) for p in passages)
    left = 0
    for page, (headers, numbers) in zip(pages, reference):
        edges = page.strip()[:EDGE_CHARS] + "\n" + page.strip()[-EDGE_CHARS:]
        keyed = _edge_key(edges)
        left += sum(header in keyed for header in headers)
        left += sum(bool(re.search(rf"(?<![\w.,]){re.escape(n)}(?![\w,]|\.\d)", edges)) for n in numbers)
    words = _WORD.findall(text)
    vocabulary = {word.lower() for word in words}
    split = sum((a + b).lower() in vocabulary for a, b in _SPLIT.findall(text))
    lines = sum(1 for line in text.splitlines() if line.strip())
    return {"passages": len(passages), "passages_ending_inside_a_sentence": inside,
            "edge_lines_left": left, "lines": lines, "words": len(words), "hyphen_split_words": split}


def compare_pdfs(paths: list[Path], max_pages: int) -> tuple[dict[Path, dict[str, Counter[str]]], dict[str, list[str]]]:
    """Every library on the same cut PDFs: {file: {library: its counts}} for the files every library read,
    and each library's failures."""
    per_file: dict[Path, dict[str, Counter[str]]] = {}
    failures: dict[str, list[str]] = {name: [] for name in LIBRARIES}
    for path in paths:
        cut = _cut(path.read_bytes(), max_pages)
        if cut is None:
            continue
        data, page_count = cut
        outputs = {}
        for name, extract in LIBRARIES.items():
            try:
                outputs[name] = _timed(extract, data)
            except _Timeout:
                failures[name].append(f"{path.name}: over {PER_FILE_SECONDS} s")
            except Exception as exc:  # noqa: BLE001 - each library fails in its own ways on odd files
                failures[name].append(f"{path.name}: {type(exc).__name__}: {str(exc)[:80]}")
        if len(outputs) < len(LIBRARIES):
            continue
        reference = reference_edges(outputs["pypdf (plain; citesum before)"][0])
        per_file[path] = {}
        for name, (result, seconds) in outputs.items():
            text, pages = _page_texts(result)
            counts = Counter(quality(text, pages, reference) | {"pages": page_count, "files": 1})
            counts["seconds"] += seconds
            per_file[path][name] = counts
    return per_file, failures


def summarize_libraries(per_file: dict[Path, dict[str, Counter[str]]], files: list[Path],
                        failures: dict[str, list[str]] | None = None) -> dict[str, Any]:
    out = {}
    for name in LIBRARIES:
        total: Counter[str] = Counter()
        for path in files:
            if path in per_file:
                total.update(per_file[path][name])
        out[name] = _rates(total) | {"licence": LICENCES[name]}
        if failures is not None:
            out[name]["failed_on"] = failures[name]
    return out


def _rates(total: Counter[str]) -> dict[str, Any]:
    pages = total["pages"] or 1
    return {"files": total["files"], "pages": total["pages"], "seconds": round(total["seconds"], 2),
            "pages_per_s": round(total["pages"] / total["seconds"], 1) if total["seconds"] else None,
            "passages_ending_inside_a_sentence": _share(total["passages_ending_inside_a_sentence"],
                                                        total["passages"]),
            "headers_footers_page_numbers_left_per_100_pages": round(100 * total["edge_lines_left"] / pages, 1),
            "headers_footers_page_numbers_share_of_lines": _share(total["edge_lines_left"], total["lines"]),
            "hyphen_split_words_share": _share(total["hyphen_split_words"], total["words"], digits=5),
            "hyphen_split_words": total["hyphen_split_words"]}


def _share(part: float, whole: float, digits: int = 4) -> float | None:
    return round(part / whole, digits) if whole else None


# ---- 3. DOCX before and after ----------------------------------------------------------------------------------
def _docx_before(data: bytes) -> str:
    """citesum's DOCX reader before: paragraphs, then the rows of every table, no notes."""
    import docx

    document = docx.Document(io.BytesIO(data))
    blocks = [p.text for p in document.paragraphs if p.text.strip()]
    for table in document.tables:
        for row in table.rows:
            blocks.append(" | ".join(cell.text.strip() for cell in row.cells))
    return "\n".join(blocks)


def compare_docx(paths: list[Path]) -> dict[str, Any]:
    from citesum.ingest import IngestOptions
    from citesum.ingest.formats import read_docx

    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    for path in paths:
        data = path.read_bytes()
        try:
            old = _docx_before(data)
            new = read_docx(data, path.name, path, IngestOptions())[0][0].text
        except Exception:  # noqa: BLE001 - a file neither reads is left out of the comparison (counted in 1.)
            continue
        for total, text in ((before, old), (after, new)):
            q = quality(text, [], [])
            total.update({"files": 1, "characters": len(text), "passages": q["passages"],
                          "inside": q["passages_ending_inside_a_sentence"],
                          "merged_cell_repeats": len(re.findall(r"(?m)(\b[^|\n]+?) \| \1(?= \||$)", text))})
        after["files_with_notes"] += "\nNotes\n" in new
    return {label: {"files": total["files"], "characters": total["characters"],
                    "passages_ending_inside_a_sentence": _share(total["inside"], total["passages"]),
                    "repeated_merged_cells": total["merged_cell_repeats"],
                    **({"files_with_footnotes_or_endnotes": total["files_with_notes"]} if label == "now" else {})}
            for label, total in (("before", before), ("now", after))}


# ---- 4. HTML before and after ----------------------------------------------------------------------------------
def _sphinx_main(html: str) -> str | None:
    """The text of a Sphinx page's main content, as its writer marked it (``<div role="main">``): the reference
    of what a reader should keep; None for a page without one."""
    return _marked_text(html, '//div[@role="main"]', [])


def _docbook_main(html: str) -> str | None:
    """The text of a DocBook page's chapter (appendix, preface, book) without its table of contents: what is
    left of the page once its navigation header and footer are taken away."""
    return _marked_text(html, '//div[@class="chapter" or @class="appendix" or @class="preface" or @class="book"]',
                        ['.//div[@class="toc"]'])


def _marked_text(html: str, main: str, without: list[str]) -> str | None:
    import lxml.html

    from citesum.ingest.formats import html_to_text

    found = lxml.html.fromstring(html.encode()).xpath(main)  # bytes: XHTML pages declare their encoding
    if not found:
        return None
    for path in without:
        for element in found[0].xpath(path):
            element.getparent().remove(element)
    return html_to_text(lxml.html.tostring(found[0], encoding="unicode"))[1]


def _readability(html: str) -> str:
    from readability import Document as Readable

    from citesum.ingest.formats import html_to_text

    return html_to_text(Readable(html).summary(html_partial=True))[1]


def _without_landmarks(html: str) -> str:
    """The page as an older site would write it: no <main>, <article>, <nav>, <header>, <footer>, <aside> or
    role="main" telling a reader where the content is."""
    html = html.replace('role="main"', "")
    return re.sub(r"<(/?)(?:main|article|nav|header|footer|aside)\b", r"<\1div", html)


def compare_html(paths: list[Path], reference_of: Callable[[str], str | None]) -> dict[str, Any]:
    """Word-level precision and recall (as CleanEval scores boilerplate removal) of each reader's text against
    the page's own main content: precision, the share of the output's words that are main content; recall,
    the share of the main content's words in the output. Also on the pages stripped of their semantic
    mark-up, where a reader has to find the content by itself."""
    from citesum.ingest import IngestOptions
    from citesum.ingest.base import decode_text
    from citesum.ingest.formats import html_to_text, read_html

    readers: dict[str, Callable[[str], str]] = {
        "all visible text (citesum before)": lambda html: html_to_text(html)[1],
        "citesum now (trafilatura)": lambda html: read_html(html.encode(), "p", Path("p.html"),
                                                            IngestOptions())[0][0].text}
    try:
        import readability  # noqa: F401 - in the "compare" extra

        readers["readability-lxml"] = _readability
    except ImportError:
        print("note: readability-lxml is not installed (pip install -e '.[compare]'); left out")
    counts: Counter[str] = Counter()
    pages = 0
    for path in paths:
        html = decode_text(path.read_bytes())
        main = reference_of(html)
        if main is None:
            continue
        pages += 1
        reference = Counter(word.lower() for word in re.findall(r"\w+", main))
        for variant, page in (("", html), (" (no semantic mark-up)", _without_landmarks(html))):
            for name, read in readers.items():
                start = time.perf_counter()
                output = Counter(word.lower() for word in re.findall(r"\w+", read(page)))
                counts[f"{name}{variant}|seconds"] += time.perf_counter() - start
                counts[f"{name}{variant}|shared"] += sum((output & reference).values())
                counts[f"{name}{variant}|output"] += sum(output.values())
                counts[f"{name}{variant}|reference"] += sum(reference.values())
    names = sorted({key.split("|")[0] for key in counts})
    return {"pages": pages, "readers": {name: {
        "precision": _share(counts[f"{name}|shared"], counts[f"{name}|output"], 3),
        "recall": _share(counts[f"{name}|shared"], counts[f"{name}|reference"], 3),
        "ms_per_page": round(1000 * counts[f"{name}|seconds"] / pages, 1)} for name in names}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=Path, default=ROOT / ".bench-cache" / "realfiles")
    parser.add_argument("--max-pages", type=int, default=40, help="pages of each PDF the libraries compare on")
    args = parser.parse_args(argv)
    sets = fetch(args.files)
    print({name: len(paths) for name, paths in sets.items()})
    result: dict[str, Any] = {"files": {name: len(paths) for name, paths in sets.items()},
                              "max_pages": args.max_pages, "ingestion": {}}
    for name, paths in sets.items():
        result["ingestion"][name] = ingestion(paths)
        print(name, {k: v for k, v in result["ingestion"][name].items() if k != "skipped_files"})
    pdfs = sets["pypdf"] + sets.get("debian-pdf", [])
    per_file, failures = compare_pdfs(pdfs, args.max_pages)
    result["pdf_libraries"] = summarize_libraries(per_file, pdfs, failures)
    held_out = [p for p in sets.get("debian-pdf", []) if p.name not in SEEN_WHILE_TUNING]
    result["held_out"] = {"files": [p.name for p in held_out],
                          "pdf_libraries": summarize_libraries(per_file, held_out)}
    result["per_file"] = {path.name: {name: dict(counts) for name, counts in libraries.items()
                                      if name in ("pypdf (plain; citesum before)", "citesum (now)")}
                          for path, libraries in per_file.items()}
    for name, row in result["pdf_libraries"].items():
        print(f"{name:32s}", {k: v for k, v in row.items() if k not in ("failed_on", "licence")})
    result["docx"] = compare_docx(sets["docx"])
    print("docx", result["docx"])
    if "debian-html" in sets:
        result["html"] = compare_html(sets["debian-html"], _sphinx_main)
        print("html", result["html"])
        # the HTML reader was chosen on the Sphinx pages above: the DocBook pages (another generator, another
        # layout) are held out
        result["held_out"]["html_docbook"] = compare_html(sets["docbook-html"], _docbook_main)
        print("html (DocBook, held out)", result["held_out"]["html_docbook"])
    write_result("ingest_quality", result)


if __name__ == "__main__":
    main()
