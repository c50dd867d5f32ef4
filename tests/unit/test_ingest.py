from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from citesum.ingest import IngestOptions, ingest_paths
from citesum.ingest.base import decode_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fixtures import make_docx, make_encrypted_pdf, make_pdf, make_xlsx, make_zip_bomb  # noqa: E402


def _by_name(report) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {Path(f.path).name: f for f in report.files}


def test_every_supported_format_is_ingested(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("The harbour opened in 1887. It still serves ferries.", encoding="utf-8")
    (tmp_path / "notes.md").write_text("# Harbour notes\n\nThe **harbour** has *three* piers.\n\n- one\n- two\n")
    (tmp_path / "page.html").write_text(
        "<html><head><title>Harbour page</title><style>p {color: red}</style></head>"
        "<body><script>var x = 1;</script><p>Ferries leave every 20 minutes.</p></body></html>"
    )
    (tmp_path / "report.pdf").write_bytes(make_pdf(["The harbour budget is 4 million.", "Approved in May."]))
    make_docx(tmp_path / "memo.docx", ["The ferry fleet has 12 boats."], table=[["boat", "seats"], ["Aurora", "300"]])
    (tmp_path / "table.csv").write_text("boat,seats\nAurora,300\nBorealis,250\n")
    (tmp_path / "table.tsv").write_text("boat\tseats\nAurora\t300\n")
    make_xlsx(tmp_path / "sales.xlsx", ["month", "tickets"], [["May", 1200], ["June", 1500]])
    (tmp_path / "records.jsonl").write_text(
        json.dumps({"id": "r1", "title": "First", "text": "Record one text."}) + "\n"
        + json.dumps({"id": "r2", "text": "Record two text."}) + "\n"
    )
    (tmp_path / "single.json").write_text(json.dumps({"id": "only", "text": "A single JSON object."}))

    documents, report = ingest_paths([tmp_path])
    by_id = {d.id: d for d in documents}
    assert not report.skipped, report.to_json()
    assert by_id["plain.txt"].text.startswith("The harbour opened")
    assert by_id["notes.md"].title == "Harbour notes"
    assert "**" not in by_id["notes.md"].text and "three" in by_id["notes.md"].text
    assert by_id["page.html"].title == "Harbour page"
    assert by_id["page.html"].text == "Ferries leave every 20 minutes."  # no script, no style
    assert "4 million" in by_id["report.pdf"].text
    assert "12 boats" in by_id["memo.docx"].text and "Aurora | 300" in by_id["memo.docx"].text
    assert by_id["table.csv"].text.splitlines() == ["boat | seats", "boat: Aurora | seats: 300",
                                                     "boat: Borealis | seats: 250"]
    assert "boat: Aurora | seats: 300" in by_id["table.tsv"].text
    assert "month: June | tickets: 1500" in by_id["sales.xlsx#Sales"].text
    assert by_id["records.jsonl#r1"].title == "First" and by_id["records.jsonl#r2"].text == "Record two text."
    assert by_id["single.json#only"].text == "A single JSON object."
    assert report.document_count == len(documents) == 11


def test_tabular_blocks_repeat_the_header(tmp_path: Path) -> None:
    rows = "\n".join(f"{i},{i * 10}" for i in range(7))
    (tmp_path / "t.csv").write_text("id,value\n" + rows + "\n")
    [document], _ = ingest_paths([tmp_path], options=IngestOptions(rows_per_block=3))
    blocks = document.text.split("\n\n")
    assert len(blocks) == 3
    assert all(block.startswith("id | value\n") for block in blocks)


def test_json_fields_are_configurable_and_bad_records_reported(tmp_path: Path) -> None:
    (tmp_path / "x.jsonl").write_text(
        json.dumps({"key": "a", "body": "Alpha text.", "name": "Alpha"}) + "\n"
        + json.dumps({"key": "b", "body": ""}) + "\n" + json.dumps([1, 2]) + "\n"
    )
    options = IngestOptions(json_id_field="key", json_text_field="body", json_title_field="name")
    documents, report = ingest_paths([tmp_path], options=options)
    assert [(d.id, d.title) for d in documents] == [("x.jsonl#a", "Alpha")]
    [entry] = report.files
    assert entry.status == "ingested" and "2 part(s) left out" in entry.reason and "record 3" in entry.reason


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.txt", b"", "empty file"),
        ("blank.md", b"   \n\n  ", "no text content"),
        ("binary.txt", bytes(range(256)) * 20, "binary content"),
        ("corrupt.pdf", b"%PDF-1.4\n1 0 obj garbage", "corrupt PDF"),
        ("random.docx", os.urandom(2048), "corrupt DOCX"),
        ("random.xlsx", b"PK\x03\x04 not really a zip", "corrupt XLSX"),
        ("bad.json", b'{"id": 1, "text": ', "invalid JSON"),
        ("bad.jsonl", b'{"text": "ok"}\n{broken\n', "line 2: invalid JSON"),
        ("onlyheader.csv", b"a,b,c\n", "no data rows"),
        ("image.png", b"\x89PNG\r\n", "unsupported format '.png'"),
        # a new user's trial: a page of 2 MB of "a a a ..." became two thirds of the index's units
        ("page.html", b"<script>alert(1)</script><p>" + b"a " * 1_000_000 + b"</p>",
         "repetitive content: 1,000,000 words, 1 of them distinct"),
        ("log.txt", b"ok ok error\n" * 5_000, "repetitive content: 15,000 words, 2 of them distinct"),
    ],
)
def test_bad_files_are_skipped_with_reason_and_the_run_goes_on(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    (tmp_path / name).write_bytes(content)
    (tmp_path / "good.txt").write_text("A good document survives.")
    documents, report = ingest_paths([tmp_path])
    assert [d.id for d in documents] == ["good.txt"]
    entry = _by_name(report)[name]
    assert entry.status == "skipped"
    assert reason in entry.reason


def test_a_readers_own_fault_on_one_file_is_reported_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citesum.ingest import formats

    # a reader's bug on an odd file (a <pre> in a table's last cell once raised IndexError in the Markdown reader)
    # ended the whole index run: the file is reported, with the error, and the others are read
    def failing(data: bytes, doc_id: str, path: Path, options: IngestOptions) -> formats.Read:
        raise IndexError("list index out of range")

    monkeypatch.setitem(formats.READERS, ".md", failing)
    (tmp_path / "odd.md").write_text("| a | b |\n|---|---|\n| 1 | 2 |\n", encoding="utf-8")
    (tmp_path / "good.txt").write_text("A good document survives.")
    documents, report = ingest_paths([tmp_path])
    assert [d.id for d in documents] == ["good.txt"]
    entry = _by_name(report)["odd.md"]
    assert entry.status == "skipped" and "md reader failed on it (IndexError)" in entry.reason


def test_encrypted_pdf_is_reported(tmp_path: Path) -> None:
    (tmp_path / "locked.pdf").write_bytes(make_encrypted_pdf(["Top secret."]))
    documents, report = ingest_paths([tmp_path])
    assert documents == []
    assert "encrypted PDF" in report.files[0].reason


def test_a_pdf_cut_short_or_damaged_says_which_in_words(tmp_path: Path) -> None:
    from fixtures import make_pdf

    whole = make_pdf(["A page of the manual, read whole."] * 40)
    (tmp_path / "cut.pdf").write_bytes(whole[: len(whole) // 2])  # a download that did not finish
    (tmp_path / "damaged.pdf").write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 300 + b"\n%%EOF\n")
    (tmp_path / "good.txt").write_text("A good document survives.")
    (tmp_path / "notes.pdf").write_text("A text file named .pdf, cut short or not.")  # (a new user's trial)
    documents, report = ingest_paths([tmp_path])
    reasons = {Path(entry.path).name: entry.reason for entry in report.files if entry.status == "skipped"}
    assert reasons["notes.pdf"].startswith("not a PDF (it does not start as a PDF does"), reasons
    # before: "corrupt PDF (Failed to load document (PDFium: Data format error).)" for both
    assert "cut short" in reasons["cut.pdf"] and "PDFium:" not in reasons["cut.pdf"], reasons
    assert reasons["damaged.pdf"] == "corrupt PDF (PDFium cannot read it: data format error)", reasons
    assert [d.id for d in documents] == ["good.txt"]


def test_pdf_encrypted_with_empty_password_is_read(tmp_path: Path) -> None:
    (tmp_path / "open.pdf").write_bytes(make_encrypted_pdf(["Readable anyway."], password=""))
    documents, _ = ingest_paths([tmp_path])
    assert "Readable anyway." in documents[0].text


def test_docx_zip_bomb_is_refused(tmp_path: Path) -> None:
    make_zip_bomb(tmp_path / "bomb.docx", inflated_bytes=8 << 20)
    documents, report = ingest_paths([tmp_path], options=IngestOptions(max_uncompressed_bytes=4 << 20))
    assert documents == []
    assert "zip bomb" in report.files[0].reason
    # the ratio alone is enough, whatever the absolute limit
    documents, report = ingest_paths([tmp_path])
    assert "zip bomb" in report.files[0].reason


def test_file_over_size_limit_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("word " * 1000)
    documents, report = ingest_paths([tmp_path], options=IngestOptions(max_bytes=1000))
    assert documents == []
    assert "over the 1,000-byte limit" in report.files[0].reason


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Café crème brûlée, naïve façade — déjà vu à la carte.", "cp1252"),
        ("Привет, мир! Это проверка кодировки для русского текста.", "cp1251"),
        ("Grüße aus München, schöne Straße.", "latin-1"),
        ("UTF-16 text with a BOM: ünïcödé.", "utf-16"),
        ("UTF-8 with BOM: ✓ naïve.", "utf-8-sig"),
        ("こんにちは世界、これは日本語のテストです。", "shift_jis"),
    ],
)
def test_non_utf8_text_is_decoded(text: str, encoding: str) -> None:
    assert decode_text(text.encode(encoding)) == text


