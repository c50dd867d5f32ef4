"""A pool of LLM endpoints against real loopback servers: a fast one, a slow one, one that fails."""

from __future__ import annotations

import asyncio
import json
import pickle
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from citesum.errors import ConfigError, LLMError
from citesum.llm import ChatRequest, ResponseCache
from citesum.llm.openai_compat import OpenAIChat
from citesum.llm.pool import EndpointPool, EndpointSpec, endpoint_specs
from loopback import ok, reply

pytest.importorskip("httpx")

REQUESTS = [ChatRequest.from_prompt(f"Summarize part {i}.") for i in range(30)]


class InFlight:
    """Counts a server's simultaneous requests (the most at once is what a concurrency limit bounds)."""

    def __init__(self, delay: float) -> None:
        self.delay, self.now, self.most = delay, 0, 0
        self._lock = threading.Lock()

    def __call__(self, handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.delay)
        with self._lock:
            self.now -= 1
        ok(handler, request, n)


def _stats(llm: OpenAIChat) -> dict[str, dict[str, object]]:
    return {row["url"]: row for row in llm.pool.stats()}  # type: ignore[misc]


def test_endpoints_from_urls_and_pool_files(tmp_path: Path) -> None:
    pool = tmp_path / "pool.txt"
    pool.write_text("# replicas of one model\nhttp://gpu1:8000/v1/   16\n\nhttp://gpu2:8000/v1  # default limit\n"
                    "http://gpu1:8000/v1 4\n", encoding="utf-8")
    assert endpoint_specs(["http://a:1/v1", f"@{pool}"]) == [
        EndpointSpec("http://a:1/v1"), EndpointSpec("http://gpu1:8000/v1", 16), EndpointSpec("http://gpu2:8000/v1")]
    assert endpoint_specs("https://api.example.com/v1/") == [EndpointSpec("https://api.example.com/v1")]

    bad = tmp_path / "bad.txt"
    for text, message in [("http://a:1/v1 many\n", r"bad.txt:1: expected 'URL \[max_concurrency\]'"),
                          ("http://a:1/v1 0\n", "a positive whole number"),
                          ("\n# nothing\n", "names no endpoint"),
                          ("gpu1:8000\n", r"bad.txt:1: an endpoint must be an http:// or https:// URL")]:
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=message):
            endpoint_specs([f"@{bad}"])
    with pytest.raises(ConfigError, match="cannot read the endpoint pool file"):
        endpoint_specs([f"@{tmp_path / 'missing.txt'}"])
    with pytest.raises(ConfigError, match="no LLM endpoint given"):
        endpoint_specs([])


