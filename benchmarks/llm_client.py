"""Throughput of the OpenAI-compatible client: 64 requests to a loopback server that answers each after a
fixed 200 ms, at concurrency 1 and 16 (ideal speed-up 16x), then the same 64 again from the response cache.

Run: python benchmarks/llm_client.py
Writes: benchmarks/results/llm_client.json
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402
from _loopback import Replica  # noqa: E402

from citesum.llm import ChatRequest, ResponseCache  # noqa: E402
from citesum.llm.openai_compat import OpenAIChat  # noqa: E402

DELAY_S = 0.2
REQUESTS = 64


def main() -> None:
    server = Replica(DELAY_S)
    requests = [ChatRequest.from_prompt(f"request {i}") for i in range(REQUESTS)]
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for concurrency in (1, 16):
            cache = ResponseCache(Path(scratch) / f"cache-{concurrency}.sqlite")
            client = OpenAIChat("bench", server.url, concurrency=concurrency, cache=cache)
            started = time.perf_counter()
            client.map(requests)
            results[f"concurrency_{concurrency}_s"] = round(time.perf_counter() - started, 3)
        rerun = OpenAIChat("bench", server.url, concurrency=16, cache=ResponseCache(Path(scratch) / "cache-16.sqlite"))
        started = time.perf_counter()
        rerun.map(requests)
        results["cached_rerun_s"] = round(time.perf_counter() - started, 4)
        results["cached_rerun_hits"] = rerun.usage.cache_hits
    server.stop()
    results["speedup_16_vs_1"] = round(results["concurrency_1_s"] / results["concurrency_16_s"], 2)
    results["ideal_speedup"] = 16
    print(results)
    write_result("llm_client", {"requests": REQUESTS, "server_delay_s": DELAY_S, **results})


if __name__ == "__main__":
    main()
