"""Load on the HTTP service, loopback only: the ODSum meeting index (232 transcripts, 100-token passages) served
by ``citesum serve`` (offline extractive summarizer, default workers = CPU cores) in its own process.

Phases, each a fixed count of requests with a time cap (the 296 dev queries, cycled; five /search for each
/summarize, as the issue's 1,000 + 200; the clients start over one second):
  * concurrency 1 and 32, the index left alone;
  * concurrency 1 and 32 while another process updates the index in a loop (deletes three transcripts and
    adds them back: each round commits two generations, each a new BM25 matrix over ~20,000 units);
and then a 20 MB body (refused with 413) with the server's RSS before and after.

Reported per phase: throughput, p50/p95/p99 per endpoint, errors (anything but 200), server RSS before and
after and CPU time (the server and its workers), generations committed meanwhile. Goals (issue 15): throughput
at 32 >= 1.5x at 1; /search p95 under load <= 10x its unloaded p50; the 20 MB body refused in under 100 ms with
RSS unchanged; no error.

Run: python benchmarks/service_load.py [--cache .bench-cache] [--searches 1000 --summaries 200]
     [--worker-kind thread]
Writes: benchmarks/results/service_load.json (service_load_threads.json with --worker-kind thread)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, CitesumServer, process_tree_files, process_tree_rss_mb, write_result  # noqa: E402

MEETING = SHARED_DATA / "odsum" / "meeting"
#: clients start this many seconds apart in all, as load tools ramp up: started in the same millisecond, 32
#: clients put ~50 searches in the queue at once, and those first 0.2 s alone made the /search p95 (82.8 ms,
#: 9.9x the unloaded p50, in the run before the ramp)
RAMP_S = 1.0
UPDATED_DOCUMENTS = 3
UPDATER = """
import sys, time
from pathlib import Path
from citesum.index.store import Index
index = Index.open(sys.argv[1])
stop = Path(sys.argv[2])
documents = [d for _, d in zip(range({n}), index.documents())]
rounds = 0
while not stop.exists():
    index.delete([d.id for d in documents])
    index.add(documents)
    rounds += 1