def test_utf8_with_lines_of_a_legacy_code_page_reads_both() -> None:
    # a new user's trial: UTF-8 with a Latin-1 line pasted in was read as cp1250 ("naïve" became "naĂŻve")
    mixed = "A naïve café, in UTF-8.\n".encode() + "Un résumé déjà vu, en Latin-1.\n".encode("latin-1")
    assert decode_text(mixed) == "A naïve café, in UTF-8.\nUn résumé déjà vu, en Latin-1.\n"


def test_a_text_ascii_but_for_a_stray_byte_reads_it_in_cp1252() -> None:
    # lp_solve's FAQ (HTML, no charset declared) holds one no-break space, which detection read as cp775's "Ā";
    # CVS's FAQ one acute accent used as a quote, read as cp932's half-width "ｴ"
    faq = ("<p>Link with the library and its header files.</p>\n" * 40 + "<p>If you use other header files, you "
           "need these also.\xa0 Including these solves the link errors.</p>\n").encode("cp1252")
    assert "need these also.\xa0 Including" in decode_text(faq)
    cvs = ("In CVSROOT, make `history\xb4 group or world writeable, or CVS cannot log what it did.\n"
           + "Each command appends a line to the history file.\n" * 200).encode("cp1252")
    assert "`history\xb4 group" in decode_text(cvs)
    # a byte cp1252 leaves undefined is replaced, not read in a code page of another script
    assert decode_text(b"Version 2.1 of the notes.\n" * 30 + b"Its \x81 stands alone.\n").endswith(
        "Its \ufffd stands alone.\n")


