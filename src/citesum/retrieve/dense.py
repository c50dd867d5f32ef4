"""Dense retrieval: cosine similarity between the query and unit embeddings (exact, or through the index's
nearest-neighbour graph when it has one)."""

from __future__ import annotations

import numpy as np

from citesum.embed import Embedder, get_embedder
from citesum.index.cosine import cosine_scores
from citesum.index.store import IndexReader
from citesum.retrieve.base import Retriever, top_scores


def unit_scores(index: IndexReader, query_vector: np.ndarray) -> np.ndarray:
    """The cosine score of every unit for ``query_vector`` (unit vectors are L2-normalised), read from one
    generation of ``index``.

    With a nearest-neighbour search (the local store's graph in indexes of ``ann_min_units`` units or more; a
    Milvus store), the units it finds (the depth a fusion ranks) get
    their exact score and every other unit 0, or just below the lowest candidate when that is not positive: the
    ranking of units is exact down to that depth, and a document is scored by its candidate units alone (a unit
    left out at the candidates' lowest score would lift every long document's sum of its best units above a
    short document holding the best passage; and when the candidates are all copies of one passage, tied, a unit
    left out at their score would be ranked among them by position). Without a graph, every vector is read.
    """
    with index.pinned() as view:
        return scores_of(view, nearest_candidates(view, query_vector), query_vector)


def scores_of(view: IndexReader, candidates: tuple[np.ndarray, np.ndarray] | None, query_vector: np.ndarray
              ) -> np.ndarray:
    """Every unit's score: the ``candidates``' (positions ascending, and their scores), the others filled in below
    them as :func:`unit_scores` fills them; without candidates (None), every unit's cosine for ``query_vector``."""
    if candidates is None:
        return cosine_scores(view.vectors, query_vector)
    return _every_unit(candidates, len(view.row_ids))


def best_units(index: IndexReader, query_vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``top_k`` of :func:`unit_scores` (positions best first, and their scores) without an array of every
    unit when the nearest-neighbour search found at least ``k`` units."""
    with index.pinned() as view:
        return best_of(view, nearest_candidates(view, query_vector), query_vector, k)


def best_of(view: IndexReader, candidates: tuple[np.ndarray, np.ndarray] | None, query_vector: np.ndarray,
            k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best units (positions best first, and their scores) among ``candidates`` (positions ascending
    and their scores, as :func:`nearest_candidates` gives them), the others filled in as :func:`unit_scores`
    fills them when there are fewer than ``k``; without candidates (None), of every unit's score for
    ``query_vector``."""
    if candidates is not None and len(candidates[0]) >= k:
        positions, exact = candidates
        order, best = top_scores(exact, k)  # the candidates are in position order: ties keep collection order
        return positions[order], best
    return top_scores(scores_of(view, candidates, query_vector), k)


def _every_unit(candidates: tuple[np.ndarray, np.ndarray], units: int) -> np.ndarray:
    """:func:`unit_scores` from the candidates: theirs, and every other unit's just below them (or 0)."""
    positions, exact = candidates
    floor = min(np.float32(0.0), np.nextafter(exact.min(), np.float32(-np.inf))) if len(exact) else np.float32(0.0)
    scores = np.full(units, floor, dtype=np.float32)
    scores[positions] = exact
    return scores


def nearest_candidates(view: IndexReader, query_vector: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The units the nearest-neighbour search finds (as many as it gives: the depth a fusion ranks; positions
    ascending) and their exact cosine scores; None when the generation has no such search."""
    graph = view.ann
    if graph is None:
        return None
    found, found_scores = graph.nearest(query_vector)
    # a rowid not among the generation's is a unit another generation added (a store shared by writers)
    positions, known = view.row_positions(found)
    order = np.argsort(positions[known], kind="stable")
    return positions[known][order], np.asarray(found_scores, dtype=np.float32)[known][order]


class DenseRetriever(Retriever):
    name = "dense"
    ranks_from_arrays = True

    def __init__(self, index: IndexReader, embedder: Embedder | None = None) -> None:
        super().__init__(index)
        # The query must be embedded by the model that embedded the index.
        self.embedder = embedder or get_embedder(index.settings.embedder)

    def scores(self, query: str) -> np.ndarray:
        if len(self.index.vectors) == 0:
            return np.zeros(0, dtype=np.float32)
        return unit_scores(self.index, self.embedder.encode_query(query))

    def _top(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        if len(self.index.vectors) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return best_units(self.index, self.embedder.encode_query(query), k)
