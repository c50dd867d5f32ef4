"""What indexing about 2,000 real files found (issue 16): runs that stopped or lost data, and faults of the
storage. Each test failed on the code before the fix; they run the CLI as a user does."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import zipfile
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.index.store import DB_NAME, Index
from fixtures import make_pdf, make_xlsx, overwrite


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def _index(folder: Path, index: Path, *options: str) -> tuple[int, str, str]:
    return _run("index", str(folder), "--index", str(index), *options)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "water.txt").write_text("The Lakemont reservoir fell to 41 percent of capacity in August.")
    (folder / "transit.txt").write_text("Bus fares for students under 19 were eliminated in March.")
    (folder / "housing.txt").write_text("Only 3,100 permits for new homes were issued last year.")
    return folder


# ---- runs that stopped or lost data ------------------------------------------------------------------------
def test_a_file_name_that_is_not_utf8_is_indexed_under_an_escaped_id(corpus: Path, tmp_path: Path) -> None:
    (corpus / os.fsdecode(b"latin1_\xe9t\xe9.txt")).write_text("The ferry timetable changes in May.")
    code, out, err = _index(corpus, tmp_path / "ix")
    assert code == 0 and "4 added" in out, err  # before: a traceback, and nothing indexed
    code, out, _ = _run("search", "ferry timetable", "--index", str(tmp_path / "ix"), "-k", "1", "--json")
    assert json.loads(out)["hits"][0]["document_id"] == "latin1_\\xe9t\\xe9.txt"


def test_a_repeated_record_id_is_left_out_not_fatal(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "text": "The first record about the ferry."}, {"id": "b", "text": "Another record."},
        {"id": "a", "text": "A second record with the same id."}]) + "\n")
    code, out, err = _run("index", str(records), "--index", str(tmp_path / "ix"))
    assert code == 0 and "2 added" in out  # before: the whole run stopped
    assert "record 3 repeats the id 'a' of record 1 (the first is kept)" in err
    assert Index.open(tmp_path / "ix").document("records.jsonl#a").text == "The first record about the ferry."


def test_sync_keeps_what_a_file_gave_when_it_cannot_be_read_this_time(corpus: Path, tmp_path: Path) -> None:
    (corpus / "report.pdf").write_bytes(make_pdf(["The harbour budget is 4 million."]))
    index = tmp_path / "ix"
    assert _index(corpus, index)[0] == 0
    # water.txt grows past --max-bytes, report.pdf is being rewritten (truncated), transit.txt is deleted
    (corpus / "water.txt").write_text("The Lakemont reservoir fell again. " * 40)
    (corpus / "report.pdf").write_bytes(make_pdf(["The harbour budget is 4 million."])[:200])
    (corpus / "transit.txt").unlink()
    code, out, err = _index(corpus, index, "--sync", "--max-bytes", "1000")
    assert code == 0 and "1 deleted" in out, out + err  # before: all three were deleted
    assert "kept the indexed version of 2 document(s) whose file could not be read this time" in err
    kept = {d.id for d in Index.open(index).documents()}
    assert kept == {"water.txt", "report.pdf", "housing.txt"}
    # an empty file is what the file holds now, not a failed read: its document goes
    (corpus / "housing.txt").write_bytes(b"")
    assert "1 deleted" in _index(corpus, index, "--sync", "--max-bytes", "1000")[1]


def test_an_xlsx_whose_recorded_size_is_wrong_gives_all_its_rows(tmp_path: Path) -> None:
    """Some writers record a wrong sheet size (openpyxl's bug304.xlsx); read-only mode believed it."""
    good = tmp_path / "good.xlsx"
    make_xlsx(good, ["month", "tickets"], [[f"M{n}", n * 100] for n in range(1, 9)])
    wrong = tmp_path / "sales.xlsx"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(wrong, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b'<dimension ref="A1:B9"/>', b'<dimension ref="A1"/>')
                assert b'<dimension ref="A1"/>' in data
            target.writestr(item, data)
    good.unlink()
    code, out, err = _run("index", str(tmp_path), "--index", str(tmp_path / "ix"))
    assert code == 0 and "1 added" in out, err  # before: skipped as "no data rows"
    text = Index.open(tmp_path / "ix").document("sales.xlsx#Sales").text
    assert "month: M1 | tickets: 100" in text and "month: M8 | tickets: 800" in text


def test_an_aes_encrypted_pdf_with_an_empty_password_is_read(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(make_pdf(["The harbour opened in 1887."]))))
    writer.encrypt(user_password="", owner_password="owner-secret", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    (tmp_path / "locked.pdf").write_bytes(out.getvalue())
    code, stdout, err = _run("index", str(tmp_path / "locked.pdf"), "--index", str(tmp_path / "ix"))
    assert code == 0 and "1 added" in stdout, err  # before (no cryptography): "corrupt PDF"
    assert "1887" in Index.open(tmp_path / "ix").document("locked.pdf").text


def test_no_index_is_created_when_the_only_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    code, _, err = _run("index", str(tmp_path / "empty.txt"), "--index", str(tmp_path / "ix"))
    assert code == 1 and "nothing to index" in err and "empty.txt: empty file (0 bytes)" in err
    assert not (tmp_path / "ix").exists()


def test_report_lines_escape_control_and_bidi_characters(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "ok.txt").write_text("A readable document.")
    for name in ("line\nbreak.txt", "tab\there.txt", "invoice\u202etxt.exe.txt", "esc\x1b[31mred.txt"):
        (folder / name).write_bytes(b"")
    code, _, err = _index(folder, tmp_path / "ix")
    assert code == 0
    assert "line\\nbreak.txt" in err and "tab\\there.txt" in err and "invoice\\u202etxt" in err
    assert "\x1b" not in err and "\u202e" not in err
    assert len([line for line in err.splitlines() if line.startswith("skipped ")]) == 4  # one line each


# ---- storage faults ------------------------------------------------------------------------------------------
def test_a_full_database_says_so_and_keeps_the_index(corpus: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import citesum.index.store as store

    index = tmp_path / "ix"
    assert _index(corpus, index)[0] == 0
    real = store._connect

    def full(path: Path) -> sqlite3.Connection:  # the disk fills: SQLite may not grow the file any further
        conn = real(path)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 2}")
        return conn

    monkeypatch.setattr(store, "_connect", full)
    # (numbered: a text of one sentence repeated is skipped as repetitive content before anything is written)
    (corpus / "big.txt").write_text(" ".join(f"The council discussed budget line {i} in detail." for i in range(2000)))
    code, _, err = _index(corpus, index)
    assert code == 1 and "no space left to write the index" in err and "the index is unchanged" in err
    assert "cannot rollback" not in err  # the message that hid the cause before
    monkeypatch.undo()
    assert {d.id for d in Index.open(index).documents()} == {"water.txt", "transit.txt", "housing.txt"}


def test_a_damaged_database_is_a_clear_error_for_every_command(corpus: Path, tmp_path: Path) -> None:
    index = tmp_path / "ix"
    assert _index(corpus, index)[0] == 0
    database = index / DB_NAME
    data = bytearray(database.read_bytes())
    data[4096:] = bytes((i * 131 + 7) % 256 for i in range(len(data) - 4096))
    database.write_bytes(bytes(data))
    for args in (("info", "--index", str(index)), ("index", str(corpus), "--index", str(index)),
                 ("search", "water", "--index", str(index)), ("check", "--index", str(index))):
        code, _, err = _run(*args)
        assert code == 1 and "Traceback" not in err, args
        assert "corrupt" in err or "damaged" in err or "malformed" in err, (args, err)


def test_vectors_overwritten_with_random_bytes_never_give_wrong_results(corpus: Path, tmp_path: Path) -> None:
    index = tmp_path / "ix"
    assert _index(corpus, index)[0] == 0
    expected = json.loads(_run("search", "reservoir capacity", "--index", str(index), "--retriever", "dense",
                               "--json")[1])["hits"]
    vectors = next(index.glob("gen-*/segments/*/vectors.npy"))
    header = vectors.read_bytes()[:128]  # a valid .npy header, garbage after it
    overwrite(vectors, header + np.random.default_rng(0).bytes(vectors.stat().st_size - len(header)))
    found = json.loads(_run("search", "reservoir capacity", "--index", str(index), "--retriever", "dense",
                            "--json")[1])["hits"]
    assert [(h["document_id"], round(h["score"], 5)) for h in found] == \
        [(h["document_id"], round(h["score"], 5)) for h in expected]  # before: cosine scores of 4.38
    assert all(-1.0001 <= h["score"] <= 1.0001 for h in found)

    code, out, _ = _run("check", "--index", str(index))
    assert code == 1 and "checksum differs" in out
    code, out, _ = _run("check", "--index", str(index), "--repair")
    assert code == 0 and "ok" in out
    assert _run("check", "--index", str(index))[0] == 0


def test_check_reports_leftovers_and_repair_removes_them(corpus: Path, tmp_path: Path) -> None:
    index = tmp_path / "ix"
    assert _index(corpus, index)[0] == 0
    (index / "gen-99.tmp").mkdir()
    (index / "notes.txt").write_text("mine")
    code, out, _ = _run("check", "--index", str(index), "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["counts"]["documents"] == 3
    assert any("gen-99.tmp is left over" in note for note in report["notes"])
    assert any("notes.txt is not a file of citesum's" in note for note in report["notes"])
    assert _run("check", "--index", str(index), "--repair")[0] == 0
    assert not (index / "gen-99.tmp").exists() and (index / "notes.txt").exists()


# ---- read-only media -------------------------------------------------------------------------------------------
@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A read-only bind mount of a folder (needs root); unmounted after the test."""
    source, target = tmp_path / "src", tmp_path / "ro"
    source.mkdir()
    target.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a read-only bind mount needs root")
    try:
        subprocess.run(["mount", "--bind", str(source), str(target)], check=True, capture_output=True)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot bind-mount here: {exc.stderr.decode(errors='replace').strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], check=True, capture_output=True)
        yield source
    finally:
        # lazily: the in-process CLI runs may still hold a memory map of the index's vectors
        subprocess.run(["umount", "--lazy", str(target)], check=False, capture_output=True)


def test_an_index_on_read_only_media_is_searched_and_not_written(corpus: Path, read_only_mount: Path) -> None:
    built = read_only_mount / "ix"
    assert _index(corpus, built)[0] == 0
    mounted = read_only_mount.parent / "ro" / "ix"
    code, out, err = _run("search", "reservoir", "--index", str(mounted), "-k", "1", "--json")
    assert code == 0 and json.loads(out)["hits"][0]["document_id"] == "water.txt", err  # before: cannot open
    assert _run("info", "--index", str(mounted))[0] == 0
    code, _, err = _index(corpus, mounted)
    assert code == 1 and "is read-only" in err and "it can be searched, not changed" in err


def test_a_long_query_comes_from_a_file_or_standard_input(corpus: Path, tmp_path: Path) -> None:
    index = tmp_path / "ix"
    assert _index(corpus, index)[0] == 0
    query = tmp_path / "query.txt"
    query.write_text("What happened to the reservoir? " + "Tell me about its capacity. " * 40_000)  # ~1 MB
    code, out, err = _run("search", "--query-file", str(query), "--index", str(index), "-k", "1", "--json")
    assert code == 0 and json.loads(out)["hits"][0]["document_id"] == "water.txt", err
    code, out, err = _run("summarize", "--query-file", "-", "--index", str(index), "--json", "--budget", "500",
                          stdin="How far did the reservoir fall?")
    assert code == 0 and json.loads(out)["bullets"][0]["citations"] == ["water.txt"], err
    assert "one of them" in _run("search", "water", "--query-file", str(query), "--index", str(index))[2]
    assert "one of them" in _run("search", "--index", str(index))[2]
    assert "the query is empty" in _run("search", "--query-file", "-", "--index", str(index), stdin="  \n")[2]
    # before: "(no bullets: the context holds no whole sentence of at least 5 words to state)"
    assert "no words to look for" in _run("summarize", "?!.,;:", "--index", str(index))[2]
