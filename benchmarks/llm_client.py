"""Throughput of the OpenAI-compatible client: 64 requests to a loopback server that answers each after a
fixed 200 ms, at concurrency 1 and 16 (ideal speed-up 16x), then the same 64 again from the response cache.

Run: python benchmarks/llm_client.py
Writes: benchmarks/results/llm_client.json
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402

from citesum.llm import ChatRequest, ResponseCache  # noqa: E402
from citesum.llm.openai_compat import OpenAIChat  # noqa: E402

DELAY_S = 0.2
REQUESTS = 64


class _Slow(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(DELAY_S)
        body = json.dumps({"choices": [{"index": 0, "message": {"content": "- ok [1]"}}],
                           "usage": {"prompt_tokens": 10, "completion_tokens": 3}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: 16 simultaneous connects would see SYNs dropped and
    # retried a second later, which measures the kernel, not the client.
    request_queue_size = 128


def main() -> None:
    server = _Server(("127.0.0.1", 0), _Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    requests = [ChatRequest.from_prompt(f"request {i}") for i in range(REQUESTS)]
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for concurrency in (1, 16):
            cache = ResponseCache(Path(scratch) / f"cache-{concurrency}.sqlite")
            client = OpenAIChat("bench", url, concurrency=concurrency, cache=cache)
            started = time.perf_counter()
            client.map(requests)
            results[f"concurrency_{concurrency}_s"] = round(time.perf_counter() - started, 3)
        rerun = OpenAIChat("bench", url, concurrency=16, cache=ResponseCache(Path(scratch) / "cache-16.sqlite"))
        started = time.perf_counter()
        rerun.map(requests)
        results["cached_rerun_s"] = round(time.perf_counter() - started, 4)
        results["cached_rerun_hits"] = rerun.usage.cache_hits
    server.shutdown()
    results["speedup_16_vs_1"] = round(results["concurrency_1_s"] / results["concurrency_16_s"], 2)
    results["ideal_speedup"] = 16
    print(results)
    write_result("llm_client", {"requests": REQUESTS, "server_delay_s": DELAY_S, **results})


if __name__ == "__main__":
    main()