def test_least_outstanding_routing_keeps_each_limit_and_favours_the_fast_replica(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fast, slow = InFlight(0.02), InFlight(0.4)
    fast_server, slow_server = serve(fast), serve(slow)
    pool = tmp_path / "pool.txt"
    pool.write_text(f"{fast_server.url} 3\n{slow_server.url} 2\n", encoding="utf-8")
    llm = OpenAIChat("m", [f"@{pool}"], cache=None)
    completions = llm.map(REQUESTS)
    assert [c.text for c in completions] == [f"- echo: {r.messages[0].content[:20]}" for r in REQUESTS]
    assert fast.most <= 3 and slow.most <= 2  # each endpoint's own limit
    stats = _stats(llm)
    assert stats[fast_server.url]["answered"] + stats[slow_server.url]["answered"] == 30  # type: ignore[operator]
    # the slow replica holds each request 20x longer, so it is given far fewer
    assert stats[slow_server.url]["sent"] <= 6 < stats[fast_server.url]["sent"]  # type: ignore[operator]
    assert llm.usage.retries == 0


def test_a_failing_endpoint_is_ejected_and_its_requests_fail_over_at_once(serve) -> None:  # type: ignore[no-untyped-def]
    good, slow = InFlight(0.01), InFlight(0.2)
    good_server, slow_server = serve(good), serve(slow)
    failing = serve(lambda h, r, n: reply(h, 500, b"CUDA out of memory"))
    # a long backoff: were a retry to wait for the failing endpoint, the run would take minutes
    llm = OpenAIChat("m", [failing.url, good_server.url, slow_server.url], cache=None, backoff_base=60.0,
                     backoff_max=60.0, concurrency=4)
    started = time.monotonic()
    completions = llm.map(REQUESTS)
    assert time.monotonic() - started < 10
    assert all(c.text.startswith("- echo") for c in completions)
    stats = _stats(llm)
    assert stats[failing.url]["ejected_now"] and stats[failing.url]["answered"] == 0
    # ejected after its first failure; only the requests already sent to it failed with it
    assert stats[failing.url]["ejections"] == 1 and failing.calls == stats[failing.url]["failed"] <= 4
    assert llm.usage.retries == failing.calls


def test_an_endpoint_that_goes_down_half_way(serve) -> None:  # type: ignore[no-untyped-def]
    """One replica answers its first 5 requests, then drops the 6th and stops listening (connections refused)."""
    down: list[object] = []

    def until_down(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        if n < 5:
            time.sleep(0.02)
            ok(handler, request, n)
            return
        if not down:
            down.append(n)
            threading.Thread(target=lambda: (flaky.httpd.shutdown(), flaky.httpd.server_close())).start()
        handler.close_connection = True  # no response: the client sees the connection drop

    flaky = serve(until_down)
    good = serve(InFlight(0.02))
    llm = OpenAIChat("m", [flaky.url, good.url], cache=None, backoff_base=0.2, backoff_max=0.4, concurrency=2)
    assert all(c.text.startswith("- echo") for c in llm.map(REQUESTS))
    stats = _stats(llm)
    assert down and stats[flaky.url]["answered"] == 5 and stats[flaky.url]["failed"] >= 1
    assert stats[good.url]["answered"] == 25


def test_a_probe_reinstates_an_endpoint_that_recovered(serve) -> None:  # type: ignore[no-untyped-def]
    recovering = serve(lambda h, r, n: reply(h, 503, b"loading model") if n < 2 else ok(h, r, n))
    llm = OpenAIChat("m", recovering.url, cache=None, backoff_base=0.05, backoff_max=0.1, concurrency=4)
    assert llm.complete(REQUESTS[0]).text.startswith("- echo")  # two 503s, then the answer, on the only endpoint
    assert recovering.calls == 3 and llm.usage.retries == 2
    [row] = llm.pool.stats()
    assert row["failed"] == 2 and row["answered"] == 1 and not row["ejected_now"]
    llm.map(REQUESTS[1:9])
    assert llm.pool.endpoints[0].failed_in_a_row == 0  # back to its full limit


def test_every_endpoint_failing_is_reported_with_each_url(serve) -> None:  # type: ignore[no-untyped-def]
    first = serve(lambda h, r, n: reply(h, 502, b"bad gateway"))
    second = serve(lambda h, r, n: reply(h, 500, b"internal error"))
    llm = OpenAIChat("m", [first.url, second.url], cache=None, backoff_base=0.01, backoff_max=0.02, max_retries=3)
    with pytest.raises(LLMError, match=r"2 endpoints: gave up after 4 attempt\(s\); last error: http://127"):
        llm.complete(REQUESTS[0])
    assert first.calls + second.calls == 4 and first.calls >= 1 and second.calls >= 1


def test_a_4xx_is_an_answer_not_an_ejection(serve) -> None:  # type: ignore[no-untyped-def]
    refusing = serve(lambda h, r, n: reply(h, 400, b'{"error": "prompt too long"}'))
    llm = OpenAIChat("m", [refusing.url, serve(ok).url], cache=None)
    # the pool's first pick is its first endpoint (both idle, neither used yet)
    with pytest.raises(LLMError, match="HTTP 400 \\(not retried\\)"):
        llm.complete(REQUESTS[0])
    assert refusing.calls == 1 and not llm.pool.stats()[0]["ejected_now"]


def test_threads_share_one_pool_and_its_limits(serve) -> None:  # type: ignore[no-untyped-def]
    """The service calls one backend from several threads, each with its own event loop."""
    counter = InFlight(0.05)
    server = serve(counter)
    llm = OpenAIChat("m", server.url, cache=None, concurrency=3)
    results: list[int] = []
    threads = [threading.Thread(target=lambda part=part: results.append(len(llm.map(REQUESTS[part::3]))))
               for part in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(results) == [10, 10, 10] and server.calls == 30
    assert counter.most == 3  # the limit held across the three threads, and was used


def test_a_pool_shares_the_cache_of_its_first_url_and_pickles_without_its_traffic(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first, second = serve(ok), serve(ok)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    OpenAIChat("m", first.url, cache=cache).map(REQUESTS[:5])
    pooled = OpenAIChat("m", [first.url, second.url], cache=cache)
    pooled.map(REQUESTS[:5])
    assert pooled.usage.cache_hits == 5 and first.calls == 5 and second.calls == 0
    pooled.map(REQUESTS[5:9])
    assert second.calls > 0  # new requests spread over both
    copy = pickle.loads(pickle.dumps(pooled))
    assert [(e.url, e.max_concurrency, e.sent) for e in copy.pool.endpoints] == [(first.url, 8, 0), (second.url, 8, 0)]


def test_waiters_wake_when_an_ejection_ends() -> None:
    """Every endpoint ejected: a request waits for the first to come back, then probes it."""
    pool = EndpointPool([EndpointSpec("http://a/v1", 4)], concurrency=4, backoff_base=1.0, backoff_max=1.0)

    async def scenario() -> float:
        endpoint = await pool.acquire()
        pool.release(endpoint, "failed", wait=0.2)
        started = time.monotonic()
        probe = await pool.acquire()
        waited = time.monotonic() - started
        assert probe is endpoint and endpoint.failed_in_a_row == 1
        # while the probe is out, no second request goes to the endpoint that failed
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(pool.acquire(), 0.1)
        pool.release(probe)
        assert endpoint.failed_in_a_row == 0 and endpoint.outstanding == 0
        return waited

    assert 0.18 <= asyncio.run(scenario()) < 1.0
    assert json.dumps(pool.stats()) and pool.stats()[0]["ejections"] == 1


def test_a_waiter_cancelled_as_it_is_woken_is_cancelled_and_takes_no_endpoint() -> None:
    """A request waiting for a full pool, cancelled (its caller gave up) in the same turn of the loop as a release
    wakes it: the cancellation must reach the caller, and the freed slot stay free. (Python 3.11's
    asyncio.wait_for returned the woken result instead, losing the cancellation: the waiter then took the slot.)"""
    pool = EndpointPool([EndpointSpec("http://a/v1", 1), EndpointSpec("http://b/v1", 1)], concurrency=1,
                        backoff_base=1.0, backoff_max=1.0)

    async def scenario() -> None:
        held = await pool.acquire()
        pool.release(await pool.acquire(), "failed", wait=30.0)  # b set aside: the waiter waits with a timeout
        waiting = asyncio.ensure_future(pool.acquire())
        await asyncio.sleep(0.01)  # it waits now: the pool is full
        pool.release(held)  # schedules its wake-up ...
        waiting.cancel()  # ... and the caller gives up before it runs
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert held.outstanding == 0 and not pool._waiters
        assert await asyncio.wait_for(pool.acquire(), 1.0) is held  # the slot is free

    asyncio.run(scenario())


def test_the_pick_is_the_endpoint_with_fewest_requests_outstanding() -> None:
    pool = EndpointPool([EndpointSpec("http://a/v1", 3), EndpointSpec("http://b/v1", 3)], concurrency=3,
                        backoff_base=1.0, backoff_max=1.0)

    async def scenario() -> list[str]:
        a1, b1, a2 = [await pool.acquire() for _ in range(3)]  # idle ties go in turn
        assert [a1.url, b1.url, a2.url] == ["http://a/v1", "http://b/v1", "http://a/v1"]
        pool.release(a1)
        pool.release(a2)  # a: 0 outstanding, b: 1 (a slow reply)
        picks = [await pool.acquire() for _ in range(4)]  # a, then the tie goes to b (sent fewer), a, then a or b
        return [p.url for p in picks]

    picks = asyncio.run(scenario())
    assert picks[:3] == ["http://a/v1", "http://b/v1", "http://a/v1"]
    assert [e.outstanding for e in pool.endpoints] in ([3, 2], [2, 3])


def test_the_cli_takes_a_pool_file_and_repeated_base_urls(serve, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from citesum.cli import main
    from loopback import answer

    monkeypatch.setenv("CITESUM_CACHE_DIR", str(tmp_path / "cache"))
    sample = {"topic_fn": "t", "subtopic_id": "s", "summary": ["- Rates rise 7.5% [1]"],
              "reference_insights": [{"insight_id": "rates", "insight": "Water rates rise 7.5 percent."}],
              "annotation": [{"insight_id": "rates", "coverage": "fully_covered", "candidate_id": 0}]}
    annotations = tmp_path / "annotations.json"
    annotations.write_text(json.dumps([sample]), encoding="utf-8")
    judge = serve(lambda h, r, n: answer(h, '{"coverage": "FULL", "bullet_id": 1}'))
    failing = serve(lambda h, r, n: reply(h, 503, b"overloaded"))
    pool = tmp_path / "pool.txt"
    pool.write_text(f"{failing.url} 1\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", "judge", "--annotations", str(annotations), "--judge", "llm",
                                       "--model", "m", "--base-url", f"@{pool}", "--base-url", judge.url, "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)[0]["linking_accuracy"] == 1.0
    assert failing.calls == 1 and judge.calls == 1  # the first pick failed over to the other endpoint

    bad = CliRunner().invoke(main, ["eval", "judge", "--annotations", str(annotations), "--judge", "llm",
                                    "--model", "m", "--base-url", f"@{tmp_path / 'none.txt'}"])
    assert bad.exit_code == 1 and "cannot read the endpoint pool file" in bad.stderr


def test_a_4xx_in_a_batch_leaves_the_other_requests_abandoned_not_failed(serve) -> None:  # type: ignore[no-untyped-def]
    """gather raises at the first error; the other requests must end before the client closes, counted as
    abandoned, or their dropped connections would eject a sound endpoint for every caller."""
    def script(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        if "part 3" in request["messages"][-1]["content"]:
            reply(handler, 400, b'{"error": "prompt too long"}')
        else:
            time.sleep(0.5)
            ok(handler, request, n)

    llm = OpenAIChat("m", serve(script).url, cache=None, backoff_base=5.0, backoff_max=5.0)
    with pytest.raises(LLMError, match="HTTP 400"):
        llm.map(REQUESTS[:4])
    [endpoint] = llm.pool.endpoints
    assert endpoint.outstanding == 0 and endpoint.failed == 0 and endpoint.ejected_until == 0.0
    started = time.monotonic()
    assert llm.complete(REQUESTS[0]).text.startswith("- echo")
    assert time.monotonic() - started < 2  # not held back by an ejection


def test_an_unusable_body_retries_that_request_without_setting_the_endpoint_aside(serve) -> None:  # type: ignore[no-untyped-def]
    """A malformed body is this request's bad luck, not the server's health: the others keep the endpoint at
    its full width, and only this request waits before it asks again."""
    def script(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        if "part 2" in request["messages"][-1]["content"] and not getattr(script, "done", False):
            script.done = True  # type: ignore[attr-defined]
            reply(handler, 200, b"{not json")
        else:
            ok(handler, request, n)

    llm = OpenAIChat("m", serve(script).url, cache=None, backoff_base=0.01, backoff_max=0.02)
    assert all(c.text.startswith("- echo") for c in llm.map(REQUESTS[:6]))
    [endpoint] = llm.pool.endpoints
    assert llm.usage.retries == 1 and endpoint.ejections == 0 and endpoint.failed == 0
    assert endpoint.answered == 7 and endpoint.outstanding == 0
