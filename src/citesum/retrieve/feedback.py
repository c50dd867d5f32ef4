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
from citesum.index.cosine import cosine_scores
from citesum.index.lexical import RowScores, tokenize
from citesum.index.store import IndexReader
from citesum.retrieve.base import Retriever, top_rows
from citesum.retrieve.dense import DenseRetriever, best_of, nearest_candidates, scores_of


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
    ranks_from_arrays = True
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
        with self.index.pinned():  # term ids and unit numbers of one generation
            query_terms, _, top, top_scores = self._first_pass(query)
            alpha = self._query_weight(top)
            weights = {term: alpha * weight for term, weight in _unit_l1(dict(query_terms)).items()}
            terms = self.index.lexical.terms
            feedback_ids, feedback_weights = self._relevance_model(top, top_scores)
            for term_id, weight in zip(feedback_ids.tolist(), feedback_weights.tolist()):
                weights[terms[term_id]] = weights.get(terms[term_id], 0.0) + (1 - alpha) * weight
            return weights

    def scores(self, query: str) -> np.ndarray:
        with self.index.pinned():  # term ids and unit numbers of one generation
            return self._row_scores(query).by_unit()

    def _top(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        return top_rows(self._row_scores(query), k)

    def _first_pass(self, query: str) -> tuple[Counter[str], RowScores, list[int], list[float]]:
        """Step 1: the analysed query, its BM25 scores by row, and the feedback units (positions) and their
        scores."""
        query_terms = Counter(tokenize([query])[0])
        first = self.index.lexical.term_row_scores(list(query_terms.elements()))
        positions, scores = top_rows(first, self.feedback_units)
        matched = scores > 0
        return query_terms, first, positions[matched].tolist(), scores[matched].tolist()

    def _query_weight(self, top: list[int]) -> float:
        """The query's share of the weights: ``original_weight``, or all of them when no unit matched it."""
        return self.original_weight if top else 1.0

    def _row_scores(self, query: str) -> RowScores:
        """Step 4 by row. The score is linear in the weights, and the first pass scored each query term as often
        as the query holds it: the query terms' part, sum over t of original_weight * P(t | Q) * BM25(t, u), is
        original_weight / |Q| times the first pass's score. Only the feedback terms' postings are read again
        (on a million units, reading them again took over a quarter of a short query's RM3 time)."""
        query_terms, first, top, top_scores = self._first_pass(query)
        length = sum(query_terms.values())
        if not length:  # nothing left of the query after analysis: every score is 0
            return first
        alpha = self._query_weight(top)
        scores = first.values.astype(np.float64)
        if alpha:
            scores *= alpha / length
        else:  # the rows of units not held stay at -inf (0 times -inf is not a number)
            scores[np.isfinite(scores)] = 0.0
        feedback_ids, feedback_weights = self._relevance_model(top, top_scores)
        if len(feedback_ids):
            lexical = self.index.lexical
            scores += lexical.weighted_row_scores(feedback_ids, (1 - alpha) * feedback_weights).values
        return RowScores(scores.astype(np.float32), self.index.lexical)

    def _relevance_model(self, units: list[int], unit_scores: list[float]) -> tuple[np.ndarray, np.ndarray]:
        """Steps 2 and 3 over the feedback units: the ``feedback_terms`` heaviest terms of P(t | R) (ties keep
        the order terms were first met in, as a Counter's most_common does) and their L1-normalised weights."""
        if not units:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        lexical = self.index.lexical
        eligible = lexical.feedback_terms(self.max_document_share * lexical.size)
        rank = lexical.alphabetical_rank
        term_ids, contributions = [], []
        for (ids, counts), score in zip(map(lexical.unit_term_counts, units), unit_scores):
            keep = eligible[ids]
            ids, counts = ids[keep], counts[keep]
            # a unit's most frequent terms, ties broken alphabetically
            kept = np.lexsort((rank[ids], -counts))[: self.feedback_terms]
            ids, counts = ids[kept], counts[kept].astype(np.float64)
            term_ids.append(ids)
            contributions.append(score * counts / counts.sum())
        every_id = np.concatenate(term_ids)
        if not len(every_id):
            return every_id.astype(np.int64), np.zeros(0)
        # np.unique sorts the ids; summing in the order the units came keeps the sums those of a running total
        ids, first_seen, slot = np.unique(every_id, return_index=True, return_inverse=True)
        relevance = np.bincount(slot, weights=np.concatenate(contributions))
        heaviest = np.lexsort((first_seen, -relevance))[: self.feedback_terms]
        total = sum(relevance[heaviest].tolist())
        return ids[heaviest].astype(np.int64), relevance[heaviest] / total


def _unit_l1(weights: dict[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {term: weight / total for term, weight in weights.items()} if total > 0 else {}


class DensePRFRetriever(DenseRetriever):
    """Rocchio feedback in embedding space: q' = q + beta * mean(the query's top ``feedback_units`` units),
    L2-normalised, then cosine again.

    Without a nearest-neighbour search every vector is read, for both passes. With the local store's graph the
    index is searched once: the units it finds for q (the depth a fusion ranks) give the feedback units, their
    best ``feedback_units``, and are ranked again by q', scored exactly. Before (up to fb97165), a first search for
    64 units gave the feedback units and a second searched for q'; a Milvus store still searches again (its
    vectors are read from the database, 10 rows a query against 1,000).

    Chosen on benchmarks/scale.py's recall queries over two scratch million-passage indexes (built; after two
    updates), whose results hold the figures: one search found more of exact Rocchio's top 10 than searching again
    (whose 64-unit first pass missed feedback units), and about as much of its top 1,000. On fresh builds and on
    held-out queries the top 10 held up, but one search found less of the top 1,000 than searching again: a unit
    near q' and not near q is not ranked. It saves a search, and answers faster.
    """

    name = "dense-prf"

    def __init__(self, index: IndexReader, embedder: Embedder | None = None, feedback_units: int = 10,
                 beta: float = 1.0) -> None:
        super().__init__(index, embedder)
        self.feedback_units = feedback_units
        self.beta = beta

    def scores(self, query: str) -> np.ndarray:
        with self.index.pinned() as view:  # both passes and the centroid read one generation
            if len(view.vectors) == 0:
                return np.zeros(0, dtype=np.float32)
            expanded, candidates = self._expanded(view, query)
            return scores_of(view, candidates, expanded)

    def _top(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        with self.index.pinned() as view:
            if len(view.vectors) == 0:
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
            expanded, candidates = self._expanded(view, query)
            return best_of(view, candidates, expanded, k)

    def _expanded(self, view: IndexReader, query: str) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
        """q', and, with a nearest-neighbour search, the units to rank with their scores for q' (positions
        ascending; None without one): those found for q, or, where the search's vectors are not in this process
        (a Milvus store, whose vectors a query reads from the database), those a second search finds for q'."""
        query_vector = self.embedder.encode_query(query)
        candidates = nearest_candidates(view, query_vector)
        feedback, _ = best_of(view, candidates, query_vector, self.feedback_units)
        expanded = query_vector + self.beta * np.asarray(view.vectors[feedback]).mean(axis=0)
        expanded = expanded / max(float(np.linalg.norm(expanded)), 1e-12)
        if candidates is None:
            return expanded, None
        if not view.ann.holds_vectors:  # type: ignore[union-attr]
            return expanded, nearest_candidates(view, expanded)
        positions = candidates[0]
        return expanded, (positions, cosine_scores(view.vectors[positions], expanded))
