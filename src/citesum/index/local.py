"""The embedded default search store: each generation's units as segments (citesum.index.segments), each with
its rowids, vectors, analysed term counts and, in indexes of ``ann_min_units`` units or more, HNSW graph
(citesum.index.ann), as the files of ``gen-<N>/`` beside the database, with the BM25 statistics of the whole
generation (citesum.index.lexical).

An update writes a segment of the units it adds and hard-links the segments it keeps into the new generation's
folder: what it writes grows with what it adds, not with the index. The units of the documents it revises or
deletes stay in their segments' files, left out of the new generation (a segment that lost
:data:`~citesum.index.segments.DELETED_SHARE` of its units is written again without them), and the smallest
neighbouring segments are merged while there are more than :data:`~citesum.index.segments.MAX_SEGMENTS`.

The files of a new generation are written to ``gen-<N>.tmp``, fsynced and renamed before the transaction that
makes N current commits, and the old generation is removed only after that commit (its folder; the files it
shares live on in the new one); a writer killed at any point leaves the previous generation current and
complete, and the next writer sweeps the leftovers.

Each file a search reads is read again and checked before it is searched (citesum.index.artifacts): by each
process that loads a generation, then in the background every :data:`~citesum.index.artifacts.REVERIFY_S` while
the process keeps it (a damaged file found then makes the next read load the generation again, from the database).
A write reads again what it carries into the next generation: the generation's own files, each segment's rowids,
the term counts of the segments it removes units from and the files of the segments it merges.
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
from typing import Callable, Mapping, Sequence

import numpy as np

from citesum.index import ann as ann_graph
from citesum.index import artifacts
from citesum.index import segments as segment_files
from citesum.index.ann import AnnIndex
from citesum.index.database import (current_generation, manifest_value, read_vectors, rows_of_documents,
                                    segment_units, stored_dim)
from citesum.index.lexical import LexicalIndex
from citesum.index.search_store import GenerationWrite, ProgressFn, SearchParts, SearchStore, positions_among
from citesum.index.segments import Segment, SegmentNearest, SegmentVectors, held_count, held_rows, merge_runs
from citesum.types import Passage

log = logging.getLogger(__name__)
#: the folder of a generation's BM25 statistics (vocabulary, how many units hold each term, total length)
LEXICAL = "bm25"


def ann_min_units(conn: sqlite3.Connection) -> int:
    value = manifest_value(conn, "ann_min_units")
    return int(value) if value else ann_graph.DEFAULT_ANN_MIN_UNITS


def recorded_files(conn: sqlite3.Connection) -> dict[str, list] | None:
    """The checksums of the current generation's files (artifacts.record); None for an index written before
    checksums."""
    recorded = manifest_value(conn, "files")
    return None if recorded is None else json.loads(recorded)


def damaged(conn: sqlite3.Connection, folder: Path, read_again: Callable[[str], bool]) -> bool:
    """Whether the files of ``folder`` (the generation the manifest describes) differ from their recorded
    checksums, those ``read_again`` picks by their relative path read again (artifacts.verify); an index written
    before checksums has none to compare."""
    recorded = recorded_files(conn)
    if recorded is None or not folder.is_dir():
        return False
    problems = artifacts.verify(folder, recorded, read_again=read_again)
    if problems:
        log.warning("index at %s: %s; reading the index from its database instead (citesum check --repair "
                    "rewrites the files)", folder.parent, "; ".join(problems))
    return bool(problems)


def every_file(name: str) -> bool:
    """What a search reads of a generation: every file."""
    return True


def carried_files(name: str) -> bool:
    """What a write reads of the generation it builds on whatever it links (:func:`damaged`): the generation's own
    files (row order, list of segments, BM25 statistics: the next generation's are made from them) and each
    segment's rowids (which of its units the generation holds)."""
    return not name.startswith(f"{segment_files.FOLDER}/") or name.endswith(f"/{segment_files.ROWS}")


def segment_records(recorded: Mapping[str, list], name: str, under: str = "") -> dict[str, list]:
    """The records of the files of segment ``name`` (those in its folder ``under``, e.g. ``terms/``)."""
    prefix = f"{segment_files.FOLDER}/{name}/{under}"
    return {relative: kept for relative, kept in recorded.items() if relative.startswith(prefix)}


class _DamagedSegments(Exception):
    """Segments a write was to read are damaged (their problems): it writes every unit from the database."""


@functools.lru_cache(maxsize=None)
def _warn_without_usearch(index_path: str) -> None:
    """Once per index and process (a service loads every new generation)."""
    log.warning("%s: this index has a nearest-neighbour graph, but usearch is not installed (pip install "
                "'citesum[ann]'): dense search reads every vector", index_path)


@functools.lru_cache(maxsize=None)
def _warn_older_layout(index_path: str) -> None:
    log.warning("%s: the index files were written by an older citesum; they are read from the database at every "
                "start until the next update, or `citesum check --index %s --repair`, writes them again",
                index_path, index_path)


@dataclass(frozen=True)
class LocalWrite:
    """The plan of one write: the sound current generation it builds on (None: none to build on) with its
    segments and recorded checksums, the rows it keeps, and how the new BM25 index is made from the new units'
    texts."""

    previous: Path | None
    segments: list[Segment]
    recorded: dict[str, list]
    kept_rows: np.ndarray
    make_lexical: Callable[[list[str]], LexicalIndex | None]

    def index_lexically(self, texts: list[str]) -> LexicalIndex | None:
        return self.make_lexical(texts)


class LocalStore(SearchStore):
    """Generations as files in the index folder (see the module docstring)."""

    spec = "local"

    def __init__(self, path: Path) -> None:
        self.path = path
        #: the files of the generations this process loaded from them, read again in the background
        self._watched: dict[int, artifacts.Watched] = {}

    def owns(self, name: str) -> bool:
        return name.startswith("gen-")

    # ---- reading -------------------------------------------------------------------------------------
    def load(self, conn: sqlite3.Connection, generation: int, row_ids: np.ndarray,
             passages: Sequence[Passage]) -> SearchParts:
        folder = self.path / f"gen-{generation}"
        names = None
        try:
            names = segment_files.listing(folder)
            if names is not None and not damaged(conn, folder, every_file) and np.array_equal(
                    np.load(folder / artifacts.ROWS), row_ids):
                parts = self._search_parts(conn, folder, names, row_ids)
                self._watch(conn, generation, folder)
                return parts
        except (OSError, ValueError, RuntimeError, KeyError):  # usearch raises RuntimeError for a truncated graph
            pass
        self._watched.pop(generation, None)
        if names is None and (folder / artifacts.ROWS).exists():
            _warn_older_layout(str(self.path))
        # Generation 0 (empty), files damaged or removed by hand, or swept by a writer that committed after our
        # snapshot: rebuild them in memory from the database, which is the source of truth (dense search is
        # then exact).
        return SearchParts(read_vectors(conn), LexicalIndex.build([p.text for p in passages]), None)

    def _watch(self, conn: sqlite3.Connection, generation: int, folder: Path) -> None:
        """Have the files of ``generation``, loaded from ``folder``, read again in the background while this store
        keeps it (the newest it loaded, and any newer)."""
        recorded = recorded_files(conn)
        self._watched = {number: watched for number, watched in self._watched.items() if number > generation}
        if recorded is not None:
            self._watched[generation] = artifacts.watch(folder, recorded)

    def found_damaged(self, generation: int) -> bool:
        """Whether a file of ``generation``, loaded from its files, was found damaged since: a search must not
        read it (citesum.index.store loads the generation again, and this store reads it from the database)."""
        watched = self._watched.get(generation)
        return watched is not None and watched.damaged

    def _search_parts(self, conn: sqlite3.Connection, folder: Path, names: list[str],
                      row_ids: np.ndarray) -> SearchParts:
        loaded = [Segment.load(folder / segment_files.FOLDER / name) for name in names]
        held = [held_rows(segment.rows, row_ids) for segment in loaded]
        if sum(held_count(s.rows, h) for s, h in zip(loaded, held)) != len(row_ids):
            raise ValueError(f"{folder}: its segments do not hold the generation's units")
        if any(s.graph is None and s.has_graph for s in loaded):
            _warn_without_usearch(str(self.path))
        lexical = LexicalIndex.load(folder / LEXICAL, [(s.terms, h) for s, h in zip(loaded, held)])
        dim = loaded[0].vectors.shape[1] if loaded else stored_dim(conn)
        whole = len(loaded) == 1 and held[0] is None
        vectors = loaded[0].vectors if whole else SegmentVectors([(s.vectors, h) for s, h in zip(loaded, held)], dim)
        nearest = SegmentNearest(list(zip(loaded, held))) if any(s.graph is not None for s in loaded) else None
        return SearchParts(vectors, lexical, nearest)

    def problems(self, manifest: dict[str, str], passages: int) -> list[str]:
        generation = int(manifest["generation"])
        if generation == 0:
            return []
        folder = self.path / f"gen-{generation}"
        if not folder.is_dir():
            return [f"{folder} is missing (it is rebuilt in memory at each start; --repair writes it)"]
        recorded = manifest.get("files")
        problems = [] if recorded is None else artifacts.verify(folder, json.loads(recorded), thorough=True)
        if problems:
            return problems
        names = segment_files.listing(folder)
        if names is None:
            return [f"{folder} was written by an older citesum (before segments): it is read from the database at "
                    "every start; --repair writes it again"]
        try:
            rows = np.load(folder / artifacts.ROWS)
            loaded = [Segment.load(folder / segment_files.FOLDER / name, graph=False) for name in names]
        except (OSError, ValueError) as exc:
            return [f"{folder}: unreadable ({exc})"]
        for segment in loaded:
            if len(segment.vectors) != len(segment.rows) or len(segment.terms) != len(segment.rows):
                problems.append(f"{segment.source} holds {len(segment.rows):,} rows, {len(segment.vectors):,} "
                                f"vectors and {len(segment.terms):,} units' term counts")
            if len(segment.keys) != len(segment.rows):
                problems.append(f"{segment.source} holds {len(segment.rows):,} rows and the graph keys of "
                                f"{len(segment.keys):,}")
        held = sum(held_count(s.rows, held_rows(s.rows, rows)) for s in loaded)
        if len(rows) != passages or held != passages:
            problems.append(f"{folder} holds {len(rows):,} rows ({held:,} in its segments) for {passages:,} "
                            "passages in the database")
        if recorded is None:
            problems.append(f"{folder} has no recorded checksums (written by an older citesum); --repair records "
                            "them")
        return problems

    def notes(self, manifest: dict[str, str]) -> list[str]:
        folder = self.path / f"gen-{manifest['generation']}"
        names = segment_files.listing(folder) if folder.is_dir() else None
        older = [name for name in names or []
                 if (graph := ann_graph.saved_in(folder / segment_files.FOLDER / name)) is not None
                 and graph.name != ann_graph.FILE]
        if not older:
            return []
        return [f"{folder}: the graph of segment(s) {', '.join(older)} has a node for every unit, in the order of "
                "the collection (an older citesum wrote it): it finds copies of a passage less well than a graph "
                "of distinct vectors; --repair, or the next merge of the segment, builds that"]

    # ---- writing -------------------------------------------------------------------------------------
    def _sound_generation(self, conn: sqlite3.Connection) -> tuple[Path, list[str]] | None:
        """The folder of the current generation and the names of its segments, when it has segments and its files
        match their checksums (what an update may build on); None otherwise."""
        folder = self.path / f"gen-{current_generation(conn)}"
        if not (folder / artifacts.ROWS).exists() or damaged(conn, folder, carried_files):
            return None
        try:
            names = segment_files.listing(folder)
        except ValueError:  # a list of segments that is not JSON (written without checksums, or by hand)
            return None
        return None if names is None else (folder, names)

    def plan(self, conn: sqlite3.Connection, replaced: list[str]) -> LocalWrite:
        """The rows the next generation keeps, and how its BM25 index is made from the new units' texts: the
        previous generation's segments without the replaced documents' units, only the new text analysed; or,
        without a sound generation to build on, built from the text of every kept unit."""
        sound = self._sound_generation(conn)
        built_on = None if sound is None else self._plan_on(conn, *sound, replaced)
        if built_on is not None:
            return built_on
        gone = set(replaced)
        kept_rows = np.array([row for row, document_id in conn.execute(
            "SELECT rowid, document_id FROM passages ORDER BY rowid") if document_id not in gone], dtype=np.int64)
        if len(kept_rows) > segment_units(conn):  # the write reads the database a segment at a time (_saved_segments)
            return LocalWrite(None, [], {}, kept_rows, lambda texts: None)
        kept_texts = [text for row, document_id, text in conn.execute(
            "SELECT rowid, document_id, text FROM passages ORDER BY rowid") if document_id not in gone]
        return LocalWrite(None, [], {}, kept_rows, lambda texts: LexicalIndex.build(kept_texts + texts))

    def _plan_on(self, conn: sqlite3.Connection, previous: Path, names: list[str], replaced: list[str]
                 ) -> LocalWrite | None:
        """The plan of a write building on the sound generation in ``previous`` (its segments ``names``); None
        when its files cannot be read, or the term counts the write reads of the segments it removes units from
        are damaged (it is built from the database instead)."""
        removed = np.array([row for (row,) in rows_of_documents(conn, replaced)], dtype=np.int64)
        try:
            old_rows = np.load(previous / artifacts.ROWS)
            loaded = [Segment.load(previous / segment_files.FOLDER / name, graph=False) for name in names]
            recorded = recorded_files(conn) or {}
            losing = [segment.name for segment in loaded if np.isin(segment.rows, removed).any()]
            problems = artifacts.verify_before_reading(previous, {
                relative: kept for name in losing
                for relative, kept in segment_records(recorded, name, f"{segment_files.TERMS}/").items()})
            if problems:
                log.warning("index at %s: %s; the update writes every unit again from the database (citesum check "
                            "--repair rewrites the files)", self.path, "; ".join(problems))
                return None
            current = LexicalIndex.load(previous / LEXICAL, [(s.terms, held_rows(s.rows, old_rows)) for s in loaded])
        except (OSError, ValueError, KeyError):
            return None  # unreadable: the generation is built from the database
        keep = ~np.isin(old_rows, removed)
        return LocalWrite(previous, loaded, recorded, old_rows[keep], lambda texts: current.updated(keep, texts))

    def write(self, conn: sqlite3.Connection, generation: int, plan: GenerationWrite | None, removed_rows: set[int],
              first_new_row: int, added: np.ndarray | None, lexical: LexicalIndex | None,
              progress: ProgressFn | None) -> None:
        """Write gen-<N> from the (uncommitted) database state and record it in the manifest as current, with
        its files' checksums: the previous generation's segments (linked) and one of the units this write
        inserted, with their vectors ``added`` (else read from the database); or, without a sound previous
        generation to build on, one segment of every unit.

        ``lexical`` is a BM25 index built beforehand over the plan's kept rows followed by the rows this write
        added; it is used when the database holds exactly those rows, and built from the database otherwise.
        """
        # segments a writer killed while it wrote this same generation number left (a rewrite's or a merge's)
        shutil.rmtree(self._staging(generation), ignore_errors=True)
        # from the small index on document_id, sorted here: ORDER BY rowid reads the table, with every text and
        # vector, several times slower for a million units out of the page cache
        rows = np.sort(np.fromiter(itertools.chain.from_iterable(conn.execute(
            "SELECT rowid FROM passages INDEXED BY passages_by_document")), dtype=np.int64))
        local_plan = plan if isinstance(plan, LocalWrite) else None
        if not (local_plan is not None and isinstance(lexical, LexicalIndex)
                and _prebuilt_matches(local_plan.kept_rows, lexical, rows)):
            local_plan, lexical = None, None
        if local_plan is not None and local_plan.previous is not None and lexical is not None:
            segments, lexical = self._updated_segments(conn, generation, local_plan, rows, first_new_row, added,
                                                       lexical)
        else:
            segments, lexical = self._every_unit(conn, generation, rows, added, lexical, progress)
        recorded = local_plan.recorded if local_plan is not None else {}
        try:
            segments, lexical = self._merged(conn, generation, segments, lexical, len(rows), progress, recorded)
        except _DamagedSegments as exc:
            log.warning("index at %s: %s; the update writes every unit again from the database (citesum check "
                        "--repair rewrites the files)", self.path, exc)
            shutil.rmtree(self._staging(generation), ignore_errors=True)
            recorded = {}
            segments, lexical = self._every_unit(conn, generation, rows, None, None, progress)
            segments, lexical = self._merged(conn, generation, segments, lexical, len(rows), progress, recorded)
        linked = {}
        for segment in segments:  # a kept segment (its recorded checksums come with it) or one saved beforehand
            if segment.source is not None:
                for file in segment.source.rglob("*"):
                    if file.is_file():
                        relative = f"{segment_files.FOLDER}/{segment.name}/{file.relative_to(segment.source).as_posix()}"
                        linked[relative] = (file, recorded.get(relative) or artifacts.record(file))

        def write_new(folder: Path) -> None:
            np.save(folder / artifacts.ROWS, rows)
            (folder / segment_files.LISTING).write_text(json.dumps([s.name for s in segments]), encoding="utf-8")
            lexical.save(folder / LEXICAL)  # type: ignore[union-attr]
            for segment in segments:
                if segment.source is None:
                    segment.save(folder / segment_files.FOLDER / segment.name)

        written = artifacts.write(self.path / f"gen-{generation}", write_new, linked)
        conn.execute("INSERT OR REPLACE INTO manifest VALUES ('files', ?)", (json.dumps(written),))

    def _updated_segments(self, conn: sqlite3.Connection, generation: int, plan: LocalWrite, rows: np.ndarray,
                          first_new_row: int, added: np.ndarray | None, lexical: LexicalIndex
                          ) -> tuple[list[Segment], LexicalIndex]:
        """The previous generation's segments (their files linked) and one of the units this write inserted
        (rowids from ``first_new_row`` on)."""
        new_rows = rows[len(plan.kept_rows):]
        segments = list(plan.segments)
        if len(new_rows):
            fresh = added is not None and len(added) == len(new_rows)
            vectors = added if fresh else read_vectors(conn, after_row=first_new_row - 1)
            segments.append(Segment(f"s{generation}-0", new_rows, vectors, lexical.segments[-1][0]))
        return segments, lexical

    def _every_unit(self, conn: sqlite3.Connection, generation: int, rows: np.ndarray, added: np.ndarray | None,
                    lexical: LexicalIndex | None, progress: ProgressFn | None) -> tuple[list[Segment], LexicalIndex]:
        """Segments of every unit, built on nothing: one (:meth:`_one_segment`), or one per ``segment_units``
        units read from the database (:meth:`_saved_segments`)."""
        if len(rows) <= segment_units(conn):
            return self._one_segment(conn, generation, rows, added, lexical, progress)
        return self._saved_segments(conn, generation, rows, progress)

    def _one_segment(self, conn: sqlite3.Connection, generation: int, rows: np.ndarray, added: np.ndarray | None,
                     lexical: LexicalIndex | None, progress: ProgressFn | None) -> tuple[list[Segment], LexicalIndex]:
        """Every unit in one segment: the vectors ``added`` when they are all of them (a first build), else read
        from the database; the BM25 index ``lexical`` when given, else built from the database's text."""
        vectors = added if added is not None and len(added) == len(rows) and len(rows) else read_vectors(conn)
        if lexical is None:
            if progress:
                progress("bm25", 0, 1)
            lexical = LexicalIndex.build([r[0] for r in conn.execute("SELECT text FROM passages ORDER BY rowid")])
            if progress:
                progress("bm25", 1, 1)
        [(terms, _)] = lexical.segments
        return [Segment(f"s{generation}-0", rows, vectors, terms)], lexical

    def _saved_segments(self, conn: sqlite3.Connection, generation: int, rows: np.ndarray,
                        progress: ProgressFn | None) -> tuple[list[Segment], LexicalIndex]:
        """Every unit, read from the database in segments of ``segment_units`` units (a rewrite of an index
        larger than that: ``citesum check --repair``, a new graph threshold, an older layout). Each segment is
        saved to ``gen-<N>.segments/`` with its graph as soon as it is made, and mapped from there (the write
        links its files), so a rewrite holds one segment's vectors and graph at a time, not the index's."""
        limit = segment_units(conn)
        segments: list[Segment] = []
        lexical = None
        for number, start in enumerate(range(0, len(rows), limit)):
            part = rows[start: start + limit]
            bounds = (int(part[0]), int(part[-1]))
            texts = [text for (text,) in conn.execute(
                "SELECT text FROM passages WHERE rowid BETWEEN ? AND ? ORDER BY rowid", bounds)]
            if progress:
                progress("bm25", number, -(-len(rows) // limit))
            lexical = (LexicalIndex.build(texts) if lexical is None
                       else lexical.updated(np.ones(lexical.size, dtype=bool), texts))
            segment = Segment(f"s{generation}-r{number}", part, read_vectors(conn, bounds[0] - 1, bounds[1]),
                              lexical.segments[-1][0])
            self._add_graph([], segment, self._wants_graph(conn, len(rows), len(part)), progress)
            segments.append(self._staged(generation, segment))
            lexical = lexical.with_segments([*lexical.segments[:-1], (segments[-1].terms, None)])
        if progress:
            progress("bm25", len(segments), len(segments))
        assert lexical is not None  # more rows than segment_units: at least two segments
        return segments, lexical

    def _staging(self, generation: int) -> Path:
        """Where a write saves the segments it makes before the generation's folder (they are linked into it)."""
        return self.path / f"gen-{generation}.segments"

    def _staged(self, generation: int, segment: Segment) -> Segment:
        """``segment`` saved (fsynced) to the write's staging folder and loaded back memory-mapped: a write holds
        the segments it made no longer than it makes each."""
        folder = self._staging(generation) / segment.name
        segment.save(folder)
        artifacts.fsync_tree(folder)
        return Segment.load(folder)

    @staticmethod
    def _wants_graph(conn: sqlite3.Connection, units: int, size: int) -> bool:
        """Whether a segment of ``size`` units in a generation of ``units`` units gets a graph."""
        minimum = ann_min_units(conn)
        return bool(minimum) and units >= minimum and size >= min(segment_files.SEGMENT_GRAPH_UNITS, minimum)

    def _merged(self, conn: sqlite3.Connection, generation: int, segments: list[Segment], lexical: LexicalIndex,
                units: int, progress: ProgressFn | None, recorded: Mapping[str, list]
                ) -> tuple[list[Segment], LexicalIndex]:
        """``segments`` with the runs :func:`merge_runs` picks, and the kept segments whose graph is not what the
        index now asks for, written again; then the graphs of the segments this write makes. The files of the
        kept segments it writes again are read again first (their ``recorded`` checksums): _DamagedSegments when
        one differs, rather than its bytes written into a new segment under a new checksum."""

        def wants_graph(size: int) -> bool:
            return self._wants_graph(conn, units, size)

        held = [live for _, live in lexical.segments]
        sizes = [held_count(s.rows, h) for s, h in zip(segments, held)]
        # every segment's term ids change when terms no unit holds are dropped: each is written again (the
        # vocabulary of an index whose documents are all replaced, update after update, would otherwise grow
        # without bound)
        renumbered = lexical.unheld_terms_share > lexical.UNHELD_TERMS
        if renumbered:
            runs = [(i, i + 1) for i in range(len(segments))]
        else:
            runs = merge_runs(sizes, [len(s.rows) for s in segments], segment_units(conn))
        covered = {i for start, stop in runs for i in range(start, stop)}
        if ann_graph.available():  # without usearch, a segment's graph is kept for when it is installed again
            runs += [(i, i + 1) for i, s in enumerate(segments)
                     if s.source is not None and i not in covered and s.has_graph != wants_graph(sizes[i])]
        rewritten = [segments[i] for start, stop in runs for i in range(start, stop)]
        problems = [problem for segment in rewritten if segment.source is not None for problem in
                    artifacts.verify_before_reading(segment.source.parent.parent,
                                                    segment_records(recorded, segment.name))]
        if problems:
            raise _DamagedSegments("; ".join(problems))
        if renumbered:
            lexical = lexical.without_unheld_terms()
        for number, (start, stop) in enumerate(sorted(runs, reverse=True), start=1):
            parts = list(zip(segments[start:stop], held[start:stop]))
            merged_rows = np.concatenate([s.rows if h is None else s.rows[h] for s, h in parts])
            if not len(merged_rows):  # the run's units were all deleted or revised: no segment is left of it
                lexical = lexical.without_segments(start, stop)
                del segments[start:stop], held[start:stop]
                continue
            lexical = lexical.with_segments_merged(start, stop)
            vectors = np.concatenate([np.asarray(s.vectors if h is None else s.vectors[h], dtype=np.float32)
                                      for s, h in parts])
            merged = Segment(f"s{generation}-{number}", merged_rows, vectors, lexical.segments[start][0])
            self._add_graph(parts, merged, wants_graph(len(merged_rows)), progress)
            merged = self._staged(generation, merged)  # a write rewriting many segments holds one at a time
            lexical = lexical.with_segments([*lexical.segments[:start], (merged.terms, None),
                                             *lexical.segments[start + 1:]])
            segments[start:stop] = [merged]
            held[start:stop] = [None]
        for segment in segments:  # the segment of the new units, when no merge took it (a merged one is saved)
            if segment.source is None:
                self._add_graph([], segment, wants_graph(len(segment.rows)), progress)
        return segments, lexical

    def _add_graph(self, parts: list[tuple[Segment, np.ndarray | None]], segment: Segment, wanted: bool,
                   progress: ProgressFn | None) -> None:
        """Give a segment this write makes its graph and the graph key of each unit, when ``wanted``: the graph of
        the largest of the segments ``parts`` it merges (read whole), without the nodes none of its units stands
        for any more and with nodes for the others' new vectors, or built whole (one node a distinct vector:
        citesum.index.ann)."""
        if not wanted or segment.vectors.shape[1] == 0:
            return
        if not ann_graph.available():
            warnings.warn(f"{self.path}: {len(segment.rows):,} units and no approximate nearest-neighbour index: "
                          "dense search reads every vector (pip install 'citesum[ann]' for one)", stacklevel=3)
            return
        if progress:
            progress("ann", 0, 1)
        graph, keys = None, None
        largest = max(parts, key=lambda part: len(part[0].rows), default=None)
        saved = ann_graph.saved_in(largest[0].source) if largest is not None and largest[0].source else None
        # a graph of an older format (every unit a node) is built again as nodes, not carried on
        if saved is not None and saved.name == ann_graph.FILE and largest is not None:
            try:
                graph = AnnIndex.load(saved, view=False)
                base = largest[0]
                base_keys = np.asarray(base.keys)
                position_in_base, from_base = positions_among(base.rows, segment.rows)
                known = np.full(len(segment.rows), -1, dtype=np.int64)
                known[from_base] = base_keys[position_in_base[from_base]]
                keys = ann_graph.copy_keys(segment.vectors, segment.rows, known)
                graph.remove(np.setdiff1d(base_keys, keys))
                new_nodes = np.flatnonzero((known < 0) & (keys == segment.rows))
                graph.add(segment.vectors, segment.rows[new_nodes], new_nodes)
            except (OSError, ValueError, RuntimeError) as exc:
                log.warning("%s: a segment's nearest-neighbour graph could not be updated (%s); building it again",
                            self.path, exc)
                graph = None
        # built whole when the update would not give exactly this segment's nodes (history of another shape)
        if (graph is None or keys is None or graph.dim != segment.vectors.shape[1]
                or not np.array_equal(graph.keys(), np.unique(keys))):
            keys = ann_graph.copy_keys(segment.vectors, segment.rows)
            nodes = np.flatnonzero(keys == segment.rows)
            graph = AnnIndex.build(segment.vectors, segment.rows[nodes], nodes)
        segment.graph, segment.graph_keys = graph, keys
        if progress:
            progress("ann", 1, 1)

    def committed(self, conn: sqlite3.Connection, generation: int) -> None:
        for entry in self.path.glob("gen-*"):
            if entry.name != f"gen-{generation}":
                shutil.rmtree(entry, ignore_errors=True)

    def discard(self, generation: int) -> None:
        """Remove the files of a generation whose transaction rolled back."""
        for folder in (self.path / f"gen-{generation}", self._staging(generation)):
            shutil.rmtree(folder, ignore_errors=True)

    def has_graph(self, generation: int) -> bool:
        folder = self.path / f"gen-{generation}" / segment_files.FOLDER
        return folder.is_dir() and any(ann_graph.saved_in(segment) is not None for segment in folder.iterdir())


def _prebuilt_matches(kept_rows: np.ndarray, index: LexicalIndex, rows: np.ndarray) -> bool:
    """Whether a BM25 index built before the transaction covers the database's rows: the kept rows it was built
    with, in order, then as many rows as it was given new texts (rowids only grow, and the write lock kept
    anyone else from inserting, so those are this update's)."""
    return index.size == len(rows) and bool(np.array_equal(rows[: len(kept_rows)], kept_rows))
