"""A loopback stand-in for an LLM server, for the client benchmarks (llm_client.py, llm_pool.py)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Replica:
    """A loopback OpenAI-style chat server answering "- ok [1]" to each request after ``delay`` seconds, at most
    ``slots`` at a time (more wait, as on a server's batch slots; None: no limit); after ``fail_after`` requests
    it drops the next and closes its socket (a replica that went down)."""

    def __init__(self, delay: float, slots: int | None = None, fail_after: int | None = None) -> None:
        self.calls = 0
        busy = threading.Semaphore(slots) if slots else contextlib.nullcontext()
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers
            # the status line and headers go out before the body, in two writes: with Nagle's algorithm the
            # body then waits for the client's delayed ACK, 40 ms a response (measured: 12.3 s instead of
            # ~10 for 200 requests of 200 ms, 4 at a time)
            disable_nagle_algorithm = True

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                with lock:
                    outer.calls += 1
                    number = outer.calls
                if fail_after is not None and number > fail_after:
                    if number == fail_after + 1:
                        threading.Thread(target=outer.stop).start()
                    self.close_connection = True  # dropped without an answer
                    return
                with busy:
                    time.sleep(delay)
                body = json.dumps({"choices": [{"index": 0, "message": {"content": "- ok [1]"}}],
                                   "usage": {"prompt_tokens": 10, "completion_tokens": 3}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            # socketserver's default listen backlog is 5: many simultaneous connects would see SYNs dropped and
            # retried a second later, which measures the kernel, not the client.
            request_queue_size = 128
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._stopped = False
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self.httpd.shutdown()
            self.httpd.server_close()
