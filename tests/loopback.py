"""A loopback HTTP server answering OpenAI-style chat requests from a script: misbehaving servers for the
client tests, scripted judges for the CLI tests, and servers that answer GETs too (model lists, llama.cpp's
/props) when given a script for them."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

Script = Callable[[BaseHTTPRequestHandler, dict, int], None]


def reply(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    handler.send_response(status)
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def ok(handler: BaseHTTPRequestHandler, request: dict, _: int) -> None:
    """Echoes the start of the prompt."""
    answer(handler, "- echo: " + request["messages"][-1]["content"][:20])


class Server:
    """A loopback server whose n-th request (0-based) is answered by ``script(handler, body, n)``; GETs are
    answered by ``get`` (with an empty body), or refused with a 501 (and not counted) as by a server without GET.
    Every request's method and path is logged in ``paths``, in order."""

    def __init__(self, script: Script, get: Script | None = None) -> None:
        self.calls = 0
        self.times: list[float] = []
        self.paths: list[str] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                script(self, request, self._count())

            def do_GET(self) -> None:  # noqa: N802
                if get is None:
                    with lock:
                        outer.paths.append(f"{self.command} {self.path}")
                    self.send_error(501, f"Unsupported method ({self.command!r})")
                    return
                get(self, {}, self._count())

            def _count(self) -> int:
                with lock:
                    number = outer.calls
                    outer.calls += 1
                    outer.times.append(time.monotonic())
                    outer.paths.append(f"{self.command} {self.path}")
                return number

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        # close() waits for the loop's next look at its shutdown flag: look often, so that closing is quick
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


def answer(handler: BaseHTTPRequestHandler, text: str) -> None:
    """A 200 with ``text`` as the assistant's message."""
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5}}
    reply(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})


def stream_answer(handler: BaseHTTPRequestHandler, pieces: list[str], pause: float = 0.0,
                  sent: list[int] | None = None) -> None:
    """A 200 streaming ``pieces`` as server-sent chat-completion chunks, ``pause`` seconds apart; ``sent`` gets
    how many pieces went out before the client left (if it did)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.end_headers()
    count = 0
    try:
        for piece in pieces:
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            handler.wfile.flush()
            count += 1
            time.sleep(pause)
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        if sent is not None:
            sent.append(count)
