"""The endpoints of the streamed answer and of the printed page, as a hostile or careless client meets them:
no token, queries and numbers no parser should take, ids that climb out of the index, and a client that
leaves in the middle of a stream. Every refusal is JSON with the right status and no server path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from citesum.llm.fake import FakeLLM

TOKEN = "a-token-long-enough-to-be-one"
QUESTION = "What is happening with the city's water supply?"


def _json_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error", "detail"}
    return body


def test_without_the_token_the_new_endpoints_answer_nothing(live) -> None:  # type: ignore[no-untyped-def]
    server = live(token=TOKEN)
    for method, path, options in (("POST", "/summarize/stream", {"json": {"query": QUESTION}}),
                                  ("GET", "/printed/doc001.txt?page=1", {}),
                                  ("GET", "/printed-image/doc001.txt?page=1", {})):
        response = httpx.request(method, server.url + path, timeout=10, **options)
        _json_error(response, 401)
        assert "doc001" not in response.text or "token" in response.text


@pytest.mark.parametrize("body, status", [({"query": "\x00\x00"}, 422), ({"query": QUESTION, "bullets": 10**5000}, 400),
                                          ({"query": QUESTION, "retriever": "nope"}, 400),
                                          ({"query": QUESTION, "summarizer": "llm"}, 400),
                                          ({"query": QUESTION, "unknown": 1}, 422)])
def test_a_stream_refused_is_a_json_error_not_a_stream(live, body: dict[str, Any], status: int) -> None:  # type: ignore[no-untyped-def]
    server = live()
    content = ('{"query": "%s", "bullets": %s}' % (QUESTION, "9" * 5000)).encode() if body.get("bullets") else None
    response = (httpx.post(server.url + "/summarize/stream", content=content, timeout=30,
                           headers={"content-type": "application/json"}) if content is not None
                else httpx.post(server.url + "/summarize/stream", json=body, timeout=30))
    _json_error(response, status)


@pytest.mark.parametrize("path, status", [("/printed/..%2F..%2F..%2Fetc%2Fpasswd?page=1", 404),
                                          ("/printed/doc001.txt?page=0", 422),
                                          ("/printed/doc001.txt?page=" + "9" * 5000, 422),
                                          ("/printed-image/doc001.txt?page=1&width=99999999", 422),
                                          ("/printed/doc001.txt", 422),
                                          ("/printed/doc001.txt?page=1&evidence=%00", 422)])
def test_a_printed_page_asked_wrongly_is_a_json_error_without_a_path(live, index_path: Path, path: str,  # type: ignore[no-untyped-def]
                                                                     status: int) -> None:
    server = live()
    response = httpx.get(server.url + path, timeout=30)
    _json_error(response, status)
    assert str(index_path.parent) not in response.text


def test_a_client_that_leaves_mid_stream_stops_the_model(live) -> None:  # type: ignore[no-untyped-def]
    bullets = "".join(f"- The city's water supply fell for the {n}th week. [1]\n" for n in range(1, 41))
    llm = FakeLLM([bullets])
    llm.pause = 0.05  # about 30 seconds to write it all
    server = live(llm=llm, llm_timeout_s=120)
    with httpx.stream("POST", server.url + "/summarize/stream", json={"query": QUESTION, "bullets": 20},
                      timeout=60) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event: bullet"):
                break  # the first bullet came: the reader leaves
    pieces = -(-len(bullets) // llm.piece_chars)
    deadline = httpx.Timeout(5).read
    import time

    until = time.monotonic() + 10
    while httpx.get(server.url + "/health", timeout=deadline).json()["workers"]["summarize"]["busy"]:
        assert time.monotonic() < until, "the service kept the model writing for a client that left"
        time.sleep(0.1)
    assert llm.streamed < pieces / 2  # the model was stopped, not left to finish
    assert httpx.post(server.url + "/search", json={"query": QUESTION}, timeout=10).status_code == 200


def test_a_stream_longer_than_the_body_time_limit_is_not_cut(live) -> None:  # type: ignore[no-untyped-def]
    """The body's time limit held the wait for the client to leave too: a streamed answer longer than it was
    cut off (the peer closed the connection without its last chunk)."""
    bullets = "".join(f"- The city's water supply fell for the {n}th week. [1]\n" for n in range(1, 4))
    llm = FakeLLM([bullets])
    llm.pause = 0.15  # about 3 seconds in all
    server = live(llm=llm, body_timeout_s=1.0)
    with httpx.stream("POST", server.url + "/summarize/stream", json={"query": QUESTION}, timeout=30) as response:
        names = [line[len("event: "):] for line in response.iter_lines() if line.startswith("event: ")]
    assert names[0] == "context" and names[-1] == "done" and "error" not in names
