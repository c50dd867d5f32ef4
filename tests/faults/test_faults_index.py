"""The index's files under a careless operator and a full disk, across processes as users run them: a service
stopped cleanly leaves a folder that read-only media can serve, a first build that runs out of room leaves
nothing behind, and a deleted document gives its space back."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import httpx

from citesum.index.store import DB_NAME, Index, IndexSettings
from citesum.types import Document
from live import citesum_serve, run_citesum



def _corpus(folder: Path, big_kib: int = 0) -> Path:
    folder.mkdir()
    (folder / "water.txt").write_text("The Lakemont reservoir fell to 41 percent of capacity in August.\n")
    (folder / "trams.txt").write_text("The new Eastline tram will connect the airport to the central station.\n")
    if big_kib:
        # (numbered: one line repeated is skipped as repetitive content, before anything is written)
        line = "Engineers inspected the cast-iron mains of the old quarter, street {} after street, all year.\n"
        (folder / "big.txt").write_text("".join(line.format(n) for n in range(big_kib * 1024 // len(line))))
    return folder


def _run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return run_citesum(*arguments, timeout=300)


def _log_bytes(index: Path) -> int:
    wal = index / f"{DB_NAME}-wal"
    return wal.stat().st_size if wal.exists() else 0


def test_a_service_stopped_cleanly_leaves_its_log_merged(tmp_path: Path, read_only_view) -> None:  # type: ignore[no-untyped-def]
    index = tmp_path / "ix"
    assert _run("index", str(_corpus(tmp_path / "docs")), "--index", str(index)).returncode == 0
    server = citesum_serve(index, tmp_path / "serve.log", "--workers", "1", "--search-workers", "1")
    try:
        upload = httpx.post(server.url + "/documents", timeout=30,
                            files=[("files", ("rain.txt", b"Rainfall in July was twice the average.", "text/plain"))])
        job = upload.json()["status"]
        deadline = time.monotonic() + 120
        while (state := httpx.get(server.url + job).json()["state"]) not in ("committed", "failed"):
            assert time.monotonic() < deadline, "the upload did not finish"
            time.sleep(0.1)
        assert state == "committed"
        # reads after the write keep their connections open: the writer could not merge the log past them
        assert httpx.post(server.url + "/search", json={"query": "rainfall", "k": 1}).status_code == 200
    finally:
        server.close()  # SIGTERM, as a service manager stops it
    assert _log_bytes(index) == 0  # before: frames left in the log, and read-only media refused the folder
    copy = read_only_view(tmp_path)
    found = _run("search", "rainfall", "--index", str(copy / "ix"), "-k", "1", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["hits"][0]["document_id"] == "uploads/rain.txt", \
        found.stderr


def test_a_first_build_that_runs_out_of_room_leaves_no_index(tmp_path: Path, small_disk) -> None:  # type: ignore[no-untyped-def]
    docs = _corpus(tmp_path / "docs", big_kib=2048)
    disk = small_disk(1024)
    index = disk / "ix"
    failed = _run("index", str(docs), "--index", str(index))
    assert failed.returncode == 1 and "no space left" in failed.stderr, failed.stderr
    assert "no index was created" in failed.stderr
    assert not index.exists()  # before: an index of nothing at generation 0, which later runs took as built
    kept = disk / "mine"
    (kept / "gen-ideas").mkdir(parents=True)
    (kept / "notes.txt").write_text("the user's")
    assert _run("index", str(docs), "--index", str(kept)).returncode == 1
    # a folder the user made keeps what they put in it, even a folder whose name starts like a generation's
    assert sorted(p.name for p in kept.iterdir()) == ["gen-ideas", "notes.txt"]


def test_a_deleted_document_gives_its_space_back(tmp_path: Path) -> None:
    index = Index.create(tmp_path / "ix", IndexSettings())
    big = "Engineers inspected the cast-iron mains of the old quarter, street after street. " * 60_000
    index.add([Document(id="big.txt", title="Big", text=big), Document(id="small.txt", title="Small", text="The reservoir fell.")])
    before = (index.path / DB_NAME).stat().st_size + _log_bytes(index.path)
    index.delete(["big.txt"])
    after = (index.path / DB_NAME).stat().st_size + _log_bytes(index.path)
    assert after < before / 4, (before, after)  # before: the database and its log kept their size
    assert [d.id for d in Index.open(index.path).documents()] == ["small.txt"]
