"""The retriever interface: a score for every unit of the index, and ranked hits from it."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from citesum.index.store import Index
from citesum.types import Hit


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

    def rank_documents(self, query: str, k: int | None = None) -> list[tuple[str, float]]:
        """Documents ranked by their best unit's score: ``[(document_id, score), ...]``."""
        scores = self.scores(query)
        best: dict[str, float] = {}
        for passage, score in zip(self.index.passages, scores.tolist()):
            if score > best.get(passage.document_id, -np.inf):
                best[passage.document_id] = score
        ranked = sorted(best.items(), key=lambda item: -item[1])  # sorted() is stable: ties keep unit order
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
