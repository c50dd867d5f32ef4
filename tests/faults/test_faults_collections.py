"""Every endpoint over collections, as a stranger or a neighbour meets it: a token of another collection, a token
the service does not know, a read token that tries to write, a collection name no URL should carry, an
oversized upload, and a client that leaves in the middle of a stream. Every refusal is JSON with the right
status, never a server path, and a collection not held is as absent as one that does not exist."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from citesum.index.store import Index, IndexSettings
from live import LiveServer

OWNER, NEIGHBOUR, READER = "owner-of-the-city-news-00001", "neighbour-of-another-0002", "reader-of-the-news-000003"
QUESTION = "What is happening with the city's water supply?"


@pytest.fixture
def two(tmp_path: Path, index_path: Path, haystack, live: Callable[..., LiveServer]) -> tuple[LiveServer, Path]:  # type: ignore[no-untyped-def]
    other = Index.create(tmp_path / "other", IndexSettings())
    other.add(haystack.documents[6:9])
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [
        {"name": "owner", "token": OWNER, "role": "write", "collections": ["news"]},
        {"name": "neighbour", "token": NEIGHBOUR, "role": "write", "collections": ["other"]},
        {"name": "reader", "token": READER, "role": "read", "collections": ["news"]}]}), encoding="utf-8")
    return live({"news": index_path, "other": other.path}, tokens_file=tokens, max_upload_bytes=64 * 1024), tmp_path


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _json_error(response: httpx.Response, status: int, server_paths: list[Path]) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error", "detail"}
    assert not any(str(path) in response.text for path in server_paths), response.text
    return body


ENDPOINTS = [("POST", "/search", {"json": {"query": QUESTION, "collection": "news"}}),
             ("POST", "/search", {"json": {"query": QUESTION, "collections": ["news", "other"]}}),
             ("POST", "/summarize", {"json": {"query": QUESTION, "collection": "news"}}),
             ("POST", "/summarize/stream", {"json": {"query": QUESTION, "collection": "news"}}),
             ("GET", "/documents/doc001.txt?collection=news", {}),
             ("GET", "/printed/doc001.txt?page=1&collection=news", {}),
             ("GET", "/printed-image/doc001.txt?page=1&collection=news", {}),
             ("POST", "/documents?collection=news", {"files": {"files": ("a.md", b"# A\n\nA new page.\n")}}),
             ("DELETE", "/documents/doc001.txt?collection=news", {})]


@pytest.mark.parametrize("method, path, options", ENDPOINTS)
def test_a_neighbours_token_finds_no_such_collection(two, method: str, path: str, options: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    server, folder = two
    refused = httpx.request(method, server.url + path, headers=_as(NEIGHBOUR), timeout=30, **options)
    assert _json_error(refused, 404, [folder])["detail"] == "no collection 'news'"
    elsewhere = {**options, **({"json": json.loads(json.dumps(options["json"]).replace("news", "nowhere"))}
                               if "json" in options else {})}
    absent = httpx.request(method, server.url + path.replace("news", "nowhere"), headers=_as(OWNER), timeout=30,
                           **elsewhere)
    assert _json_error(absent, 404, [folder])["detail"] == "no collection 'nowhere'"
    stranger = httpx.request(method, server.url + path, headers=_as("x" * 30), timeout=30, **options)
    _json_error(stranger, 403, [folder])


@pytest.mark.parametrize("method, path, options", [e for e in ENDPOINTS if e[0] in ("POST", "DELETE")
                                                   and e[1].startswith("/documents")])
def test_a_read_token_changes_nothing(two, method: str, path: str, options: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    server, folder = two
    response = httpx.request(method, server.url + path, headers=_as(READER), timeout=30, **options)
    assert "role is 'read'" in _json_error(response, 403, [folder])["detail"]
    assert httpx.get(server.url + "/documents/doc001.txt", headers=_as(OWNER), timeout=30).status_code == 200


@pytest.mark.parametrize("name", ["../other", "news/../other", "a" * 65, "%00", "news other"])
def test_a_collection_name_no_url_should_carry(two, name: str) -> None:  # type: ignore[no-untyped-def]
    server, folder = two
    response = httpx.post(server.url + "/search", json={"query": QUESTION, "collection": name},
                          headers=_as(OWNER), timeout=30)
    assert response.status_code in (404, 422)
    _json_error(response, response.status_code, [folder])
    listed = httpx.post(server.url + "/search", json={"query": QUESTION, "collections": [name]},
                        headers=_as(OWNER), timeout=30)
    assert listed.status_code in (404, 422)


def test_an_oversized_upload_to_a_collection_is_413(two) -> None:  # type: ignore[no-untyped-def]
    server, folder = two
    response = httpx.post(server.url + "/documents?collection=news", headers=_as(OWNER), timeout=30,
                          files={"files": ("big.md", b"# Big\n\n" + b"word " * 40_000)})
    _json_error(response, 413, [folder])


def test_a_client_that_leaves_a_collections_stream_leaves_the_service_well(two) -> None:  # type: ignore[no-untyped-def]
    server, _ = two
    host, port = server.url.removeprefix("http://").split(":")
    body = json.dumps({"query": QUESTION, "collection": "news"}).encode()
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(b"POST /summarize/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           + f"Authorization: Bearer {OWNER}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        assert connection.recv(64).startswith(b"HTTP/1.1 200")  # it began; the client goes
    for token, collection in ((OWNER, "news"), (NEIGHBOUR, "other")):
        answer = httpx.post(server.url + "/summarize", json={"query": QUESTION, "collection": collection},
                            headers=_as(token), timeout=60)
        assert answer.status_code == 200
