"""The retriever interface: a score for every unit of the index, and ranked hits from it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Sequence

import numpy as np

from citesum.index.store import Index
from citesum.types import Hit, Passage

DEFAULT_PASSAGES_PER_DOCUMENT = 3


class Retriever(ABC):
    """Scores every retrieval unit of an index for a query; higher is better.

    Subclasses implement :meth:`scores`; ranking, top-k and document-level aggregation are shared.
    """

    name: str

    def __init__(self, index: Index) -> None:
        self.index = index

    @abstractmethod
    def scores(self, query: str) -> np.ndarray:
        """One score per unit, aligned with ``index.passages``."""

    def retrieve(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` best units (ties keep collection order, so results are reproducible)."""
        scores = self.scores(query)
        order = top_k(scores, k)
        passages = self.index.passages
        return [Hit(passages[i], float(scores[i]), rank, self.name) for rank, i in enumerate(order, start=1)]

    def rank_documents(
        self, query: str, k: int | None = None, *, passages_per_document: int = DEFAULT_PASSAGES_PER_DOCUMENT
    ) -> list[tuple[str, float]]:
        """Documents ranked by the sum of their best ``passages_per_document`` unit scores.

        With 1 this is MaxP (the best unit decides). Summing a few rewards documents that address the query
        in several places, which is what multi-fact queries need: on the SummHay haystacks the sum of the
        best 3 passages beats MaxP for BM25 and dense alike (benchmarks/retrieval_summhay.py). An index of
        whole-document units has one unit per document, so the choice makes no difference there.
        """
        return aggregate_documents(self.index.passages, self.scores(query), k, passages_per_document)


def aggregate_documents(
    passages: Sequence[Passage], scores: np.ndarray, k: int | None, passages_per_document: int
) -> list[tuple[str, float]]:
    """``[(document_id, score), ...]`` best first; a document's score sums its best units' scores."""
    totals: dict[str, float] = {}
    counts: dict[str, int] = {}
    for i in top_k(scores, len(scores)).tolist():
        document_id = passages[i].document_id
        if counts.get(document_id, 0) < passages_per_document:
            counts[document_id] = counts.get(document_id, 0) + 1
            totals[document_id] = totals.get(document_id, 0.0) + float(scores[i])
    ranked = sorted(totals.items(), key=lambda item: -item[1])  # stable: ties keep first-appearance order
    return ranked if k is None else ranked[:k]


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, best first, ties broken by position."""
    n = len(scores)
    k = min(max(k, 0), n)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    if k < n:
        candidates = np.argpartition(-scores, k - 1)[:k]
        # include every unit tied with the k-th score so the tie-break by position is exact
        threshold = scores[candidates].min()
        candidates = np.flatnonzero(scores >= threshold)
    else:
        candidates = np.arange(n)
    order = candidates[np.lexsort((candidates, -scores[candidates]))]
    return order[:k]
