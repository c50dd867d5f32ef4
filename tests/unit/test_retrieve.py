from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citesum.demo.haystack import SUBTOPICS
from citesum.errors import ConfigError
from citesum.index.store import Index, IndexSettings
from citesum.retrieve import get_retriever
from citesum.retrieve.base import top_k
from citesum.retrieve.fusion import HybridRetriever
from citesum.types import Document


@pytest.fixture(scope="module")
def haystack_index(tmp_path_factory: pytest.TempPathFactory, haystack) -> Index:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path_factory.mktemp("ix") / "ix", IndexSettings())
    index.add(haystack.documents)
    return index


def _precision_at(index: Index, name: str, haystack, k: int = 5) -> float:  # type: ignore[no-untyped-def]
    retriever = get_retriever(name, index)
    found = 0
    for subtopic, query in haystack.queries.items():
        relevant = haystack.relevance(subtopic)
        found += sum(1 for doc_id, _ in retriever.rank_documents(query, k) if doc_id in relevant)
    return found / (k * len(haystack.queries))


def test_exact_fact_query_finds_its_documents(haystack_index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    query = "How much did the Lakemont reservoir fall?"
    gold = set(haystack.gold["water-reservoir"])
    for name in ("bm25", "dense", "hybrid", "keywords"):
        top = [doc_id for doc_id, _ in get_retriever(name, haystack_index).rank_documents(query, 3)]
        assert top[0] in gold, name


def test_retrievers_beat_random_on_subtopic_queries(haystack_index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    base_rate = np.mean([len(haystack.relevance(s)) / len(haystack.documents) for s in SUBTOPICS])
    random_precision = _precision_at(haystack_index, "random", haystack)
    for name in ("bm25", "dense", "hybrid"):
        assert _precision_at(haystack_index, name, haystack) > max(base_rate, random_precision), name


def test_hits_are_ranked_and_tied_to_passages(haystack_index: Index) -> None:
    hits = get_retriever("bm25", haystack_index).retrieve("desalination plant Port Ardeen", k=4)
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    assert all("desalination" in h.passage.text for h in hits)
    assert hits[0].retriever == "bm25"


def test_k_larger_than_index_and_empty_query(haystack_index: Index) -> None:
    assert len(get_retriever("dense", haystack_index).retrieve("water", k=10_000)) == len(haystack_index)
    scores = get_retriever("bm25", haystack_index).scores("the and of")  # only stop words
    assert not scores.any()
    assert not get_retriever("keywords", haystack_index).scores("").any()


def test_hybrid_is_reciprocal_rank_fusion(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings(embedder="test-hashing"))
    index.update([Document(id=i, title=i, text=t) for i, t in
                  [("a", "apple pie recipe"), ("b", "apple orchard"), ("c", "pie crust")]], embedder=hashing_embedder)

    class Fixed:  # retrievers with known rankings; RRF is the unit under test
        def __init__(self, name: str, scores: list[float]) -> None:
            self.name, self._scores = name, np.array(scores, dtype=np.float32)

        def scores(self, query: str) -> np.ndarray:
            return self._scores

    hybrid = HybridRetriever(index, [Fixed("x", [3, 2, 1]), Fixed("y", [1, 3, 2])], k=60)  # type: ignore[list-item]
    expected = [1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62]
    np.testing.assert_allclose(hybrid.scores("q"), expected, rtol=1e-6)
    assert [h.passage.document_id for h in hybrid.retrieve("q", 3)] == ["b", "a", "c"]


def test_keywords_score_is_share_of_query_keywords(haystack_index: Index) -> None:
    retriever = get_retriever("keywords", haystack_index)
    scores = retriever.scores("reservoir capacity unicorns")
    texts = [p.text.lower() for p in haystack_index.passages]
    for score, text in zip(scores, texts):
        expected = (("reservoir" in text) + ("capacity" in text)) / 3
        assert score == pytest.approx(expected)


def test_random_is_seeded_and_oracle_reads_relevance(haystack_index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    a = get_retriever("random", haystack_index, seed=1).scores("q")
    np.testing.assert_array_equal(a, get_retriever("random", haystack_index, seed=1).scores("q"))
    assert not np.array_equal(a, get_retriever("random", haystack_index, seed=2).scores("q"))
    relevance = haystack.relevance("housing")
    ranked = get_retriever("oracle", haystack_index, relevance=relevance).rank_documents("anything")
    grades = [relevance.get(doc_id, 0) for doc_id, _ in ranked]
    assert grades == sorted(grades, reverse=True) and grades[0] == max(relevance.values())


def test_registry_errors() -> None:
    with pytest.raises(ConfigError, match="bm25, dense, hybrid, keywords, oracle, random"):
        get_retriever("splade", None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="gold relevance"):
        get_retriever("oracle", None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="two or more"):
        get_retriever("hybrid:bm25", None)  # type: ignore[arg-type]


def test_top_k_breaks_ties_by_position() -> None:
    scores = np.array([1.0, 3.0, 3.0, 2.0, 3.0], dtype=np.float32)
    assert top_k(scores, 2).tolist() == [1, 2]
    assert top_k(scores, 4).tolist() == [1, 2, 4, 3]
    assert top_k(scores, 0).tolist() == []
