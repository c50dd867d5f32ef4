"""The service as a hostile client, a careless operator and a flaky disk meet it: connections held before
authentication, bodies no parser should take, storage that fails under a write, and errors that must never name
the server's paths. Every answer is JSON with the right status; none is a 500."""

from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from citesum.index.store import DB_NAME
from citesum.service.connections import RateLimitedLog

PARTIAL_HEAD = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def _connect(url: str, source: str = "127.0.0.1") -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5, source_address=(source, 0))
    sock.sendall(PARTIAL_HEAD)
    return sock


def _is_open(sock: socket.socket) -> bool:
    """Whether the server still holds ``sock`` (it neither answered nor closed it)."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def _reply(sock: socket.socket) -> bytes:
    sock.settimeout(5)
    parts = []
    try:
        while chunk := sock.recv(65536):
            parts.append(chunk)
    except OSError:
        pass
    return b"".join(parts)


def _json_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) >= {"error", "detail"}
    return body


def _response(sock: socket.socket) -> bytes:
    """One whole response read from a kept-alive connection (its head, then ``content-length`` bytes)."""
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")))
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _settles(count: Callable[[], int], wanted: int, within: float = 10.0) -> int:
    """``count()`` once it gives ``wanted``, or its last value after ``within`` seconds (a loaded machine may take
    a moment to close what it refused)."""
    deadline = time.monotonic() + within
    while (value := count()) != wanted and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


def _timed_health(url: str) -> float:
    started = time.monotonic()
    assert httpx.get(url + "/health", timeout=5).status_code == 200
    return time.monotonic() - started


# ---- what a client holds before it is authenticated ---------------------------------------------------------
def test_a_client_sending_part_of_its_headers_gets_408_and_is_cut_off(live) -> None:  # type: ignore[no-untyped-def]
    server = live(header_timeout_s=1.0, token="t" * 32)  # the token does not help: no header has come whole
    held = [_connect(server.url) for _ in range(40)]
    time.sleep(0.3)
    assert all(_is_open(sock) for sock in held)  # before: held for as long as the client liked
    time.sleep(1.5)
    for sock in held:
        reply = _reply(sock)
        assert reply.startswith(b"HTTP/1.1 408 "), reply[:80]
        assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"] == "request timeout"
        sock.close()
    assert server.server.limits.timed_out == 40


def test_a_keep_alive_connection_gets_the_same_limit_for_its_next_request(live) -> None:  # type: ignore[no-untyped-def]
    server = live(header_timeout_s=1.0)
    sock = _connect(server.url)
    sock.sendall(b"1\r\n\r\n")  # the first request whole: answered, the connection kept
    assert _response(sock).startswith(b"HTTP/1.1 200 ")
    sock.sendall(PARTIAL_HEAD)  # then part of a second, and nothing more
    assert _reply(sock).startswith(b"HTTP/1.1 408 ")  # before: held (uvicorn's keep-alive timer stops at a byte)


def test_one_client_holds_at_most_its_share_and_a_fresh_client_is_answered(live) -> None:  # type: ignore[no-untyped-def]
    server = live(max_connections_per_client=10, header_timeout_s=30.0)
    held = [_connect(server.url) for _ in range(60)]
    # the newest ten: older waiting ones made room
    assert _settles(lambda: sum(_is_open(sock) for sock in held), 10) == 10
    assert all(_is_open(sock) for sock in held[-10:])
    assert _timed_health(server.url) < 1.0  # from the same address: it takes a waiting one's place
    for sock in held:
        sock.close()


def test_many_addresses_hold_at_most_the_total_and_a_fresh_client_is_answered(live) -> None:  # type: ignore[no-untyped-def]
    server = live(max_connections=20, header_timeout_s=30.0)
    held = [_connect(server.url, source=f"127.0.{1 + n // 250}.{2 + n % 250}") for n in range(80)]
    assert _settles(lambda: sum(_is_open(sock) for sock in held), 20) == 20
    assert len(server.server.limits) == 20
    assert _timed_health(server.url) < 1.0
    for sock in held:
        sock.close()


def test_a_request_being_served_is_never_cut_for_another(live) -> None:  # type: ignore[no-untyped-def]
    server = live(max_connections_per_client=1, header_timeout_s=30.0)
    host, port = server.url.removeprefix("http://").split(":")
    served = socket.create_connection((host, int(port)), timeout=5)
    body = b'{"query": "reservoir", "k": 1}'
    served.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])  # its head came; its body is coming
    time.sleep(0.3)
    newcomer = _connect(server.url)
    assert _settles(lambda: int(_is_open(newcomer)), 0) == 0 and _is_open(served)
    served.sendall(body[10:])
    assert _response(served).startswith(b"HTTP/1.1 200 ")


def test_a_body_sent_after_its_request_was_refused_is_not_held_for_ever(live) -> None:  # type: ignore[no-untyped-def]
    """A request refused before its body is read (no token: 401) leaves the client sending a body nobody reads:
    it gets the same limit as a slow head, and its place can be taken meanwhile."""
    server = live(header_timeout_s=1.0, token="t" * 32, max_connections_per_client=1)
    host, port = server.url.removeprefix("http://").split(":")
    trickling = socket.create_connection((host, int(port)), timeout=5)
    trickling.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 1000000\r\n\r\n{")
    assert _response(trickling).startswith(b"HTTP/1.1 401 ")
    trickling.sendall(b" ")  # before: one byte, and the connection was held for as long as the client liked
    started = time.monotonic()
    assert _reply(trickling) == b"" and time.monotonic() - started < 5
    second = socket.create_connection((host, int(port)), timeout=5)
    second.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n{")
    assert _response(second).startswith(b"HTTP/1.1 401 ")
    third = _connect(server.url)  # the per-client limit is 1: the answered one makes room
    assert _settles(lambda: int(_is_open(second)), 0) == 0 and _is_open(third)


def test_a_malformed_request_is_answered_in_json(live) -> None:  # type: ignore[no-untyped-def]
    server = live()
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        reply = _reply(sock)
    head, body = reply.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 400 ") and b"application/json" in head  # before: plain text
    assert json.loads(body)["error"] == "bad request"


def test_a_flood_of_one_message_is_logged_a_few_times_then_counted() -> None:
    log = logging.getLogger("citesum.test.flood")
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    log.addHandler(handler)
    limit = RateLimitedLog(burst=3, window_s=0.2)
    log.addFilter(limit)
    try:
        for n in range(1000):
            log.error("socket.accept() out of system resource\nsocket: <fd=%d>", n)
        assert len(records) == 3
        time.sleep(0.25)
        log.error("socket.accept() out of system resource\nsocket: <fd=%d>", 0)
        assert len(records) == 4 and "[997 more like it" in records[-1]
    finally:
        log.removeHandler(handler)
        log.removeFilter(limit)


# ---- bodies and headers no parser should take ----------------------------------------------------------------
@pytest.mark.parametrize("field", ["k", "budget", "unknown"])
def test_an_integer_of_thousands_of_digits_is_400_not_500(live, field: str) -> None:  # type: ignore[no-untyped-def]
    server = live()
    path = "/search" if field == "k" else "/summarize"
    body = '{"query": "reservoir", "%s": %s}' % (field, "9" * 5000)
    response = httpx.post(server.url + path, content=body, headers={"Content-Type": "application/json"})
    assert "too long" in _json_error(response, 400)["detail"]


def test_an_https_origin_is_not_the_origin_of_a_plain_http_service(live) -> None:  # type: ignore[no-untyped-def]
    server = live()
    port = server.url.rsplit(":", 1)[1]
    body = {"query": "reservoir", "k": 1}
    foreign = httpx.post(server.url + "/search", json=body, headers={"Origin": f"https://127.0.0.1:{port}"})
    _json_error(foreign, 403)
    own = httpx.post(server.url + "/search", json=body, headers={"Origin": f"http://127.0.0.1:{port}"})
    assert own.status_code == 200
    # behind a TLS-terminating proxy on this machine, which says so, the https page is the service's own
    proxied = httpx.post(server.url + "/search", json=body, headers={
        "Origin": f"https://127.0.0.1:{port}", "X-Forwarded-Proto": "https"})
    assert proxied.status_code == 200


@pytest.mark.parametrize("query", ["\u0000", "\u0000" * 50, " \u0000\u200b\t"])
def test_a_query_of_nothing_readable_is_refused(live, query: str) -> None:  # type: ignore[no-untyped-def]
    server = live()
    for path in ("/search", "/summarize"):
        response = httpx.post(server.url + path, json={"query": query})
        assert "control or invisible" in _json_error(response, 422)["detail"]


# ---- storage that fails under a write -----------------------------------------------------------------------
def _upload(url: str, name: str = "note.txt", size: int = 2_000) -> httpx.Response:
    # (numbered: a large text of one sentence repeated is skipped as repetitive content)
    text = " ".join(f"The reservoir held steady through winter {n}." for n in range(size // 40 + 1))[:size]
    return httpx.post(url + "/documents", files=[("files", (name, text.encode(), "text/plain"))], timeout=30)


def _no_path(body: Any, *folders: Path) -> None:
    text = json.dumps(body)
    for folder in folders:
        assert str(folder) not in text and str(folder.resolve()) not in text, text
    assert "/tmp/" not in text and "/root/" not in text, text


def test_an_upload_to_a_read_only_folder_is_503_with_retry_after(live, read_only_view, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    server = live(uploads_dir=read_only_view(uploads))
    response = _upload(server.url)
    body = _json_error(response, 503)  # before: 500 (PermissionError)
    assert response.headers["retry-after"] and "Read-only file system" in body["detail"]
    _no_path(body, tmp_path)


def test_an_upload_to_a_full_disk_is_503_with_retry_after(live, small_disk, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = live(uploads_dir=small_disk(64))
    response = _upload(server.url, size=200_000)
    body = _json_error(response, 503)  # before: 500 (OSError)
    assert response.headers["retry-after"] and "No space left" in body["detail"]
    _no_path(body, tmp_path)


def test_a_job_that_finds_the_disk_full_says_so_without_a_path(live, small_disk, tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    from citesum.index.store import Index, IndexSettings

    disk = small_disk(1024)
    index = Index.create(disk / "ix", IndexSettings())
    index.add(haystack.documents[:1])
    server = live(index.path, uploads_dir=tmp_path / "uploads")
    accepted = _upload(server.url, "big.txt", 3_000_000)
    assert accepted.status_code == 202
    for _ in range(300):
        job = httpx.get(server.url + accepted.headers["location"]).json()
        if job["state"] in ("committed", "failed"):
            break
        time.sleep(0.1)
    assert job["state"] == "failed" and "no space left" in job["error"].lower(), job
    _no_path(job, disk, tmp_path)  # before: the index's full path and the file's
    assert httpx.get(server.url + "/health").status_code == 200  # the previous generation answers


# ---- errors that named the server's paths -------------------------------------------------------------------
def test_an_index_without_a_passage_graph_is_named_by_its_folder(live, index_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = live()
    response = httpx.post(server.url + "/search", json={"query": "reservoir", "retriever": "lightpal"})
    body = _json_error(response, 400)
    assert "citesum graph --index ix" in body["detail"]
    _no_path(body, index_path)


def test_an_index_gone_from_under_the_service_is_503_without_its_path(live, index_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = live()
    (index_path / DB_NAME).rename(index_path.parent / "moved.db")
    response = httpx.get(server.url + "/health")
    assert response.status_code == 503 and response.headers["retry-after"]
    _no_path(response.json(), index_path)
    response = httpx.post(server.url + "/search", json={"query": "reservoir"})
    _no_path(_json_error(response, 503), index_path)
