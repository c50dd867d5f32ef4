"""What reading a generation's files again costs a search at a million passages (bit rot in place): a load used to
trust a file whose inode, size and modification time matched its record; it now reads every file a search reads
and checks it against its checksums (citesum.index.artifacts.verify_before_reading) before searching it.

The generation is synthetic, of the real shapes (building a real one takes minutes, its graph alone three):
  * one segment of ``--units`` unit vectors of ``--dim`` float32 (random, unit length), its rowids, and its term
    counts (citesum.index.lexical.TermCounts of ``--terms-per-unit`` term ids a unit drawn from a Zipf law over a
    vocabulary of 300,000, repeats merged: the JSON's ``postings``), the generation's BM25 statistics and row order;
  * a file of the size of the segment's HNSW graph (its bytes a node measured on a graph of 20,000 random vectors
    of the same dimension, as a write builds it), of random bytes: checked like the graph, not loaded (the dense
    query reads every vector instead: a search through a real graph reads few, so there the reading is a larger
    share of the search).

Each measure is a new process (``python -c``), started in turn with and without the reading, ``--runs`` times:
  * ``without``: today's load before the change, artifacts.verify (a file whose identity matches its record is
    trusted, not read);
  * ``with``: the load now, artifacts.verify reading every file again (its 16 MiB blocks on up to 4 threads);
  * then the segment loaded as the local store loads it (memory-mapped), one BM25 query and one dense query
    (every vector read: no graph).
Warm: the files in the page cache (just written, or read by the run before). Cold: each file's pages dropped
before the process starts (posix_fadvise DONTNEED; no root needed), so whatever reads them first reads the
disk. Also measured: a background reading of the same files (one thread, what a service does every
REVERIFY_S), and a write's record of the vector file (its digest and its blocks' checksums, in one read) against
its digest alone.

Run: python benchmarks/verify_cost.py [--units 1000000] [--dim 384] [--runs 3]
Writes: benchmarks/results/verify_cost.json (the temporary generation, about 2.8 GB in /tmp, is removed after)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, git_state, write_result  # noqa: E402

SEED = 2026
VOCABULARY = 300_000
SEGMENT = "s1-0"
#: the queries of the measured search (synthetic terms: frequent, middling, rare)
BM25_QUERY = "t1 t40 t900 t25000"
GRAPH_SAMPLE = 20_000

CHILD = r"""
import json, sys, time
started = time.perf_counter()
from pathlib import Path
import numpy as np
from citesum.index import artifacts
from citesum.index.cosine import cosine_scores
from citesum.index.lexical import LexicalIndex
from citesum.index.segments import Segment
imported = time.perf_counter()
root, variant = Path(sys.argv[1]), sys.argv[2]
folder = root / "gen-1"
recorded = json.loads((root / "files.json").read_text())
if variant == "with":
    problems = artifacts.verify(folder, recorded, read_again=lambda name: True)
elif variant == "without":
    problems = artifacts.verify(folder, recorded)
else:  # a background reading: one thread
    problems = artifacts.verify_before_reading(folder, recorded, threads=1)
assert not problems, problems
verified = time.perf_counter()
segment = Segment.load(folder / "segments" / {segment!r})
lexical = LexicalIndex.load(folder / "bm25", [(segment.terms, None)])
loaded = time.perf_counter()
lexical.scores({query!r})
bm25 = time.perf_counter()
query = np.random.default_rng(1).standard_normal(segment.vectors.shape[1]).astype(np.float32)
np.argsort(-cosine_scores(segment.vectors, query / np.linalg.norm(query)))[:10]
dense = time.perf_counter()
print(json.dumps({{"imports_s": imported - started, "verify_s": verified - imported, "load_s": loaded - verified,
                  "bm25_query_s": bm25 - loaded, "dense_query_s": dense - bm25, "after_imports_s": dense - imported}}))
"""


def _vectors(path: Path, units: int, dim: int, rng: np.random.Generator) -> None:
    vectors = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(units, dim))
    for start in range(0, units, 50_000):
        block = rng.standard_normal((min(50_000, units - start), dim), dtype=np.float32)
        vectors[start: start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    vectors.flush()
    del vectors


def _terms(units: int, per_unit: int, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    """Term counts of ``units`` units of ``per_unit`` Zipf-distributed term ids each (repeats merged: fewer
    distinct terms a unit)."""
    import scipy.sparse

    from citesum.index.lexical import TermCounts

    terms = ((rng.zipf(1.25, units * per_unit) - 1) % VOCABULARY).astype(np.int32)
    counts = rng.integers(1, 4, units * per_unit, dtype=np.int32)
    indptr = np.arange(0, units * per_unit + 1, per_unit, dtype=np.int64)
    matrix = scipy.sparse.csr_matrix((counts, terms, indptr), shape=(units, VOCABULARY))
    del terms, counts
    matrix.sum_duplicates()
    return TermCounts.from_matrix(matrix)


def _graph_bytes_per_node(dim: int, rng: np.random.Generator) -> float:
    """The bytes a node of a segment's graph as a write builds it, measured on GRAPH_SAMPLE random vectors."""
    from citesum.index.ann import AnnIndex

    vectors = rng.standard_normal((GRAPH_SAMPLE, dim), dtype=np.float32)
    graph = AnnIndex.build(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), np.arange(GRAPH_SAMPLE))
    with tempfile.TemporaryDirectory() as scratch:
        graph.save(Path(scratch) / "graph.usearch")
        return (Path(scratch) / "graph.usearch").stat().st_size / GRAPH_SAMPLE


