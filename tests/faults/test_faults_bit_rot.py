"""Bit rot in place: bytes of a generation's file change while the file keeps its inode, size and modification
time (a disk's damage, a block-level restore, a tool that puts the time back). A search must never read such a
file in silence: a new process reads every file a search reads before searching it, a process that keeps a
generation loaded reads them again in the background, and a write reads what it carries into the next
generation. Each test failed before files were read again at a load."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from citesum.index import artifacts
from citesum.index.cosine import cosine_scores
from citesum.index.store import DB_NAME, Index, IndexSettings
from citesum.types import Document

SETTINGS = IndexSettings(embedder="test-hashing")
TOPICS = ("reservoir water rationing", "tram line airport", "school budget teachers", "harbour ferry timetable",
          "housing permits rent", "library opening hours")
QUERIES = ("reservoir water", "ferry timetable", "rent permits")


def _documents(count: int = 12, tag: str = "") -> list[Document]:
    return [Document(id=f"d{i}{tag}", title=f"d{i}{tag}",
                     text=f"Report {i}{tag} on {TOPICS[i % len(TOPICS)]}. Note {i % 4} on {TOPICS[(i + 2) % 6]}.")
            for i in range(count)]


def _built(path: Path, embedder: object, updates: int = 1) -> Index:
    """An index of twelve documents written by ``updates`` updates (a segment each)."""
    index = Index.create(path, SETTINGS)
    for part in np.array_split(np.arange(12), updates):
        index.update([_documents()[i] for i in part.tolist()], embedder=embedder)  # type: ignore[arg-type]
    return index


def _rot(file: Path, count: int = 100) -> None:
    """Flip ``count`` bytes spread over ``file`` past its first 128 (a .npy header), in place: the same file
    (inode), the same size, its access and modification times put back."""
    before = file.stat()
    data = bytearray(file.read_bytes())
    for position in np.linspace(128, len(data) - 1, count).astype(int).tolist():
        data[position] ^= 0xFF
    with open(file, "r+b") as handle:
        handle.write(data)
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = file.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


def _as_a_new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget which files this process read and found sound: the next load is a new process's."""
    monkeypatch.setattr(artifacts, "_verified", set())
    monkeypatch.setattr(artifacts, "_read_sound", {}, raising=False)


def _answers(index: Index, embedder: object) -> tuple[np.ndarray, list[list[int]], list[np.ndarray]]:
    """The generation as a search reads it: its vectors, the top 5 of a dense search and the BM25 scores of
    each query."""
    with index.read() as view:
        vectors = np.array(view.vectors)
        top = [np.argsort(-cosine_scores(view.vectors, embedder.encode_query(q)), kind="stable")[:5].tolist()  # type: ignore[attr-defined]
               for q in QUERIES]
        return vectors, top, [view.lexical.scores(q) for q in QUERIES]


def _assert_same(found: tuple[np.ndarray, list[list[int]], list[np.ndarray]],
                 expected: tuple[np.ndarray, list[list[int]], list[np.ndarray]]) -> None:
    np.testing.assert_array_equal(found[0], expected[0])
    assert found[1] == expected[1]
    for scores, wanted in zip(found[2], expected[2]):
        np.testing.assert_array_equal(scores, wanted)


def _segment_file(index: Index, relative: str, segment: int = 0) -> Path:
    folder = index.path / f"gen-{index.generation}"
    if relative.startswith("bm25/"):
        return folder / relative
    names = json.loads((folder / "segments.json").read_text())
    return folder / "segments" / names[segment] / relative


def _named(caplog: pytest.LogCaptureFixture, file: Path, index: Index) -> bool:
    """Whether a warning or error named ``file`` by its path in the index folder."""
    relative = file.relative_to(index.path).as_posix()
    return any(relative in record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING)


@pytest.mark.parametrize("damaged", ["vectors.npy", "bm25/unit_frequency.npy", "terms/classes.npy"])
def test_a_new_process_does_not_search_a_file_rotten_in_place(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        damaged: str) -> None:
    index = _built(tmp_path / "ix", hashing_embedder)
    expected = _answers(Index.open(index.path), hashing_embedder)
    file = _segment_file(index, damaged)
    _rot(file)
    _as_a_new_process(monkeypatch)
    with caplog.at_level(logging.WARNING):
        found = _answers(Index.open(index.path), hashing_embedder)
    _assert_same(found, expected)  # read from the database instead
    assert _named(caplog, file, index)