print(rounds)
""".format(n=UPDATED_DOCUMENTS)


def _build_index(folder: Path) -> Path:
    from citesum.datasets import load_dataset
    from citesum.index.store import DB_NAME, Index

    if not (folder / DB_NAME).exists():
        started = time.perf_counter()
        Index.create(folder).add(load_dataset("odsum-meeting", str(MEETING)).documents)
        print(f"built the meeting index in {time.perf_counter() - started:.1f}s: {folder}", flush=True)
    return folder


def _cpu_seconds(pid: int) -> float:
    """CPU time used so far by the server and its worker processes (user + system)."""
    ticks = 0
    for stat in process_tree_files(pid, "stat"):
        fields = stat.rsplit(") ", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def _server(index: Path, worker_kind: str) -> CitesumServer:
    """``citesum serve`` with its defaults (workers, queue, limits), but for the kind of workers."""
    return CitesumServer(["--index", str(index), "--worker-kind", worker_kind], start_s=120)


def _requests(queries: list[str], searches: int, summaries: int) -> list[tuple[str, dict[str, Any]]]:
    """Five searches for each summary, interleaved, queries cycled."""
    out = []
    every = max(1, round(searches / max(summaries, 1)))
    s = m = 0
    while s < searches or m < summaries:
        for _ in range(every):
            if s < searches:
                out.append(("/search", {"query": queries[(s + m) % len(queries)], "k": 10}))
                s += 1
        if m < summaries:
            out.append(("/summarize", {"query": queries[(s + m) % len(queries)]}))
            m += 1
    return out


async def _load(url: str, requests: list[tuple[str, dict[str, Any]]], concurrency: int,
                max_seconds: float, ramp_s: float = RAMP_S) -> dict[str, Any]:
    import httpx

    latencies: dict[str, list[float]] = {"/search": [], "/summarize": []}
    errors: list[str] = []
    pending = iter(requests)
    deadline = time.monotonic() + max_seconds
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    async def worker(client: Any, number: int) -> None:
        await asyncio.sleep(ramp_s * number / concurrency)
        for path, body in pending:
            if time.monotonic() > deadline:
                return
            started = time.perf_counter()
            try:
                response = await client.post(path, json=body)
                status = str(response.status_code)
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            if status == "200":
                latencies[path].append((time.perf_counter() - started) * 1000)
            else:
                errors.append(f"{path}: {status}")

    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        await asyncio.gather(*(worker(client, number) for number in range(concurrency)))
    seconds = time.perf_counter() - started
    done = sum(len(v) for v in latencies.values())
    result: dict[str, Any] = {"concurrency": concurrency, "seconds": round(seconds, 2), "completed": done,
                              "requests_per_second": round(done / seconds, 2), "errors": len(errors),
                              "error_examples": sorted(set(errors))[:5], "stopped_by_time_cap": done + len(errors)
                              < len(requests)}
    for path, values in latencies.items():
        if values:
            result[path] = {"count": len(values), **{f"p{q}_ms": round(float(np.percentile(values, q)), 1)
                                                     for q in (50, 95, 99)}}
    return result


def _phase(server: CitesumServer, index: Path, requests: list[tuple[str, dict[str, Any]]], concurrency: int,
           updating: bool, max_seconds: float) -> dict[str, Any]:
    before = process_tree_rss_mb(server.process.pid)
    updater = None
    stop = Path(tempfile.mkdtemp()) / "stop"
    if updating:
        updater = subprocess.Popen([sys.executable, "-c", UPDATER, str(index), str(stop)], stdout=subprocess.PIPE)
    generation_before = _generation(server)
    cpu_before = _cpu_seconds(server.process.pid)
    result = asyncio.run(_load(server.url, requests, concurrency, max_seconds))
    result["server_cpu_seconds"] = round(_cpu_seconds(server.process.pid) - cpu_before, 1)
    if updater is not None:
        stop.touch()
        rounds = int(updater.communicate(timeout=300)[0].decode().strip() or 0)
        result["update_rounds"] = rounds
    result["generations_committed"] = _generation(server) - generation_before
    result["server_rss_mb"] = {"before": before, "after": process_tree_rss_mb(server.process.pid)}
    result["index_updating"] = updating
    print(json.dumps(result), flush=True)
    return result


def _generation(server: CitesumServer) -> int:
    import httpx

    return int(httpx.get(f"{server.url}/health", timeout=30).json()["generation"])


def _huge_body(server: CitesumServer) -> dict[str, Any]:
    import httpx

    body = b'{"query": "' + b"w" * (20 * 1024 * 1024) + b'"}'
    before = process_tree_rss_mb(server.process.pid)
    times = []
    for _ in range(5):
        started = time.perf_counter()
        response = httpx.post(f"{server.url}/search", content=body, headers={"content-type": "application/json"},
                              timeout=60)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 413, response.text
    return {"bytes": len(body), "status": 413, "ms": [round(t, 1) for t in times],
            "median_ms": round(float(np.median(times)), 1), "server_rss_mb": {"before": before,
                                                                           "after": process_tree_rss_mb(server.process.pid)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=None, help="Keep the meeting index here between runs.")
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument("--summaries", type=int, default=200)
    parser.add_argument("--max-seconds", type=float, default=600.0, help="Time cap of each phase.")
    parser.add_argument("--worker-kind", choices=["process", "thread"], default="process",
                        help="The server's workers (results of threads go to service_load_threads.json).")
    args = parser.parse_args()

    root = Path(args.cache or tempfile.mkdtemp()) / "service-meeting"
    index = _build_index(root)
    from citesum.datasets import load_dataset

    queries = [q.text for q in load_dataset("odsum-meeting", str(MEETING)).queries]
    requests = _requests(queries, args.searches, args.summaries)
    server = _server(index, args.worker_kind)
    try:
        asyncio.run(_load(server.url, requests[:24], 4, 120))  # warm-up: models, artifacts, connections
        phases = {}
        for updating in (False, True):
            for concurrency in (1, 32):
                name = f"c{concurrency}" + ("_updating" if updating else "")
                phases[name] = _phase(server, index, requests, concurrency, updating, args.max_seconds)
        huge = _huge_body(server)
        workers = os.cpu_count()
    finally:
        server.close()

    unloaded_p50 = phases["c1"]["/search"]["p50_ms"]
    goals = {
        "throughput_c32_over_c1": round(phases["c32"]["requests_per_second"] / phases["c1"]["requests_per_second"], 2),
        "throughput_c32_over_c1_updating": round(phases["c32_updating"]["requests_per_second"]
                                                 / phases["c1_updating"]["requests_per_second"], 2),
        "search_p95_under_load_over_unloaded_p50": round(phases["c32"]["/search"]["p95_ms"] / unloaded_p50, 2),
        "search_p95_under_load_and_updates_over_unloaded_p50": round(
            phases["c32_updating"]["/search"]["p95_ms"] / unloaded_p50, 2),
        "huge_body_median_ms": huge["median_ms"],
        "huge_body_rss_change_mb": round(huge["server_rss_mb"]["after"] - huge["server_rss_mb"]["before"], 1),
        "errors": sum(p["errors"] for p in phases.values()),
    }
    print(json.dumps(goals, indent=2))
    name = "service_load" if args.worker_kind == "process" else "service_load_threads"
    write_result(name, {"index": "ODSum meeting, 232 transcripts, 100-token passages, wordllama",
                        "server_workers": workers, "worker_kind": args.worker_kind,
                        "requests": {"search": args.searches, "summarize": args.summaries},
                        "phases": phases, "huge_body": huge, "goals": goals})


if __name__ == "__main__":
    main()
