"""An approximate nearest-neighbour index of a generation's unit vectors (usearch HNSW, extra ``ann``), for
indexes above :data:`DEFAULT_ANN_MIN_UNITS` units, where a brute-force product with every vector is the
slowest part of a dense query at a million units, and the graph answers in a fraction of its time (measured by
benchmarks/scale.py).

Keys are database rowids (of the unit a node was made from: see the copies below), which never change and are
never reused, so a merge removes the nodes no unit it keeps stands for and adds the new units' nodes to the
graph of its largest segment instead of building it again. The
graph of a loaded generation is memory-mapped (a view of its file), not read into memory.

The graph holds each rowid multiplied by an odd constant (mod 2**64, so the product is undone exactly): usearch
looks keys up in a hash table that consecutive integers crowd. Profiling the 1% update of benchmarks/scale.py
(a million units) found nearly half of its time spent removing its old units from the freshly built graph, and
removing consecutive keys from a graph of random vectors was slow where the same keys spread were not (scratch
comparison). Graphs written before that (``ann.usearch``) hold the rowids.

Copies of a passage (boilerplate, a short closing sentence chunked alone: a large share of our generated
haystack's units) share one node, keyed by the rowid of the first unit holding that vector (:func:`copy_keys`; a
segment keeps each unit's key). A search finds a node and returns the copies the generation holds, lowest rowid
first, as exact search breaks their ties; a graph of every copy returned an arbitrary few of them, so its recall
counted by id fell short of its recall counting any copy (benchmarks/scale.py before this). With a node a
distinct vector, the graph of a million generated passages has fewer nodes and builds faster (benchmarks/scale.py
runs before and after, both f16, in document order; see :meth:`AnnIndex.add` for the order nodes are inserted in
now). Segments of older formats (every unit a node) are searched as they are, and a merge builds their graph
again as nodes.

A search asks the graph for :data:`CANDIDATES` units (the depth a fusion of retrievers ranks) and scores those
exactly against the stored vectors: the ranking among them is exact, and only a unit the graph misses is lost. A
search for fewer units is searched at a breadth of the count asked or :data:`MIN_BREADTH`, whichever is larger.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from citesum.errors import MissingExtraError

#: Units from which a generation gets a graph (``Index.set_ann_min_units``; ``citesum index --ann-min-units``).
#: Chosen by benchmarks/scale.py's threshold step on our generated haystack (in-sample), whose results hold the
#: figures (the graph's build time too): from about this many units a query through the graph is clearly faster
#: than an exact one.
DEFAULT_ANN_MIN_UNITS = 200_000
#: Units the graph returns for a query, then scored exactly: the depth of a fusion's ranking.
CANDIDATES = 1000
#: HNSW parameters: 16 links a node; the breadth of the search while inserting.
CONNECTIVITY = 16
EXPANSION_ADD = 128
#: How the graph holds the vectors: 8-bit integers (unit vectors times 127; candidates are scored exactly after).
#: In a scratch comparison on 300,000 generated units and the queries of benchmarks/scale.py's two sets, a graph
#: of them built faster and searched faster than one of half-precision floats or of bf16, and recalled at least
#: as well. Graphs written before hold f16.
DTYPE = "i8"
#: The breadth of a search for fewer units than this (usearch searches at max(expansion_search, count)). Chosen
#: with Rocchio's first pass when it asked for 64 units; it now searches once, for CANDIDATES, as every retriever
#: does (citesum.retrieve.feedback.DensePRFRetriever), and this is the floor of a caller asking for fewer.
MIN_BREADTH = 256
#: the file of a segment's graph: a node a distinct vector, keys spread (see the module docstring); and of graphs
#: written before, searched as they are with every unit a node: keys spread, and keys that are the rowids. A new
#: name, so that a reader of an older format finds no graph it would misread, and searches exactly.
FILE = "ann-nodes.usearch"
EVERY_UNIT_FILE = "ann-spread-keys.usearch"
LEGACY_FILE = "ann.usearch"
#: odd, so multiplying by it mod 2**64 is undone by multiplying by its inverse (the golden-ratio constant)
_SPREAD = np.uint64(0x9E3779B97F4A7C15)
_GATHER = np.uint64(pow(0x9E3779B97F4A7C15, -1, 2**64))


#: rows hashed at a time by :func:`copy_keys` (a block's 64-bit words take 16 MB)
_HASHED_ROWS = 8192
#: rows of a selection copied at a time to be added to a graph (64 MB of 256-d vectors)
_ADDED_ROWS = 65_536
#: fewer rows than this are added to a graph on one thread, in their order: threads inserting side by side build
#: another graph each time, and one of a few hundred units may then leave a node no search reaches (a unit test
#: of the exact ranking failed once so, on a busy machine); a larger graph is built on every core, as its build
#: time was measured (benchmarks/scale.py)
_ONE_THREAD_ROWS = 10_000
#: the coordinates whose lexicographic order vectors are inserted in (:meth:`AnnIndex.add`): sorting by the first
#: 8 gives all but the same order as sorting by all 256, in a small fraction of the time (scratch, on the vectors
#: of a million generated passages)
INSERTION_COLUMNS = 8


def copy_keys(vectors: np.ndarray, rows: np.ndarray, known: np.ndarray | None = None) -> np.ndarray:
    """The graph key of each unit (``rows``, its ``vectors``): the rowid of the first unit whose vector equals
    its own, or the key ``known`` gives it (>= 0; -1: none), which a unit keeps and its new copies share.

    A unit whose key is its own rowid is a node of the graph; the others are found through it. Units are grouped
    by a hash of their vectors' bits, then each new copy is compared with its node's vector: after a collision of
    hashes, the units whose vector differs from the node's become nodes of their own (each, even copies of one
    another), so results stay right and only those copies' order among themselves is left to the graph."""
    rows = np.asarray(rows, dtype=np.int64)
    given = np.full(len(rows), -1, dtype=np.int64) if known is None else np.asarray(known, dtype=np.int64)
    if not len(rows):
        return given
    _, group = np.unique(_hashes(vectors), return_inverse=True)
    group = group.ravel()
    none = np.iinfo(np.int64).max
    # a group's key: the smallest key given to one of its units, else its first rowid
    group_key = np.full(group.max() + 1, none, dtype=np.int64)
    np.minimum.at(group_key, group[given >= 0], given[given >= 0])
    first_row = np.full(len(group_key), none, dtype=np.int64)
    np.minimum.at(first_row, group, rows)
    group_key = np.where(group_key < none, group_key, first_row)
    keys = np.where(given >= 0, given, group_key[group])
    # each group's holder: the unit whose vector the node was made from (it was given the key, or is the node)
    holder = np.full(len(group_key), len(rows), dtype=np.int64)
    made_from = (keys == group_key[group]) & ((given >= 0) | (keys == rows))
    np.minimum.at(holder, group[made_from], np.flatnonzero(made_from))
    copies = np.flatnonzero((given < 0) & (keys != rows))
    for start in range(0, len(copies), _HASHED_ROWS):
        chunk = copies[start: start + _HASHED_ROWS]
        differ = np.any(np.asarray(vectors[chunk]) != np.asarray(vectors[holder[group[chunk]]]), axis=1)
        keys[chunk[differ]] = rows[chunk[differ]]
    return keys


