"""Several collections, several people (issue 47): ``citesum serve --index NAME=DIR`` repeated, and a tokens file
that gives each token a role on some collections, read again on SIGHUP. A collection a token does not hold is a
404, as one that does not exist; one user's uploads are invisible to another's token."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from citesum.errors import ConfigError
from citesum.index.store import Index, IndexSettings
from citesum.ingest import ingest_paths
from citesum.service.access import Access, read_tokens
from citesum.service.config import ServiceConfig
from fixtures import write_files

fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from citesum.service.app import create_app  # noqa: E402
from live import citesum_serve  # noqa: E402

BASE = "http://127.0.0.1:8000"
ALICE, BOB, CAROL = "alice-reads-the-handbook-0001", "bob-writes-engineering-0002", "carol-writes-everything-003"
TOKENS = {"tokens": [
    {"name": "alice", "token": ALICE, "role": "read", "collections": ["handbook"]},
    {"name": "bob", "token": BOB, "role": "write", "collections": ["engineering"]},
    {"name": "carol", "token": CAROL, "role": "write", "collections": "*"}]}
HANDBOOK = {
    "leave.md": "# Annual leave\n\nEvery employee has 25 days of annual leave a year. Unused leave days carry over "
                "to the next year, up to five days.\n",
    "expenses.md": "# Expenses\n\nTravel expenses are refunded within 30 days of a claim. Receipts must be kept "
                   "for seven years.\n"}
ENGINEERING = {
    "deploys.md": "# Deploys\n\nA deploy to production needs two approvals. Deploys are frozen on Fridays after "
                  "noon.\n",
    "oncall.md": "# On call\n\nThe on-call engineer answers a page within fifteen minutes. Each rotation lasts "
                 "one week.\n"}


def _index(folder: Path, files: dict[str, str]) -> Path:
    documents, _ = ingest_paths([write_files(folder / "docs", files)])
    Index.create(folder / "ix", IndexSettings()).add(documents)
    return folder / "ix"


@pytest.fixture
def served(tmp_path: Path) -> dict[str, Path]:
    return {"handbook": _index(tmp_path / "handbook", HANDBOOK), "engineering": _index(tmp_path / "engineering",
                                                                                       ENGINEERING)}


@pytest.fixture
def tokens_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(TOKENS), encoding="utf-8")
    return path


@pytest.fixture
def client(served: dict[str, Path], tokens_file: Path, tmp_path: Path) -> Iterator[TestClient]:
    config = ServiceConfig(worker_kind="thread", tokens_file=tokens_file, uploads_dir=tmp_path / "uploads")
    with TestClient(create_app(served, config), base_url=BASE) as test_client:
        yield test_client


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _wait(client: TestClient, job_id: str, token: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}", headers=_as(token)).json()
        if job["state"] in ("committed", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def _titles(response: Any) -> set[str]:
    assert response.status_code == 200, response.text
    return {hit["title"] for hit in response.json()["hits"]}


def test_the_tokens_file_is_checked_before_anything_is_served(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    cases = [("{", "is not JSON"), ('{"tokens": {}}', "a list 'tokens'"),
             ('{"tokens": [{"name": "x", "token": "short", "role": "read", "collections": "*"}]}', "at least 16"),
             ('{"tokens": [{"name": "x", "token": "' + "a" * 20 + '", "role": "admin", "collections": "*"}]}',
              "role must be 'read' or 'write'"),
             ('{"tokens": [{"name": "x", "token": "' + "a" * 20 + '", "role": "read", "collections": ["hr"]}]}',
              "does not serve: hr"),
             ('{"tokens": [{"name": "x", "token": "' + "a" * 20 + '", "role": "read", "collections": "*"}, '
              '{"name": "y", "token": "' + "a" * 20 + '", "role": "write", "collections": "*"}]}', "one token twice")]
    for text, message in cases:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=message):
            read_tokens(path, ["handbook", "engineering"])
    with pytest.raises(ConfigError, match="either one token"):
        Access("x" * 20, path, ["handbook"])


def test_each_role_on_the_collections_it_holds(client: TestClient) -> None:
    # alice reads the handbook, and only it: the engineering collection is as unknown to her as one that is not
    ask = {"query": "How many days of annual leave?"}
    assert "Annual leave" in _titles(client.post("/search", json=ask, headers=_as(ALICE)))  # her first: handbook
    assert "Annual leave" in _titles(client.post("/search", json={**ask, "collection": "handbook"},
                                                 headers=_as(ALICE)))
    hidden = client.post("/search", json={**ask, "collection": "engineering"}, headers=_as(ALICE))
    absent = client.post("/search", json={**ask, "collection": "payroll"}, headers=_as(ALICE))
    assert hidden.status_code == absent.status_code == 404
    assert hidden.json()["detail"] == "no collection 'engineering'" and absent.json()["detail"] == "no collection 'payroll'"
    summary = client.post("/summarize", json={"query": "How many days of annual leave does an employee have?"},
                          headers=_as(ALICE))
    assert summary.status_code == 200 and "25 days" in summary.json()["bullets"][0]["text"]
    assert client.post("/summarize", json={**ask, "collection": "engineering"}, headers=_as(ALICE)).status_code == 404
    upload = client.post("/documents", files={"files": ("a.md", b"# A\n\nText of a new page here.\n")},
                         headers=_as(ALICE))
    assert upload.status_code == 403 and "role is 'read'" in upload.json()["detail"]
    health = client.get("/health", headers=_as(ALICE)).json()
    assert [c["name"] for c in health["collections"]] == ["handbook"] and health["role"] == "read"
    # bob holds engineering alone; carol holds both, and may search them at once
    assert client.post("/search", json={**ask, "collection": "handbook"}, headers=_as(BOB)).status_code == 404
    assert "Deploys" in _titles(client.post("/search", json={"query": "deploy approvals"}, headers=_as(BOB)))
    both = client.post("/search", json={"query": "days", "collections": ["handbook", "engineering"], "k": 20},
                       headers=_as(CAROL))
    assert both.status_code == 200 and {h["collection"] for h in both.json()["hits"]} == {"handbook", "engineering"}
    assert [h["rank"] for h in both.json()["hits"]] == list(range(1, len(both.json()["hits"]) + 1))
    mixed = client.post("/search", json={"query": "days", "collections": ["handbook", "engineering"]},
                        headers=_as(ALICE))
    assert mixed.status_code == 404 and mixed.json()["detail"] == "no collection 'engineering'"
    # no token, or one the service does not know
    assert client.post("/search", json=ask).status_code == 401
    assert client.post("/search", json=ask, headers=_as("x" * 24)).status_code == 403


def test_one_users_uploads_are_invisible_to_another(client: TestClient) -> None:
    runbook = b"# Rollback runbook\n\nA failed deploy is rolled back with the blue-green switch within ten minutes.\n"
    upload = client.post("/documents", files={"files": ("rollback.md", runbook)}, headers=_as(BOB))
    assert upload.status_code == 202 and upload.json()["collection"] == "engineering"
    job = _wait(client, upload.json()["job"], BOB)
    assert job["state"] == "committed", job
    # bob and carol find it in engineering
    question = {"query": "How is a failed deploy rolled back?"}
    found = client.post("/search", json=question, headers=_as(BOB))
    assert "Rollback runbook" in _titles(found)
    document_id = next(h["document_id"] for h in found.json()["hits"] if h["title"] == "Rollback runbook")
    assert "Rollback runbook" in _titles(client.post("/search", json={**question, "collection": "engineering"},
                                                     headers=_as(CAROL)))
    # alice cannot: not its job, not its document, not in her searches
    assert client.get(f"/jobs/{upload.json()['job']}", headers=_as(ALICE)).status_code == 404
    assert client.get(f"/documents/{document_id}", params={"collection": "engineering"},
                      headers=_as(ALICE)).status_code == 404
    assert client.get(f"/documents/{document_id}", headers=_as(ALICE)).status_code == 404  # not in the handbook
    assert "Rollback runbook" not in _titles(client.post("/search", json=question, headers=_as(ALICE)))
    # bob cannot add to the handbook, nor delete from it
    elsewhere = client.post("/documents", params={"collection": "handbook"},
                            files={"files": ("x.md", b"# X\n\nA page for the handbook.\n")}, headers=_as(BOB))
    assert elsewhere.status_code == 404
    assert client.delete("/documents/leave.md", params={"collection": "handbook"}, headers=_as(BOB)).status_code == 404
    assert client.get(f"/documents/{document_id}", params={"collection": "engineering"},
                      headers=_as(CAROL)).status_code == 200


def test_a_revoked_token_is_refused_once_the_file_is_read_again(client: TestClient, tokens_file: Path) -> None:
    ask = {"query": "annual leave"}
    assert client.post("/search", json=ask, headers=_as(ALICE)).status_code == 200
    tokens_file.write_text(json.dumps({"tokens": TOKENS["tokens"][1:]}), encoding="utf-8")
    assert client.app.access.reload()  # what SIGHUP does
    assert client.post("/search", json=ask, headers=_as(ALICE)).status_code == 403
    assert client.post("/search", json={**ask, "collection": "handbook"}, headers=_as(CAROL)).status_code == 200
    # a file that no longer reads well is not taken: the tokens in force stay
    tokens_file.write_text("{not json", encoding="utf-8")
    assert not client.app.access.reload()
    assert client.post("/search", json=ask, headers=_as(CAROL)).status_code == 200


def test_citesum_serve_serves_named_collections_and_reloads_tokens_on_sighup(served: dict[str, Path],
                                                                             tokens_file: Path, tmp_path: Path) -> None:
    """As an operator runs it: two collections by name, a tokens file, ``kill -HUP`` after revoking a token."""
    import httpx

    first, *rest = served.items()
    options = [item for name, path in rest for item in ("--index", f"{name}={path}")]
    server = citesum_serve(Path(f"{first[0]}={first[1]}"), tmp_path / "serve.log", *options, "--tokens",
                           str(tokens_file), "--workers", "1", "--search-workers", "1", token=ALICE)
    try:
        found = httpx.post(server.url + "/search", json={"query": "deploy approvals", "collection": "engineering"},
                           headers=_as(BOB), timeout=60)
        assert found.status_code == 200 and "Deploys" in {h["title"] for h in found.json()["hits"]}
        assert httpx.post(server.url + "/search", json={"query": "leave"}, headers=_as(ALICE),
                          timeout=60).status_code == 200
        tokens_file.write_text(json.dumps({"tokens": TOKENS["tokens"][1:]}), encoding="utf-8")
        os.kill(server.pid, signal.SIGHUP)
        deadline = time.monotonic() + 10
        while httpx.post(server.url + "/search", json={"query": "leave"}, headers=_as(ALICE),
                         timeout=60).status_code != 403:
            assert time.monotonic() < deadline, "the revoked token still works"
            time.sleep(0.1)
        assert server.process.poll() is None  # SIGHUP reloads; it does not stop the server
    finally:
        server.close()
    log = (tmp_path / "serve.log").read_text()
    assert "tokens reloaded" in log and ALICE not in log and BOB not in log  # tokens are never logged


def test_serve_refuses_collections_it_cannot_name(served: dict[str, Path]) -> None:
    from click.testing import CliRunner

    from citesum.cli import main

    runner = CliRunner()
    two = ["--index", f"handbook={served['handbook']}", "--index", str(served["engineering"])]
    assert "name each one" in runner.invoke(main, ["serve", *two]).output
    twice = ["--index", f"a={served['handbook']}", "--index", f"a={served['engineering']}"]
    assert "given twice" in runner.invoke(main, ["serve", *twice]).output
    with pytest.raises(ConfigError, match="collection name"):
        create_app({"../x": served["handbook"]}, ServiceConfig(worker_kind="thread"))


def test_a_summary_from_several_collections_cites_each_by_its_name(client: TestClient) -> None:
    both = ["handbook", "engineering"]
    for question, cited, words in (("How many approvals does a deploy to production need?", "engineering/deploys.md",
                                    "two approvals"),
                                   ("How many days of annual leave does an employee have?", "handbook/leave.md",
                                    "25 days")):
        answer = client.post("/summarize", json={"query": question, "collections": both}, headers=_as(CAROL))
        assert answer.status_code == 200, answer.text
        body = answer.json()
        # the context holds both collections' documents, each named by its collection
        sources = {s["document_id"] for s in body["sources"].values()}
        assert {s.split("/", 1)[0] for s in sources} == set(both), sources
        assert body["bullets"] and body["bullets"][0]["citations"] == [cited] and words in body["bullets"][0]["text"]
        # each citation's evidence is found in its own collection's document
        assert all(e["supported"] for b in body["bullets"] for e in b["evidence"])
    # a token that holds one of them cannot ask the other through it; a stream reads one collection
    question = {"query": "How many approvals does a deploy need?", "collections": both}
    refused = client.post("/summarize", json=question, headers=_as(ALICE))
    assert refused.status_code == 404 and refused.json()["detail"] == "no collection 'engineering'"
    stream = client.post("/summarize/stream", json=question, headers=_as(CAROL))
    assert stream.status_code == 422 and "one collection" in stream.json()["detail"]
    assert client.post("/summarize", json={**question, "collection": "handbook"},
                       headers=_as(CAROL)).status_code == 422  # one or the other, not both
