"""The persistent index: one directory holding SQLite (source of truth) and the searches of its search store.

Layout::

    DIR/index.sqlite     documents, passages (+ their embeddings), the generations and the manifest
    DIR/gen-<N>/         the local store's segments of generation N (their vectors, term counts and graphs, most
                         of them links to the files of the generation before) and its BM25 statistics
                         (citesum.index.local); a Milvus store keeps them in its collection instead
                         (citesum.index.milvus)
    DIR/write.lock       held (flock) by the one process allowed to write

Why this shape: SQLite gives atomic, crash-safe updates of the documents; the store makes a new generation
searchable *before* the transaction that makes it current commits, and drops what only older generations used
after that commit (citesum.index.search_store). A writer killed at any point therefore leaves the previous
generation current and complete; the next writer sweeps the leftovers.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import json
import logging
import os
import re
import shutil
import sqlite3
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from citesum.chunking import DEFAULT_DOCUMENT_TOKENS, DEFAULT_PASSAGE_TOKENS, UNITS, Unit, make_units
from citesum.embed import DEFAULT_EMBEDDER, Embedder, get_embedder
from citesum.errors import CitesumError, ConfigError, IndexLockedError, IndexMismatchError, IndexStoreError
from citesum.index import ann as ann_graph
from citesum.index.database import (
    DB_NAME,
    connect_read_only,
    current_generation,
    database_errors,
    parameter_batches,
    rows_of_documents,
    segment_units,
)
from citesum.index.local import LocalStore
from citesum.index.passages import StoredPassages
from citesum.index.search_store import (
    GenerationWrite,
    LexicalScorer,
    NearestUnits,
    ProgressFn,
    RowPositions,
    SearchStore,
    open_store,
    parse_store,
)
from citesum.parallel import BatchExecutor, TaskResults, job_key, resumable_map
from citesum.tokens import get_tokenizer
from citesum.types import Document, Passage

SCHEMA_VERSION = 1
LOCK_NAME = "write.lock"
#: results of the tasks of an interrupted parallel job, kept for its next run (citesum.parallel.TaskResults)
TASKS_DIR = "tasks"
log = logging.getLogger(__name__)
#: errno values of a write that found no room: the disk (or a quota, or a file size limit) is full
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
#: the write-ahead log's size kept on disk once merged (:func:`_connect`)
_LOG_KEPT_BYTES = 4 << 20
#: free pages worth giving back to the file system (:func:`_reclaim`): one page in this many, and this many bytes
_RECLAIM_FROM_FREE_SHARE = 4
_RECLAIM_FROM_BYTES = 8 << 20
#: how long emptying the log waits for readers of other processes to leave it: a later writer empties it anyway
_MERGE_WAIT_MS = 1000


@dataclass(frozen=True)
class IndexSettings:
    """What an index is built with; fixed at creation and checked on every open."""

    unit: Unit = "passage"
    max_tokens: int = DEFAULT_PASSAGE_TOKENS
    tokenizer: str = "cl100k"
    embedder: str = DEFAULT_EMBEDDER

    @classmethod
    def for_unit(cls, unit: Unit, max_tokens: int | None = None, **kwargs: str) -> "IndexSettings":
        if unit not in UNITS:
            raise ConfigError(f"unknown unit '{unit}'; choose one of: {', '.join(UNITS)}")
        default = DEFAULT_PASSAGE_TOKENS if unit == "passage" else DEFAULT_DOCUMENT_TOKENS
        return cls(unit=unit, max_tokens=max_tokens or default, **kwargs)


@dataclass(frozen=True)
class UpdateStats:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    passages_embedded: int = 0
    generation: int = 0

    def __add__(self, later: "UpdateStats") -> "UpdateStats":
        """Two updates' counts together, at the later one's generation."""
        return UpdateStats(self.added + later.added, self.updated + later.updated, self.unchanged + later.unchanged,
                           self.deleted + later.deleted, self.passages_embedded + later.passages_embedded,
                           later.generation or self.generation)


#: The indexes a write reads instead of the tables with every text and embedding: each unit's rowid and document
#: (a reader's list of units, a write's rowids); the documents in collection order with their ids (the next
#: position, a reader's list of documents: reading the table instead took seconds for a large collection out of
#: the page cache). An index made before the second gets it at its next write.
_INDEXES = """
CREATE INDEX IF NOT EXISTS passages_by_document ON passages(document_id);
CREATE INDEX IF NOT EXISTS documents_by_position ON documents(position, id);
"""
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, position INTEGER NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL,
    source TEXT NOT NULL, format TEXT NOT NULL, metadata TEXT NOT NULL, content_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS passages (
    rowid INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
    document_id TEXT NOT NULL REFERENCES documents(id), ordinal INTEGER NOT NULL,
    char_start INTEGER NOT NULL, char_end INTEGER NOT NULL, token_count INTEGER NOT NULL,
    text TEXT NOT NULL, embedding BLOB NOT NULL, continues INTEGER NOT NULL DEFAULT 0
);
{_INDEXES}"""


#: characters a token takes, to size a batch of documents by a number of units (:meth:`Index.update_from`). A batch
#: should make one generation, not a full one and a small rest, so the figure is low: units hold fewer characters
#: than max_tokens times a token's (a document's last unit is not full). Our generated haystack's 100-token passages
#: hold more characters than 100 times this, so a batch of them holds somewhat fewer than segment_units units.
#: Either way what a batch holds is set by the setting, not by the collection.
CHARACTERS_PER_TOKEN = 3

#: documents a worker chunks and embeds in one task of a parallel build (a few hundred units: enough to keep the
#: embedder's batches full, small enough to spread a corpus over many workers)
DOCUMENTS_PER_TASK = 32


def embedded_units(settings: IndexSettings, documents: list[Document]) -> tuple[list[list[Passage]], np.ndarray]:
    """The units of each of ``documents`` under ``settings`` and their vectors (rows in unit order): one task of
    a parallel build, run by a worker (which loads the embedder once)."""
    tokenizer = get_tokenizer(settings.tokenizer)
    units = [make_units(document, tokenizer, settings.unit, settings.max_tokens) for document in documents]
    texts = [p.text for group in units for p in group]
    vectors = get_embedder(settings.embedder).encode_documents(texts) if texts else np.zeros((0, 0), np.float32)
    return units, vectors


def _store_spec(store: str) -> str:
    """``store`` as the manifest records it: a milvus-lite file by its absolute path (commands run from other
    folders find it), a server address as given, ``milvus`` alone for a file inside the index folder."""
    kind, where = parse_store(store)
    if kind == "milvus" and where and "://" not in where:
        return f"milvus:{Path(where).expanduser().resolve()}"
    return kind if not where else f"{kind}:{where}"


