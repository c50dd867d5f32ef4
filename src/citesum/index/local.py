"""The embedded default search store: each generation's BM25 (bm25s), dense matrix and, from ``ann_min_units``
units, HNSW graph (citesum.index.ann), as the files of ``gen-<N>/`` beside the database.

The files of a new generation are written to ``gen-<N>.tmp``, fsynced and renamed before the transaction that
makes N current commits, and the old generation is removed only after that commit; a writer killed at any point
leaves the previous generation current and complete, and the next writer sweeps the leftovers.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import shutil
import sqlite3
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from citesum.index import ann as ann_graph
from citesum.index import artifacts
from citesum.index.ann import AnnIndex
from citesum.index.database import current_generation, manifest_value, read_vectors, rows_of_documents
from citesum.index.lexical import LexicalIndex
from citesum.index.search_store import GenerationWrite, ProgressFn, SearchParts, SearchStore

log = logging.getLogger(__name__)


def ann_min_units(conn: sqlite3.Connection) -> int:
    value = manifest_value(conn, "ann_min_units")
    return int(value) if value else ann_graph.DEFAULT_ANN_MIN_UNITS


def damaged(conn: sqlite3.Connection, folder: Path) -> bool:
    """Whether the files of ``folder`` (the generation the manifest describes) differ from their recorded
    checksums; an index written before checksums has none to compare."""
    recorded = manifest_value(conn, "files")
    if recorded is None or not folder.is_dir():
        return False
    problems = artifacts.verify(folder, json.loads(recorded))
    if problems:
        log.warning("%s; reading the index from its database instead (citesum check --repair rewrites the "
                    "files)", "; ".join(problems))
    return bool(problems)


def _load_graph(path: Path | None) -> AnnIndex | None:
    """The generation's graph, memory-mapped; None without one, or without usearch to read it (search is then
    exact, and slower: said once in the log)."""
    if path is None:
        return None
    if not ann_graph.available():
        _warn_without_usearch(str(path.parent.parent))
        return None
    return AnnIndex.load(path)


@functools.lru_cache(maxsize=None)
def _warn_without_usearch(index_path: str) -> None:
    """Once per index and process (a service loads every new generation)."""
    log.warning("%s: this index has a nearest-neighbour graph, but usearch is not installed (pip install "
                "'citesum[ann]'): dense search reads every vector", index_path)


@dataclass(frozen=True)
class LocalWrite:
    """The plan of one write: the sound files of the current generation it builds on (None: none to build on),
    the rows it keeps, and how the new BM25 index is made from the new units' texts."""

    previous: Path | None
    kept_rows: np.ndarray
    make_lexical: Callable[[list[str]], LexicalIndex]

    def index_lexically(self, texts: list[str]) -> LexicalIndex:
        return self.make_lexical(texts)


