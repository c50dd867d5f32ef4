"""What serving several collections costs (issue 47): memory and /search latency of ``citesum serve`` over the
largest index alone, and over it and three more (``--index NAME=DIR`` repeated), loopback only.

The four collections: the ODSum meeting index of ``service_load.py`` (the largest) and the three SummHay news
haystacks' whole-document indexes of the SummHay scripts (``--cache`` shares both with them). Each server runs
``citesum serve``'s defaults (process workers: one per core for searches, one per core for summaries).

For each server, after its warm-up: every collection is searched by every search worker (``--touch`` rounds of
one query per collection at the search workers' concurrency), so each worker has opened each collection, then
``--searches`` searches of the largest collection, one at a time, time their p50/p95. Memory is the
proportional set size (PSS, from ``/proc/PID/smaps_rollup``: a page shared by N processes counts 1/N in each) of
the server and its workers, summed, split into anonymous memory and file-backed pages (the indexes' mapped
files, the libraries).

The goal: serving the four costs at most 1.1x the memory of serving the largest alone plus the others' mapped
files (taken as the size on disk of the other three index folders, everything of them a worker can map).

Run: python benchmarks/collections_memory.py [--cache DIR] [--searches 300]
Writes: benchmarks/results/collections_memory.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (SHARED_DATA, CitesumServer, document_index_folders, news_haystacks,  # noqa: E402
                     process_tree_files, write_result)

MEETING = SHARED_DATA / "odsum" / "meeting"


def _indexes(cache: Path) -> dict[str, Path]:
    """The four index folders by collection name, built when the cache does not hold them."""
    from citesum.datasets import load_dataset
    from citesum.index.store import DB_NAME, Index

    meeting = cache / "service-meeting"
    if not (meeting / DB_NAME).exists():
        Index.create(meeting).add(load_dataset("odsum-meeting", str(MEETING)).documents)
    folders = {"meeting": meeting}
    news = document_index_folders(cache / "summhay")
    for haystack, folder in zip(news_haystacks(), news):
        if not (folder / DB_NAME).exists():
            Index.create(folder).add(haystack.documents)
        folders[folder.name.split(".")[0].removeprefix("topic_")] = folder
    return folders


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _pss_mb(pid: int) -> dict[str, float]:
    """PSS of the process tree of ``pid``, in MB: all, anonymous, file-backed."""
    totals = {"Pss": 0, "Pss_Anon": 0, "Pss_File": 0}
    for rollup in process_tree_files(pid, "smaps_rollup"):
        for line in rollup.splitlines():
            key, _, value = line.partition(":")
            if key in totals:
                totals[key] += int(value.split()[0])
    return {"pss_mb": round(totals["Pss"] / 1024, 1), "anon_mb": round(totals["Pss_Anon"] / 1024, 1),
            "file_mb": round(totals["Pss_File"] / 1024, 1)}


def _search(url: str, body: dict[str, Any]) -> float:
    import httpx

    started = time.perf_counter()
    response = httpx.post(url + "/search", json=body, timeout=60)
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def _measure(arguments: list[str], collections: list[str], largest: str, queries: list[str], searches: int,
             touch: int) -> dict[str, Any]:
    server = CitesumServer(arguments)
    try:
        workers = 2  # citesum serve's default on this machine's cores; the searches go to every worker
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for round_ in range(touch):
                for name in collections:
                    list(pool.map(lambda q: _search(server.url, {"query": q, "collection": name}),
                                  queries[round_ * workers:(round_ + 1) * workers]))
        latencies = [_search(server.url, {"query": queries[i % len(queries)], "collection": largest})
                     for i in range(searches)]
        memory = _pss_mb(server.process.pid)
    finally:
        server.close()
    ordered = sorted(latencies)
    return {**memory, "search_p50_ms": round(statistics.median(latencies), 2),
            "search_p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2), "searches": searches}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(__file__).resolve().parents[1] / ".bench-cache")
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--touch", type=int, default=4, help="rounds of searches of every collection first")
    args = parser.parse_args()
    folders = _indexes(args.cache)
    largest = max(folders, key=lambda name: _folder_bytes(folders[name]))
    from citesum.datasets import load_dataset

    queries = [q.text for q in load_dataset("odsum-meeting", str(MEETING)).queries][:100]
    alone = _measure(["--index", f"{largest}={folders[largest]}"], [largest], largest, queries, args.searches,
                     args.touch)
    named = [item for name, folder in folders.items() for item in ("--index", f"{name}={folder}")]
    # the largest is not the first collection: each request names its collection
    together = _measure(named, list(folders), largest, queries, args.searches, args.touch)
    others = {name: _folder_bytes(folder) for name, folder in folders.items() if name != largest}
    others_mb = round(sum(others.values()) / 1024 / 1024, 1)
    allowed = round(1.1 * alone["pss_mb"] + others_mb, 1)
    result = {"collections": {name: round(_folder_bytes(f) / 1024 / 1024, 1) for name, f in folders.items()},
              "largest": largest, "alone": alone, "together": together, "others_on_disk_mb": others_mb,
              "goal_mb": allowed, "within_goal": together["pss_mb"] <= allowed,
              "ratio_to_alone": round(together["pss_mb"] / alone["pss_mb"], 3),
              "anon_ratio_to_alone": round(together["anon_mb"] / alone["anon_mb"], 3)}
    print(result, flush=True)
    write_result("collections_memory", result)


if __name__ == "__main__":
    main()
