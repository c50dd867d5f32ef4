"""The HTTP service through FastAPI's test client: the API, its limits and every fault the issue found."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from citesum.errors import ConfigError, MissingExtraError
from citesum.index.store import DB_NAME, Index, IndexSettings
from citesum.ingest import ingest_paths
from citesum.service.config import ServiceConfig, read_token
from citesum.tokens import get_tokenizer
from citesum.types import Document

fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from citesum.service.app import create_app  # noqa: E402
from fixtures import make_pdf_pages, make_zip_bomb  # noqa: E402

BASE = "http://127.0.0.1:8000"
WATER = "How much did the Lakemont reservoir fall?"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, haystack) -> Path:  # type: ignore[no-untyped-def]
    return haystack.write(tmp_path_factory.mktemp("corpus") / "corpus").resolve()


def _build(folder: Path, corpus: Path) -> Path:
    documents, _ = ingest_paths([corpus], exclude=["gold.json"])  # an absolute path: sources are server paths
    index = Index.create(folder, IndexSettings())
    index.add(documents)
    return folder


@pytest.fixture
def index_path(tmp_path: Path, corpus: Path) -> Path:
    return _build(tmp_path / "ix", corpus)


@pytest.fixture(scope="module")
def shared_index(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """One index for the tests that only read it."""
    return _build(tmp_path_factory.mktemp("shared") / "ix", corpus)


def _client(index_path: Path, llm: Any = None, **config: Any) -> TestClient:
    """The app with thread workers (no process start-up per test; test_service_live runs processes)."""
    return TestClient(create_app(index_path, ServiceConfig(**{"worker_kind": "thread", **config}), llm=llm),
                      base_url=BASE)


@pytest.fixture(scope="module")
def client(shared_index: Path) -> Iterator[TestClient]:
    with _client(shared_index) as test_client:
        yield test_client


def _wait(client: TestClient, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}").json()
        if job["state"] in ("committed", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def _error(response: Any, status: int) -> str:
    """The detail of a JSON error with ``status``; every error has the same shape."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "detail"}, body
    return str(body["detail"])


# ---- the API ---------------------------------------------------------------------------------------------
def test_health_search_and_a_summary_whose_citations_carry_evidence(client, haystack) -> None:  # type: ignore[no-untyped-def]
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["documents"] == len(haystack.documents)
    assert health["summarizer"] == "extractive" and health["limits"]["max_budget"] == 32_000

    hits = client.post("/search", json={"query": "Lakemont reservoir capacity", "retriever": "bm25", "k": 3}).json()
    assert hits["retriever"] == "bm25" and len(hits["hits"]) == 3
    top = hits["hits"][0]
    assert top["document_id"] in haystack.gold["water-reservoir"] and "Lakemont" in top["text"]
    assert top["source"] == top["document_id"] and top["title"]
    ranked = client.post("/search", json={"query": "bus fares for students", "documents": True, "k": 2}).json()
    assert [d["rank"] for d in ranked["documents"]] == [1, 2]

    answer = client.post("/summarize", json={"query": WATER, "bullets": 2, "budget": 3000}).json()
    assert answer["summarizer"] == "extractive" and 1 <= len(answer["bullets"]) <= 2
    assert answer["context"]["tokens"] <= 3000 and "text" not in answer["context"] and "prompt" not in answer
    first = answer["bullets"][0]
    assert "Lakemont" in first["text"] and set(first["citations"]) <= set(haystack.gold["water-reservoir"])
    assert [e["document_id"] for e in first["evidence"]] == first["citations"]
    for evidence in first["evidence"]:  # each span is the document's own text at those offsets
        document = client.get(f"/documents/{evidence['document_id']}").json()
        assert document["text"][evidence["char_start"]:evidence["char_end"]] == evidence["text"]
        assert "Lakemont" in evidence["text"] and evidence["supported"]
        assert answer["sources"][str(evidence["number"])]["document_id"] == evidence["document_id"]


