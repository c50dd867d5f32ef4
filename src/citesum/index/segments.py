"""The segments of the local store's generations (citesum.index.local): a segment is a run of units written
once (their rowids, vectors, analysed term counts and, in large indexes, an HNSW graph) and shared by every
generation after it, which may hold only some of its units (the others' documents were deleted or revised).

An update writes a segment of its new units and links the others into the new generation's folder, so it
costs what it adds, not what the index holds. Segments are in rowid order (rowids only grow, and only
neighbouring segments are merged), so a generation's units, in rowid order, are its segments' held units one
segment after the other. :func:`merge_runs` says which segments a write rewrites: those that lost much of
their units, and the smallest neighbours while there are too many.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from citesum.index import ann as ann_graph
from citesum.index.ann import AnnIndex
from citesum.index.cosine import cosine_scores
from citesum.index.lexical import TermCounts
from citesum.index.search_store import RowPositions, positions_among

ROWS = "rows.npy"
VECTORS = "vectors.npy"
#: beside a segment's graph: the key under which the graph holds each row's vector (citesum.index.ann.copy_keys);
#: a graph written before it holds every row under its own rowid
GRAPH_KEYS = "graph-keys.npy"
TERMS = "terms"
#: a generation's list of its segments (names, in rowid order)
LISTING = "segments.json"
#: the folder of a generation's segments
FOLDER = "segments"

#: at most this many segments after a write: more, and the smallest neighbours are merged (each query visits
#: every segment)
MAX_SEGMENTS = 8
#: a segment that no longer holds this share of its units is written again without them
DELETED_SHARE = 0.3
#: the fewest units a segment has a graph for (in an index of ``ann_min_units`` units or more): below it, reading
#: all its vectors costs less than asking a graph
SEGMENT_GRAPH_UNITS = 20_000


@dataclass
class Segment:
    """One segment's files, loaded (arrays memory-mapped; the graph too) or made by a write."""

    name: str
    rows: np.ndarray
    vectors: np.ndarray
    terms: TermCounts
    graph: AnnIndex | None = None
    #: the folder it was loaded from (a write links its files instead of writing them); None: made by the write
    source: Path | None = None
    #: the graph key of each row (:data:`GRAPH_KEYS`); None: its own rowid
    graph_keys: np.ndarray | None = None

    @classmethod
    def load(cls, folder: Path, *, graph: bool = True) -> "Segment":
        """The segment saved in ``folder``; with ``graph``, its graph memory-mapped when it has one and usearch
        is installed."""
        saved = ann_graph.saved_in(folder)
        keys = np.load(folder / GRAPH_KEYS, mmap_mode="r") if (folder / GRAPH_KEYS).exists() else None
        return cls(folder.name, np.load(folder / ROWS, mmap_mode="r"), np.load(folder / VECTORS, mmap_mode="r"),
                   TermCounts.load(folder / TERMS),
                   AnnIndex.load(saved) if graph and saved is not None and ann_graph.available() else None, folder,
                   keys)

    @property
    def has_graph(self) -> bool:
        return self.graph is not None or (self.source is not None and ann_graph.saved_in(self.source) is not None)

    @property
    def keys(self) -> np.ndarray:
        """The graph key of each row (:data:`GRAPH_KEYS`)."""
        return self.rows if self.graph_keys is None else self.graph_keys

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True)
        np.save(folder / ROWS, np.asarray(self.rows, dtype=np.int64))
        np.save(folder / VECTORS, np.ascontiguousarray(self.vectors, dtype=np.float32))
        self.terms.save(folder / TERMS)
        if self.graph is not None:
            self.graph.save(folder / ann_graph.FILE)
            np.save(folder / GRAPH_KEYS, np.asarray(self.keys, dtype=np.int64))


def listing(folder: Path) -> list[str] | None:
    """The names of a generation's segments, in order; None for a generation written before segments."""
    path = folder / LISTING
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def held_rows(segment_rows: np.ndarray, row_ids: np.ndarray) -> np.ndarray | None:
    """The rows of a segment (its rowids ``segment_rows``) that a generation of units ``row_ids`` holds (both
    ascending); None when it holds them all."""
    if not len(row_ids):
        return np.zeros(0, dtype=np.int64)
    _, held = positions_among(row_ids, segment_rows)
    return None if held.all() else np.flatnonzero(held)


def held_count(segment_rows: np.ndarray, held: np.ndarray | None) -> int:
    """How many units a segment of rowids ``segment_rows`` holds, given its :func:`held_rows`."""
    return len(segment_rows) if held is None else len(held)


