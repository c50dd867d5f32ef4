"""Where a default ``hybrid`` query spends its time on a large index: cProfile of 50 queries on our generated
haystack of ``--passages`` 100-token passages (by default 300,000, above the 200,000 from which an index gets
its nearest-neighbour graph), with the p50 of each retriever the default composes, for scale.

Run: python benchmarks/query_profile.py [--passages 300000] [--top 20]
Writes: benchmarks/results/query_profile.json
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402
from build_profile import _top  # noqa: E402
from scale import QUERIES, _documents, _timed  # noqa: E402

RETRIEVERS = ["bm25", "bm25-rm3", "dense", "dense-prf", "hybrid:bm25+dense", "hybrid"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=300_000)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    from citesum.embed import get_embedder
    from citesum.index.store import Index
    from citesum.retrieve import get_retriever

    with tempfile.TemporaryDirectory() as scratch:
        index = Index.create(Path(scratch) / "ix")
        index.add(_documents(args.passages), embedder=get_embedder("wordllama"))
        p50 = {name: _timed(lambda q, r=get_retriever(name, index): r.retrieve(q, 10), QUERIES)["p50_ms"]
               for name in RETRIEVERS}
        hybrid = get_retriever("hybrid", index)
        profile = cProfile.Profile()
        profile.enable()
        for query in QUERIES:
            hybrid.retrieve(query, 10)
        profile.disable()
        result = {"units": len(index), "has_graph": index.ann is not None, "queries": len(QUERIES), "p50_ms": p50}
    stats = pstats.Stats(profile)
    result |= {"by_own_time": _top(stats, "tottime", args.top), "by_cumulative_time": _top(stats, "cumtime", args.top)}
    print(p50)
    for row in result["by_own_time"][:12]:  # type: ignore[index]
        print(f"{row['own_s']:7.3f} s own  {row['cumulative_s']:7.3f} s cum  {row['calls']:>8}  {row['function']}")
    write_result("query_profile", result)


if __name__ == "__main__":
    main()
