"""Reference rankers for evaluation: seeded random, and the oracle that reads gold relevance."""

from __future__ import annotations

import hashlib
from typing import Mapping

import numpy as np

from citesum.index.store import IndexReader
from citesum.retrieve.base import Retriever


class RandomRetriever(Retriever):
    """Random document scores, reproducible for a (seed, query) pair (all units of a document share one)."""

    name = "random"
    ranks_from_arrays = True
    scores_documents = True

    def __init__(self, index: IndexReader, seed: int = 0) -> None:
        super().__init__(index)
        self.seed = seed

    def scores(self, query: str) -> np.ndarray:
        digest = hashlib.sha256(f"{self.seed}\x00{query}".encode()).digest()
        owners, document_ids = self.index.unit_documents
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        return rng.random(len(document_ids)).astype(np.float32)[owners]


class OracleRetriever(Retriever):
    """Scores each unit by its document's gold relevance grade (e.g. SummHay: insights it contains)."""

    name = "oracle"
    ranks_from_arrays = True
    scores_documents = True
    scores_reach_the_summarizer = False  # the oracle chooses documents only, as the paper's oracle runs do

    def __init__(self, index: IndexReader, relevance: Mapping[str, float]) -> None:
        super().__init__(index)
        self.relevance = relevance

    def scores(self, query: str) -> np.ndarray:
        owners, document_ids = self.index.unit_documents
        grades = np.array([self.relevance.get(d, 0.0) for d in document_ids], dtype=np.float32)
        return grades[owners]
