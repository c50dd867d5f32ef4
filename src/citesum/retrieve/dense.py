"""Dense retrieval: cosine similarity between the query and unit embeddings (brute force, numpy)."""

from __future__ import annotations

import numpy as np

from citesum.embed import Embedder, get_embedder
from citesum.index.store import IndexReader
from citesum.retrieve.base import Retriever


class DenseRetriever(Retriever):
    name = "dense"

    def __init__(self, index: IndexReader, embedder: Embedder | None = None) -> None:
        super().__init__(index)
        # The query must be embedded by the model that embedded the index.
        self.embedder = embedder or get_embedder(index.settings.embedder)

    def scores(self, query: str) -> np.ndarray:
        vectors = self.index.vectors
        if len(vectors) == 0:
            return np.zeros(0, dtype=np.float32)
        return np.asarray(vectors @ self.embedder.encode_query(query), dtype=np.float32)
