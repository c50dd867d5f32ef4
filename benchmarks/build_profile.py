"""Where an index build spends its time: cProfile of building the ODSum meeting index (232 transcripts,
~20,700 passages, wordllama), top functions by their own time and by cumulative time.

cProfile follows the main thread only: the embedding batches run on a second thread (overlapping the
chunking), so their time shows here as the wait in ``Future.result``; ``embed_alone_seconds`` gives what the
embedder takes for the same units by itself. A profiled build is slower than a plain one (speed.py times those).

Run: python benchmarks/build_profile.py [--top 25]
Writes: benchmarks/results/build_profile.json
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, SHARED_DATA, write_result  # noqa: E402


def _top(stats: pstats.Stats, key: str, count: int) -> list[dict[str, object]]:
    """The ``count`` functions with the largest ``key`` ("tottime" or "cumtime")."""
    rows = []
    for (filename, line, name), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = Path(filename)
        label = f"{where.relative_to(ROOT) if where.is_relative_to(ROOT) else where.name}:{line}({name})"
        rows.append({"function": label, "calls": calls, "own_s": round(own, 3), "cumulative_s": round(cumulative, 3)})
    field = "own_s" if key == "tottime" else "cumulative_s"
    return sorted(rows, key=lambda row: -row[field])[:count]  # type: ignore[operator]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    from citesum.datasets import load_dataset
    from citesum.embed import get_embedder
    from citesum.index.store import Index

    documents = load_dataset("odsum-meeting", str(SHARED_DATA / "odsum" / "meeting")).documents
    embedder = get_embedder("wordllama")
    embedder.encode_documents(["warm-up"])
    with tempfile.TemporaryDirectory() as scratch:
        profile = cProfile.Profile()
        started = time.perf_counter()
        profile.enable()
        index = Index.create(Path(scratch) / "ix")
        index.add(documents, embedder=embedder)
        profile.disable()
        seconds = time.perf_counter() - started
        texts = [p.text for p in index.passages]
    started = time.perf_counter()
    for start in range(0, len(texts), 512):
        embedder.encode_documents(texts[start : start + 512])
    embed_seconds = time.perf_counter() - started
    stats = pstats.Stats(profile)
    result = {"corpus": "odsum-meeting", "units": len(texts), "profiled_build_seconds": round(seconds, 2),
              "embed_alone_seconds": round(embed_seconds, 2),
              "by_own_time": _top(stats, "tottime", args.top), "by_cumulative_time": _top(stats, "cumtime", args.top)}
    for row in result["by_own_time"][:12]:  # type: ignore[index]
        print(f"{row['own_s']:7.3f} s own  {row['cumulative_s']:7.3f} s cum  {row['calls']:>8}  {row['function']}")
    write_result("build_profile", result)


if __name__ == "__main__":
    main()