def test_sources_are_relative_to_the_indexed_folder_never_server_paths(client, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    answer = client.post("/summarize", json={"query": WATER}).json()
    hits = client.post("/search", json={"query": "reservoir", "k": 5}).json()["hits"]
    document = client.get(f"/documents/{hits[0]['document_id']}").json()
    shown = [s["source"] for s in answer["sources"].values()] + [h["source"] for h in hits] + [document["source"]]
    assert shown and all(s and not s.startswith("/") and str(corpus) not in s for s in shown)
    assert str(corpus) not in json.dumps(answer) + json.dumps(hits) + json.dumps(document)


def test_a_document_with_the_sentence_that_states_a_claim(client, haystack) -> None:  # type: ignore[no-untyped-def]
    document_id = sorted(haystack.gold["water-pipes"])[0]
    found = client.get(f"/documents/{document_id}", params={"evidence": "leaking pipes lose 18 percent of water"})
    body = found.json()
    assert found.status_code == 200 and body["id"] == document_id and body["format"]
    (evidence,) = body["evidence"]
    assert "18 percent" in evidence["text"]
    assert body["text"][evidence["char_start"]:evidence["char_end"]] == evidence["text"]
    assert "not-there.txt" in _error(client.get("/documents/not-there.txt"), 404)
    assert "empty or only whitespace" in _error(client.get(f"/documents/{document_id}", params={"evidence": " "}), 422)
    # a bullet that quotes two sentences (one refers back to the other) is shown whole, as its document writes it
    text = body["text"]
    first = text.index(evidence["text"])
    second = re.compile(r"[^.!?]+[.!?]").match(text, evidence["char_end"])
    assert second is not None and "\n\n" not in second.group()
    quoted = " ".join(f"{evidence['text']}{second.group()}".split())
    (whole,) = client.get(f"/documents/{document_id}", params={"evidence": quoted}).json()["evidence"]
    assert (whole["char_start"], whole["char_end"]) == (first, second.end()), whole
    assert " ".join(whole["text"].split()) == quoted


def test_the_page_and_its_assets_are_served_from_the_wheel(client) -> None:  # type: ignore[no-untyped-def]
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert '<script src="/static/app.js"' in page.text and "http" not in page.text.split("<body>")[1]
    for name, kind in (("app.js", "text/javascript"), ("app.css", "text/css")):
        asset = client.get(f"/static/{name}")
        assert asset.status_code == 200 and asset.headers["content-type"].startswith(kind) and asset.content
    for tricky in ("/static/app.py", "/static/%2e%2e%2fapp.py", "/static/..%2f..%2fservice%2fapp.py", "/static/"):
        assert client.get(tricky).status_code == 404, tricky
    assert client.get("/favicon.ico").status_code == 204


# ---- limits and strict types -----------------------------------------------------------------------------
@pytest.mark.parametrize("body, message", [
    ({"query": "water", "k": "5"}, "valid integer"),
    ({"query": "water", "k": True}, "valid integer"),
    ({"query": "water", "documents": "yes"}, "valid boolean"),
    ({"query": "   \n\t"}, "empty or only whitespace"),
    ({"query": ""}, "empty or only whitespace"),
    # (before: searched, and answered with a lead of no bearing on anything)
    ({"query": "?!?! ... ;:"}, "no words to look for"),
    ({"query": "water", "k": 101}, "at most 100"),
    ({"query": "water", "kk": 3}, "Extra inputs are not permitted"),
    ({"query": "x" * 2001}, "2,001 characters"),
    ({"query": "a1 " * 300}, "tokens; this service takes at most 256"),
    ({"query": 5}, "valid string"),
])
def test_search_refuses_what_it_should_with_422(client, body: dict[str, Any], message: str) -> None:  # type: ignore[no-untyped-def]
    assert message in _error(client.post("/search", json=body), 422)


@pytest.mark.parametrize("body, message", [
    ({"query": "water", "budget": 10**12}, "uses at most 32,000"),
    ({"query": "water", "budget": "15000"}, "valid integer"),
    ({"query": "water", "words": 1}, "takes 20 to 2,000"),
    ({"query": "water", "words": 10**9}, "takes 20 to 2,000"),
    ({"query": "water", "bullets": 21}, "at most 20"),
    ({"query": "water", "bullets": 10**9}, "bullets is 1,000,000,000; this service writes at most 20"),
    ({"query": "water", "order": "sideways"}, "original"),
    ({"query": "water", "budget": 0}, "greater than or equal to 1"),
])
def test_summarize_refuses_what_it_should_with_422(client, body: dict[str, Any], message: str) -> None:  # type: ignore[no-untyped-def]
    assert message in _error(client.post("/summarize", json=body), 422)


def test_a_lone_surrogate_is_a_422_not_a_500(client) -> None:  # type: ignore[no-untyped-def]
    # JSON may spell a lone surrogate; no UTF-8 text can hold one (it crashed the response before)
    raw = '{"query": "water \\ud800 supply"}'.encode()
    for path in ("/search", "/summarize"):
        response = client.post(path, content=raw, headers={"content-type": "application/json"})
        assert "lone UTF-16 surrogate) at position 6" in _error(response, 422)


def test_every_route_that_reads_a_json_body_has_it_checked_before_it(client) -> None:  # type: ignore[no-untyped-def]
    # the streamed answer's route was missing from the guard's list, and answered malformed JSON with a 422 that
    # said "body.10: JSON decode error": every POST route but the upload (multipart) must be on the list
    from citesum.service.guard import JSON_PATHS, UPLOAD_PATH

    app = client.app
    while not hasattr(app, "openapi"):  # (the guard, and any middleware, wrap the application)
        app = app.app
    paths = app.openapi()["paths"]
    posted = {path for path, operations in paths.items() if "post" in operations}
    assert posted - {UPLOAD_PATH} == set(JSON_PATHS), posted


def test_malformed_bodies_get_json_errors_that_say_what_to_fix(client) -> None:  # type: ignore[no-untyped-def]
    def post(body: bytes, kind: str | None = "application/json", path: str = "/search") -> Any:
        return client.post(path, content=body, headers={"content-type": kind} if kind else {})

    # the page's own endpoint, the streamed answer, says the same (it answered 422 "body.10: JSON decode error")
    for path in ("/summarize", "/summarize/stream"):
        assert "not valid JSON: Expecting value at line 1, column 11" in _error(post(b'{"query": ', path=path), 400)
        assert "Content-Type: application/json" in _error(post(b'{"query": "w"}', "text/plain", path), 415)
    assert "not UTF-8" in _error(post(b'{"query": "\xff\xfe"}'), 400)
    assert "not valid JSON: Expecting value at line 1, column 11" in _error(post(b'{"query": '), 400)
    # (a message that ends with its own "at" gets no second one)
    assert "not valid JSON: Unterminated string starting at line 1, column 11" in _error(post(b'{"query": "wat'), 400)
    assert "nested too deeply" in _error(post(b"[" * 30_000 + b"]" * 30_000), 400)
    assert "Content-Type: application/json" in _error(post(b'{"query": "water"}', "text/plain"), 415)
    assert "got 'none'" in _error(post(b'{"query": "water"}', None), 415)
    unknown = client.post("/search", json={"query": "w", "retriever": "splade"})
    assert "retriever 'splade' is no retriever citesum knows" in _error(unknown, 400)
    many = client.post("/search", json={"query": "w", "retriever": "hybrid:bm25+bm25+dense"})
    assert "4 different retrievers at most" in _error(many, 400)
    # an unknown retriever is refused with those this service runs (before: the list named the oracle, which needs
    # judgments a request cannot give, and lightpal, whose graph this index has not)
    for retriever, refused in [("splade", "splade"), ("oracle", "oracle"), ("hybrid:bm25+oracle", "oracle"),
                               ("lightpal:hybrid:bm25+colbert", "colbert")]:
        for path in ("/search", "/summarize", "/summarize/stream"):
            detail = _error(client.post(path, json={"query": "water", "retriever": retriever}), 400)
            assert f"retriever '{refused}' " in detail, (path, detail)
            offered = detail.split("choose one of: ")[1]
            assert "bm25" in offered and "oracle" not in offered and "lightpal" not in offered, detail
    assert "judgments, which a request cannot give" in _error(
        client.post("/search", json={"query": "water", "retriever": "oracle"}), 400)
    # raptor reads a tree of summaries to answer with: it searches nothing, and fuses with nothing
    for path, retriever in (("/search", "raptor"), ("/summarize", "hybrid:bm25+raptor")):
        detail = _error(client.post(path, json={"query": "water", "retriever": retriever}), 400)
        assert "retriever 'raptor' is no retriever this service runs" in detail, detail
    assert client.post("/search", json={"query": "water", "retriever": "hybrid:bm25+dense"}).status_code == 200
    assert "cannot hold even the headers" in _error(
        client.post("/summarize", json={"query": "water", "order": "full", "budget": 5}), 400)
    # a budget too small for any passage says so (it answered "nothing matched the query" before)
    assert "a budget of 5 tokens cannot hold one retrieved passage" in _error(
        client.post("/summarize", json={"query": "water", "budget": 5}), 400)
    # the wrong method says which one the path takes (before: "Method Not Allowed" alone)
    assert _error(client.get("/summarize"), 405).endswith("Method Not Allowed: this path takes POST")


def test_a_lexical_search_that_matches_nothing_has_no_hits(client) -> None:  # type: ignore[no-untyped-def]
    for retriever in ("bm25", "bm25-rm3", "keywords"):
        nothing = client.post("/search", json={"query": "zzqx qqzv", "retriever": retriever}).json()
        assert nothing["hits"] == [], retriever
        documents = client.post("/search", json={"query": "zzqx", "retriever": retriever, "documents": True})
        assert documents.json()["documents"] == []
    assert client.post("/search", json={"query": "reservoir", "retriever": "bm25"}).json()["hits"]


def test_bodies_over_the_limit_are_413_before_parsing(shared_index: Path) -> None:
    with _client(shared_index, max_json_bytes=1024, max_upload_bytes=4096) as small:
        big_json = json.dumps({"query": "w" * 2000}).encode()
        assert "limit here is 1,024" in _error(
            small.post("/search", content=big_json, headers={"content-type": "application/json"}), 413)
        upload = small.post("/documents", files=[("files", ("big.txt", b"x" * 10_000, "text/plain"))])
        assert "limit here is 4,096" in _error(upload, 413)

        def chunked() -> Iterator[bytes]:  # no Content-Length: counted while it streams
            yield b'{"query": "'
            for _ in range(8):
                yield b"w" * 500
            yield b'"}'

        streamed = small.post("/search", content=chunked(), headers={"content-type": "application/json"})
        assert "over the 1,024-byte limit" in _error(streamed, 413)


def test_a_summary_shorter_than_asked_says_why(client) -> None:  # type: ignore[no-untyped-def]
    # the bullet count is a maximum: fewer facts answer, and the word limit leaves one out, which the notes say
    answer = client.post("/summarize", json={"query": WATER, "words": 20, "bullets": 5}).json()
    assert 1 <= len(answer["bullets"]) < 5 and answer["abstained"] is False
    assert sum(len(b["text"].split()) for b in answer["bullets"]) <= 20
    assert all("20-word limit" in note for note in answer["notes"])


def test_docs_and_openapi_only_when_asked(shared_index: Path) -> None:
    with _client(shared_index) as plain:
        assert _error(plain.get("/docs"), 404) and _error(plain.get("/openapi.json"), 404)
    with _client(shared_index, docs=True) as documented:
        spec = documented.get("/openapi.json").json()
        assert documented.get("/docs").status_code == 200
        assert {"/search", "/summarize", "/documents", "/jobs/{job_id}", "/health"} <= set(spec["paths"])


# ---- who may call it -------------------------------------------------------------------------------------
def test_the_host_header_must_be_an_allowed_name(client) -> None:  # type: ignore[no-untyped-def]
    for host in ("rebind.attacker.example", "rebind.attacker.example:8000", "127.0.0.1.nip.io"):
        assert "DNS rebinding" in _error(client.get("/health", headers={"host": host}), 400)
    for host in ("127.0.0.1:evil.example", "localhost:80@evil", "", "[::1", "local host"):
        assert "is not a host name" in _error(client.get("/health", headers={"host": host}), 400), host
    for host in ("127.0.0.1:8000", "localhost", "[::1]:8000", "LOCALHOST:8000"):
        assert client.get("/health", headers={"host": host}).status_code == 200


def test_cross_site_posts_are_refused(client) -> None:  # type: ignore[no-untyped-def]
    foreign = client.post("/search", json={"query": "water"}, headers={"origin": "http://attacker.example"})
    assert "attacker.example" in _error(foreign, 403)
    # a page on another local port is another site (a cross-origin form post needs no preflight)
    # and so is an https page of the same host and port, for a plain-HTTP service (the scheme must match)
    for origin in ("null", "http://127.0.0.1:3000", "http://localhost:8000", "http://127.0.0.1", "file://",
                   "https://127.0.0.1:8000"):
        upload = client.post("/documents", files=[("files", ("a.txt", b"hello there", "text/plain"))],
                             headers={"origin": origin})
        assert "only pages of this service" in _error(upload, 403), origin
        assert _error(client.delete("/documents/doc001.txt", headers={"origin": origin}), 403)
    assert client.post("/search", json={"query": "water"}, headers={"origin": BASE}).status_code == 200


def test_a_token_guards_everything_but_the_page(shared_index: Path) -> None:
    token = "s3cret-token-of-32-characters-xx"
    with _client(shared_index, token=token) as guarded:
        assert guarded.get("/").status_code == 200 and guarded.get("/static/app.js").status_code == 200
        missing = guarded.post("/search", json={"query": "water"})
        assert "Bearer" in _error(missing, 401) and missing.headers["www-authenticate"].startswith("Bearer")
        assert _error(guarded.get("/health", headers={"authorization": "Bearer wrong-token-wrong-token"}), 403)
        assert _error(guarded.get("/health", headers={"authorization": token}), 401)
        good = {"authorization": f"Bearer {token}"}
        assert guarded.get("/health", headers=good).status_code == 200
        assert guarded.post("/search", json={"query": "water"}, headers=good).status_code == 200
        for tricky in ("//health", "/HEALTH", "/health/", "/static/../health", "/jobs/x", "/documents/doc001.txt"):
            answer = guarded.get(BASE + tricky, follow_redirects=False)  # a full URL: "//x" alone names a host
            assert answer.status_code in (401, 404) and "Lakemont" not in answer.text, tricky


def test_a_non_loopback_bind_needs_a_token(tmp_path: Path) -> None:
    for host in ("0.0.0.0", "::", "192.168.1.20", "example.org"):
        with pytest.raises(ConfigError, match="without a token"):
            ServiceConfig(host=host)
    assert ServiceConfig(host="0.0.0.0", token="x" * 20).token
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert ServiceConfig(host=host).token is None
    short = tmp_path / "token"
    short.write_text("abc\n")
    with pytest.raises(ConfigError, match="at least 16"):
        read_token(str(short))
    short.write_text("a-long-enough-token-here\nignored second line\n")
    assert read_token(str(short)) == "a-long-enough-token-here"
    assert read_token(None, {"CITESUM_TOKEN": "from-the-environment-1"}) == "from-the-environment-1"
    assert read_token(None, {}) is None


# ---- a consistent view, and faults of the index ----------------------------------------------------------
def test_an_index_update_is_seen_by_the_next_request(index_path: Path) -> None:
    with _client(index_path) as client:
        before = client.get("/health").json()["documents"]
        Index.open(index_path).add([Document("new.txt", "New", "The Zephyr ferry will cross the bay every hour.")])
        assert client.get("/health").json()["documents"] == before + 1
        hits = client.post("/search", json={"query": "Zephyr ferry", "retriever": "bm25", "k": 1}).json()["hits"]
        assert hits[0]["document_id"] == "new.txt"


def test_a_damaged_database_makes_health_503_with_the_reason(index_path: Path) -> None:
    with _client(index_path, integrity_every_s=0) as client:
        assert client.get("/health").status_code == 200
        database = index_path / DB_NAME
        size = database.stat().st_size
        with open(database, "r+b") as handle:  # keep the header page, garble every other one
            handle.seek(4096)
            handle.write(bytes((i * 131 + 7) % 256 for i in range(size - 4096)))
        health = client.get("/health")
        assert health.status_code == 503 and health.headers["retry-after"]
        body = health.json()
        assert body["status"] == "degraded" and ("corrupt" in body["detail"] or "damaged" in body["detail"])
        assert "corrupt" in _error(client.post("/search", json={"query": "water"}), 503)


def test_a_deleted_index_folder_is_a_503_not_a_client_error(index_path: Path) -> None:
    with _client(index_path) as client:
        assert client.post("/search", json={"query": "water"}).status_code == 200
        shutil.rmtree(index_path)
        assert "is gone" in _error(client.post("/search", json={"query": "water"}), 503)
        assert client.get("/health").status_code == 503


def test_a_request_reads_one_connection_per_worker_thread(index_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import citesum.index.store as store

    opened: list[Path] = []
    real = store.connect_read_only

    def counting(path: Path, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(store, "connect_read_only", counting)
    with _client(index_path, workers=1) as client:
        assert client.post("/summarize", json={"query": WATER}).status_code == 200
        first = len(opened)
        for _ in range(5):
            assert client.post("/summarize", json={"query": WATER}).status_code == 200
            assert client.post("/search", json={"query": "water"}).status_code == 200
        # the worker reuses its connection; before, one /summarize opened ~165
        assert len(opened) == first <= 3


# ---- uploads and deletions ---------------------------------------------------------------------------------
def test_upload_indexes_in_the_background_and_reports_each_file(index_path: Path) -> None:
    with _client(index_path) as client:
        files = [("files", ("ferry notes.txt", b"The Zephyr ferry will cross the bay every hour from May.",
                            "text/plain")),
                 ("files", ("bridge.md", b"# Bridge\n\nThe Harlow bridge reopens in June after repairs.",
                            "text/markdown")),
                 ("files", ("empty.txt", b"", "text/plain")),
                 ("files", ("broken.pdf", b"%PDF-1.4 this is not really a pdf", "application/pdf"))]
        accepted = client.post("/documents", files=files)
        assert accepted.status_code == 202 and accepted.headers["location"] == accepted.json()["status"]
        job = _wait(client, accepted.json()["job"])
        assert job["state"] == "committed" and job["stats"]["added"] == 2, job
        report = {f["path"]: f for f in job["files"]}
        assert report["ferry notes.txt"]["status"] == report["bridge.md"]["status"] == "ingested"
        assert report["empty.txt"]["status"] == "skipped" and "empty" in report["empty.txt"]["reason"]
        assert report["broken.pdf"]["status"] == "skipped" and report["broken.pdf"]["reason"]
        hit = client.post("/search", json={"query": "Zephyr ferry", "retriever": "bm25", "k": 1}).json()["hits"][0]
        assert hit["document_id"] == "uploads/ferry notes.txt" and hit["source"] == "uploads/ferry notes.txt"
        assert (index_path / "uploads" / "ferry notes.txt").read_bytes().startswith(b"The Zephyr")
        assert not (index_path / "uploads" / "empty.txt").exists()
        assert not list((index_path / "uploads" / ".staging").iterdir())

        deleted = client.delete("/documents/uploads/ferry%20notes.txt")
        assert deleted.status_code == 200 and deleted.json()["deleted"] == "uploads/ferry notes.txt"
        assert not (index_path / "uploads" / "ferry notes.txt").exists()
        assert _error(client.get("/documents/uploads/ferry%20notes.txt"), 404)
        assert _error(client.delete("/documents/uploads/ferry%20notes.txt"), 404)
        assert _error(client.get("/jobs/no-such-job"), 404)


def test_upload_names_are_sanitised_and_types_checked_before_parsing(index_path: Path) -> None:
    with _client(index_path) as client:
        escaping = client.post("/documents", files=[("files", ("../../../escaped.txt", b"Kept inside.", "text/plain"))])
        assert escaping.status_code == 202 and escaping.json()["files"] == ["escaped.txt"]
        assert _wait(client, escaping.json()["job"])["state"] == "committed"
        assert (index_path / "uploads" / "escaped.txt").exists()
        assert not (index_path.parent / "escaped.txt").exists()
        for name, status, message in [(".hidden.txt", 400, "hidden"), ("a\x1b[31m.txt", 400, "control"),
                                      ("invoice\u202etxt.exe", 400, "control"), ("tool.exe", 415, "not a supported"),
                                      ("", 400, "no file in the upload"), ("x" * 300 + ".txt", 400, "over 200 bytes")]:
            response = client.post("/documents", files=[("files", (name, b"some text here", "text/plain"))])
            assert message in _error(response, status), name
        # media types ignore case: "Multipart/Form-Data" is multipart too
        body = (b'--b0undary\r\nContent-Disposition: form-data; name="files"; filename="Case.TXT"\r\n'
                b"Content-Type: text/plain\r\n\r\nAn upper-case extension.\r\n--b0undary--\r\n")
        case = client.post("/documents", content=body, headers={"content-type": "Multipart/Form-Data; boundary=b0undary"})
        assert case.status_code == 202 and case.json()["files"] == ["Case.TXT"]
        twice = [("files", ("a.txt", b"one", "text/plain")), ("files", ("a.txt", b"two", "text/plain"))]
        kept_once = client.post("/documents", files=twice)
        assert kept_once.status_code == 202 and kept_once.json()["files"] == ["a.txt"]
        assert kept_once.json()["refused"] == [{"path": "a.txt", "reason": "the same file name twice in one upload"}]
        assert "multipart" in _error(client.post("/documents", json={"files": []}), 415)
        assert "no file" in _error(client.post("/documents", data={"other": "x"},
                                               files=[("other", ("", b"", "text/plain"))]), 400)


def test_each_file_of_an_upload_is_accepted_or_refused_on_its_own(index_path: Path) -> None:
    """Before: one unsupported file refused the whole upload (a .html with a .py: 415, the .html not added)."""
    page = b"<html><head><title>Ferry timetable</title></head><body><p>The Harlow ferry leaves at seven.</p></body></html>"
    batch = [("files", ("timetable.html", page, "text/html")),
             ("files", ("schedule.py", b"FERRIES = ['Harlow']  # the Harlow ferry list\n", "text/x-python")),
             ("files", ("notes.rst", b"Ferry notes\n===========\n\nThe Harlow ferry is late on Sundays.\n", "text/x-rst")),
             ("files", ("tool.exe", b"MZ\x90\x00", "application/octet-stream")),
             ("files", (".secret.txt", b"hidden", "text/plain"))]
    with _client(index_path) as client:
        response = client.post("/documents", files=batch)
        assert response.status_code == 202, response.text
        body = response.json()
        assert body["files"] == ["timetable.html", "schedule.py", "notes.rst"]
        assert [(r["path"], r["reason"].split(" (")[0]) for r in body["refused"]] == [
            ("tool.exe", "not a supported format"), (".secret.txt", "file name refused: '.secret.txt': hidden files are not accepted")]
        job = _wait(client, body["job"])
        assert job["state"] == "committed"
        statuses = {f["path"]: f["status"] for f in job["files"]}  # the report lists every file, kept or not
        assert statuses == {"tool.exe": "refused", ".secret.txt": "refused", "timetable.html": "ingested",
                            "schedule.py": "ingested", "notes.rst": "ingested"}
        titles = {client.get(f"/documents/uploads/{name}").json()["title"] for name in body["files"]}
        assert titles == {"Ferry timetable", "schedule.py", "Ferry notes"}  # each titled as a reader would
        assert "." + "exe" not in client.get("/health").json()["limits"]["extensions"]


def test_an_upload_of_only_bad_files_fails_with_the_reasons(index_path: Path, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    make_zip_bomb(bomb, 300 * 1024 * 1024)
    with _client(index_path) as client:
        before = client.get("/health").json()["generation"]
        response = client.post("/documents", files=[("files", ("bomb.docx", bomb.read_bytes(), "application/zip"))])
        job = _wait(client, response.json()["job"])
        assert job["state"] == "failed" and "no file of this upload gave any text" in job["error"]
        assert job["files"][0]["status"] == "skipped" and "zip" in job["files"][0]["reason"].lower()
        assert client.get("/health").json()["generation"] == before  # nothing committed


# ---- the library under the service -----------------------------------------------------------------------
def test_a_view_reads_one_generation_while_another_writer_deletes(index_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    """The 500s of /summarize during `citesum index --sync`: a request now reads the generation it started
    with, even when another writer deletes every document meanwhile (before: KeyError in pack)."""
    from citesum.pack import PackOptions
    from citesum.summarize import summarize_query

    index = Index.open(index_path)
    with index.read() as view:
        everything = [d.id for d in view.documents()]
        Index.open(index_path).delete(everything)  # another writer commits a new generation
        summary = summarize_query(WATER, view, options=PackOptions(budget=3000))
        cited = {d for b in summary.bullets for d in b.citations}
        assert cited and cited <= set(haystack.gold["water-reservoir"]) | set(everything)
        assert {d.id for d in view.documents_by_id(sorted(cited))} == cited
    assert len(index) == 0 and not list(index.documents())


def test_the_library_reads_at_most_512_tokens_of_a_query(shared_index: Path) -> None:
    from citesum.embed import get_embedder
    from citesum.retrieve import get_retriever
    from citesum.tokens import MAX_QUERY_TOKENS, clip_query, get_tokenizer

    huge = "reservoir capacity water " * 200_000  # 5 MB
    clipped = clip_query(huge)
    assert get_tokenizer().count(clipped) == MAX_QUERY_TOKENS and huge.startswith(clipped)
    assert clip_query("short query") == "short query"
    embedder = get_embedder("wordllama")
    assert (embedder.encode_query(huge) == embedder.encode_query(clipped)).all()
    with Index.open(shared_index).read() as view:
        ranker = get_retriever("hybrid", view)
        assert [h.passage.id for h in ranker.retrieve(huge, 5)] == [h.passage.id for h in ranker.retrieve(clipped, 5)]


def test_without_fastapi_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    monkeypatch.setitem(sys.modules, "fastapi", None)  # what an install without the extra looks like
    monkeypatch.delitem(sys.modules, "citesum.service.app")
    with pytest.raises(MissingExtraError, match=r"pip install 'citesum\[service\]'"):
        importlib.import_module("citesum.service.app")
    import citesum.service

    assert citesum.service.ServiceConfig().host == "127.0.0.1"  # the configuration needs no FastAPI


def test_what_crosses_to_worker_processes_pickles(tmp_path: Path) -> None:
    """The summarizer's LLM goes to each worker process, and errors come back from them."""
    import pickle

    from citesum.llm.base import Completion
    from citesum.llm.cache import ResponseCache
    from citesum.llm.openai_compat import OpenAIChat

    cache = ResponseCache(tmp_path / "responses.sqlite")
    cache.put("k", Completion(texts=("- a bullet [1]",), usage={"prompt_tokens": 3}))
    llm = pickle.loads(pickle.dumps(OpenAIChat("m", "http://127.0.0.1:9/v1", cache=cache)))
    assert llm.name == "openai:m" and llm.cache is not None and llm.cache.get("k").text == "- a bullet [1]"
    error = pickle.loads(pickle.dumps(MissingExtraError("the HTTP service", "service", "fastapi")))
    assert isinstance(error, MissingExtraError) and error.extra == "service" and "citesum[service]" in str(error)


def test_an_unexpected_failure_is_a_json_500_not_a_dropped_connection(shared_index: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from citesum.service import reader

    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(reader, "search", broken)  # stands for any bug below the API
    with TestClient(create_app(shared_index, ServiceConfig(worker_kind="thread")), base_url=BASE,
                    raise_server_exceptions=False) as client:
        response = client.post("/search", json={"query": "water"})
        assert "RuntimeError" in _error(response, 500) and "a bug" not in response.text
        assert client.get("/health").status_code == 200


def test_upload_names_with_a_hash_keep_their_source_and_file(index_path: Path) -> None:
    with _client(index_path) as client:
        accepted = client.post("/documents", files=[("files", ("plan #2 (final).txt", b"The Harlow bridge plan.",
                                                               "text/plain"))]).json()
        assert _wait(client, accepted["job"])["state"] == "committed"
        hit = client.post("/search", json={"query": "Harlow bridge plan", "retriever": "bm25", "k": 1}).json()["hits"][0]
        assert hit["document_id"] == hit["source"] == "uploads/plan #2 (final).txt"
        kept = index_path / "uploads" / "plan #2 (final).txt"
        assert kept.exists()
        assert client.delete("/documents/uploads/plan%20%232%20(final).txt").status_code == 200
        assert not kept.exists()


def test_an_upload_never_replaces_a_document_indexed_from_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    (folder / "uploads").mkdir(parents=True)
    (folder / "uploads" / "x.txt").write_text("The council's own notes on the ferry timetable.", encoding="utf-8")
    documents, _ = ingest_paths([folder])
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(documents)
    with _client(index.path) as client:
        accepted = client.post("/documents", files=[("files", ("x.txt", b"Injected text.", "text/plain"))]).json()
        job = _wait(client, accepted["job"])
        assert job["state"] == "failed" and "was not uploaded" in job["error"]
        assert "ferry" in client.get("/documents/uploads/x.txt").json()["text"]


def test_an_index_rebuilt_in_place_is_read_as_the_new_index(index_path: Path) -> None:
    """A rebuilt index starts again at generation 1: the cache of loaded generations must not take it for the
    old one (before, passages of the old index were served with the documents of the new: KeyError)."""
    with _client(index_path) as client:
        assert client.post("/summarize", json={"query": WATER}).status_code == 200
        shutil.rmtree(index_path)
        rebuilt = Index.create(index_path, IndexSettings())
        rebuilt.add([Document("b.txt", "B", "The Harlow bridge reopens in June after repairs to its deck.")])
        while Index.open(index_path).generation < 2:  # the same generation number as the old index had
            rebuilt.add([Document("c.txt", "C", f"Filler note number {rebuilt.generation}.")])
        hits = client.post("/search", json={"query": "Harlow bridge", "retriever": "bm25"}).json()["hits"]
        assert [h["document_id"] for h in hits][:1] == ["b.txt"]
        assert client.post("/summarize", json={"query": "When does the bridge reopen?"}).status_code == 200


def test_the_wal_is_checkpointed_once_readers_move_on(index_path: Path, tmp_path: Path) -> None:
    """A reader on the snapshot before a commit holds the checkpoint back; the writer retries until the
    readers of a busy service have moved on (before, the WAL stayed full until the next writer)."""
    import threading

    reading = threading.Event()

    def reader() -> None:
        with Index.open(index_path).read() as view:
            len(view)
            reading.set()
            time.sleep(0.5)

    thread = threading.Thread(target=reader)
    thread.start()
    reading.wait(10)
    Index.open(index_path).add([Document("late.txt", "Late", "A late addition about the Harlow bridge.")])
    thread.join()
    alone = tmp_path / "copy"
    alone.mkdir()
    shutil.copy(index_path / DB_NAME, alone / DB_NAME)  # the main file without its -wal
    conn = sqlite3.connect(alone / DB_NAME)
    try:
        assert conn.execute("SELECT COUNT(*) FROM documents WHERE id = 'late.txt'").fetchone()[0] == 1
    finally:
        conn.close()


def test_a_query_of_wide_characters_is_clipped_too() -> None:
    from citesum.tokens import MAX_QUERY_TOKENS, clip_query, get_tokenizer

    for query in ("🌊" * 512, "水" * 600, "𝔚" * 2000):
        assert get_tokenizer().count(clip_query(query)) <= MAX_QUERY_TOKENS
    assert clip_query("🌊" * 100) == "🌊" * 100  # 100 characters make at most 400 tokens


def test_evidence_in_a_long_document_is_found_in_its_closest_passages(tmp_path: Path) -> None:
    filler = " ".join(f"Paragraph {n} recounts the minutes of an ordinary meeting about parking." for n in range(400))
    text = filler + " The ferry to Harlow will run every forty minutes from the first of May. " + filler
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add([Document("long.txt", "Minutes", text)])
    assert len(index) > 100  # far more passages than the evidence search reads
    with _client(index.path) as client:
        found = client.get("/documents/long.txt", params={"evidence": "How often will the Harlow ferry run?"})
        (evidence,) = found.json()["evidence"]
        assert evidence["text"].startswith("The ferry to Harlow will run every forty minutes")
        assert text[evidence["char_start"]:evidence["char_end"]] == evidence["text"]


def test_evidence_in_a_pdf_says_on_which_page_it_is(tmp_path: Path) -> None:
    pages = [[(72, 700, f"Page {n} of the harbour report is about the weather in week {n}.")] for n in range(1, 4)]
    pages[1].append((72, 680, "The ferry to Harlow will run every forty minutes from the first of May."))
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(make_pdf_pages(pages))
    documents, _ = ingest_paths([folder])
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(documents)
    with _client(index.path) as client:
        found = client.get("/documents/report.pdf", params={"evidence": "How often will the Harlow ferry run?"})
        (evidence,) = found.json()["evidence"]
        assert evidence["text"].startswith("The ferry to Harlow") and evidence["page"] == 2
        assert "page_label" not in evidence  # print numbers its pages as the file orders them


def test_evidence_in_a_book_with_front_matter_says_the_page_number_printed_on_it(tmp_path: Path) -> None:
    from fixtures import BOOK_PAGES, make_book_with_front_matter

    # two pages of front matter numbered i and ii, then the body from 1: the file's third page is printed "1"
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(make_book_with_front_matter())
    (folder / "plain.pdf").write_bytes(make_pdf_pages(BOOK_PAGES))
    documents, _ = ingest_paths([folder])
    assert {d.id: d.metadata.get("page_labels") for d in documents} == {"report.pdf": ["i", "ii", "1", "2"],
                                                                        "plain.pdf": None}
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(documents)
    with _client(index.path) as client:
        found = client.get("/documents/report.pdf", params={"evidence": "How often will the Harlow ferry run?"})
        (evidence,) = found.json()["evidence"]
        # before: "page 3" only, where a reader of the book finds the sentence on the page printed "1"
        assert evidence["page"] == 3 and evidence["page_label"] == "1"
        assert client.get("/printed/report.pdf", params={"page": 3, "evidence": evidence["text"]}).json()["boxes"]


def test_health_reads_the_database_without_loading_a_generation(index_path: Path) -> None:
    index = Index.open(index_path)
    status = index.status()
    assert status["documents"] > 0 and status["units"] >= status["documents"] and status["generation"] == 1
    assert index._latest is None  # no units, vectors or BM25 were loaded for it


def test_an_llm_with_a_known_window_caps_the_budget(shared_index: Path) -> None:
    from citesum.defaults import DEFAULT_BULLETS, DEFAULT_WORDS
    from citesum.llm.fake import FakeLLM
    from citesum.summarize import answer_tokens, fit_budget

    room = answer_tokens(DEFAULT_BULLETS, DEFAULT_WORDS)  # the default answer's tokens
    llm = FakeLLM(["- Water rates rose. [1]"])
    llm.context_window = 4096
    with _client(shared_index, llm=llm) as client:
        limits = client.get("/health").json()["limits"]
        # what the window holds beside the cited prompt (default bullets and words, a short question) and the answer
        assert limits["max_budget"] == limits["budget"] < fit_budget(10**6, 4096, 0, room)
        answer = client.post("/summarize", json={"query": "water rates", "budget": 10_000}).json()
        # a larger budget asked is fitted to this question's own prompt, and the answer says so
        assert answer["context"]["budget"] <= limits["budget"]
        assert answer["notes"][0].startswith("the model's window is 4,096 tokens: the budget is")
        assert "not 10,000" in answer["notes"][0]
        prompt = llm.prompts[-1]
        assert get_tokenizer().count(prompt) <= 4096 - room




def test_a_request_with_promptrank_gets_the_time_limit_of_a_language_model() -> None:
    from types import SimpleNamespace

    from citesum.service.models import SearchRequest, SummarizeRequest
    from citesum.service.routes.common import time_limit

    service = SimpleNamespace(config=ServiceConfig(timeout_s=60, llm_timeout_s=180))
    assert time_limit(service, SearchRequest(query="water", retriever="promptrank")) == 180  # type: ignore[arg-type]
    assert time_limit(service, SummarizeRequest(query="water", retriever="hybrid:bm25+promptrank:dense")) == 180  # type: ignore[arg-type]
    assert time_limit(service, SearchRequest(query="water", retriever="hybrid")) is None  # type: ignore[arg-type]
    # a longer limit of every request is not shortened for it
    longer = SimpleNamespace(config=ServiceConfig(timeout_s=300, llm_timeout_s=180))
    assert time_limit(longer, SearchRequest(query="water", retriever="promptrank")) == 300  # type: ignore[arg-type]