def test_undecodable_bytes_never_crash(tmp_path: Path) -> None:
    (tmp_path / "mixed.txt").write_bytes("valid start ".encode() + b"\xff\xfe\xfa mixed \x81\x8d bytes end.")
    documents, report = ingest_paths([tmp_path])
    assert report.files[0].status == "ingested"
    assert documents[0].text.startswith("valid start")


def test_symlink_loop_and_broken_link_are_reported(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("Inside the folder.")
    (tmp_path / "sub" / "loop").symlink_to(tmp_path)
    (tmp_path / "self").symlink_to(tmp_path / "self")
    (tmp_path / "dangling.txt").symlink_to(tmp_path / "missing.txt")
    documents, report = ingest_paths([tmp_path])
    assert [d.id for d in documents] == ["sub/a.txt"]
    reasons = {Path(f.path).name: f.reason for f in report.skipped}
    assert "symlink loop" in reasons["loop"]
    assert "symlink loop" in reasons["self"]
    assert reasons["dangling.txt"] == "broken symlink"


def test_include_exclude_globs_and_missing_path(tmp_path: Path) -> None:
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "a.txt").write_text("Alpha.")
    (tmp_path / "keep" / "b.md").write_text("Beta.")
    (tmp_path / "drop.txt").write_text("Gamma.")
    (tmp_path / ".hidden.txt").write_text("Hidden.")
    documents, _ = ingest_paths([tmp_path], include=["keep/*"], exclude=["*.md"])
    assert [d.id for d in documents] == ["keep/a.txt"]
    _, report = ingest_paths([tmp_path / "nope"])
    assert report.files[0].reason == "no such file or folder"