class LocalStore(SearchStore):
    """Generations as files in the index folder (see the module docstring)."""

    spec = "local"

    def __init__(self, path: Path) -> None:
        self.path = path

    def owns(self, name: str) -> bool:
        return name.startswith("gen-")

    # ---- reading -------------------------------------------------------------------------------------
    def load(self, conn: sqlite3.Connection, generation: int, row_ids: np.ndarray, texts: list[str]) -> SearchParts:
        folder = self.path / f"gen-{generation}"
        try:
            if not damaged(conn, folder) and np.array_equal(np.load(folder / artifacts.ROWS), row_ids):
                return SearchParts(np.load(folder / artifacts.VECTORS, mmap_mode="r"),
                                   LexicalIndex.load(folder / artifacts.BM25), _load_graph(ann_graph.saved_in(folder)))
        except (OSError, ValueError, RuntimeError):  # usearch raises RuntimeError for a truncated graph
            pass
        # Generation 0 (empty), files damaged or removed by hand, or swept by a writer that committed after our
        # snapshot: rebuild them in memory from the database, which is the source of truth (dense search is
        # then exact).
        return SearchParts(read_vectors(conn), LexicalIndex.build(texts), None)

    def problems(self, manifest: dict[str, str], passages: int) -> list[str]:
        generation = int(manifest["generation"])
        if generation == 0:
            return []
        folder = self.path / f"gen-{generation}"
        if not folder.is_dir():
            return [f"{folder} is missing (it is rebuilt in memory at each start; --repair writes it)"]
        recorded = manifest.get("files")
        problems = [] if recorded is None else artifacts.verify(folder, json.loads(recorded))
        if problems:
            return problems
        try:
            rows = np.load(folder / artifacts.ROWS)
            vectors = np.load(folder / artifacts.VECTORS, mmap_mode="r")
        except (OSError, ValueError) as exc:
            return [f"{folder}: unreadable ({exc})"]
        if len(rows) != passages or vectors.shape[0] != passages:
            problems.append(f"{folder} holds {len(rows):,} rows and {vectors.shape[0]:,} vectors for {passages:,} "
                            "passages in the database")
        if recorded is None:
            problems.append(f"{folder} has no recorded checksums (written by an older citesum); --repair records "
                            "them")
        return problems

    # ---- writing -------------------------------------------------------------------------------------
    def _sound_generation(self, conn: sqlite3.Connection) -> Path | None:
        """The folder of the current generation when its files are there and match their checksums (what an
        update may build on); None otherwise."""
        folder = self.path / f"gen-{current_generation(conn)}"
        if not (folder / artifacts.ROWS).exists() or damaged(conn, folder):
            return None
        return folder

    def plan(self, conn: sqlite3.Connection, replaced: list[str]) -> LocalWrite:
        """The rows the next generation keeps, and how its BM25 index is made from the new units' texts: the
        previous generation's index without the replaced documents' units, only the new text analysed; or,
        without sound files that keep term counts, built from the text of every kept unit."""
        previous = self._sound_generation(conn)
        if previous is not None:
            old_rows = np.load(previous / artifacts.ROWS)
            removed = [row for (row,) in rows_of_documents(conn, replaced)]
            keep = ~np.isin(old_rows, np.array(removed, dtype=np.int64))
            try:
                current = LexicalIndex.load(previous / artifacts.BM25, mmap=True) if len(old_rows) else None
            except (OSError, ValueError):
                current = None
            if current is not None and current.size == len(old_rows) and current.unit_term_counts(0) is not None:
                return LocalWrite(previous, old_rows[keep], lambda texts: current.updated(keep, texts))
        gone = set(replaced)
        kept = [(row, text) for row, document_id, text in
                conn.execute("SELECT rowid, document_id, text FROM passages ORDER BY rowid") if document_id not in gone]
        return LocalWrite(previous, np.array([row for row, _ in kept], dtype=np.int64),
                          lambda texts: LexicalIndex.build([text for _, text in kept] + texts))

    def write(self, conn: sqlite3.Connection, generation: int, plan: GenerationWrite | None, removed_rows: set[int],
              first_new_row: int, added: np.ndarray | None, lexical: LexicalIndex | None,
              progress: ProgressFn | None) -> None:
        """Write gen-<N> from the (uncommitted) database state, reusing the vectors of the previous generation's
        sound files and the vectors ``added`` of the units this write inserted (else reading them from the
        database), and record it in the manifest as current, with its files' checksums.

        ``lexical`` is a BM25 index built beforehand over the plan's kept rows followed by the rows this write
        added; it is used when the database holds exactly those rows, and built from the database otherwise.
        """
        previous = plan.previous if isinstance(plan, LocalWrite) else None
        rows = np.fromiter(itertools.chain.from_iterable(conn.execute("SELECT rowid FROM passages ORDER BY rowid")),
                           dtype=np.int64)
        # the previous generation's row order, read once for the vectors and the graph
        old_rows = np.load(previous / artifacts.ROWS) if previous is not None else None
        vectors = self._generation_vectors(conn, previous, old_rows, rows, removed_rows, added)
        if lexical is not None and isinstance(plan, LocalWrite) and _prebuilt_matches(plan.kept_rows, lexical, rows):
            lexical_index = lexical
        else:
            if progress:
                progress("bm25", 0, 1)
            lexical_index = LexicalIndex.build([r[0] for r in conn.execute("SELECT text FROM passages ORDER BY rowid")])
            if progress:
                progress("bm25", 1, 1)
        graph = self._graph(conn, previous, old_rows, rows, vectors, removed_rows, progress)
        written = artifacts.write(self.path / f"gen-{generation}", rows, vectors, lexical_index, graph)
        conn.execute("INSERT OR REPLACE INTO manifest VALUES ('files', ?)", (json.dumps(written),))

    def committed(self, conn: sqlite3.Connection, generation: int) -> None:
        for entry in self.path.glob("gen-*"):
            if entry.name != f"gen-{generation}":
                shutil.rmtree(entry, ignore_errors=True)

    def discard(self, generation: int) -> None:
        """Remove the files of a generation whose transaction rolled back."""
        shutil.rmtree(self.path / f"gen-{generation}", ignore_errors=True)

    def has_graph(self, generation: int) -> bool:
        return ann_graph.saved_in(self.path / f"gen-{generation}") is not None

    def _graph(
        self, conn: sqlite3.Connection, previous: Path | None, old_rows: np.ndarray | None, rows: np.ndarray,
        vectors: np.ndarray, removed_rows: set[int], progress: ProgressFn | None,
    ) -> AnnIndex | None:
        """The nearest-neighbour graph of the new generation, when it has ``ann_min_units`` units or more: the
        previous generation's graph without the removed units and with the new ones (row ids only grow), or
        built whole when there is none to start from."""
        minimum = ann_min_units(conn)
        if not minimum or len(rows) < minimum or vectors.shape[1] == 0:
            return None
        if not ann_graph.available():
            warnings.warn(f"{self.path}: {len(rows):,} units and no approximate nearest-neighbour index: dense "
                          "search reads every vector (pip install 'citesum[ann]' for one)", stacklevel=2)
            return None
        if progress:
            progress("ann", 0, 1)
        graph = None
        saved = ann_graph.saved_in(previous) if previous is not None else None
        if saved is not None and old_rows is not None:
            try:
                graph = AnnIndex.load(saved, view=False)
                graph.remove(np.intersect1d(old_rows, np.fromiter(removed_rows, dtype=np.int64)))
                new = rows > (old_rows.max() if len(old_rows) else -1)
                graph.add(vectors[new], rows[new])
            except (OSError, ValueError, RuntimeError) as exc:
                log.warning("%s: the previous nearest-neighbour graph could not be updated (%s); building it again",
                            self.path, exc)
                graph = None
        # built whole when the update would not give exactly this generation's units (history of another shape)
        if graph is None or graph.dim != vectors.shape[1] or not np.array_equal(graph.keys(), rows):
            graph = AnnIndex.build(vectors, rows)
        if progress:
            progress("ann", 1, 1)
        return graph

    def _generation_vectors(
        self, conn: sqlite3.Connection, previous: Path | None, old_rows: np.ndarray | None, rows: np.ndarray,
        removed_rows: set[int], added: np.ndarray | None,
    ) -> np.ndarray:
        """The new dense matrix: the ``previous`` generation's (its sound file) without the removed rows, then
        the rows this write inserted (row ids only grow), with the vectors ``added`` as embedded (else read
        from the database). Everything is read from the database when the history is not that shape.

        A first build thus writes the vectors it embedded without reading a million blobs back from SQLite
        and holding them twice."""
        kept_rows = np.zeros(0, dtype=np.int64)
        last = -1
        if old_rows is not None:
            keep = ~np.isin(old_rows, np.fromiter(removed_rows, dtype=np.int64, count=len(removed_rows)))
            kept_rows = old_rows[keep]
            last = int(old_rows.max()) if len(old_rows) else -1
        new_rows = rows[len(kept_rows):]
        if not np.array_equal(kept_rows, rows[: len(kept_rows)]) or (len(new_rows) and new_rows[0] <= last):
            return read_vectors(conn)  # not the expected shape of history: rebuild from the source of truth
        if added is not None and len(added) == len(new_rows):
            fresh = added
        elif previous is not None:
            fresh = read_vectors(conn, after_row=last)
        else:
            return read_vectors(conn)
        if previous is None or not len(kept_rows):
            return fresh if len(fresh) else read_vectors(conn)
        vectors = _kept_vectors(previous / artifacts.VECTORS, keep, len(fresh))
        if len(fresh):
            vectors[len(kept_rows):] = fresh
        return vectors


