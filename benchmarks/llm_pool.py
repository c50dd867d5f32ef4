"""A pool of LLM endpoints: 200 requests over three loopback replicas, against one replica alone.

Each replica stands for a GPU server: it answers a request after a fixed 200 ms and works on at most 4 at once
(more wait in its queue, as a server's batch slots), and the client sends each endpoint at most 4 at once. Runs:
  * one replica alone (the baseline);
  * three healthy replicas (ideal speed-up 3x);
  * three replicas, one of which stops listening half-way through its share (connections refused from then
    on): every request must still complete, on the other two;
  * three replicas, one of them 3x slower: least-outstanding routing gives it fewer requests.
Reported per run: completed requests, wall time, speed-up over one replica, retries, and each endpoint's
requests sent / answered / failed / ejections.

Run: python benchmarks/llm_pool.py
Writes: benchmarks/results/llm_pool.json
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402
from _loopback import Replica  # noqa: E402

from citesum.llm import ChatRequest  # noqa: E402
from citesum.llm.openai_compat import OpenAIChat  # noqa: E402

REQUESTS = 200
DELAY_S = 0.2
SLOTS = 4


def run(replicas: list[Replica]) -> dict[str, Any]:
    llm = OpenAIChat("bench", [r.url for r in replicas], cache=None, concurrency=SLOTS, max_retries=5)
    requests = [ChatRequest.from_prompt(f"request {i}") for i in range(REQUESTS)]
    started = time.perf_counter()
    completions = llm.map(requests)
    seconds = time.perf_counter() - started
    for replica in replicas:
        replica.stop()
    return {"completed": sum(1 for c in completions if c.text == "- ok [1]"), "seconds": round(seconds, 3),
            "retries": llm.usage.retries,
            "endpoints": [{k: v for k, v in row.items() if k != "url"} for row in llm.pool.stats()]}


def main() -> None:
    results = {"one_replica": run([Replica(DELAY_S, SLOTS)]),
               "three_replicas": run([Replica(DELAY_S, SLOTS) for _ in range(3)]),
               # its share is ~67 requests: it goes down after 33
               "three_one_failing_half_way": run([Replica(DELAY_S, SLOTS, fail_after=REQUESTS // 6),
                                                  Replica(DELAY_S, SLOTS), Replica(DELAY_S, SLOTS)]),
               "three_one_3x_slower": run([Replica(DELAY_S * 3, SLOTS), Replica(DELAY_S, SLOTS),
                                           Replica(DELAY_S, SLOTS)])}
    alone = results["one_replica"]["seconds"]
    for name, result in results.items():
        result["speedup_over_one_replica"] = round(alone / result["seconds"], 2)
        print(name, json.dumps(result), flush=True)
    write_result("llm_pool", {"requests": REQUESTS, "server_delay_s": DELAY_S, "server_slots": SLOTS,
                              "client_concurrency_per_endpoint": SLOTS, "ideal_speedup_three": 3.0,
                              "results": results})


if __name__ == "__main__":
    main()