def test_unreadable_file_is_reported(tmp_path: Path) -> None:
    """Permissions are checked for real: as root, the ingestion runs in a child process as 'nobody'."""
    folder = Path(tempfile.mkdtemp(prefix="citesum-perm-"))
    try:
        os.chmod(folder, 0o755)
        (folder / "open.txt").write_text("Readable text.")
        (folder / "closed.txt").write_text("Unreadable text.")
        os.chmod(folder / "open.txt", 0o644)
        os.chmod(folder / "closed.txt", 0o000)
        # As root, permission bits are not enforced: the child imports citesum, then drops to 'nobody'.
        code = (
            "import json, os\nfrom citesum.ingest import ingest_paths\n"
            "if os.geteuid() == 0:\n    os.setgid(65534)\n    os.setuid(65534)\n"
            f"docs, report = ingest_paths([{str(folder)!r}])\n"
            "print(json.dumps([[d.id for d in docs], json.loads(report.to_json())['files']]))"
        )
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True)
        ids, files = json.loads(result.stdout)
        assert ids == ["open.txt"]
        closed = next(f for f in files if f["path"].endswith("closed.txt"))
        assert closed["status"] == "skipped" and closed["reason"] == "permission denied"
    finally:
        os.chmod(folder / "closed.txt", 0o644)
        for file in folder.iterdir():
            file.unlink()
        folder.rmdir()


def test_duplicate_ids_across_roots_are_reported(tmp_path: Path) -> None:
    for root in ("one", "two"):
        (tmp_path / root).mkdir()
        (tmp_path / root / "same.txt").write_text(f"Text in {root}.")
    documents, report = ingest_paths([tmp_path / "one", tmp_path / "two"])
    assert len(documents) == 1
    assert "already taken" in report.skipped[0].reason


def test_documents_stream_as_their_files_are_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """iter_documents parses a batch of files when its documents are asked for, and the report it fills is, once
    the stream ends, what ingest_paths reports."""
    import citesum.ingest as ingest
    from citesum.ingest import FILES_PER_TASK, IngestReport, iter_documents

    for i in range(40):
        (tmp_path / f"doc{i:02d}.txt").write_text(f"Document {i} about the harbour.", encoding="utf-8")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    parsed = []
    real = ingest.ingest_file
    monkeypatch.setattr(ingest, "ingest_file", lambda path, *args: parsed.append(path) or real(path, *args))
    report = IngestReport()
    stream = iter_documents([tmp_path], report)
    first = next(stream)
    assert first.id == "doc00.txt" and len(parsed) == FILES_PER_TASK < 41  # one batch of files read, not the folder
    assert [Path(f.path).name for f in report.files] == ["broken.pdf"]  # a file's line once its documents are out
    rest = list(stream)
    assert len(parsed) == 41
    documents, whole = ingest_paths([tmp_path])
    assert [first, *rest] == documents and len(documents) == 40
    assert report.to_json() == whole.to_json() and [f.path for f in report.skipped] == [str(tmp_path / "broken.pdf")]


def test_the_html_cleaner_is_a_direct_dependency() -> None:
    """HTML ingestion needs lxml_html_clean (trafilatura's justext imports it). justext asks for it as
    lxml[html_clean], while lxml names that extra html-clean: a pip that does not normalize extra names (23.2,
    Python 3.11's) installs no cleaner, so citesum asks for it by name."""
    import re
    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    # a requirement's name, normalized as PyPI does (lxml_html_clean = lxml-html-clean)
    names = {re.sub(r"[-_.]+", "-", re.split(r"[^A-Za-z0-9._-]", requirement, maxsplit=1)[0]).lower()
             for requirement in pyproject["project"]["dependencies"]}
    assert "lxml-html-clean" in names
    import lxml_html_clean  # noqa: F401  (installed: the HTML reader can clean)


