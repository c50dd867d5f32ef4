"""Dense retrieval: cosine similarity between the query and unit embeddings (exact, or through the index's
nearest-neighbour graph when it has one)."""

from __future__ import annotations

import numpy as np

from citesum.embed import Embedder, get_embedder
from citesum.index.search_store import positions_among
from citesum.index.store import IndexReader
from citesum.retrieve.base import Retriever


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
        vectors = view.vectors
        graph = view.ann
        if graph is None:
            return np.asarray(vectors @ query_vector, dtype=np.float32)
        row_ids = view.row_ids
        found, found_scores = graph.nearest(query_vector)
        # a key not among the generation's rows is a stale graph's, or a unit another generation added
        positions, known = positions_among(row_ids, found)
        order = np.argsort(positions[known], kind="stable")
        positions = positions[known][order]  # sorted: reads of the memory-mapped matrix go forward
        if found_scores is not None:  # the store scored them exactly
            exact = np.asarray(found_scores, dtype=np.float32)[known][order]
        else:
            exact = np.asarray(vectors[positions] @ query_vector, dtype=np.float32)
    floor = min(np.float32(0.0), np.nextafter(exact.min(), np.float32(-np.inf))) if len(exact) else np.float32(0.0)
    scores = np.full(len(row_ids), floor, dtype=np.float32)
    scores[positions] = exact
    return scores


class DenseRetriever(Retriever):
    name = "dense"

    def __init__(self, index: IndexReader, embedder: Embedder | None = None) -> None:
        super().__init__(index)
        # The query must be embedded by the model that embedded the index.
        self.embedder = embedder or get_embedder(index.settings.embedder)

    def scores(self, query: str) -> np.ndarray:
        if len(self.index.vectors) == 0:
            return np.zeros(0, dtype=np.float32)
        return unit_scores(self.index, self.embedder.encode_query(query))