def _write_generation(folder: Path, units: int, dim: int, per_unit: int) -> dict[str, Any]:
    """A generation of one segment of the real shapes in ``folder`` (the module docstring); what it holds."""
    from citesum.index.lexical import LexicalIndex

    rng = np.random.default_rng(SEED)
    segment = folder / "segments" / SEGMENT
    segment.mkdir(parents=True)
    rows = np.arange(1, units + 1, dtype=np.int64)
    np.save(folder / "rows.npy", rows)
    np.save(segment / "rows.npy", rows)
    (folder / "segments.json").write_text(json.dumps([SEGMENT]))
    _vectors(segment / "vectors.npy", units, dim, rng)
    terms = _terms(units, per_unit, rng)
    terms.save(segment / "terms")
    LexicalIndex({f"t{i}": i for i in range(VOCABULARY)}, [(terms, None)], np.diff(terms.term_indptr),
                 int(terms.lengths.sum())).save(folder / "bm25")
    per_node = _graph_bytes_per_node(dim, rng)
    with open(segment / "graph-sized.bin", "wb") as handle:
        for start in range(0, units, 100_000):
            handle.write(rng.bytes(int(per_node * min(100_000, units - start))))
    sizes: dict[str, int] = {}
    for file in folder.rglob("*"):
        if file.is_file():
            part = file.relative_to(folder).parts
            kind = "terms" if "terms" in part else "bm25" if part[0] == "bm25" else file.name
            sizes[kind] = sizes.get(kind, 0) + file.stat().st_size
    return {"postings": int(len(terms.unit_terms)), "graph_bytes_per_node": round(per_node, 1),
            "bytes": dict(sorted(sizes.items())), "total_bytes": sum(sizes.values())}


def _drop_from_page_cache(folder: Path) -> None:
    for file in folder.rglob("*"):
        if file.is_file():
            fd = os.open(file, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def _fresh_process(root: Path, variant: str) -> dict[str, float]:
    """One new process's times (the module docstring), and its wall time as started from here."""
    code = CHILD.format(segment=SEGMENT, query=BM25_QUERY)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(root), variant], capture_output=True, text=True,
                          check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    wall = time.perf_counter() - started
    return {**json.loads(done.stdout), "process_wall_s": wall}


def _summary(runs: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    """Median, min and max of each measure over ``runs``."""
    return {key: {"median": round(statistics.median(r[key] for r in runs), 3),
                  "min": round(min(r[key] for r in runs), 3), "max": round(max(r[key] for r in runs), 3)}
            for key in runs[0]}


def _record_cost(file: Path) -> dict[str, float]:
    """A write's record of ``file`` (digest and blocks, one read) against its digest alone, in the page cache."""
    from citesum.index import artifacts

    started = time.perf_counter()
    artifacts.file_digest(file)
    digest = time.perf_counter()
    artifacts.record(file)
    recorded = time.perf_counter()
    return {"digest_s": round(digest - started, 3), "digest_and_blocks_s": round(recorded - digest, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--units", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--terms-per-unit", type=int, default=45)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from citesum.index import artifacts

    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="citesum-verify-cost-", dir="/tmp") as scratch:
        root = Path(scratch)
        folder = root / "gen-1"
        started = time.perf_counter()
        generation = _write_generation(folder, args.units, args.dim, args.terms_per_unit)
        written_s = time.perf_counter() - started
        recorded = artifacts.checksums(folder)
        (root / "files.json").write_text(json.dumps(recorded))
        record = _record_cost(folder / "segments" / SEGMENT / "vectors.npy")
        measured: dict[str, dict[str, list[dict[str, float]]]] = {"warm": {"without": [], "with": []},
                                                                  "cold": {"without": [], "with": []}}
        for cache, variants in measured.items():
            for _ in range(args.runs):
                for variant, runs in variants.items():  # in turns: the machine drifts, both see it alike
                    if cache == "cold":
                        _drop_from_page_cache(folder)
                    runs.append(_fresh_process(root, variant))
        background = _fresh_process(root, "background")
    results = {cache: {variant: _summary(runs) for variant, runs in variants.items()}
               for cache, variants in measured.items()}
    added = {cache: round(results[cache]["with"]["process_wall_s"]["median"]
                          - results[cache]["without"]["process_wall_s"]["median"], 3) for cache in results}
    write_result("verify_cost", {
        "git": git_state(),
        "cores": {"os_cpu_count": os.cpu_count(), "usable": len(os.sched_getaffinity(0))},
        "data": ("synthetic arrays of the real shapes (the module docstring): one segment of "
                 f"{args.units:,} units, {args.dim}-d float32 vectors, {args.terms_per_unit} term ids a unit drawn "
                 f"over {VOCABULARY:,} terms (Zipf; repeats merged: see postings), a file of the graph's size (random "
                 "bytes, checked, not loaded)"),
        "units": args.units, "dim": args.dim, "generation": generation,
        "block_bytes": artifacts.BLOCK_BYTES, "read_threads": artifacts._READ_THREADS,
        "runs_each": args.runs,
        "search_in_a_fresh_process": results,
        "added_by_the_reading_s": added,
        "background_reading_one_thread_warm": _summary([background]),
        "record_of_the_vector_file_warm": record,
        "seconds_to_write_the_generation": round(written_s, 1),
        "benchmark_seconds": round(time.perf_counter() - began, 1),
    })


if __name__ == "__main__":
    main()