def merge_runs(held: Sequence[int], total: Sequence[int], largest: int) -> list[tuple[int, int]]:
    """Which segments to write again, as runs ``(start, stop)`` of neighbours each merged into one, given how
    many units each holds and has: a segment that lost :data:`DELETED_SHARE` of its units alone (or in the run
    it joins), then, while there are more than :data:`MAX_SEGMENTS`, the two neighbouring groups holding the
    fewest units together, as long as they hold no more than ``largest`` units (the index's ``segment_units``:
    a merge holds its units in memory, and an index of more than MAX_SEGMENTS x ``largest`` units keeps more
    segments). Each unit is thus rewritten a few times over the life of an index, not at every update
    (segments grow about geometrically)."""
    groups = [[i] for i in range(len(held))]
    sizes = list(held)
    while len(groups) > MAX_SEGMENTS:
        pair = min(range(len(groups) - 1), key=lambda j: sizes[j] + sizes[j + 1])
        if sizes[pair] + sizes[pair + 1] > largest:
            break
        groups[pair: pair + 2] = [groups[pair] + groups[pair + 1]]
        sizes[pair: pair + 2] = [sizes[pair] + sizes[pair + 1]]
    return [(group[0], group[-1] + 1) for group in groups
            if len(group) > 1 or held[group[0]] <= (1 - DELETED_SHARE) * total[group[0]]]


class SegmentVectors:
    """The vectors of a generation's units across its segments, read like one (positions x dimensions) matrix
    of the held units: a product with a query vector, rows by position, the whole as an array (a copy)."""

    def __init__(self, parts: Sequence[tuple[np.ndarray, np.ndarray | None]], dim: int) -> None:
        self._parts = list(parts)  # (a segment's vectors, its held rows or None)
        sizes = [held_count(vectors, held) for vectors, held in self._parts]
        self._starts = np.cumsum([0, *sizes])
        self.shape = (int(self._starts[-1]), dim)
        self.dtype = np.dtype(np.float32)
        self.ndim = 2

    def __len__(self) -> int:
        return self.shape[0]

    def __matmul__(self, query: np.ndarray) -> np.ndarray:
        scores = [cosine_scores(vectors, query) for vectors, _ in self._parts]
        return np.concatenate([s if held is None else s[held] for s, (_, held) in zip(scores, self._parts)]
                              or [np.zeros(0, dtype=np.float32)])

    def __getitem__(self, positions: Any) -> np.ndarray:
        if isinstance(positions, slice):
            positions = np.arange(len(self))[positions]
        positions = np.asarray(positions, dtype=np.int64)
        if positions.ndim != 1:
            raise TypeError("index segment vectors by a sequence of positions")
        if len(positions) and (positions.min() < -len(self) or positions.max() >= len(self)):
            raise IndexError(f"positions out of range for {len(self)} units")
        positions = np.where(positions < 0, positions + len(self), positions)
        out = np.empty((len(positions), self.shape[1]), dtype=np.float32)
        part_of = np.searchsorted(self._starts, positions, side="right") - 1
        for part in np.unique(part_of).tolist():
            vectors, held = self._parts[part]
            chosen = part_of == part
            local = positions[chosen] - self._starts[part]
            out[chosen] = vectors[local if held is None else held[local]]
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self[np.arange(len(self))].astype(dtype or np.float32, copy=False)


