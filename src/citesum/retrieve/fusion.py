"""Hybrid retrieval by reciprocal rank fusion (Cormack et al., 2009) over any retrievers."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from citesum.index.store import Index
from citesum.retrieve.base import Retriever, top_k

RRF_K = 60


class HybridRetriever(Retriever):
    """score(unit) = sum over retrievers of 1 / (k + rank), counting each retriever's top ``depth`` units."""

    def __init__(self, index: Index, retrievers: Sequence[Retriever], k: int = RRF_K, depth: int = 1000) -> None:
        super().__init__(index)
        self.retrievers = list(retrievers)
        self.k = k
        self.depth = depth
        self.name = "hybrid(" + "+".join(r.name for r in self.retrievers) + ")"

    def scores(self, query: str) -> np.ndarray:
        fused = np.zeros(len(self.index), dtype=np.float64)
        for retriever in self.retrievers:
            scores = retriever.scores(query)
            ranked = top_k(scores, self.depth)
            ranked = ranked[scores[ranked] > 0] if retriever.name in ("bm25", "keywords") else ranked
            fused[ranked] += 1.0 / (self.k + np.arange(1, len(ranked) + 1))
        return fused.astype(np.float32)
