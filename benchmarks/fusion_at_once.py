"""Whether a fusion's members should rank at once or in turn below the graph's threshold, by index size. Over a
generation with a nearest-neighbour graph they rank at once (citesum.retrieve.fusion.HybridRetriever; measured
at a million passages by benchmarks/scale.py); below, in turn, and this measures what at once would give there.

For each size: an index of our generated haystack (citesum.demo.haystack) with about that many 100-token
passages, wordllama, default settings (no graph below DEFAULT_ANN_MIN_UNITS); the default hybrid (bm25-rm3 +
dense-prf, top 10) over 60 short queries and 60 first sentences of other passages (seeds 51 and 52) and the
50 of benchmarks/scale.py (10 distinct), all asked once untimed, then in turn and at once, twice (each
first in one round), in a process that leaves OpenBLAS its threads and in one that limits it to one (as the
service's workers run). The figure per size and mode is the median (mean) of the two rounds' p50 and p95.

Run: python benchmarks/fusion_at_once.py [--sizes 1200,5000,12000,20000,30000,50000,75000,150000]
(with the extra ``service``: threadpoolctl limits BLAS)
Writes: benchmarks/results/fusion_at_once.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402
from scale import QUERIES, _documents, _fresh_queries, _short_queries, _timed  # noqa: E402

ROUNDS = 2


def measure(folder: Path, passages: int, one_blas_thread: bool) -> dict[str, Any]:
    """Build (when the folder is new) and time the default hybrid in turn and at once."""
    from citesum.index.store import Index
    from citesum.retrieve import get_retriever

    if not folder.exists():
        Index.create(folder).add(_documents(passages))
    if one_blas_thread:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
    index = Index.open(folder)
    hybrid = get_retriever("hybrid", index)
    queries = _short_queries(index, seed=51) + _fresh_queries(index, seed=52) + QUERIES
    for query in queries:  # untimed: no mode meets a query, or the pages it reads, first
        hybrid.retrieve(query, 10)
    rounds: dict[str, list[dict[str, float]]] = {"in turn": [], "at once": []}
    modes = [("in turn", False), ("at once", True)]
    for number in range(ROUNDS):
        for mode, at_once in modes if number % 2 == 0 else modes[::-1]:  # each mode first in one round
            hybrid.at_once = at_once  # type: ignore[attr-defined]
            rounds[mode].append(_timed(lambda q: hybrid.retrieve(q, 10), queries))
    result: dict[str, Any] = {"units": len(index), "queries": len(queries)}
    for mode, measured in rounds.items():
        result[mode] = {key: round(float(np.median([m[key] for m in measured])), 2) for key in ("p50_ms", "p95_ms")}
    result["at once / in turn, p50"] = round(result["at once"]["p50_ms"] / result["in turn"]["p50_ms"], 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1200,5000,12000,20000,30000,50000,75000,150000")
    parser.add_argument("--step", nargs=3, help=argparse.SUPPRESS)  # internal: folder, passages, one BLAS thread
    args = parser.parse_args()
    if args.step:
        print(json.dumps(measure(Path(args.step[0]), int(args.step[1]), args.step[2] == "1")))
        return
    sizes: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="citesum-at-once-") as scratch:
        for passages in (int(s) for s in args.sizes.split(",") if s):
            folder = Path(scratch) / f"ix{passages}"
            row: dict[str, Any] = {}
            for label, one in (("default BLAS", "0"), ("one BLAS thread", "1")):
                # each in its own process: a process's BLAS limit, and its first queries' page faults, are its own
                output = subprocess.run([sys.executable, __file__, "--step", str(folder), str(passages), one],
                                        check=True, capture_output=True, text=True).stdout
                row[label] = json.loads(output.strip().splitlines()[-1])
            print(passages, json.dumps(row), flush=True)
            sizes[str(passages)] = row
    write_result("fusion_at_once", {"embedder": "wordllama", "sizes": sizes})


if __name__ == "__main__":
    main()
