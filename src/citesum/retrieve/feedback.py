"""Pseudo-relevance feedback: expand the query with what the first-pass top units have in common.

SummHay-style subtopic queries are short and the relevant documents share much vocabulary, which is the case
PRF was made for. Defaults are the usual ones from the literature, not tuned on our evaluation data:
RM3 as in Anserini (10 feedback units, 10 terms, original query weight 0.5), Rocchio with alpha = beta = 1
over the mean of the top 10 unit vectors.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from citesum.embed import Embedder
from citesum.index.lexical import tokenize
from citesum.index.store import IndexReader
from citesum.retrieve.base import Retriever, top_k
from citesum.retrieve.dense import DenseRetriever


def _unit_max(scores: np.ndarray) -> np.ndarray:
    peak = float(scores.max()) if len(scores) else 0.0
    return scores / peak if peak > 0 else scores


class RM3Retriever(Retriever):
    """BM25, then BM25 of the top terms of the first-pass top units, interpolated (Lavrenko & Croft's RM3)."""

    name = "bm25-rm3"
    matches_only_positive = True

    def __init__(self, index: IndexReader, feedback_units: int = 10, feedback_terms: int = 10,
                 original_weight: float = 0.5) -> None:
        super().__init__(index)
        self.feedback_units = feedback_units
        self.feedback_terms = feedback_terms
        self.original_weight = original_weight

    def scores(self, query: str) -> np.ndarray:
        lexical = self.index.lexical
        first = lexical.scores(query)
        top = [i for i in top_k(first, self.feedback_units) if first[i] > 0]
        if not top:
            return first
        query_terms = set(tokenize([query])[0])
        weights: Counter[str] = Counter()
        passages = self.index.passages
        for tokens, score in zip(tokenize([passages[i].text for i in top]), first[top]):
            for term, count in Counter(tokens).items():
                if term not in query_terms:
                    weights[term] += float(score) * count / len(tokens)  # P(term | unit) weighted by relevance
        expansion = [term for term, _ in weights.most_common(self.feedback_terms)]
        second = lexical.term_scores(expansion)
        return (self.original_weight * _unit_max(first) + (1 - self.original_weight) * _unit_max(second)).astype(
            np.float32
        )


class DensePRFRetriever(DenseRetriever):
    """Rocchio feedback in embedding space: q' = q + beta * mean(top units), then cosine again."""

    name = "dense-prf"

    def __init__(self, index: IndexReader, embedder: Embedder | None = None, feedback_units: int = 10,
                 beta: float = 1.0) -> None:
        super().__init__(index, embedder)
        self.feedback_units = feedback_units
        self.beta = beta

    def scores(self, query: str) -> np.ndarray:
        vectors = self.index.vectors
        if len(vectors) == 0:
            return np.zeros(0, dtype=np.float32)
        query_vector = self.embedder.encode_query(query)
        first = vectors @ query_vector
        centroid = np.asarray(vectors[top_k(first, self.feedback_units)]).mean(axis=0)
        expanded = query_vector + self.beta * centroid
        return np.asarray(vectors @ (expanded / max(float(np.linalg.norm(expanded)), 1e-12)), dtype=np.float32)
