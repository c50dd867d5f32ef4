"""Where the searches of an index run: its search store, chosen when the index is created and recorded in its
manifest (key ``store``), so every later command finds it from ``--index DIR`` alone.

- ``local`` (the default): each generation's BM25 (bm25s), dense matrix and, from ``ann_min_units`` units, HNSW
  graph, as files beside the database (:mod:`citesum.index.local`).
- ``milvus:URI``: a Milvus collection (:mod:`citesum.index.milvus`; a milvus-lite file or a server's address).

In every case the database in the index folder keeps the documents, the passages with their positions and
embeddings, and the generations: packing, citations and evidence read it, and any store can be written again
from it. A store is told what a write adds and removes before the transaction that makes the new generation
current commits, and when it has committed; a reader only ever sees the units of the generation it pinned.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from citesum.errors import ConfigError
from citesum.types import Passage

#: Progress callback: (stage, done, total).
ProgressFn = Callable[[str, int, int], None]
STORES = ("local", "milvus")


class LexicalScorer(Protocol):
    """BM25 over a generation's units."""

    #: whether the scorer keeps the units' term counts and the vocabulary (what RM3 query feedback reads)
    term_statistics: bool
    #: whether the store fuses BM25 and dense itself (``hybrid_scores(query, query_vector, rrf_k)``)
    serves_hybrid: bool

    def scores(self, query: str) -> np.ndarray:
        """One score per unit of the generation (0: the unit holds no term of the query)."""
        ...


