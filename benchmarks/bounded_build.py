"""What bounds a build's memory (issue 18): the index's ``segment_units`` setting, not the collection's size.

An update adding more than ``segment_units`` units commits a generation per that many (citesum.index.store), so
what a write holds at once (the new units' objects and vectors, their term counts, the graph it builds) grows
with the setting. Each run builds our generated haystack (benchmarks/scale.py's, seed 2026, 100-token passages,
wordllama) in its own subprocess, so each peak RSS is its own, with ``ann_min_units`` at 20,000 so that every
segment has a graph from the first generation on (with the default 200,000, a first generation of 100,000 units
has none, and the runs would not compare):

  * collections of each of ``--sizes`` passages with ``segment_units`` = ``--segment-units``, and
  * the largest collection again with the default ``segment_units`` (one generation).

Each run reports the build time, the peak RSS, the RSS once the documents are generated and the embedder loaded
(what the caller holds before the build: the documents grow with the collection, and the index does not
bound them), the segments written, and p50 search latencies afterwards (scale.py's 60 queries asked once):
more segments mean more graphs to ask.

Run: python benchmarks/bounded_build.py [--segment-units 100000] [--sizes 100000,200000,300000]
Writes: benchmarks/results/bounded_build.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import peak_rss_mb, write_result  # noqa: E402

RETRIEVERS = ("bm25", "dense", "hybrid")
ANN_MIN_UNITS = 20_000


def _rss_mb() -> float:
    """The process's resident set now (VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def measure(folder: Path, passages: int, segment_units: int | None) -> dict[str, Any]:
    """Build ``passages`` passages into ``folder`` with ``segment_units`` (None: the default), then search."""
    from scale import _documents, _fresh_queries, _timed

    from citesum.embed import get_embedder
    from citesum.index.store import Index
    from citesum.retrieve import get_retriever

    documents = _documents(passages)
    embedder = get_embedder("wordllama")
    embedder.encode_documents(["warm-up"])
    before = _rss_mb()
    started = time.perf_counter()
    index = Index.create(folder)
    index.set_ann_min_units(ANN_MIN_UNITS, rewrite=False)
    if segment_units is not None:
        index.set_segment_units(segment_units)
    stats = index.add(documents, embedder=embedder)
    seconds = time.perf_counter() - started
    peak = peak_rss_mb()
    del documents
    names = json.loads((folder / f"gen-{stats.generation}" / "segments.json").read_text())
    out: dict[str, Any] = {
        "units": len(index), "segment_units": segment_units or "default", "generations": stats.generation,
        "segments": len(names), "build_seconds": round(seconds, 1),
        "rss_before_build_mb": round(before, 1), "peak_rss_mb": round(peak, 1),
        "peak_above_documents_mb": round(peak - before, 1)}
    queries = _fresh_queries(index)
    for name in RETRIEVERS:
        retriever = get_retriever(name, index)
        out[f"{name} p50_ms"] = _timed(lambda q, r=retriever: r.retrieve(q, 10), queries,
                                       warm_up="warm-up " + queries[0])["p50_ms"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--segment-units", type=int, default=100_000)
    parser.add_argument("--sizes", default="100000,200000,300000", help="passages of each collection")
    parser.add_argument("--step", nargs=3, help=argparse.SUPPRESS)  # internal: FOLDER PASSAGES SEGMENT_UNITS|default
    args = parser.parse_args()
    if args.step:
        folder, passages, units = args.step
        print(json.dumps(measure(Path(folder), int(passages), None if units == "default" else int(units))))
        return
    sizes = [int(size) for size in args.sizes.split(",")]
    runs = [(size, str(args.segment_units)) for size in sizes] + [(max(sizes), "default")]
    results = []
    with tempfile.TemporaryDirectory(prefix="citesum-bounded-") as scratch:
        for number, (passages, units) in enumerate(runs):
            folder = Path(scratch) / f"ix{number}"
            output = subprocess.run([sys.executable, __file__, "--step", str(folder), str(passages), units],
                                    check=True, capture_output=True, text=True).stdout
            results.append({"passages": passages, **json.loads(output.strip().splitlines()[-1])})
            print(json.dumps(results[-1]), flush=True)
    write_result("bounded_build", {"embedder": "wordllama", "unit": "passage (100 tokens)",
                                   "ann_min_units": ANN_MIN_UNITS, "runs": results})


if __name__ == "__main__":
    main()