#: rows _kept_vectors moves at a time (64 MB of 256-dimensional vectors: the most it copies to a temporary)
_MOVED_ROWS = 65_536


def _kept_vectors(path: Path, keep: np.ndarray, room: int) -> np.ndarray:
    """The rows of the saved matrix at ``path`` where ``keep`` is True, followed by ``room`` rows left to fill.

    The file is read once into the result and the kept rows are moved up over the dropped ones, run by run: at
    a million units, reading the matrix, selecting the kept rows and stacking the new ones under them copied
    1 GB three times (2.8 s of a 1% update), and np.compress over the memory-mapped file took 3.3 s."""
    saved = np.load(path, mmap_mode="r")
    kept = int(keep.sum())
    if saved.dtype != np.float32 or not saved.flags.c_contiguous or saved.ndim != 2:
        return np.vstack([np.asarray(saved[keep], dtype=np.float32), np.empty((room, saved.shape[1]), np.float32)])
    vectors = np.empty((max(len(saved), kept + room), saved.shape[1]), dtype=np.float32)
    with open(path, "rb") as handle:
        handle.seek(saved.offset)
        if handle.readinto(vectors[: len(saved)].data.cast("B")) != saved.nbytes:
            raise OSError(f"{path} is shorter than its header says")
    edges = np.flatnonzero(np.diff(np.r_[0, keep.astype(np.int8), 0]))
    end = 0
    for start, stop in zip(edges[::2].tolist(), edges[1::2].tolist()):  # each run of kept rows, moved up
        # a block at a time: numpy copies an overlapping source to a temporary first, which for one long run
        # would be the whole matrix again
        for block in range(start, stop, _MOVED_ROWS):
            rows = min(_MOVED_ROWS, stop - block)
            vectors[end: end + rows] = vectors[block: block + rows]
            end += rows
    return vectors[: kept + room]


def _prebuilt_matches(kept_rows: np.ndarray, index: LexicalIndex, rows: np.ndarray) -> bool:
    """Whether a BM25 index built before the transaction covers the database's rows: the kept rows it was built
    with, in order, then as many rows as it was given new texts (rowids only grow, and the write lock kept
    anyone else from inserting, so those are this update's)."""
    return index.size == len(rows) and bool(np.array_equal(rows[: len(kept_rows)], kept_rows))