class NearestUnits(Protocol):
    """Approximate nearest-neighbour search over a generation's unit vectors."""

    #: whether the vectors it searches are the generation's in this process (scoring its candidates again costs
    #: a gather, not a round trip): Rocchio then ranks the query's candidates again instead of searching again
    holds_vectors: bool

    def nearest(self, query_vector: np.ndarray, count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(the rowids of the ``count`` units found nearest (default: the depth a fusion ranks,
        :data:`~citesum.index.ann.CANDIDATES`), their exact cosine scores)."""
        ...


@dataclass(frozen=True)
class SearchParts:
    """What a store gives a loaded generation: the unit vectors (rows in rowid order; an array, or an object
    that reads rows on demand), BM25, and a nearest-neighbour search when it has one."""

    vectors: Any
    lexical: LexicalScorer
    nearest: NearestUnits | None


class GenerationWrite(Protocol):
    """What a store prepares before a write embeds the new units."""

    def index_lexically(self, texts: list[str]) -> Any:
        """Made while the last batches are embedded: the store's lexical index of the kept units and ``texts``
        (the new units' texts, in order), or None when the store indexes text itself."""
        ...


class SearchStore(ABC):
    """Serves the searches of an index's generations (see the module docstring)."""

    #: what the manifest records: ``local`` or ``milvus:URI``
    spec: str

    @abstractmethod
    def load(self, conn: sqlite3.Connection, generation: int, row_ids: np.ndarray,
             passages: Sequence[Passage]) -> SearchParts:
        """The search parts of ``generation`` (``conn``'s transaction sees it), whose units are ``row_ids``
        (``passages``, read when iterated)."""

    @abstractmethod
    def plan(self, conn: sqlite3.Connection, replaced: list[str]) -> GenerationWrite:
        """Before a write embeds anything (under the write lock): it will drop the units of ``replaced``."""

    @abstractmethod
    def write(self, conn: sqlite3.Connection, generation: int, plan: GenerationWrite | None, removed_rows: set[int],
              first_new_row: int, added: np.ndarray | None, lexical: Any, progress: ProgressFn | None) -> None:
        """Inside the write's transaction, before it commits: make ``generation`` searchable from the database
        (its passages with rowids from ``first_new_row`` on are new, their vectors ``added`` when given) and
        record in the manifest what a reader needs. ``plan`` None: everything from the database (a repair)."""

    @abstractmethod
    def committed(self, conn: sqlite3.Connection, generation: int) -> None:
        """After ``generation`` committed: drop what only older generations used."""

    @abstractmethod
    def problems(self, manifest: dict[str, str], passages: int) -> list[str]:
        """What ``citesum check`` reports of the current generation's search parts (nothing when sound)."""

    def found_damaged(self, generation: int) -> bool:
        """Whether a file of ``generation``, loaded by this process, was found damaged since (the generation is
        then loaded again, from what is sound). A store that keeps no files of its own finds none."""
        return False

    @property
    def one_process_at_a_time(self) -> bool:
        """Whether one process at a time can search the store (a milvus-lite file): a service reads it with
        threads, not worker processes."""
        return False

    def probe(self, *, other_processes: bool = False) -> None:
        """Raise :class:`~citesum.errors.IndexStoreError` unless the store answers a search of the current
        generation now (what the service's ``/health`` asks at every call, so cheap), ``other_processes`` (a
        service's worker processes) searching it too. The local store's files are read by each process that
        searches, and checked against their checksums by ``citesum check``: nothing to ask here."""

    def notes(self, manifest: dict[str, str]) -> list[str]:
        """What ``citesum check`` notes of the current generation's search parts: sound, but worth knowing."""
        return []

    def new_index_manifest(self, created: str, options: dict[str, str]) -> dict[str, str]:
        """What the manifest of a new index created at ``created`` records for this store, given the user's
        ``options`` (refused when unknown)."""
        if options:
            raise ConfigError(f"the {self.spec} store takes no options (got {', '.join(sorted(options))})")
        return {}

    def verify(self) -> None:
        """Raise :class:`~citesum.errors.IndexStoreError` when the store cannot be used (a server unreachable)."""

    def discard(self, generation: int) -> None:
        """Undo what :meth:`write` did for ``generation``, whose transaction rolled back."""

    def owns(self, name: str) -> bool:
        """Whether the entry ``name`` of the index folder is this store's (``citesum check`` notes others)."""
        return False


#: A table from rowid to position is made for rowids spanning at most this many numbers a rowid (4 bytes each):
#: more, and the generation lost that many units to deletions and updates, and a binary search is kept.
TABLE_SPAN_PER_ROWID = 4


class RowPositions:
    """:func:`positions_among` for one ascending array of rowids asked again and again (a generation's, a graph's
    keys): from a table of every number in their span (made at the first question) when they fill a
    :data:`TABLE_SPAN_PER_ROWID`-th of it. A binary search of a graph's candidates among a million rowids
    thinned by an update was a noticeable part of a query, each step a read from memory (scratch); the table
    takes one read."""

    def __init__(self, row_ids: np.ndarray) -> None:
        self.row_ids = row_ids
        self._table: np.ndarray | None = None
        self._span = int(row_ids[-1]) - int(row_ids[0]) + 1 if len(row_ids) else 0
        self._tabled = len(row_ids) < self._span <= TABLE_SPAN_PER_ROWID * len(row_ids)

    def __call__(self, found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not self._tabled:
            return positions_among(self.row_ids, found)
        if self._table is None:  # made by whichever thread asks first; two threads make the same table
            table = np.full(self._span, -1, dtype=np.int32 if len(self.row_ids) < 2**31 else np.int64)
            table[np.asarray(self.row_ids, dtype=np.int64) - int(self.row_ids[0])] = np.arange(len(self.row_ids))
            self._table = table
        offsets = np.asarray(found, dtype=np.int64) - int(self.row_ids[0])
        inside = (offsets >= 0) & (offsets < self._span)
        positions = self._table[np.where(inside, offsets, 0)].astype(np.int64)
        known = inside & (positions >= 0)
        return np.where(known, positions, len(self.row_ids)), known


def positions_among(row_ids: np.ndarray, found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the position among a generation's ascending ``row_ids`` of each of the rowids ``found``, and which of
    them the generation has at all): a search answers with rowids, a score array is aligned with positions."""
    if not len(row_ids):
        return np.zeros(len(found), dtype=np.int64), np.zeros(len(found), dtype=bool)
    if int(row_ids[-1]) - int(row_ids[0]) == len(row_ids) - 1:
        # consecutive rowids (a segment one write added, a generation no update has thinned): a rowid's position
        # is its offset from the first (a binary search of a graph's candidates among a million rowids costs a
        # query more)
        positions = np.clip(np.asarray(found, dtype=np.int64) - int(row_ids[0]), 0, len(row_ids))
    else:
        positions = np.searchsorted(row_ids, found)
    known = (positions < len(row_ids)) & (row_ids[np.minimum(positions, len(row_ids) - 1)] == found)
    return positions, known


def parse_store(spec: str) -> tuple[str, str]:
    """``local`` -> ("local", ""); ``milvus:URI`` -> ("milvus", URI); ``milvus`` -> ("milvus", "") (a
    milvus-lite file in the index folder)."""
    kind, _, where = spec.partition(":")
    if kind not in STORES or (kind == "local" and where):
        raise ConfigError(f"unknown store '{spec}'; choose 'local' or 'milvus:URI' (a milvus-lite file such as "
                          "milvus:./vectors.db, or a server such as milvus:http://localhost:19530)")
    return kind, where


def open_store(spec: str, index_path: Path, manifest: dict[str, str]) -> SearchStore:
    """The store an index's manifest records."""
    kind, where = parse_store(spec)
    if kind == "local":
        from citesum.index.local import LocalStore

        return LocalStore(index_path)
    from citesum.index.milvus import MilvusStore

    return MilvusStore(where, index_path, manifest)