class SegmentNearest:
    """Nearest-neighbour search over segments: each segment's graph, or its vectors read when it has none (a
    small one), keeping the units the generation holds."""

    holds_vectors = True

    def __init__(self, parts: Sequence[tuple[Segment, np.ndarray | None]]) -> None:
        self._parts = list(parts)
        self._groups: list[_CopyGroups | None] = [None] * len(self._parts)  # made at a segment's first search

    def __len__(self) -> int:
        return sum(held_count(segment.rows, held) for segment, held in self._parts)

    def _graph_candidates(self, number: int, query: np.ndarray, asked: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows (positions in the segment) of the held units of the ``asked`` nodes the segment's graph finds
        nearest ``query``, with their exact scores: the units of the best nodes until there are ``asked`` (a node
        stands for its held copies, lowest rows first, as exact search breaks their ties), its vector scored once."""
        segment, held = self._parts[number]
        groups = self._groups[number]
        if groups is None:
            groups = self._groups[number] = _CopyGroups(np.asarray(segment.keys), held)
        nodes = groups.nodes(segment.graph.search(query, asked))  # type: ignore[union-attr]
        first = groups.first_rows(nodes)
        in_file_order = np.argsort(first)  # reads of the mapped vectors go forward
        node_scores = np.empty(len(nodes), dtype=np.float32)
        node_scores[in_file_order] = cosine_scores(segment.vectors[first[in_file_order]], query)
        best = np.lexsort((first, -node_scores))
        nodes, node_scores = nodes[best], node_scores[best]
        sizes = np.minimum(groups.sizes(nodes), asked)
        enough = int(np.searchsorted(np.cumsum(sizes), asked)) + 1
        return groups.rows(nodes[:enough], sizes[:enough]), np.repeat(node_scores[:enough], sizes[:enough])

    def nearest(self, query_vector: np.ndarray, count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The rowids of the ``count`` (default :data:`~citesum.index.ann.CANDIDATES`) units nearest
        ``query_vector`` found across the segments, with their exact cosine scores, best first (equal scores: the
        lower rowid first): each graph's candidates and the units of the segments without one, scored against the
        stored vectors. Keeping only the best of them (not a segment's best alone) bounds what a fusion ranks."""
        return self.search(query_vector, count, with_scores=True)  # type: ignore[return-value]

    def search(self, query: np.ndarray, count: int | None = None, *, with_scores: bool = False
               ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """The rowids of up to ``count`` (default :data:`~citesum.index.ann.CANDIDATES`) units nearest
        ``query``, best first (and their exact scores, ``with_scores``)."""
        count = count or ann_graph.CANDIDATES
        found_rows, found_scores = [], []
        for number, (segment, held) in enumerate(self._parts):
            if segment.graph is not None:
                # the graph has nodes of units the generation no longer holds too (at most DELETED_SHARE of them):
                # asked for proportionally more, those are left out
                asked = count if held is None else int(count * len(segment.rows) / max(len(held), 1)) + 16
                local, scores = self._graph_candidates(number, query, asked)
                found_rows.append(np.asarray(segment.rows[local], dtype=np.int64))
                found_scores.append(scores)
                continue
            # a small segment: every vector read (its product, not a copy of the rows it holds)
            scores = cosine_scores(segment.vectors, query)
            found_rows.append(np.asarray(segment.rows if held is None else segment.rows[held], dtype=np.int64))
            found_scores.append(scores if held is None else scores[held])
        rows = np.concatenate(found_rows) if found_rows else np.zeros(0, dtype=np.int64)
        scores = np.concatenate(found_scores) if found_scores else np.zeros(0, dtype=np.float32)
        if len(scores) > count:  # the count best and any tied with the last of them, then in order
            kept = scores >= np.partition(scores, len(scores) - count)[len(scores) - count]
            rows, scores = rows[kept], scores[kept]
        best = np.lexsort((rows, -scores))[:count]
        return (rows[best], scores[best]) if with_scores else rows[best]


class _CopyGroups:
    """A segment's held rows by graph key (:data:`GRAPH_KEYS`): the graph finds a node, the node stands for the
    held units holding its vector (a node none of whose units is held stands for none, and is not found)."""

    def __init__(self, keys: np.ndarray, held: np.ndarray | None) -> None:
        rows = np.arange(len(keys)) if held is None else np.asarray(held, dtype=np.int64)
        self._order = rows[np.argsort(keys[rows], kind="stable")]  # each key's held rows ascending
        by_key = keys[self._order]
        starts = np.flatnonzero(np.r_[True, by_key[1:] != by_key[:-1]]) if len(by_key) else np.zeros(0, np.int64)
        self._node_of = RowPositions(by_key[starts])  # the keys, ascending
        self._starts = np.r_[starts, len(by_key)].astype(np.int64)

    def nodes(self, keys: np.ndarray) -> np.ndarray:
        """The numbers of the nodes of ``keys`` that stand for some of the segment's rows."""
        nodes, known = self._node_of(keys)
        return nodes[known]

    def sizes(self, nodes: np.ndarray) -> np.ndarray:
        return self._starts[nodes + 1] - self._starts[nodes]

    def first_rows(self, nodes: np.ndarray) -> np.ndarray:
        return self._order[self._starts[nodes]]

    def rows(self, nodes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """The first ``sizes`` rows of each of ``nodes``, node after node."""
        offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        return self._order[np.repeat(self._starts[nodes], sizes) + offsets]
