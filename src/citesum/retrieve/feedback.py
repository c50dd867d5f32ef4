"""Pseudo-relevance feedback: expand the query with what the first-pass top units have in common.

SummHay-style subtopic queries are short and the relevant documents share much vocabulary, which is the case
PRF was made for. Defaults are the usual ones from the literature, not tuned on our evaluation data:
RM3 as in Anserini (10 feedback units, 10 terms, original query weight 0.5, terms in over 10% of the units
left out), Rocchio with alpha = beta = 1
over the mean of the top 10 unit vectors.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from citesum.embed import Embedder
from citesum.index.lexical import LexicalIndex, tokenize
from citesum.index.store import IndexReader
from citesum.retrieve.base import Retriever, top_k
from citesum.retrieve.dense import DenseRetriever


class RM3Retriever(Retriever):
    """BM25 with RM3 query expansion (Lavrenko & Croft's relevance model, interpolated with the query, as
    Anserini runs it):

    1. BM25 with the query; the top ``feedback_units`` units with a positive score are the feedback set;
    2. the relevance model: P(t | R) proportional to sum over the feedback units u of P(t | u) * score(u). As
       Anserini builds a unit's term vector: terms of 2 to 20 letters and digits only, not in more than
       ``max_document_share`` of the units (they say nothing about this query), the unit's ``feedback_terms``
       most frequent kept, and P(t | u) a term's share of those;
    3. its ``feedback_terms`` heaviest terms, L1-normalised, interpolated with the L1-normalised query:
       w(t) = ``original_weight`` * P(t | Q) + (1 - ``original_weight``) * P(t | R);
    4. BM25 once more with the weighted query: score(u) = sum over t of w(t) * BM25(t, u).
    """

    name = "bm25-rm3"
    matches_only_positive = True

    def __init__(self, index: IndexReader, feedback_units: int = 10, feedback_terms: int = 10,
                 original_weight: float = 0.5, max_document_share: float = 0.1) -> None:
        super().__init__(index)
        self.feedback_units = feedback_units
        self.feedback_terms = feedback_terms
        self.original_weight = original_weight
        self.max_document_share = max_document_share

    def expanded_query(self, query: str) -> dict[str, float]:
        """The weighted query of step 3 (the analysed query alone when no unit matches it)."""
        lexical = self.index.lexical
        query_terms = Counter(tokenize([query])[0])
        original = _unit_l1(dict(query_terms))
        first = lexical.term_scores(list(query_terms.elements()))
        top = [i for i in top_k(first, self.feedback_units) if first[i] > 0]
        if not top:
            return original
        eligible = lexical.feedback_vocabulary(self.max_document_share * lexical.size)
        relevance: Counter[str] = Counter()
        for terms, score in zip(self._unit_terms(lexical, top), first[top].tolist()):
            counts = Counter({t: n for t, n in terms.items() if t in eligible})
            kept = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: self.feedback_terms]
            length = sum(count for _, count in kept)
            for term, count in kept:
                relevance[term] += score * count / length
        feedback = _unit_l1(dict(relevance.most_common(self.feedback_terms)))
        alpha = self.original_weight
        return {term: alpha * original.get(term, 0.0) + (1 - alpha) * feedback.get(term, 0.0)
                for term in original.keys() | feedback.keys()}

    def _unit_terms(self, lexical: LexicalIndex, units: list[int]) -> list[Counter[str]]:
        """Each unit's analysed terms with their counts: kept by the index since they were added to it, or
        analysed again from the text for an index written before (same analyser, same counts)."""
        kept = [lexical.unit_terms(i) for i in units]
        if all(terms is not None for terms in kept):
            return kept  # type: ignore[return-value]
        passages = self.index.passages
        return [Counter(tokens) for tokens in tokenize([passages[i].text for i in units])]

    def scores(self, query: str) -> np.ndarray:
        return self.index.lexical.weighted_scores(self.expanded_query(query))


def _unit_l1(weights: dict[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {term: weight / total for term, weight in weights.items()} if total > 0 else {}


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
