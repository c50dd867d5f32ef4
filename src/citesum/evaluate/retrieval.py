"""Retrieval metrics over a ranked list of document ids and graded relevance, and BEIR's evaluation of a
document ranker.

NDCG uses exponential gains (2^grade - 1) by default, the variant under which the stored SummHay
Rerank3 scores reach their published NDCG@10 (tests/integration/test_summhay_retrieval.py); ``gain="linear"``
gives trec_eval's ``ndcg_cut``.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Collection, Literal, Mapping, Sequence

import numpy as np

from citesum.errors import ConfigError
from citesum.pack import within_budget

if TYPE_CHECKING:
    from citesum.datasets import Query
    from citesum.index.store import IndexReader
    from citesum.retrieve.base import Retriever

Gain = Literal["exponential", "linear"]


def _gains(grades: Sequence[float], gain: Gain) -> np.ndarray:
    values = np.asarray(grades, dtype=np.float64)
    return np.power(2.0, values) - 1.0 if gain == "exponential" else values


def ndcg_at_k(ranking: Sequence[str], relevance: Mapping[str, float], k: int, gain: Gain = "exponential") -> float:
    """Normalised discounted cumulative gain of the top ``k`` (0 when nothing is relevant)."""
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    gained = _gains([relevance.get(d, 0) for d in ranking[:k]], gain)
    ideal = _gains(sorted((g for g in relevance.values() if g > 0), reverse=True)[:k], gain)
    ideal_dcg = float((ideal * discounts[: len(ideal)]).sum())
    if ideal_dcg == 0:
        return 0.0
    return float((gained * discounts[: len(gained)]).sum()) / ideal_dcg


def precision_at_k(ranking: Sequence[str], relevance: Mapping[str, float], k: int) -> float:
    return sum(1 for d in ranking[:k] if relevance.get(d, 0) > 0) / k


def recall_at_k(ranking: Sequence[str], relevance: Mapping[str, float], k: int) -> float:
    relevant = sum(1 for g in relevance.values() if g > 0)
    return sum(1 for d in ranking[:k] if relevance.get(d, 0) > 0) / relevant if relevant else 0.0


def select_within_budget(
    ranking: Sequence[str], token_count: Callable[[str], int], budget: int, *, stop_at_first_overflow: bool = True
) -> list[str]:
    """Documents in rank order until ``budget`` tokens; by default stop at the first one that does not fit
    (as the SummHay and DOS RAG reference code do), else skip it and keep filling."""
    return list(within_budget(ranking, token_count, budget, stop_at_first_overflow=stop_at_first_overflow))


def insight_recall(selected: Sequence[str], insight_documents: Mapping[str, Sequence[str]]) -> tuple[float, float]:
    """(coverage, occurrence recall) of a document selection.

    coverage: share of insights found in at least one selected document (what a summarizer can write about);
    occurrence recall: share of all (insight, document) occurrences that are selected (what it can cite).
    """
    chosen = set(selected)
    if not insight_documents:
        return 0.0, 0.0
    covered = sum(1 for docs in insight_documents.values() if chosen.intersection(docs))
    occurrences = sum(len(docs) for docs in insight_documents.values())
    found = sum(1 for docs in insight_documents.values() for d in docs if d in chosen)
    return covered / len(insight_documents), (found / occurrences if occurrences else 0.0)


#: BEIR's reported metrics (trec_eval's ndcg_cut and recall, linear gains)
BEIR_METRICS = ("ndcg@10", "ndcg@100", "recall@100")


def beir_scores(ranking: Sequence[str], relevance: Mapping[str, float]) -> dict[str, float]:
    """NDCG@10, NDCG@100 and Recall@100 of one ranking, as BEIR computes them (pytrec_eval: linear gains, a
    document is relevant from grade 1)."""
    return {"ndcg@10": ndcg_at_k(ranking, relevance, 10, gain="linear"),
            "ndcg@100": ndcg_at_k(ranking, relevance, 100, gain="linear"),
            "recall@100": recall_at_k(ranking, relevance, 100)}


@dataclass(frozen=True)
class RetrievalReport:
    """A document ranker's BEIR metrics over a set of judged queries."""

    ranker: str
    queries: int
    means: dict[str, float]
    per_query: dict[str, dict[str, float]]
    #: judged relevant documents the ranked collection does not hold (no ranker can find them)
    judged_documents_missing: int
    median_ms: float


def evaluate_ranker(name: str, rank: Callable[[str, int], Sequence[str]], queries: Sequence[Query],
                    collection: Collection[str]) -> RetrievalReport:
    """``rank(query text, k)`` (document ids, best first) over ``queries``, scored with :func:`beir_scores`;
    judged relevant documents outside ``collection`` (what the ranker searches) are counted."""
    if not queries:
        raise ConfigError("no judged queries to evaluate on (a BEIR folder needs qrels/<split>.tsv)")
    per_query: dict[str, dict[str, float]] = {}
    seconds: list[float] = []
    for query in queries:
        started = time.perf_counter()
        ranking = list(rank(query.text, 100))
        seconds.append(time.perf_counter() - started)
        per_query[query.id] = beir_scores(ranking, query.relevance)
    missing = {d for q in queries for d, grade in q.relevance.items() if grade > 0 and d not in collection}
    means = {m: float(np.mean([scores[m] for scores in per_query.values()])) for m in BEIR_METRICS}
    return RetrievalReport(name, len(queries), means, per_query, len(missing), 1000 * float(np.median(seconds)))


def evaluate_retrievers(queries: Sequence[Query], content: IndexReader, retrievers: Sequence[str],
                        summaries: IndexReader | None = None) -> list[RetrievalReport]:
    """:func:`evaluate_ranker` for each retriever's document ranking of ``content`` (a document scores by its
    best units), and with ``summaries`` (a Summary RAG summary index of ``content``) of the summaries too, named
    ``summary-rag:<retriever>``."""
    from citesum.retrieve import get_retriever

    owners, document_ids = content.unit_documents
    # the documents that own units: what a ranking can hold (an empty document is stored without any)
    collection = {document_ids[i] for i in np.unique(owners).tolist()}
    searched = [("", content)] + ([("summary-rag:", summaries)] if summaries is not None else [])
    reports = []
    for prefix, index in searched:
        for name in retrievers:
            ranker = functools.partial(_ranked_documents, get_retriever(name, index))
            reports.append(evaluate_ranker(prefix + name, ranker, queries, collection))
    return reports


def _ranked_documents(retriever: Retriever, query: str, k: int) -> list[str]:
    return [document_id for document_id, _ in retriever.rank_documents(query, k)]
