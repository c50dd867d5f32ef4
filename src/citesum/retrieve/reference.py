"""Reference rankers for evaluation: seeded random, and the oracle that reads gold relevance."""

from __future__ import annotations

import hashlib
from typing import Mapping

import numpy as np

from citesum.index.store import Index
from citesum.retrieve.base import Retriever


class RandomRetriever(Retriever):
    """Random scores, reproducible for a (seed, query) pair."""

    name = "random"

    def __init__(self, index: Index, seed: int = 0) -> None:
        super().__init__(index)
        self.seed = seed

    def scores(self, query: str) -> np.ndarray:
        digest = hashlib.sha256(f"{self.seed}\x00{query}".encode()).digest()
        return np.random.default_rng(int.from_bytes(digest[:8], "little")).random(len(self.index)).astype(np.float32)


class OracleRetriever(Retriever):
    """Scores each unit by its document's gold relevance grade (e.g. SummHay: insights it contains)."""

    name = "oracle"

    def __init__(self, index: Index, relevance: Mapping[str, float]) -> None:
        super().__init__(index)
        self.relevance = relevance

    def scores(self, query: str) -> np.ndarray:
        return np.array([self.relevance.get(p.document_id, 0.0) for p in self.index.passages], dtype=np.float32)