def _stacked(parts: list[np.ndarray]) -> np.ndarray:
    """np.vstack of the vector batches ``parts`` (emptied), each let go once copied (freed when the caller holds
    no other reference): a million units' vectors (1 GB) were held twice at the end of a build."""
    if not parts:
        return np.zeros((0, 0), dtype=np.float32)
    # the batches' distinct dtypes: NumPy before 2.0 takes at most 32 arguments, a build has thousands of batches
    stacked = np.empty((sum(len(part) for part in parts), parts[0].shape[1]),
                       dtype=np.result_type(*{part.dtype for part in parts}))
    row = 0
    parts.reverse()
    while parts:
        part = parts.pop()
        stacked[row: row + len(part)] = part
        row += len(part)
        del part
        if parts and len(parts) % 256 == 0:  # batches freed in the C heap stay resident until it is trimmed
            _return_freed_memory()
    _return_freed_memory()
    return stacked


def _return_freed_memory() -> None:
    """Have the C allocator give the memory freed so far back to the system (glibc's malloc_trim; nothing where
    there is none). Freed small objects (unit texts) otherwise stay in the process's resident memory, since
    glibc returns only the top of its heap by itself."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _keeps_continues(conn: sqlite3.Connection) -> bool:
    """Whether the passages table has the ``continues`` column (an index made before it has not, until its next
    write adds it)."""
    return any(row[1] == "continues" for row in conn.execute("PRAGMA table_info(passages)"))


def _add_continues(conn: sqlite3.Connection) -> None:
    """The ``continues`` column, added to an index made before it: its units read as beginning their sentences,
    as they were read when it was made; the units written from now on say whether they do."""
    if not _keeps_continues(conn):
        conn.execute("ALTER TABLE passages ADD COLUMN continues INTEGER NOT NULL DEFAULT 0")


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    # the log of a large write (a deletion that frees much, a VACUUM) is cut back to this size once it is merged,
    # instead of keeping its largest size on disk
    conn.execute(f"PRAGMA journal_size_limit={_LOG_KEPT_BYTES}")
    return conn


@contextmanager
def read_only_connection(path: Path) -> Iterator[sqlite3.Connection]:
    """A short-lived read-only connection (opening, manifest checks)."""
    conn = connect_read_only(path)
    try:
        yield conn
    finally:
        conn.close()


_DOCUMENT_COLUMNS = "id, title, text, source, format, metadata"


def _content_hashes(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, str]:
    """The content hash of each of the documents of ``ids`` the index holds."""
    found: dict[str, str] = {}
    for batch, marks in parameter_batches(ids):
        found.update(conn.execute(f"SELECT id, content_hash FROM documents WHERE id IN ({marks})", batch))
    return found


def _document(row: tuple[str, str, str, str, str, str]) -> Document:
    return Document(id=row[0], title=row[1], text=row[2], source=row[3], format=row[4], metadata=json.loads(row[5]))


def _state_key(conn: sqlite3.Connection) -> tuple[str, int]:
    """(when the index was created, its generation): a generation number alone does not say which index it is
    of, when a folder is rebuilt in place (``rm -rf ix && citesum index ... --index ix`` starts again at 1)."""
    rows = dict(conn.execute("SELECT key, value FROM manifest WHERE key IN ('created', 'generation')").fetchall())
    return rows.get("created", ""), int(rows["generation"])


def _write_error(path: Path, exc: Exception, unchanged: str = "the index is unchanged") -> IndexStoreError:
    """A failed write as the user should read it (``unchanged``: what the write left); the previous generation is
    intact in every case."""
    if isinstance(exc, OSError) and exc.errno in _NO_ROOM or "full" in str(exc):
        return IndexStoreError(f"no space left to write the index at {path} ({exc}); {unchanged}")
    if isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM) \
            or "readonly" in str(exc):
        return IndexStoreError(f"the index at {path} is read-only ({exc}): it can be searched, not changed")
    if not (path / DB_NAME).exists():
        return IndexStoreError(f"the index at {path} is gone (no {DB_NAME})")
    if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in str(exc) or "not a database" in str(exc)):
        return IndexStoreError(f"the index at {path} is damaged ({exc}): `citesum check --index {path}` says "
                               "where; rebuild it from its sources into a new folder")
    return IndexStoreError(f"cannot write the index at {path} ({type(exc).__name__}: {exc}); {unchanged}")


def _checkpoint(conn: sqlite3.Connection, patience_s: float = 2.0) -> None:
    """Copy the committed pages from the WAL back into the database file. A reader still on the snapshot
    before the commit holds the copy back (a passive checkpoint stops where it starts); requests are short, so
    a few retries see them move on. A WAL left full makes every reader search it: a service slowed down several
    times over after an update, until the next writer came."""
    deadline = time.monotonic() + patience_s
    while True:
        busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if frames == copied or time.monotonic() >= deadline:
            return
        time.sleep(0.05)


def _empty_log(conn: sqlite3.Connection) -> None:
    """Merge the write-ahead log into the database and empty it, waiting a little for the readers (and a writer)
    of other processes to leave it: one that stays keeps it, and a later writer empties it."""
    conn.execute(f"PRAGMA busy_timeout={_MERGE_WAIT_MS}")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _reclaim(conn: sqlite3.Connection, path: Path) -> None:
    """Give the space of deleted documents back to the file system when they held a quarter of the database or
    more (a deleted document's pages otherwise stay in the file for later writes: the index kept its size after
    its largest document was deleted); then merge the log and empty it when no reader holds it back. VACUUM
    keeps the units' rowids (an explicit INTEGER PRIMARY KEY), which the generations' files name. The write is
    committed: a failure here (VACUUM needs the database's size again in free space) is only a warning."""
    try:
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        if free * _RECLAIM_FROM_FREE_SHARE >= pages \
                and free * conn.execute("PRAGMA page_size").fetchone()[0] >= _RECLAIM_FROM_BYTES:
            conn.execute("VACUUM")
        _empty_log(conn)
    except (sqlite3.Error, OSError) as exc:
        log.warning("the index at %s was written, but the space it freed was not given back (%s); the next write "
                    "tries again", path, exc)


def _repeated(ids: Sequence[str]) -> list[str]:
    return sorted(i for i, n in Counter(ids).items() if n > 1)


def _refuse_repeated(repeated: list[str]) -> None:
    if repeated:
        raise ConfigError(f"the same document id appears more than once in one update: {', '.join(repeated[:5])}")


def _thread_connection(path: Path, local: threading.local) -> sqlite3.Connection:
    """The calling thread's read-only connection to the index at ``path`` (kept in ``local``, an index's), reopened
    when the database file was replaced (a rebuilt index); a vanished database is an error, not a read of the
    deleted file's last state."""
    try:
        stat = (path / DB_NAME).stat()
    except FileNotFoundError:
        raise IndexStoreError(f"the index at {path} is gone (no {DB_NAME})") from None
    identity = (stat.st_dev, stat.st_ino)
    conn: sqlite3.Connection | None = getattr(local, "conn", None)
    if conn is not None and getattr(local, "identity", None) != identity:
        conn.close()
        conn = None
    if conn is None:
        with database_errors(path):
            conn = connect_read_only(path)
            # which index the file holds: a folder rebuilt in place gives other units the same rowids (and a new
            # file may get the old one's inode number)
            local.created = _state_key(conn)[0]
        local.conn, local.identity = conn, identity
    return conn


def _reading_connection(path: Path, local: threading.local) -> sqlite3.Connection:
    """The calling thread's connection to read through: inside a read block, the block's (its snapshot, whatever
    the file is now: a file replaced meanwhile must not close it), else the thread's."""
    return local.conn if getattr(local, "pinned", None) is not None else _thread_connection(path, local)


def _units_connection(path: Path, local: threading.local, created: str) -> sqlite3.Connection:
    """:func:`_reading_connection`, to read units of a generation of the index created at ``created``."""
    conn = _reading_connection(path, local)
    pinned: Generation | None = getattr(local, "pinned", None)
    if (pinned.created if pinned is not None else local.created) != created:
        raise IndexStoreError(f"the index at {path} was rebuilt since this generation was read; read it again")
    return conn


def discard_unwritten(path: Path, *, folder_made: bool) -> bool:
    """Remove the index at ``path`` if its first build failed before it committed anything (generation 0, no
    results of a parallel job kept for a rerun): left behind, it was an index of nothing that later runs took as
    built. ``folder_made``: the build made the folder, which goes too; else only citesum's files do. Whether it
    was removed."""
    try:
        with read_only_connection(path) as conn:
            if current_generation(conn) != 0:
                return False
    except (sqlite3.Error, OSError, IndexStoreError):
        return False
    if (path / TASKS_DIR).exists():
        return False
    if folder_made:
        shutil.rmtree(path, ignore_errors=True)
        return True
    for leftover in path.iterdir():  # only what a build writes: the folder is the user's
        if re.fullmatch(r"gen-\d+(\.[a-z]+)?", leftover.name) and leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", LOCK_NAME):
        (path / name).unlink(missing_ok=True)
    return True


@dataclass(frozen=True)
class Generation:
    """The searchable state of one committed generation, loaded once and never changed: its units (in the row
    order of the vectors and of the BM25 scores), dense vectors, BM25 index and document positions."""

    number: int
    #: the manifest's creation time of the index this is a generation of
    created: str
    #: read from the database when asked (citesum.index.passages)
    passages: StoredPassages
    vectors: np.ndarray
    lexical: LexicalScorer
    document_positions: dict[str, int]
    #: for each unit, the index of its document in the list; the document ids in collection order
    unit_documents: tuple[np.ndarray, list[str]]
    #: the database rowid of each unit (ascending): with AUTOINCREMENT a rowid is never given to another
    #: passage, and passages are never changed in place, so (created, rowid) names one passage's content (as
    #: long as an index folder is not replaced by an older copy of itself, which rolls the rowids back)
    row_ids: np.ndarray
    #: the approximate nearest-neighbour search of the vectors (keyed by rowid): the local store's graph in
    #: indexes of ``ann_min_units`` units or more, a Milvus store's collection
    ann: NearestUnits | None = None

    @functools.cached_property
    def row_positions(self) -> RowPositions:
        return RowPositions(self.row_ids)


_PINNED_ELSEWHERE = "this thread reads a generation another thread pinned: its arrays, not the database"


class _NoDatabase:
    """The connection of a thread reading a generation another thread pinned (:meth:`IndexReader.reading_elsewhere`):
    the read transaction is that thread's, so this one has none."""

    def __getattr__(self, name: str) -> object:
        raise IndexStoreError(_PINNED_ELSEWHERE)


_NO_DATABASE = _NoDatabase()


@contextmanager
def _arrays_only(local: threading.local, state: Generation) -> Iterator[None]:
    """On a thread other than the one that pinned ``state``: an index's reads there (through its thread-local
    state ``local``) see that generation, without a database."""
    saved = getattr(local, "pinned", None), getattr(local, "conn", None)
    local.pinned, local.conn = state, _NO_DATABASE
    try:
        yield
    finally:
        local.pinned, local.conn = saved


class IndexReader:
    """What retrieval, packing and summarizing read from an index: the units, vectors and BM25 of one
    generation, and the documents. :class:`Index` reads its latest generation; :class:`IndexView` reads the
    one generation of a read transaction, so every read of one request agrees (``with index.read() as view``).
    """

    path: Path
    settings: IndexSettings
    #: the index's thread-local state (a view shares its index's: units are read through it)
    _local: threading.local

    def _state(self) -> Generation:
        raise NotImplementedError

    def pinned(self) -> AbstractContextManager[IndexReader]:
        """A block in which every read of this reader sees one generation (a view already does)."""
        return nullcontext(self)

    def reading_elsewhere(self) -> Callable[[], AbstractContextManager[None]]:
        """For work this thread hands to others while it reads: a block to enter on each of those threads, in
        which this reader's reads there see the generation they see here. Only the generation's arrays (vectors,
        BM25, graph) may be read in it, not the database (refused with an IndexStoreError): the read transaction
        belongs to this thread."""
        return functools.partial(_arrays_only, self._local, self._state())

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        raise NotImplementedError
        yield  # pragma: no cover

    @property
    def generation(self) -> int:
        return self._state().number

    @property
    def passages(self) -> StoredPassages:
        """All retrieval units, in the row order of :attr:`vectors` and of the BM25 scores, read from the database
        when asked (``passages.take(positions)`` reads several at once)."""
        return self._state().passages

    @property
    def vectors(self) -> np.ndarray:
        return self._state().vectors

    @property
    def lexical(self) -> LexicalScorer:
        return self._state().lexical

    @property
    def ann(self) -> NearestUnits | None:
        """The approximate nearest-neighbour search of :attr:`vectors`, when the generation has one."""
        return self._state().ann

    @property
    def row_ids(self) -> np.ndarray:
        """The database rowid of each unit, ascending (the graph's keys)."""
        return self._state().row_ids

    @property
    def row_positions(self) -> RowPositions:
        """The positions among :attr:`row_ids` of rowids a search found (and which of them this generation has)."""
        return self._state().row_positions

    @property
    def unit_documents(self) -> tuple[np.ndarray, list[str]]:
        """(for each unit, the index of its document in the list; the document ids, in collection order)."""
        return self._state().unit_documents

    def document_position(self, document_id: str) -> int:
        """Position of a document in the collection (ingestion order), for original-order packing."""
        return self._state().document_positions[document_id]

    def __len__(self) -> int:
        return len(self.passages)

    def documents(self) -> Iterator[Document]:
        """Every document, in collection order."""
        with self._connection() as conn, database_errors(self.path):
            for row in conn.execute(f"SELECT {_DOCUMENT_COLUMNS} FROM documents ORDER BY position"):
                yield _document(row)

    def document_metadata(self) -> Iterator[tuple[str, dict[str, object]]]:
        """(id, metadata) of every document, in collection order, without making their texts into strings
        (SQLite still reads the pages that hold them: the metadata is stored after the text)."""
        with self._connection() as conn, database_errors(self.path):
            for document_id, metadata in conn.execute("SELECT id, metadata FROM documents ORDER BY position"):
                yield document_id, json.loads(metadata)

    def document(self, document_id: str) -> Document:
        for document in self.documents_by_id([document_id]):
            return document
        raise KeyError(document_id)

    def documents_by_id(self, ids: Sequence[str]) -> list[Document]:
        found = {}
        with self._connection() as conn, database_errors(self.path):
            for batch, marks in parameter_batches(ids):
                for row in conn.execute(f"SELECT {_DOCUMENT_COLUMNS} FROM documents WHERE id IN ({marks})", batch):
                    found[row[0]] = _document(row)
        return [found[i] for i in ids if i in found]

    def document_ids(self, prefix: str = "") -> list[str]:
        """The ids of the documents (those starting with ``prefix``), in collection order, without their text."""
        with self._connection() as conn, database_errors(self.path):
            return [row[0] for row in conn.execute(  # substr, not LIKE: LIKE ignores the case of letters
                "SELECT id FROM documents WHERE substr(id, 1, ?) = ? ORDER BY position", (len(prefix), prefix))]

    def counts(self) -> tuple[int, int, int]:
        """(documents, units, tokens in the units), from the database alone."""
        with self._connection() as conn, database_errors(self.path):
            documents = conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            units, tokens = conn.execute("SELECT COUNT(*), COALESCE(SUM(token_count), 0) FROM passages").fetchone()
        return documents, units, tokens


class IndexView(IndexReader):
    """One generation of an index, read inside one SQLite read transaction: what it returns never changes,
    however the index is updated meanwhile. Made by :meth:`Index.read`; valid inside that ``with`` block,
    on the thread that opened it."""

    def __init__(self, path: Path, settings: IndexSettings, state: Generation, conn: sqlite3.Connection,
                 local: threading.local) -> None:
        self.path = path
        self.settings = settings
        self._generation_state = state
        self._conn = conn
        self._local = local
        self._thread = threading.get_ident()

    def _state(self) -> Generation:
        return self._generation_state

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        if threading.get_ident() != self._thread:  # the transaction (and the connection) are its thread's
            raise IndexStoreError(_PINNED_ELSEWHERE)
        yield self._conn


class Index(IndexReader):
    """A persistent, incrementally updatable index of documents, passages, BM25 and dense vectors.

    Reading it directly (``index.passages``, ``index.documents()``) reads the latest committed generation at
    each call; ``with index.read() as view`` pins one generation for a whole request, and inside that block
    the index's own reads on the same thread see that generation too. Each thread keeps one read-only SQLite
    connection, reused.

    Example:
        >>> index = Index.create("my-index")  # doctest: +SKIP
        >>> index.add(documents)  # doctest: +SKIP
        >>> with Index.open("my-index").read() as view:  # doctest: +SKIP
        ...     view.lexical.scores("muscle cars")
    """

    def __init__(self, path: Path, settings: IndexSettings, store: SearchStore | None = None) -> None:
        self.path = path
        self.settings = settings
        #: where the searches run (the manifest's ``store``; citesum.index.search_store)
        self.store = store or LocalStore(path)
        self._latest: Generation | None = None
        self._load_lock = threading.Lock()
        self._local = threading.local()

    # ---- opening -------------------------------------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, settings: IndexSettings | None = None, *, store: str | None = None,
               store_options: dict[str, str] | None = None) -> "Index":
        """Open the index at ``path``, creating it with ``settings`` and its searches in ``store`` (``local``, the
        default, or ``milvus:URI``, with ``store_options`` such as ``{"dense_index": "IVF_FLAT"}``:
        citesum.index.search_store) when it does not exist yet.

        Raises:
            IndexMismatchError: it exists and was built with other settings, or with another store.
            IndexStoreError: the store cannot be reached (nothing is created then).
        """
        path = Path(path)
        spec = _store_spec(store or "local")
        if (path / DB_NAME).exists():
            index = cls.open(path, expect=settings)
            if store is not None and index.store.spec != spec:
                raise IndexMismatchError(f"index at {path} keeps its searches in {index.store.spec}, not {spec}; "
                                         "build a new index for another store")
            return index
        settings = settings or IndexSettings()
        created = str(time.time())
        new_store = open_store(spec, path, {})
        store_manifest = new_store.new_index_manifest(created, dict(store_options or {}))
        made = not path.exists()
        path.mkdir(parents=True, exist_ok=True)
        try:
            new_store.verify()  # an unreachable server: said before anything is written
        except BaseException:
            if made:
                shutil.rmtree(path, ignore_errors=True)
            raise
        with cls._write_lock(path):
            conn = _connect(path / DB_NAME)
            try:
                conn.executescript(_SCHEMA)
                manifest = {"schema_version": str(SCHEMA_VERSION), "generation": "0", "created": created,
                            "store": spec, **store_manifest, **{k: str(v) for k, v in asdict(settings).items()}}
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT OR IGNORE INTO manifest VALUES (?, ?)", manifest.items())
                conn.execute("COMMIT")
            finally:
                conn.close()
        return cls.open(path, expect=settings)

    @classmethod
    def open(cls, path: str | Path, expect: IndexSettings | None = None, *, embedder: str | None = None) -> "Index":
        """Open an existing index; with ``expect``/``embedder``, refuse one built differently."""
        path = Path(path)
        if not (path / DB_NAME).exists():
            raise IndexStoreError(f"no index at {path} (create one with: citesum index PATH --index {path})")
        manifest = cls._read_manifest(path)
        if manifest.get("schema_version") != str(SCHEMA_VERSION):
            raise IndexMismatchError(
                f"index at {path} has schema version {manifest.get('schema_version')}, this citesum reads "
                f"version {SCHEMA_VERSION}; rebuild it into a new directory"
            )
        settings = IndexSettings(
            unit=manifest["unit"], max_tokens=int(manifest["max_tokens"]),  # type: ignore[arg-type]
            tokenizer=manifest["tokenizer"], embedder=manifest["embedder"],
        )
        if embedder is not None and embedder != settings.embedder:
            raise IndexMismatchError(
                f"index at {path} was built with embedder '{settings.embedder}', not '{embedder}'; "
                "use that embedder or build a new index"
            )
        if expect is not None and expect != settings:
            diffs = [f"{k}={getattr(settings, k)!r} (asked {getattr(expect, k)!r})"
                     for k in asdict(settings) if getattr(settings, k) != getattr(expect, k)]
            raise IndexMismatchError(f"index at {path} was built with other settings: {', '.join(diffs)}")
        # an index made before stores were chosen has no 'store': it is local
        return cls(path, settings, open_store(manifest.get("store", "local"), path, manifest))

    @staticmethod
    def _read_manifest(path: Path) -> dict[str, str]:
        with database_errors(path), read_only_connection(path) as conn:
            return dict(conn.execute("SELECT key, value FROM manifest").fetchall())

    # ---- reading -------------------------------------------------------------------------------------
    def _thread_connection(self) -> sqlite3.Connection:
        return _thread_connection(self.path, self._local)

    @contextmanager
    def read(self) -> Iterator[IndexView]:
        """A view of the latest committed generation that stays the same until the block ends, however the
        index is updated meanwhile (by this process or another): a request reads one generation throughout.

        Raises:
            IndexStoreError: the database is gone, unreadable or corrupt.
        """
        pinned: Generation | None = getattr(self._local, "pinned", None)
        if pinned is not None:  # a view inside a view on this thread: the same transaction, the same generation
            yield IndexView(self.path, self.settings, pinned, self._local.conn, self._local)
            return
        conn = self._thread_connection()
        with database_errors(self.path):
            conn.execute("BEGIN")
        try:
            with database_errors(self.path):
                state = self._generation_state(conn, *_state_key(conn))
            # reads of the index itself on this thread (index.passages, a retriever's index.vectors) see this
            # generation until the block ends, without asking the database again
            self._local.pinned = state
            yield IndexView(self.path, self.settings, state, conn, self._local)
        finally:
            self._local.pinned = None
            self._end_read(conn)

    def pinned(self) -> AbstractContextManager[IndexReader]:
        """:meth:`read`: the index's own reads on this thread see one generation until the block ends (what
        a retriever wraps each query in, so its several reads of the index cost one look-up)."""
        return self.read()

    def _end_read(self, conn: sqlite3.Connection) -> None:
        """Ends the read transaction (so the WAL can be checkpointed past it). The reads are done; if a damaged
        database fails even this, the connection is dropped and the next read opens a new one."""
        try:
            if conn.in_transaction:
                conn.execute("COMMIT")
        except sqlite3.Error:
            self._local.conn = None
            conn.close()

    def _state(self) -> Generation:
        pinned: Generation | None = getattr(self._local, "pinned", None)
        if pinned is not None:
            return pinned
        with self.read() as view:
            return view._state()

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        yield _reading_connection(self.path, self._local)

    def _generation_state(self, conn: sqlite3.Connection, created: str, number: int) -> Generation:
        """The loaded state of generation ``number`` of the index created at ``created``, read through ``conn``
        (whose transaction sees it)."""
        latest = self._latest
        if self._still_served(latest, created, number):
            return latest
        with self._load_lock:  # one thread loads a new generation; the others wait for it, then share it
            latest = self._latest
            if self._still_served(latest, created, number):
                return latest
            state = self._load(conn, created, number)
            # an older read transaction never replaces a newer state; an index rebuilt in place always does, and so
            # does the same generation loaded again (its files were found damaged)
            if latest is None or latest.created != created or number >= latest.number:
                self._latest = state
            return state

    def _still_served(self, state: Generation | None, created: str, number: int) -> bool:
        """Whether ``state`` is generation ``number`` of the index created at ``created``, and none of its files was
        found damaged since it was loaded (the local store reads them again in the background)."""
        return state is not None and (state.created, state.number) == (created, number) \
            and not self.store.found_damaged(number)

    def _load(self, conn: sqlite3.Connection, created: str, number: int) -> Generation:
        # without ORDER BY, SQLite scans the small covering index on document_id, not the table with every text
        # and embedding, which took much longer on the meeting index
        units = conn.execute("SELECT rowid, document_id FROM passages").fetchall()
        order = np.argsort(np.fromiter((row for row, _ in units), dtype=np.int64, count=len(units)), kind="stable")
        row_ids = np.fromiter((units[i][0] for i in order.tolist()), dtype=np.int64, count=len(units))
        # in collection order from the index on (position, id), not sorted here
        documents = conn.execute("SELECT id, position FROM documents ORDER BY position").fetchall()
        positions = dict(documents)
        document_ids = [document_id for document_id, _ in documents]
        del documents
        number_of = {document_id: i for i, document_id in enumerate(document_ids)}
        owners = np.fromiter((number_of[units[i][1]] for i in order.tolist()), dtype=np.int64, count=len(units))
        del units
        # through this index's thread connections, not the index itself (a loaded generation would keep it alive in
        # a cycle)
        passages = StoredPassages(row_ids, functools.partial(_units_connection, self.path, self._local, created),
                                  self.path, number, continues_kept=_keeps_continues(conn))
        parts = self.store.load(conn, number, row_ids, passages)
        return Generation(number, created, passages, parts.vectors, parts.lexical, positions, (owners, document_ids),
                          row_ids, parts.nearest)

    def status(self) -> dict[str, int]:
        """The generation and the counts, read in one transaction from the database alone: cheap, and no
        generation is loaded (a health check must not hold a copy of the index)."""
        conn = self._thread_connection()
        began = not conn.in_transaction
        with database_errors(self.path):
            if began:
                conn.execute("BEGIN")
            try:
                generation = current_generation(conn)
                documents, units, _ = self.counts()
            finally:
                if began:
                    self._end_read(conn)
        return {"generation": generation, "documents": documents, "units": units}

    def integrity_problems(self, limit: int = 5, *, full: bool = False) -> list[str]:
        """SQLite's check of the database file (it reads every page, through a new connection: a reused one may
        answer from its page cache): ``quick_check``, or with ``full`` the slower ``integrity_check`` (indexes
        against tables too). The first ``limit`` problems found, none when sound."""
        check = "integrity_check" if full else "quick_check"
        try:
            with read_only_connection(self.path) as conn:
                found = [row[0] for row in conn.execute(f"PRAGMA {check}({int(limit)})")]
        except sqlite3.DatabaseError as exc:
            return [str(exc)]  # too damaged for the check itself to run
        return [] if found == ["ok"] else found

    def merge_log(self) -> None:
        """Merge the write-ahead log into the database file and empty it, as a writer does when it is the last
        to close: a service stopping (whose readers kept the log from being merged) leaves a folder that opens
        anywhere, read-only media included. Nothing to do where the folder cannot be written; a writer of
        another process at work keeps its log, and merges it itself."""
        if not os.access(self.path, os.W_OK) or not (self.path / f"{DB_NAME}-wal").exists():
            return
        try:
            conn = _connect(self.path / DB_NAME)
            try:
                _empty_log(conn)
            finally:
                conn.close()
        except sqlite3.Error as exc:
            log.warning("could not merge the write-ahead log of %s: %s", self.path, exc)

    def info(self) -> dict[str, object]:
        manifest = self._read_manifest(self.path)
        documents, units, tokens = self.counts()
        size = sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())
        return {"path": str(self.path), **manifest, "documents": documents, "units": units,
                "unit_tokens": tokens, "bytes_on_disk": size}

    # ---- writing -------------------------------------------------------------------------------------
    @staticmethod
    @contextmanager
    def _write_lock(path: Path) -> Iterator[None]:
        try:
            handle = open(path / LOCK_NAME, "a+")
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise IndexStoreError(f"the index at {path} is read-only ({exc.strerror}): it can be searched, "
                                      "not changed") from None
            raise
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise IndexLockedError(
                    f"index at {path} is locked: another process is writing to it; try again when it finishes"
                ) from None
            yield
        finally:
            handle.close()  # closing releases the lock; the kernel also releases it if the process dies

    def add(
        self, documents: Iterable[Document], *, progress: ProgressFn | None = None, embedder: Embedder | None = None,
        executor: BatchExecutor | None = None,
    ) -> UpdateStats:
        """Add new documents and update changed ones (same id, new content); unchanged ones cost nothing."""
        return self.update(upsert=documents, progress=progress, embedder=embedder, executor=executor)

    def delete(self, document_ids: Iterable[str]) -> UpdateStats:
        return self.update(delete=document_ids)

    def update(
        self,
        upsert: Iterable[Document] = (),
        delete: Iterable[str] = (),
        *,
        progress: ProgressFn | None = None,
        embedder: Embedder | None = None,
        executor: BatchExecutor | None = None,
    ) -> UpdateStats:
        """Apply upserts and deletions as one new generation, or one per ``segment_units`` new units (each complete:
        a document's revision replaces its old units in the same one; the deletions go with the first). With an
        ``executor`` (a Ray cluster: citesum.parallel), the new documents are chunked and embedded by its workers,
        which load the index's embedder by name (``embedder`` is then not used), and one generation is committed.

        The documents are held until they are written: to index a stream (an ingestion) in bounded memory, use
        :meth:`update_from`."""
        upsert = list(upsert)
        delete = set(delete)
        ids = [d.id for d in upsert]
        _refuse_repeated(_repeated(ids))
        both = delete.intersection(ids)
        if both:
            raise ConfigError(f"documents both updated and deleted in one call: {', '.join(sorted(both)[:5])}")
        with self._writing() as conn:
            return self._update_locked(conn, upsert, delete, progress, embedder, executor)

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """The write lock and a connection to write through, closed at the end; SQLite's and the file system's
        errors said as the user should read them (:func:`_write_error`)."""
        with self._write_lock(self.path):
            try:
                conn = _connect(self.path / DB_NAME)
                conn.executescript(_INDEXES)
                _add_continues(conn)
            except sqlite3.DatabaseError as exc:
                raise _write_error(self.path, exc) from exc
            written = False
            try:
                yield conn
                written = True
            except (sqlite3.DatabaseError, OSError) as exc:
                raise _write_error(self.path, exc) from exc
            finally:
                if written and conn.total_changes:
                    _reclaim(conn, self.path)
                conn.close()

    def update_from(
        self,
        documents: Iterable[Document],
        *,
        stale: Callable[[set[str]], Iterable[str]] | None = None,
        progress: ProgressFn | None = None,
        embedder: Embedder | None = None,
        executor: BatchExecutor | None = None,
    ) -> UpdateStats:
        """Add and update ``documents`` as they come (:func:`citesum.ingest.iter_documents`), an :meth:`update` per
        batch of about ``segment_units`` units' worth of text, so a run holds a batch of documents at a time, not
        the collection; then delete ``stale(the ids of every document given)`` with the last batch (``citesum
        index --sync``: what is no longer among the files). A collection smaller than one batch is one update.

        Interrupted, the batches before are committed; run again, they are unchanged and cost nothing. A list is
        checked for repeated ids before anything is written; a stream, as it comes.
        """
        with database_errors(self.path), read_only_connection(self.path) as conn:
            limit = segment_units(conn)
        budget = limit * self.settings.max_tokens * CHARACTERS_PER_TOKEN
        if isinstance(documents, Sequence):
            _refuse_repeated(_repeated([d.id for d in documents]))
        seen: set[str] = set()
        totals = UpdateStats()
        batch: list[Document] = []
        held = 0
        try:
            for document in documents:
                if document.id in seen:
                    _refuse_repeated([document.id])
                seen.add(document.id)
                batch.append(document)
                held += len(document.text)
                # a document makes one unit or more: no more documents than units either (whole-document units)
                if held >= budget or len(batch) >= limit:
                    totals += self.update(batch, progress=progress, embedder=embedder, executor=executor)
                    batch, held = [], 0
            return totals + self.update(batch, stale(seen) if stale is not None else (), progress=progress,
                                        embedder=embedder, executor=executor)
        except (CitesumError, KeyboardInterrupt) as exc:
            if not (totals.added or totals.updated or totals.deleted):
                raise
            written = (f"the batches before wrote {totals.added + totals.updated} document(s) (generation "
                       f"{totals.generation}); run again, they are unchanged")
            if isinstance(exc, KeyboardInterrupt):  # stop as asked, and say what is kept
                exc.add_note(f"index at {self.path}: {written}")
            else:  # the same error (its type says what went wrong), saying what the run kept
                exc.args = (f"{str(exc).replace('the index is unchanged', 'this batch changed nothing')}; {written}",)
            raise

    def _update_locked(
        self,
        conn: sqlite3.Connection,
        upsert: list[Document],
        delete: set[str],
        progress: ProgressFn | None,
        embedder: Embedder | None,
        executor: BatchExecutor | None,
    ) -> UpdateStats:
        known = _content_hashes(conn, [*(d.id for d in upsert), *delete])  # not the table of every document
        changed = [d for d in upsert if known.get(d.id) != d.content_hash]
        unchanged = len(upsert) - len(changed)
        delete &= set(known)
        if not changed and not delete:
            return UpdateStats(unchanged=unchanged, generation=current_generation(conn))
        if embedder is not None and embedder.name != self.settings.embedder:
            raise IndexMismatchError(f"index uses embedder '{self.settings.embedder}', got '{embedder.name}'")
        # One generation per segment_units new units at most (the deletions with the first): what a write holds in
        # memory grows with that setting, not with the collection. Each generation is complete (a document's
        # revision replaces its old units in the same one), and a write interrupted after some of them commits
        # resumes where it stopped when run again, as the documents committed are then unchanged.
        limit = None if executor is not None else segment_units(conn)
        done = embedded = generation = 0
        while not generation or done < len(changed):
            try:
                taken, generation, passages = self._write_generation_of(
                    conn, changed[done:], set() if generation else delete, known, limit, progress, embedder,
                    executor)
            except BaseException as exc:
                if not generation:
                    raise
                written = (f"{done} of the {len(changed)} documents were written (generation {generation}); the same "
                           "update run again writes the others")
                if not isinstance(exc, Exception):  # Ctrl+C: stop as asked, and say what is kept
                    exc.add_note(f"index at {self.path}: {written}")
                    raise
                raise _write_error(self.path, exc, written) from exc
            done, embedded = done + taken, embedded + passages
        return UpdateStats(
            added=sum(1 for d in changed if d.id not in known), updated=sum(1 for d in changed if d.id in known),
            unchanged=unchanged, deleted=len(delete), passages_embedded=embedded, generation=generation,
        )

    def _write_generation_of(
        self,
        conn: sqlite3.Connection,
        changed: list[Document],
        delete: set[str],
        known: dict[str, str],
        limit: int | None,
        progress: ProgressFn | None,
        embedder: Embedder | None,
        executor: BatchExecutor | None,
    ) -> tuple[int, int, int]:
        """One generation: the first of the ``changed`` documents until they have ``limit`` new units (all of them
        without a limit; the last document's units whole, so a few more), and the deletions. Returns (the
        documents it took, its number, its units)."""
        # The slow part (chunking, embedding) happens before the transaction, so the database is locked briefly.
        # What the new generation keeps is known once the documents it takes are (the write lock is held: nobody
        # else changes the index), so its BM25 index is made while the last batches are embedded.
        replaced: list[str] = []
        plan: GenerationWrite | None = None

        def index_lexically(taken: int, texts: list[str]) -> object:
            nonlocal replaced, plan
            replaced = [d.id for d in changed[:taken] if d.id in known] + sorted(delete)
            plan = self.store.plan(conn, replaced)
            return plan.index_lexically(texts)

        if executor is not None and changed:
            units, vectors = self._chunk_and_embed_on(executor, changed, progress)
            lexical = index_lexically(len(units), [p.text for group in units for p in group])
        else:
            units, vectors, lexical = self._chunk_and_embed(changed, embedder, progress, index_lexically,
                                                            max_units=limit)
        taken = changed[: len(units)]
        embedded = sum(len(group) for group in units)

        conn.execute("BEGIN IMMEDIATE")
        generation = current_generation(conn) + 1
        # rowids only grow (AUTOINCREMENT): the passages this write inserts are those above the highest so far
        first_new_row = conn.execute(
            "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'passages'), 0) + 1").fetchone()[0]
        with self._generation_commit(conn, generation):
            removed_rows = self._remove(conn, replaced, drop_documents=delete)
            next_position = conn.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM documents").fetchone()[0]
            offset = 0
            for document, group in zip(taken, units):
                if document.id not in known:
                    position, next_position = next_position, next_position + 1
                    conn.execute(
                        "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        (document.id, position, document.title, document.text, document.source, document.format,
                         json.dumps(dict(document.metadata), default=str), document.content_hash),
                    )
                else:
                    conn.execute(
                        "UPDATE documents SET title=?, text=?, source=?, format=?, metadata=?, content_hash=? "
                        "WHERE id=?",
                        (document.title, document.text, document.source, document.format,
                         json.dumps(dict(document.metadata), default=str), document.content_hash, document.id),
                    )
                conn.executemany(
                    "INSERT INTO passages (id, document_id, ordinal, char_start, char_end, token_count, text,"
                    " embedding, continues) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(p.id, p.document_id, p.ordinal, p.char_start, p.char_end, p.token_count, p.text,
                      vectors[offset + i].tobytes(), int(p.continues)) for i, p in enumerate(group)],
                )
                offset += len(group)
            if embedded:
                conn.execute("INSERT OR REPLACE INTO manifest VALUES ('dim', ?)", (str(vectors.shape[1]),))
            # the units are in the database now: their objects and texts (a large share of memory at a million
            # units) are given back before the generation's files and graph are made, where a build peaks
            del units
            _return_freed_memory()
            self._write_generation(conn, generation, plan, removed_rows, first_new_row, vectors, lexical, progress)
        _checkpoint(conn)
        self.store.committed(conn, generation)
        # what an interrupted parallel build kept is committed now, and a graph build's blocks are of the last
        # generation: no rerun would take them
        shutil.rmtree(self.path / TASKS_DIR, ignore_errors=True)
        return len(taken), generation, embedded

    @contextmanager
    def _generation_commit(self, conn: sqlite3.Connection, generation: int) -> Iterator[None]:
        """Commit the open transaction with ``generation`` (whose files the block writes) made current; on any
        error roll back and remove its files, so the previous generation stays current."""
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            # SQLite has already rolled back after some errors (a full disk): a second rollback would fail
            # and hide the cause.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self.store.discard(generation)
            raise

    def _write_generation(self, conn: sqlite3.Connection, generation: int, plan: GenerationWrite | None,
                          removed_rows: set[int], first_new_row: int, added: np.ndarray | None, lexical: object,
                          progress: ProgressFn | None) -> None:
        """Inside the write's transaction: the store makes ``generation`` searchable, then the manifest makes it
        current (when the transaction commits)."""
        self.store.write(conn, generation, plan, removed_rows, first_new_row, added, lexical, progress)
        conn.execute("UPDATE manifest SET value=? WHERE key='generation'", (str(generation),))

    def _chunk_and_embed(
        self, documents: list[Document], embedder: Embedder | None, progress: ProgressFn | None,
        index_lexically: Callable[[int, list[str]], object], batch: int = 512, max_units: int | None = None,
    ) -> tuple[list[list[Passage]], np.ndarray, object]:
        """The units of each of the first documents, until they have ``max_units`` units or more (all of them
        without a limit), their vectors (rows in unit order) and ``index_lexically`` of how many documents that
        is and of their units' texts. A batch of units is embedded on a second thread while the next documents
        are chunked, and the last batches while the lexical index is built: the embedders' tokenizers and
        matrix products release the GIL, so the work overlaps on two cores. The model loads with the first
        batch (a pure deletion needs none)."""
        tokenizer = get_tokenizer(self.settings.tokenizer)
        units: list[list[Passage]] = []
        pending: list[str] = []
        embedded: list[Future[np.ndarray]] = []
        model: list[Embedder] = [embedder] if embedder is not None else []

        def encode(texts: list[str]) -> np.ndarray:
            if not model:
                model.append(get_embedder(self.settings.embedder))
            return model[0].encode_documents(texts)

        parts: list[np.ndarray] = []  # the vectors of the batches done, in order
        total = done = 0

        def collect(wait: bool) -> None:
            """Take the finished batches in order (all of them when ``wait``); a failed one raises its error."""
            nonlocal done
            while len(parts) < len(embedded) and (wait or embedded[len(parts)].done()):
                parts.append(embedded[len(parts)].result())
                done += len(parts[-1])
                if progress:
                    progress("embedding", done, total)

        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="citesum-embed")
        try:
            for number, document in enumerate(documents, start=1):
                units.append(make_units(document, tokenizer, self.settings.unit, self.settings.max_tokens))
                total += len(units[-1])
                pending.extend(p.text for p in units[-1])
                last = number == len(documents) or (max_units is not None and total >= max_units)
                while len(pending) >= batch or (pending and last):
                    embedded.append(executor.submit(encode, pending[:batch]))
                    pending = pending[batch:]
                collect(wait=False)  # an embedder that fails (a server gone) stops the build now, not at the end
                if progress:
                    progress("chunking", number, len(documents))
                if last:
                    break
            if progress:
                progress("bm25", 0, 1)
            lexical = index_lexically(len(units), [p.text for group in units for p in group])
            if progress:
                progress("bm25", 1, 1)
            collect(wait=True)
        finally:
            # after an error or Ctrl+C the batches not started yet are dropped, not embedded for nothing (the one
            # being embedded is waited for: a thread cannot be stopped)
            executor.shutdown(wait=True, cancel_futures=True)
        embedded.clear()  # the futures hold each batch too: _stacked could free none of them
        return units, _stacked(parts), lexical

    def _chunk_and_embed_on(self, executor: BatchExecutor, documents: list[Document], progress: ProgressFn | None
                            ) -> tuple[list[list[Passage]], np.ndarray]:
        """The units of each document and their vectors, made by ``executor``'s workers a batch of documents at a
        time, in document order. Each batch's result is kept in the index folder's ``tasks/`` as it arrives
        (removed by the commit): a build interrupted half-way and run again embeds only the batches left."""
        batches = [documents[start : start + DOCUMENTS_PER_TASK]
                   for start in range(0, len(documents), DOCUMENTS_PER_TASK)]
        results = TaskResults(self.path / TASKS_DIR, job_key(
            "embedded units", self.settings, DOCUMENTS_PER_TASK, [(d.id, d.content_hash) for d in documents]))
        done, resumed = resumable_map(
            executor, functools.partial(embedded_units, self.settings), batches, results,
            (lambda finished, total: progress("embedding", finished, total)) if progress else None)
        if resumed:
            log.info("%s: %d of %d batches embedded by an interrupted build were taken from %s", self.path, resumed,
                     len(batches), results.root)
        units = [group for batch_units, _ in done for group in batch_units]
        parts = [vectors for _, vectors in done if len(vectors)]
        del done
        return units, _stacked(parts)

    @staticmethod
    def _remove(conn: sqlite3.Connection, document_ids: list[str], drop_documents: set[str]) -> set[int]:
        removed = {row for (row,) in rows_of_documents(conn, document_ids)}
        for batch, marks in parameter_batches(document_ids):
            conn.execute(f"DELETE FROM passages WHERE document_id IN ({marks})", batch)
            dropped = [d for d in batch if d in drop_documents]
            if dropped:
                conn.execute(f"DELETE FROM documents WHERE id IN ({','.join('?' * len(dropped))})", dropped)
        return removed

    def rewrite_generation(self) -> int:
        """Write the generation files again from the database alone, as a new generation (what ``citesum check
        --repair`` does with damaged or missing files); returns its number."""
        with self._writing() as conn:
            conn.execute("BEGIN IMMEDIATE")
            generation = current_generation(conn) + 1
            with self._generation_commit(conn, generation):
                self._write_generation(conn, generation, None, set(), 0, None, None, None)
            _checkpoint(conn)
            self.store.committed(conn, generation)
        return generation

    def set_segment_units(self, units: int) -> None:
        """Add at most about ``units`` units per generation (an update adding more commits several) and merge no
        segments past that many (:data:`~citesum.index.database.DEFAULT_SEGMENT_UNITS`): what a write holds in
        memory grows with it, not with the collection. Applies from the next write."""
        if units < 1:
            raise ConfigError(f"segment_units must be a positive number of units, got {units}")
        with self._writing() as conn:
            conn.execute("INSERT OR REPLACE INTO manifest VALUES ('segment_units', ?)", (str(units),))

    def set_ann_min_units(self, minimum: int, *, rewrite: bool = True) -> int | None:
        """Give generations of ``minimum`` units or more an approximate nearest-neighbour graph (0: never).
        When the current generation changes side of the line, it is written again now (returns its number),
        unless not ``rewrite`` (an update about to write the next generation applies it)."""
        if minimum < 0:
            raise ConfigError(f"ann_min_units must be 0 (never) or a number of units, got {minimum}")
        if not isinstance(self.store, LocalStore):
            raise ConfigError(f"the index at {self.path} keeps its vectors in {self.store.spec}, which indexes them "
                              "itself: --ann-min-units is a setting of the local store")
        with self._writing() as conn:
            conn.execute("INSERT OR REPLACE INTO manifest VALUES ('ann_min_units', ?)", (str(minimum),))
            units = conn.execute("SELECT COUNT(*) FROM passages").fetchone()[0]
            has_graph = self.store.has_graph(current_generation(conn))
        wanted = bool(minimum) and units >= minimum
        if rewrite and units and wanted != has_graph and (ann_graph.available() or not wanted):
            return self.rewrite_generation()
        return None