def test_plain_text_files_without_an_extension_are_read_and_binary_ones_are_not(tmp_path: Path) -> None:
    """/usr/share/doc is full of them: README, NEWS, README.Debian. Before, each was an 'unsupported format'."""
    from citesum.ingest import ingest_paths

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "README").write_text("Avahi notes\n===========\n\nAvahi finds services on a local network.\n")
    (folder / "README.FHS").write_text("The files of this package follow the Filesystem Hierarchy Standard.\n")
    # a conventional name after the package's, as a user copies it out of /usr/share/doc/openssh-client
    (folder / "openssh-README.Debian").write_text("Keys in ~/.ssh are ignored when the folder is group-writable.\n")
    (folder / "data").write_bytes(b"\x00\x01\x02binary\x00" * 50)
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / "my-notes.Debian").write_text("Not a conventional name after its dash.\n")
    # a conventional name as the extension: minicom ships "minicom.FAQ" (a new user's trial: it was skipped)
    (folder / "minicom.FAQ").write_text("Q: Minicom says the modem is already online. Why?\n")
    (folder / "core.FAQ").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 200)
    # written in capitals only: a Debian package's "foo.install" is no INSTALL file (a fresh-eyes review)
    (folder / "foo.install").write_text("usr/bin/foo\n")
    documents, report = ingest_paths([folder])
    assert {d.id: d.title for d in documents} == {"README": "Avahi notes", "README.FHS": "README.FHS",
                                                  "openssh-README.Debian": "openssh-README.Debian",
                                                  "minicom.FAQ": "minicom.FAQ"}
    assert all(d.format == "txt" for d in documents)
    reasons = {Path(f.path).name: f.reason for f in report.skipped}
    assert reasons == {"data": "binary content, not text", "photo.png": "unsupported format '.png'",
                       "my-notes.Debian": "unsupported format '.Debian'", "core.FAQ": "binary content, not text",
                       "foo.install": "unsupported format '.install'"}


def test_a_faq_posted_to_usenet_is_titled_by_its_subject(tmp_path: Path) -> None:
    """nmh's FAQ (a new user's trial) opens with the headers it was posted under; it was titled "nmh-FAQ"."""
    import gzip

    from citesum.ingest import ingest_paths

    faq = ("Newsgroups: comp.mail.mh,comp.answers,news.answers\n"
           "Subject: MH Frequently Asked Questions (FAQ)\n with Answers\n"
           "Summary: This document answers Frequently Asked Questions about MH, a\n"
           "\t sophisticated mail interface.\nFrom: Bill Wohler <wohler@newt.com>\n\n"
           "  This is a living list of frequently asked questions on the mailer MH.\n")
    (tmp_path / "nmh-FAQ.gz").write_bytes(gzip.compress(faq.encode()))
    (tmp_path / "notes.txt").write_text("Subject: one line of a note is no header block.\n\nIt says so.\n")
    documents, _ = ingest_paths([tmp_path])
    assert {d.id: d.title for d in documents} == {"nmh-FAQ.gz": "MH Frequently Asked Questions (FAQ) with Answers",
                                                  "notes.txt": "notes"}


def test_gzipped_files_are_read_as_the_files_they_hold_and_bad_ones_are_named(tmp_path: Path) -> None:
    """Debian gzips its README, FAQ and changelog files and many manuals: before, each was 'binary content'."""
    import gzip

    from citesum.ingest import ingest_paths

    folder = tmp_path / "doc"
    folder.mkdir()
    faq = "Frequently Asked Questions about lsof\n\nlsof lists the files that processes have open.\n"
    (folder / "00FAQ.gz").write_bytes(gzip.compress(faq.encode()))
    (folder / "README.md.gz").write_bytes(gzip.compress(b"# sysstat\n\nsar collects and reports system activity.\n"))
    (folder / "cut.txt.gz").write_bytes(gzip.compress(faq.encode() * 50)[:60])
    (folder / "fake.md.gz").write_bytes(b"not gzip at all")
    (folder / "bomb.txt.gz").write_bytes(gzip.compress(b"a" * 3_000_000))
    (folder / "twice.txt.gz.gz").write_bytes(gzip.compress(gzip.compress(b"text")))
    (folder / "bundle.tar.gz").write_bytes(gzip.compress(b"\x00" * 512))
    documents, report = ingest_paths([folder], options=IngestOptions(max_bytes=1_000_000))
    found = {d.id: d for d in documents}
    assert set(found) == {"00FAQ.gz", "README.md.gz"}
    assert found["00FAQ.gz"].title == "Frequently Asked Questions about lsof" and found["00FAQ.gz"].format == "txt"
    assert found["README.md.gz"].format == "md" and found["README.md.gz"].title == "sysstat"
    assert found["README.md.gz"].source.endswith("README.md.gz") and "**" not in found["README.md.gz"].text
    reasons = {Path(f.path).name: f.reason for f in report.skipped}
    assert reasons["cut.txt.gz"].startswith("corrupt gzip file") and reasons["fake.md.gz"].startswith("corrupt gzip")
    assert reasons["bomb.txt.gz"] == "it inflates past the 1,000,000-byte limit (--max-bytes)"
    assert reasons["twice.txt.gz.gz"] == "unsupported format '.gz'"
    assert reasons["bundle.tar.gz"] == "unsupported format '.tar.gz'"
    # the service lists .gz among its formats, and names an unread one as the CLI does
    from citesum.ingest import SUPPORTED_EXTENSIONS, unread_format

    assert ".gz" in SUPPORTED_EXTENSIONS and unread_format("photo.png.gz") == ".png.gz"


