"""A writer killed with SIGKILL at any point leaves the previous index loadable and consistent.

The writer is a real subprocess; it announces each stage through the index's public progress callback and
then stalls there, so the kill lands exactly in that stage (including the window after the new generation's
files are in place but before the database commit).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from citesum.index.store import Index, IndexSettings
from citesum.types import Document

TESTS = Path(__file__).resolve().parents[1]

WRITER = r"""
import json, sys, time
sys.path.insert(0, {tests!r})
from conftest import HashingEmbedder
from citesum.index.store import Index
from citesum.types import Document

stop_at = sys.argv[1]
docs = [Document(**d) for d in json.loads(sys.stdin.read())]

def progress(stage, done, total):
    marker = f"{{stage}} {{done}}/{{total}}"
    if marker == stop_at or (stop_at == "embedding" and stage == "embedding"):
        print("AT", marker, flush=True)
        time.sleep(60)

index = Index.open({path!r})
index.update(upsert=docs[2:], delete=["doc0", "doc1"], progress=progress, embedder=HashingEmbedder())
print("DONE", flush=True)
"""


def _version(n: int, tag: str) -> list[Document]:
    return [Document(id=f"doc{i}", title=f"Doc {i}",
                     text=" ".join(f"Sentence {j} of document {i} version {tag} mentions topic{(i + j) % 9}." for j in range(25)))
            for i in range(n)]


def _snapshot(index: Index) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    passages = [(p.id, p.text) for p in index.passages]
    return passages, np.array(index.vectors), index.lexical.scores("topic3 version")


def _run_writer(path: Path, stop_at: str, docs: list[Document]) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER.format(tests=str(TESTS), path=str(path)), stop_at],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps([{"id": d.id, "title": d.title, "text": d.text} for d in docs]))
    process.stdin.close()
    return process


@pytest.fixture
def baseline(tmp_path: Path, hashing_embedder):  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings(embedder="test-hashing"))
    index.update(_version(30, "one"), embedder=hashing_embedder)
    return tmp_path / "ix", _snapshot(Index.open(tmp_path / "ix"))


@pytest.mark.parametrize("stop_at", ["embedding", "bm25 0/1", "bm25 1/1"])
def test_sigkill_mid_update_keeps_previous_index(baseline, stop_at: str, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    path, before = baseline
    update = _version(32, "two")
    process = _run_writer(path, stop_at, update)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("AT " + stop_at.split()[0]), (line, process.stderr.read() if process.stderr else "")
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL

    after = _snapshot(Index.open(path))
    assert after[0] == before[0]
    np.testing.assert_array_equal(after[1], before[1])
    np.testing.assert_array_equal(after[2], before[2])

    # the lock died with the writer; the next update succeeds and sweeps the leftovers
    stats = Index.open(path).update(upsert=update[2:], delete=["doc0", "doc1"], embedder=hashing_embedder)
    assert (stats.updated, stats.added, stats.deleted) == (28, 2, 2)
    final = Index.open(path)
    assert {p.document_id for p in final.passages} == {f"doc{i}" for i in range(2, 32)}
    assert all("version two" in p.text for p in final.passages if p.ordinal == 0)
    assert final.vectors.shape[0] == len(final.passages)
    assert [p.name for p in path.glob("gen-*")] == [f"gen-{stats.generation}"]


def test_sigkill_at_random_moments_is_all_or_nothing(baseline, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    path, before = baseline
    rng = np.random.default_rng(3)
    for round_number in range(6):
        tag = f"r{round_number}"
        process = _run_writer(path, "never", _version(32, tag))
        time.sleep(float(rng.uniform(0.05, 0.6)))
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        index = Index.open(path)
        passages, vectors, _ = _snapshot(index)
        assert vectors.shape[0] == len(passages)
        texts = {p[1].split(" version ")[1].split()[0] for p in passages}
        assert len(texts) == 1, "a mix of two versions means a torn write"
        if process.returncode == 0:  # finished before the kill; the new state is complete
            assert texts == {tag}
        np.testing.assert_allclose(vectors, hashing_embedder.encode_documents([p[1] for p in passages]), rtol=1e-6)


BOUNDED_WRITER = r"""
import json, sys, time
sys.path.insert(0, {tests!r})
from conftest import HashingEmbedder
from citesum.index.store import Index
from citesum.types import Document

docs = [Document(**d) for d in json.loads(sys.stdin.read())]
written = []

