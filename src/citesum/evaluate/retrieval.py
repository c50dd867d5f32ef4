"""Retrieval metrics over a ranked list of document ids and graded relevance.

NDCG uses exponential gains (2^grade - 1) by default, the variant under which the stored SummHay
Rerank3 scores reach NDCG@10 = 0.83; ``gain="linear"`` gives trec_eval's ``ndcg_cut``.
"""

from __future__ import annotations

from typing import Callable, Literal, Mapping, Sequence

import numpy as np

from citesum.pack import within_budget

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
