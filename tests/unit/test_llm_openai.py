"""The OpenAI-compatible client against real loopback HTTP servers that misbehave on purpose."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from citesum.errors import LLMError
from citesum.llm import ChatRequest, ResponseCache
from citesum.llm.openai_compat import OpenAIChat
from loopback import ok, reply

pytest.importorskip("httpx")


def _client(url: str, **options: object) -> OpenAIChat:
    return OpenAIChat("test-model", url, backoff_base=0.01, backoff_max=0.05, **options)  # type: ignore[arg-type]


REQUEST = ChatRequest.from_prompt("Summarize the documents.")


def test_429_with_retry_after_then_200(serve) -> None:  # type: ignore[no-untyped-def]
    def script(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        if n == 0:
            reply(handler, 429, b'{"error": "slow down"}', {"Retry-After": "1"})
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
    server = serve(lambda h, r, n: reply(h, 503, b"overloaded") if n < 2 else ok(h, r, n))
    assert _client(server.url).complete(REQUEST).text.startswith("- echo")
    assert server.calls == 3

    always = serve(lambda h, r, n: reply(h, 500, b"internal error"))
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
    server = serve(lambda h, r, n: reply(h, 200, b"{not json") if n == 0 else ok(h, r, n))
    assert _client(server.url).complete(REQUEST).text.startswith("- echo")
    broken = serve(lambda h, r, n: reply(h, 200, b'{"choices": "nope"}'))
    with pytest.raises(LLMError, match="malformed response body"):
        _client(broken.url, max_retries=1).complete(REQUEST)


def test_other_4xx_fail_at_once_without_leaking_the_key(serve, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TEST_KEY", "sk-secret-value")
    server = serve(lambda h, r, n: reply(h, 401, b'{"error": "bad key"}'))
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
    """Eight requests are in flight at once, never more. Each request is held until the eighth has arrived (however
    long a loaded machine takes to start them), then a little longer, for a ninth to show if the client sent one;
    a wall-clock bound on the whole batch had failed on CI's loaded machine."""
    lock = threading.Lock()
    eight = threading.Event()
    in_flight = [0]
    peak = [0]

    def script(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            if in_flight[0] >= 8:
                eight.set()
        eight.wait(timeout=20)  # a client that holds fewer than eight at once waits it out, and fails below
        time.sleep(0.2)
        with lock:
            in_flight[0] -= 1
        ok(handler, request, n)

    llm = _client(serve(script).url, concurrency=8, timeout=60)
    requests = [ChatRequest.from_prompt(f"prompt {i}") for i in range(16)]
    completions = llm.map(requests)
    assert [c.text for c in completions] == [f"- echo: prompt {i}" for i in range(16)]  # order kept
    assert eight.is_set() and peak[0] == 8


SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def test_json_schema_form_falls_back_to_what_the_server_takes(serve) -> None:  # type: ignore[no-untyped-def]
    """OpenAI's json_schema first; a server refusing it (llama-cpp-python: a 500 naming response_format) gets
    json_object with the schema, and every later request goes straight to that form."""
    seen: list[object] = []

    def llama_cpp_python(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        seen.append(request.get("response_format"))
        if request["response_format"]["type"] != "json_object":
            reply(handler, 500, b'{"error": {"message": "loc: (body, response_format, type): '
                                 b'Input should be text or json_object"}}')
        else:
            ok(handler, request, n)

    llm = _client(serve(llama_cpp_python).url)
    request = ChatRequest.from_prompt("Answer in JSON.", json_schema=SCHEMA)
    assert llm.complete(request).text.startswith("- echo")
    assert llm.complete(ChatRequest.from_prompt("Again.", json_schema=SCHEMA)).text.startswith("- echo")
    assert seen == [{"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True}},
                    {"type": "json_object", "schema": SCHEMA}, {"type": "json_object", "schema": SCHEMA}]
    assert llm.usage.retries == 0  # a refused form is not a failed attempt


def test_a_server_without_structured_output_gets_the_prompt_alone(serve) -> None:  # type: ignore[no-untyped-def]
    seen: list[object] = []

    def plain(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        seen.append(request.get("response_format"))
        if "response_format" in request:
            reply(handler, 400, b'{"error": "unsupported parameter: response_format"}')
        else:
            ok(handler, request, n)

    llm = _client(serve(plain).url)
    assert llm.complete(ChatRequest.from_prompt("Answer in JSON.", json_schema=SCHEMA)).text.startswith("- echo")
    assert [None if f is None else f["type"] for f in seen] == ["json_schema", "json_object", None]  # type: ignore[index]
    # requests without a schema never carry response_format, and other 400s still fail at once
    assert "response_format" not in REQUEST.as_payload()
    other = serve(lambda h, r, n: reply(h, 400, b'{"error": "context too long"}'))
    with pytest.raises(LLMError, match="HTTP 400"):
        _client(other.url).complete(ChatRequest.from_prompt("x", json_schema=SCHEMA))
    assert other.calls == 1