def test_a_manual_of_prose_and_tables_cut_to_one_part_is_read_whole(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from citesum.ingest import formats

    # the next trial: trafilatura kept 8% of apcupsd's one-page manual (docutils), and a question about its NIS
    # server was turned away with "no document mentions 'NIS'". Its tables of directives make it only 57% prose
    sections = [" ".join(f"The daemon in part {n} reads the setting of step {i} and acts on it at once."
                         for i in range(20)) for n in range(5)]
    table = "".join(f"<tr><td>DIRECTIVE{i}</td><td>value {i} of the setting for part {i % 5} and its host name</td>"
                    f"<td>default {i} seconds or none at all</td></tr>" for i in range(60))
    manual = ("<html><head><title>Daemon Manual</title></head><body><div class='document'>"
              + "".join(f"<div class='section'><h2>{n} Part {n}</h2><p>{text}</p></div>"
                        for n, text in enumerate(sections))
              + f"<div class='section'><h2>Directives</h2><table>{table}</table></div></div></body></html>")
    (tmp_path / "manual.html").write_text(manual)
    monkeypatch.setattr(formats, "_main_content", lambda html: sections[0])
    title, text = formats.html_to_text(manual)
    prose = sum(len(found.split()) for found in formats._PROSE_SENTENCE.findall(text)) / len(text.split())
    assert 0.4 < prose < 0.6
    read = ingest_paths([tmp_path])[0][0].text
    assert all(part[:60] in read for part in sections) and "DIRECTIVE59" in read


def test_a_manual_of_prose_whose_main_content_trafilatura_cut_to_one_part_is_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from citesum.ingest import formats

    # a new user's trial: trafilatura kept one subsection of Lintian's one-page manual (docutils), 3,099 of its
    # 35,000 characters, and "Where do I put lintian overrides for a source package?" found nothing. What it keeps
    # of that page is stood in for here: the page's first part of five (on our own text, trafilatura keeps all)
    parts = [" ".join(f"Section {n} says how the checker reads a package in step {i}, and what it reports then."
                      for i in range(30)) for n in range(5)]
    manual = ("<html><head><title>Checker Manual</title></head><body><div class='document'>"
              + "".join(f"<div class='section'><h2>{n} Part {n}</h2><p>{text}</p></div>" for n, text in
                        enumerate(parts)) + "</div></body></html>")
    # (a review: its links' titles, run together, had read as one long sentence up to the footer's full stop)
    contents = ("<html><head><title>Contents</title></head><body><p>The modules of the library, by topic.</p><ul>"
                + "".join(f"<li><a href='m{i}.html'>Module {i} Tools For Part {i} Of A Package</a></li>"
                          for i in range(200)) + "</ul><p>Created using the documentation generator of the project."
                "</p></body></html>")
    (tmp_path / "manual.html").write_text(manual)
    (tmp_path / "contents.html").write_text(contents)
    monkeypatch.setattr(formats, "_main_content", lambda html: parts[0] if "Checker" in html else
                        "The modules of the library, by topic.")
    read = {Path(d.source).name: d.text for d in ingest_paths([tmp_path])[0]}
    assert all(text[:60] in read["manual.html"] for text in parts)  # the whole manual, not its first part
    # a contents page is its links' titles: its main content stays what trafilatura keeps
    assert read["contents.html"].strip() == "The modules of the library, by topic."
