"""An approximate nearest-neighbour index of a generation's unit vectors (usearch HNSW, extra ``ann``), for
indexes above :data:`DEFAULT_ANN_MIN_UNITS` units, where a brute-force product with every vector is the
slowest part of a dense query (35 ms for a million 256-d units on 2 cores; the graph answers in a few).

Keys are the units' database rowids, which never change and are never reused, so an update removes the keys of
the units it drops and adds the new ones to the previous generation's graph instead of building it again. The
graph of a loaded generation is memory-mapped (a view of its file), not read into memory.

A search asks the graph for :data:`CANDIDATES` units (the depth a fusion of retrievers ranks) and scores those
exactly against the stored vectors: the ranking among them is exact, and only a unit the graph misses is lost.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from citesum.errors import MissingExtraError

#: Units from which a generation gets a graph (``Index.set_ann_min_units``; ``citesum index --ann-min-units``).
#: Chosen by benchmarks/scale.py's threshold step on our generated haystack (in-sample): the graph answers
#: faster from about 100,000 units, but building it costs about as much as embedding them; at 200,000 an
#: exact query takes 6.7 ms against 1.8 through the graph.
DEFAULT_ANN_MIN_UNITS = 200_000
#: Units the graph returns for a query, then scored exactly: the depth of a fusion's ranking.
CANDIDATES = 1000
#: HNSW parameters: 16 links a node; the breadth of the search while inserting, and while searching (at least
#: CANDIDATES, which it must return).
CONNECTIVITY = 16
EXPANSION_ADD = 128


def _usearch() -> object:
    try:
        from usearch import index as usearch_index
    except ImportError as exc:
        raise MissingExtraError("an approximate nearest-neighbour index", "ann", "usearch") from exc
    return usearch_index


def available() -> bool:
    try:
        _usearch()
    except MissingExtraError:
        return False
    return True


class AnnIndex:
    """A usearch HNSW graph over unit vectors (cosine), keyed by rowid."""

    def __init__(self, graph: object) -> None:
        self._graph = graph

    @classmethod
    def build(cls, vectors: np.ndarray, keys: np.ndarray) -> "AnnIndex":
        graph = _usearch().Index(  # type: ignore[attr-defined]
            ndim=vectors.shape[1], metric="cos", dtype="f16", connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD, expansion_search=CANDIDATES)
        index = cls(graph)
        index.add(vectors, keys)
        return index

    @classmethod
    def load(cls, path: Path, *, view: bool = True) -> "AnnIndex":
        """The graph saved at ``path``: memory-mapped (``view``, read-only) or read whole (to be updated)."""
        graph = _usearch().Index.restore(str(path), view=view)  # type: ignore[attr-defined]
        if graph is None:
            raise ValueError(f"{path} is not a usearch index")
        graph.expansion_search = CANDIDATES
        return cls(graph)

    def __len__(self) -> int:
        return int(len(self._graph))  # type: ignore[arg-type]

    def keys(self) -> np.ndarray:
        """The keys of the graph's units, ascending."""
        return np.sort(np.asarray(self._graph.keys, dtype=np.int64))  # type: ignore[attr-defined]

    @property
    def dim(self) -> int:
        return int(self._graph.ndim)  # type: ignore[attr-defined]

    def add(self, vectors: np.ndarray, keys: np.ndarray) -> None:
        if len(keys):
            self._graph.add(np.asarray(keys, dtype=np.uint64), np.ascontiguousarray(vectors, dtype=np.float32))  # type: ignore[attr-defined]

    def remove(self, keys: np.ndarray) -> None:
        if len(keys):
            self._graph.remove(np.asarray(keys, dtype=np.uint64))  # type: ignore[attr-defined]

    def save(self, path: Path) -> None:
        self._graph.save(str(path))  # type: ignore[attr-defined]

    def nearest(self, query_vector: np.ndarray) -> tuple[np.ndarray, None]:
        """(:meth:`search`'s keys, None): the graph's distances are of half-precision vectors, so the caller
        scores the units found against the stored vectors."""
        return self.search(query_vector), None

    def search(self, query: np.ndarray, count: int | None = None) -> np.ndarray:
        """The keys of the ``count`` (default :data:`CANDIDATES`) units nearest ``query`` that the graph finds,
        nearest first (fewer when it has fewer)."""
        count = count or CANDIDATES
        found = self._graph.search(np.asarray(query, dtype=np.float32), count)  # type: ignore[attr-defined]
        return np.asarray(found.keys, dtype=np.int64)
