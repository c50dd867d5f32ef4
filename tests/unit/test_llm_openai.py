"""The OpenAI-compatible client against real loopback HTTP servers that misbehave on purpose."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Iterator

import pytest

from citesum.errors import LLMError
from citesum.llm import ChatRequest, ResponseCache
from citesum.llm.openai_compat import OpenAIChat

pytest.importorskip("httpx")

Script = Callable[[BaseHTTPRequestHandler, dict, int], None]


def _reply(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    handler.send_response(status)
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def ok(handler: BaseHTTPRequestHandler, request: dict, _: int) -> None:
    text = "- echo: " + request["messages"][-1]["content"][:20]
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5}}
    _reply(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})


class Server:
    """A loopback server whose n-th request (0-based) is answered by ``script(handler, body, n)``."""

    def __init__(self, script: Script) -> None:
        self.calls = 0
        self.times: list[float] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    number = outer.calls
                    outer.calls += 1
                    outer.times.append(time.monotonic())
                script(self, request, number)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


@pytest.fixture
def serve() -> Iterator[Callable[[Script], Server]]:
    servers: list[Server] = []

    def start(script: Script) -> Server:
        servers.append(Server(script))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _client(url: str, **options: object) -> OpenAIChat:
    return OpenAIChat("test-model", url, backoff_base=0.01, backoff_max=0.05, **options)  # type: ignore[arg-type]


REQUEST = ChatRequest.from_prompt("Summarize the documents.")


def test_429_with_retry_after_then_200(serve) -> None:  # type: ignore[no-untyped-def]
    def script(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        if n == 0:
            _reply(handler, 429, b'{"error": "slow down"}', {"Retry-After": "1"})
        else:
            ok(handler, request, n)

    server = serve(script)
    llm = _client(server.url)
    completion = llm.complete(REQUEST)
    assert completion.text == "- echo: Summarize the docume"
    assert server.calls == 2 and llm.usage.retries == 1
    assert server.times[1] - server.times[0] >= 0.95  # Retry-After honoured, not the 10 ms backoff
    assert llm.usage.prompt_tokens == 11 and llm.usage.completion_tokens == 5


def test_5xx_are_retried_then_reported(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lambda h, r, n: _reply(h, 503, b"overloaded") if n < 2 else ok(h, r, n))
    assert _client(server.url).complete(REQUEST).text.startswith("- echo")
    assert server.calls == 3

    always = serve(lambda h, r, n: _reply(h, 500, b"internal error"))
    with pytest.raises(LLMError, match=r"gave up after 3 attempt\(s\); last error: HTTP 500: internal error"):
        _client(always.url, max_retries=2).complete(REQUEST)
    assert always.calls == 3


def test_slow_server_times_out_and_is_retried(serve) -> None:  # type: ignore[no-untyped-def]
    def script(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        if n == 0:
            time.sleep(1.0)  # slower than the client's timeout
        ok(handler, request, n)

    server = serve(script)
    assert _client(server.url, timeout=0.3).complete(REQUEST).text.startswith("- echo")
    assert server.calls == 2
    with pytest.raises(LLMError, match="timed out after 0.3s"):
        _client(serve(lambda h, r, n: (time.sleep(1.0), ok(h, r, n))).url, timeout=0.3, max_retries=1).complete(REQUEST)


def test_malformed_json_is_retried_then_reported(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lambda h, r, n: _reply(h, 200, b"{not json") if n == 0 else ok(h, r, n))
    assert _client(server.url).complete(REQUEST).text.startswith("- echo")
    broken = serve(lambda h, r, n: _reply(h, 200, b'{"choices": "nope"}'))
    with pytest.raises(LLMError, match="malformed response body"):
        _client(broken.url, max_retries=1).complete(REQUEST)


def test_other_4xx_fail_at_once_without_leaking_the_key(serve, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TEST_KEY", "sk-secret-value")
    server = serve(lambda h, r, n: _reply(h, 401, b'{"error": "bad key"}'))
    with pytest.raises(LLMError, match="HTTP 401 \\(not retried\\)") as caught:
        _client(server.url, api_key_env="TEST_KEY").complete(REQUEST)
    assert server.calls == 1 and "sk-secret-value" not in str(caught.value)


def test_connection_refused_is_reported(tmp_path: Path) -> None:
    with pytest.raises(LLMError, match="connection failed"):
        _client("http://127.0.0.1:9/v1", max_retries=1).complete(REQUEST)


def test_cache_makes_a_rerun_free(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = serve(ok)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    first = _client(server.url, cache=cache).complete(REQUEST)
    again = _client(server.url, cache=ResponseCache(tmp_path / "cache.sqlite"))  # a new process would do this
    second = again.complete(REQUEST)
    assert server.calls == 1 and second.cached and second.texts == first.texts
    assert again.usage.cache_hits == 1 and again.usage.requests == 0
    again.complete(ChatRequest.from_prompt("Summarize the documents.", temperature=0.5))  # another request
    assert server.calls == 2


def test_concurrency_limit_runs_requests_in_parallel(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lambda h, r, n: (time.sleep(0.2), ok(h, r, n)))
    llm = _client(server.url, concurrency=8)
    requests = [ChatRequest.from_prompt(f"prompt {i}") for i in range(16)]
    started = time.monotonic()
    completions = llm.map(requests)
    elapsed = time.monotonic() - started
    assert [c.text for c in completions] == [f"- echo: prompt {i}" for i in range(16)]  # order kept
    assert elapsed < 1.6  # 16 x 200 ms serially would be 3.2 s; 8 at a time is about 0.4 s
