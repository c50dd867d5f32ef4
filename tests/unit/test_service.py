from __future__ import annotations

import sys
from pathlib import Path

import pytest

from citesum.errors import MissingExtraError
from citesum.index.store import Index, IndexSettings
from citesum.service import create_app
from citesum.types import Document


@pytest.fixture
def index_path(tmp_path: Path, haystack) -> str:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents)
    return str(index.path)


@pytest.fixture
def client(index_path: str):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    return TestClient(create_app(index_path))


def test_health_search_and_offline_summary(client, haystack) -> None:  # type: ignore[no-untyped-def]
    health = client.get("/health").json()
    assert health == {"status": "ok", "documents": len(haystack.documents), "units": health["units"],
                      "summarizer": "extractive"} and health["units"] >= len(haystack.documents)

    hits = client.post("/search", json={"query": "Lakemont reservoir capacity", "retriever": "bm25", "k": 3}).json()
    assert hits["retriever"] == "bm25" and len(hits["hits"]) == 3
    assert hits["hits"][0]["document_id"] in haystack.gold["water-reservoir"] and "Lakemont" in hits["hits"][0]["text"]
    ranked = client.post("/search", json={"query": "bus fares for students", "documents": True, "k": 2}).json()
    assert [d["rank"] for d in ranked["documents"]] == [1, 2]

    answer = client.post("/summarize", json={"query": "How much did the Lakemont reservoir fall?", "bullets": 2,
                                             "budget": 3000}).json()
    assert answer["summarizer"] == "extractive" and 1 <= len(answer["bullets"]) <= 2
    first = answer["bullets"][0]
    assert "Lakemont" in first["text"] and set(first["citations"]) <= set(haystack.gold["water-reservoir"])
    assert all(str(n) in answer["sources"] for n in first["numbers"]) and answer["context_tokens"] <= 3000


def test_bad_requests_are_400_or_422_with_the_reason(client) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/search", json={"query": "water", "retriever": "splade"})
    assert response.status_code == 400 and "unknown retriever 'splade'" in response.json()["detail"]
    assert client.post("/search", json={"query": ""}).status_code == 422
    assert client.post("/summarize", json={"query": "water", "budget": 0}).status_code == 422
    assert client.post("/summarize", json={"query": "water", "order": "sideways"}).status_code == 422
    response = client.post("/summarize", json={"query": "water", "order": "full", "budget": 5})
    assert response.status_code == 400 and "cannot hold even the headers" in response.json()["detail"]


def test_an_index_update_is_seen_by_the_next_request(client, index_path: str) -> None:  # type: ignore[no-untyped-def]
    before = client.get("/health").json()["documents"]
    Index.open(index_path).add([Document("new.txt", "New", "The Zephyr ferry will cross the bay every hour.")])
    assert client.get("/health").json()["documents"] == before + 1
    hits = client.post("/search", json={"query": "Zephyr ferry", "retriever": "bm25", "k": 1}).json()["hits"]
    assert hits[0]["document_id"] == "new.txt"


def test_llm_summaries_never_cite_documents_outside_the_context(  # type: ignore[no-untyped-def]
        index_path: str, serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient
    from loopback import answer

    from citesum.llm.openai_compat import OpenAIChat

    monkeypatch.setenv("CITESUM_CACHE_DIR", str(tmp_path / "cache"))
    # [1] is in any context; [99] is not (the context holds far fewer documents)
    server = serve(lambda handler, request, n: answer(
        handler, "- The Lakemont reservoir fell to 41 percent of capacity in August. [1][99]"))
    client = TestClient(create_app(index_path, llm=OpenAIChat("m", server.url)))
    result = client.post("/summarize", json={"query": "How much did the Lakemont reservoir fall?",
                                             "budget": 2000}).json()
    assert result["summarizer"] == "llm:openai:m" and result["dropped_citations"] == [99]
    cited = {d for b in result["bullets"] for d in b["citations"]}
    in_context = {s["document_id"] for s in result["sources"].values()}
    assert cited <= in_context and all(str(n) in result["sources"] for b in result["bullets"] for n in b["numbers"])


def test_without_fastapi_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    monkeypatch.setitem(sys.modules, "fastapi", None)  # what an install without the extra looks like
    monkeypatch.delitem(sys.modules, "citesum.service")
    with pytest.raises(MissingExtraError, match=r"pip install 'citesum\[service\]'"):
        importlib.import_module("citesum.service")