def progress(stage, done, total):
    if stage == "bm25" and done == 1:
        written.append(1)
        if len(written) == 2:  # the second generation's units are analysed: stall before its commit
            print("AT second generation", flush=True)
            time.sleep(60)

index = Index.open({path!r})
index.update(upsert=docs, progress=progress, embedder=HashingEmbedder())
print("DONE", flush=True)
"""


def test_sigkill_in_the_second_generation_of_a_bounded_update_keeps_the_first(  # type: ignore[no-untyped-def]
        baseline, hashing_embedder) -> None:
    """An update past segment_units, killed while its second generation is written: the first generation it
    committed is current and complete (its documents in their new version, the others in the old one, vectors
    matching texts), no staging is left behind once the update is run again, and that run writes only the rest."""
    path, before = baseline
    index = Index.open(path)
    index.set_segment_units(40)  # 25-sentence documents of a few units each: several generations
    generation = index.generation
    update = _version(30, "two")
    process = subprocess.Popen(
        [sys.executable, "-c", BOUNDED_WRITER.format(tests=str(TESTS), path=str(path))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps([{"id": d.id, "title": d.title, "text": d.text} for d in update]))
    process.stdin.close()
    line = process.stdout.readline()
    assert line.startswith("AT second generation"), (line, process.stderr.read() if process.stderr else "")
    os.kill(process.pid, signal.SIGKILL)
    process.wait()

    after = Index.open(path)
    assert after.generation == generation + 1
    versions = {p.document_id: p.text.split(" version ")[1].split()[0] for p in after.passages}
    renewed = sorted((d for d, v in versions.items() if v == "two"), key=lambda d: int(d[3:]))
    assert renewed and len(renewed) < 30 and renewed == [f"doc{i}" for i in range(len(renewed))]  # in order
    np.testing.assert_allclose(np.array(after.vectors), hashing_embedder.encode_documents([p.text for p in after.passages]),
                               rtol=1e-6)
    stats = Index.open(path).update(upsert=update, embedder=hashing_embedder)
    assert stats.unchanged == len(renewed) and stats.updated == 30 - len(renewed)
    final = Index.open(path)
    assert all("version two" in p.text for p in final.passages)
    assert [p.name for p in path.glob("gen-*")] == [f"gen-{final.generation}"]


REWRITER = r"""
import sys, time
from citesum.index import local
from citesum.index.store import Index

staged = local.LocalStore._staged

def stall_after_the_first(self, generation, segment):  # the kill lands while the rewrite stages its segments
    saved = staged(self, generation, segment)
    print("AT staged", segment.name, flush=True)
    time.sleep(60)
    return saved

local.LocalStore._staged = stall_after_the_first
Index.open({path!r}).rewrite_generation()
print("DONE", flush=True)
"""


def test_sigkill_while_a_rewrite_stages_its_segments_keeps_the_generation(baseline) -> None:  # type: ignore[no-untyped-def]
    """``check --repair`` rewrites an index larger than segment_units a segment at a time, each saved to a staging
    folder before the generation: killed after the first, the current generation is untouched, ``check`` names the
    leftover, and ``--repair`` removes it and rewrites the generation with the same units, vectors and scores."""
    from citesum.index.check import check_index, repair_index

    path, before = baseline
    Index.open(path).set_segment_units(40)  # a hundred-odd units: three segments
    generation = Index.open(path).generation
    process = subprocess.Popen([sys.executable, "-c", REWRITER.format(path=str(path))], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("AT staged"), (line, process.stderr.read() if process.stderr else "")
    os.kill(process.pid, signal.SIGKILL)
    process.wait()

    assert list(path.glob("gen-*.segments/*"))  # what the killed rewrite staged is still there
    after = Index.open(path)
    assert after.generation == generation
    unchanged = _snapshot(after)
    assert unchanged[0] == before[0]
    np.testing.assert_array_equal(unchanged[1], before[1])
    np.testing.assert_array_equal(unchanged[2], before[2])
    report = check_index(path)
    assert report.ok and any("segments a killed writer was making" in note for note in report.notes), report

    repaired = repair_index(path)
    assert repaired.ok and not list(path.glob("gen-*.segments")), repaired
    final = Index.open(path)
    assert final.generation == generation + 1
    rewritten = _snapshot(final)
    assert rewritten[0] == before[0]
    np.testing.assert_array_equal(rewritten[1], before[1])
    np.testing.assert_array_equal(rewritten[2], before[2])
    names = json.loads((path / f"gen-{final.generation}" / "segments.json").read_text())
    assert len(names) == 3  # written a segment of segment_units at a time
