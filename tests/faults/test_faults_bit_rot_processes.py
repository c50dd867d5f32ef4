"""Bit rot in place, as a user meets it: ``citesum index`` builds an index in one process, 100 bytes of a
segment's vectors change on the disk while the file keeps its inode, size and modification time, and ``citesum
search`` runs in new processes. Before, dense and hybrid search exited 0 with another top 5 and no word; now
each search either answers as before (read from the database) and says on stderr which file is damaged, or
fails with an error naming it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fixtures import CITY_NOTES, write_files
from live import run_citesum

QUERY = "water supply and reservoir levels"


def _search(index: Path, retriever: str) -> subprocess.CompletedProcess[str]:
    return run_citesum("search", QUERY, "--index", str(index), "--retriever", retriever, "--json", "-k", "5")


def _top5(done: subprocess.CompletedProcess[str]) -> list[tuple[str, float]]:
    assert done.returncode == 0, done.stderr[-3000:]
    return [(hit["document_id"], round(hit["score"], 5)) for hit in json.loads(done.stdout)["hits"]]


def _rot_in_place(file: Path, count: int = 100) -> None:
    """Flip ``count`` bytes spread over ``file``'s data (past the .npy header) in place, then put its access and
    modification times back: the same inode, size and time, other bits."""
    before = file.stat()
    with open(file, "r+b") as handle:
        for position in np.linspace(128, before.st_size - 1, count).astype(int).tolist():
            handle.seek(position)
            byte = handle.read(1)[0]
            handle.seek(position)
            handle.write(bytes([byte ^ 0xFF]))
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = file.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


@pytest.fixture
def index(tmp_path: Path) -> Path:
    corpus = write_files(tmp_path / "docs", CITY_NOTES)
    built = run_citesum("index", str(corpus), "--index", str(tmp_path / "ix"))
    assert built.returncode == 0, built.stderr[-3000:]
    return tmp_path / "ix"


def test_searches_in_new_processes_never_answer_from_a_file_rotten_in_place(index: Path) -> None:
    expected = {retriever: _top5(_search(index, retriever)) for retriever in ("dense", "hybrid")}
    [vectors] = index.glob("gen-*/segments/*/vectors.npy")
    named = vectors.relative_to(index).as_posix()  # gen-N/segments/<segment>/vectors.npy
    _rot_in_place(vectors)
    for retriever, before in expected.items():
        done = _search(index, retriever)
        if done.returncode == 0:  # the same answer, read from the database, with a warning naming the file
            assert _top5(done) == before, f"--retriever {retriever}: another top 5 from the rotten file"
            assert named in done.stderr, f"--retriever {retriever}: no word of the damage: {done.stderr!r}"
        else:  # or a clear error naming it
            assert named in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]
    checked = run_citesum("check", "--index", str(index))
    assert checked.returncode == 1 and "checksum differs" in checked.stdout