def _hashes(vectors: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's bits: the sum of its 32-bit words times odd constants, mod 2**64."""
    dim = vectors.shape[1]
    factors = np.random.default_rng(dim).integers(0, 2**62, size=dim, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    hashes = np.empty(len(vectors), dtype=np.uint64)
    for start in range(0, len(vectors), _HASHED_ROWS):
        words = np.ascontiguousarray(vectors[start: start + _HASHED_ROWS], dtype=np.float32).view(np.uint32)
        hashes[start: start + len(words)] = (words.astype(np.uint64) * factors).sum(axis=1, dtype=np.uint64)
    return hashes


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


def saved_in(folder: Path) -> Path | None:
    """The graph file of a generation's folder (either name); None when it has none."""
    for name in (FILE, EVERY_UNIT_FILE, LEGACY_FILE):
        if (folder / name).exists():
            return folder / name
    return None


class AnnIndex:
    """A usearch HNSW graph over unit vectors (cosine), keyed by rowid (spread: the module docstring)."""

    def __init__(self, graph: object, *, spread: bool = True) -> None:
        self._graph = graph
        self._spread = spread

    @classmethod
    def build(cls, vectors: np.ndarray, keys: np.ndarray, rows: np.ndarray | None = None) -> "AnnIndex":
        """A graph of the rows ``rows`` (positions; default all) of ``vectors``, under ``keys`` (one a row)."""
        graph = _usearch().Index(  # type: ignore[attr-defined]
            ndim=vectors.shape[1], metric="cos", dtype=DTYPE, connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD, expansion_search=MIN_BREADTH)
        index = cls(graph)
        index.add(vectors, keys, rows)
        return index

    @classmethod
    def load(cls, path: Path, *, view: bool = True) -> "AnnIndex":
        """The graph saved at ``path``: memory-mapped (``view``, read-only) or read whole (to be updated)."""
        graph = _usearch().Index.restore(str(path), view=view)  # type: ignore[attr-defined]
        if graph is None:
            raise ValueError(f"{path} is not a usearch index")
        graph.expansion_search = MIN_BREADTH
        return cls(graph, spread=path.name != LEGACY_FILE)

    def _held(self, rowids: np.ndarray) -> np.ndarray:
        """The graph's keys of ``rowids`` (NumPy's unsigned products wrap around: mod 2**64)."""
        keys = np.asarray(rowids, dtype=np.int64).astype(np.uint64)
        return keys * _SPREAD if self._spread else keys

    def _rowids(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, dtype=np.uint64)
        return (keys * _GATHER if self._spread else keys).astype(np.int64)

    def __len__(self) -> int:
        return int(len(self._graph))  # type: ignore[arg-type]

    def keys(self) -> np.ndarray:
        """The rowids of the graph's units, ascending."""
        return np.sort(self._rowids(self._graph.keys))  # type: ignore[attr-defined]

    @property
    def dim(self) -> int:
        return int(self._graph.ndim)  # type: ignore[attr-defined]

    def add(self, vectors: np.ndarray, keys: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Add the rows ``rows`` (positions; default all) of ``vectors`` under ``keys`` (one a row), in the order
        of their leading coordinates (:data:`INSERTION_COLUMNS`), :data:`_ADDED_ROWS` at a time (a selection of a
        million vectors is not copied whole).

        Why that order: inserted in collection order, a million generated passages left nodes no search reached,
        short boilerplate sentences inserted early whose links later insertions pruned, and the graph missed much
        of the exact top 10 of the benchmark's recall queries. Inserted in a random order it missed less; sorted
        by the coordinates (lexicographically, or along a random direction) it found nearly all of it, on the
        queries the order was chosen on and on held-out ones alike. Scratch comparisons on one index built by
        benchmarks/scale.py."""
        rows = np.arange(len(keys)) if rows is None else np.asarray(rows, dtype=np.int64)
        keys = np.asarray(keys, dtype=np.int64)
        if not len(rows):
            return
        leading = np.concatenate([np.asarray(vectors[rows[start: start + _ADDED_ROWS], :INSERTION_COLUMNS])
                                  for start in range(0, len(rows), _ADDED_ROWS)])
        order = np.lexsort(leading.T[::-1])
        threads = 1 if len(rows) < _ONE_THREAD_ROWS else 0  # 0: every core
        for start in range(0, len(order), _ADDED_ROWS):
            block = order[start: start + _ADDED_ROWS]
            self._graph.add(self._held(keys[block]),  # type: ignore[attr-defined]
                            np.ascontiguousarray(vectors[rows[block]], dtype=np.float32), threads=threads)

    def remove(self, keys: np.ndarray) -> None:
        """Remove the units of rowids ``keys``."""
        if len(keys):
            self._graph.remove(self._held(keys))  # type: ignore[attr-defined]

    def save(self, path: Path) -> None:
        self._graph.save(str(path))  # type: ignore[attr-defined]

    def search(self, query: np.ndarray, count: int | None = None) -> np.ndarray:
        """The rowids of the ``count`` (default :data:`CANDIDATES`) units nearest ``query`` that the graph finds,
        nearest first (fewer when it has fewer)."""
        count = count or CANDIDATES
        # on the calling thread: usearch's default spreads even one query over every core, and starting them cost
        # more than a narrow search itself takes (scratch comparison at a million units)
        found = self._graph.search(np.asarray(query, dtype=np.float32), count, threads=1)  # type: ignore[attr-defined]
        return self._rowids(found.keys)