def test_records_written_before_block_checksums_are_read_at_a_load_too(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """An index whose records have no checksum of each block (written before them: size, digest, inode and
    time; or size and digest alone) is read and verified whole at a load, and still searched from its files."""
    index = _built(tmp_path / "ix", hashing_embedder)
    expected = _answers(Index.open(index.path), hashing_embedder)
    with sqlite3.connect(index.path / DB_NAME) as conn:
        recorded = json.loads(conn.execute("SELECT value FROM manifest WHERE key='files'").fetchone()[0])
        older = {name: kept[:4] for name, kept in recorded.items()}
        conn.execute("UPDATE manifest SET value=? WHERE key='files'", (json.dumps(older),))
    conn.close()
    _as_a_new_process(monkeypatch)
    assert isinstance(Index.open(index.path).vectors, np.memmap)  # sound: searched from its files
    file = _segment_file(index, "vectors.npy")
    _rot(file)
    _as_a_new_process(monkeypatch)
    with caplog.at_level(logging.WARNING):
        found = _answers(Index.open(index.path), hashing_embedder)
    _assert_same(found, expected)
    assert _named(caplog, file, index)


def test_a_loaded_generation_is_read_again_in_the_background(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A service keeps a generation loaded, its files memory-mapped: a page the kernel let go of is read again
    from the disk, rot included (here the rot is written through this process's page cache, which a search
    reads at once). The files are read again on a schedule; once the damage is found, searches read the
    database instead, and say so."""
    monkeypatch.setattr(artifacts, "REVERIFY_S", 0.2, raising=False)
    index = _built(tmp_path / "ix", hashing_embedder)
    served = Index.open(index.path)
    expected = _answers(served, hashing_embedder)
    file = _segment_file(index, "vectors.npy")
    with caplog.at_level(logging.WARNING):
        _rot(file)
        deadline = time.monotonic() + 20
        while True:
            found = _answers(served, hashing_embedder)
            if np.array_equal(found[0], expected[0]) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    _assert_same(found, expected)
    assert _named(caplog, file, index)


def test_an_update_does_not_carry_rot_into_the_next_generation(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """An update builds the next generation's BM25 statistics from the current one's: rot in them would be
    written again under a new, matching checksum, and not even ``citesum check`` would find it. The update reads
    them before it builds on them, and builds from the database when they are damaged."""
    from citesum.index.check import check_index

    twin = _built(tmp_path / "twin", hashing_embedder)
    twin.update(_documents(2, tag="-new"), embedder=hashing_embedder)
    index = _built(tmp_path / "ix", hashing_embedder)
    _rot(_segment_file(index, "bm25/unit_frequency.npy"))
    _as_a_new_process(monkeypatch)
    Index.open(index.path).update(_documents(2, tag="-new"), embedder=hashing_embedder)
    _as_a_new_process(monkeypatch)
    _assert_same(_answers(Index.open(index.path), hashing_embedder), _answers(twin, hashing_embedder))
    assert check_index(index.path).ok


def test_a_merge_does_not_carry_rot_into_the_segment_it_writes(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge reads the vectors and term counts of the segments it merges into a new segment: rot in them would
    be written again under a new, matching checksum. The update reads them first, and builds from the database
    when they are damaged."""
    from citesum.index.segments import MAX_SEGMENTS, merge_runs

    twin = _built(tmp_path / "twin", hashing_embedder, updates=MAX_SEGMENTS)
    twin.update(_documents(1, tag="-new"), embedder=hashing_embedder)
    index = _built(tmp_path / "ix", hashing_embedder, updates=MAX_SEGMENTS)
    sizes = [len(part) for part in np.array_split(np.arange(12), MAX_SEGMENTS)] + [1]  # with the update's own
    [(merged, _)] = merge_runs(sizes, sizes, largest=1000)
    _rot(_segment_file(index, "vectors.npy", segment=merged), count=20)  # only in a segment the update merges
    _as_a_new_process(monkeypatch)
    Index.open(index.path).update(_documents(1, tag="-new"), embedder=hashing_embedder)
    _as_a_new_process(monkeypatch)
    _assert_same(_answers(Index.open(index.path), hashing_embedder), _answers(twin, hashing_embedder))
