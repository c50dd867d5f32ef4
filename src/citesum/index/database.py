"""Reads of the index database that every search store shares (the passages and their stored embeddings are
the source of truth whatever store serves the searches)."""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence, TypeVar
from urllib.parse import quote

import numpy as np

from citesum.errors import IndexStoreError

DB_NAME = "index.sqlite"
Value = TypeVar("Value")


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the index database at ``path`` (a directory), in autocommit mode. On read-only
    media (a folder that cannot be written) the database is opened immutable: SQLite cannot make the shared
    memory file a WAL reader needs there, and nothing can change it anyway."""
    uri = f"file:{quote(str(path / DB_NAME))}?mode=ro"
    if not os.access(path, os.W_OK):
        wal = path / f"{DB_NAME}-wal"
        if wal.exists() and wal.stat().st_size > 0:
            raise IndexStoreError(
                f"the index at {path} is on read-only media with a write-ahead log its last writer did not merge "
                f"({wal}); open it once where it can be written (citesum check --index DIR --repair)")
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)


def parameter_batches(values: Sequence[Value], size: int = 500) -> Iterator[tuple[list[Value], str]]:
    """``values`` in batches, each with its ``?,?,...`` placeholders: SQLite takes a bounded number of
    parameters in one statement."""
    for start in range(0, len(values), size):
        batch = list(values[start : start + size])
        yield batch, ",".join("?" * len(batch))


def rows_of_documents(conn: sqlite3.Connection, document_ids: Sequence[str]) -> Iterator[tuple[int]]:
    """The rowids of the passages of ``document_ids``."""
    for batch, marks in parameter_batches(document_ids):
        yield from conn.execute(f"SELECT rowid FROM passages WHERE document_id IN ({marks})", batch)


def current_generation(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT value FROM manifest WHERE key='generation'").fetchone()[0])


def manifest_value(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM manifest WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


#: about the most units one write adds to a generation (an update adding more commits several generations, in
#: document order; a build on Ray commits one) and the largest segment a merge or a rewrite makes
#: (Index.set_segment_units; citesum index --segment-units): what a write holds in memory at once (the new units'
#: objects and vectors, their term counts, the graph it builds) grows with it, not with the index. The default
#: bounds a build's peak memory on our generated 100-token passages (measured by benchmarks/scale.py, on the
#: data it is set for, so in-sample: texts of other lengths differ)
DEFAULT_SEGMENT_UNITS = 1_100_000


def segment_units(conn: sqlite3.Connection) -> int:
    value = manifest_value(conn, "segment_units")
    return int(value) if value else DEFAULT_SEGMENT_UNITS


def stored_dim(conn: sqlite3.Connection) -> int:
    value = manifest_value(conn, "dim")
    return int(value) if value else 0


def read_vectors(conn: sqlite3.Connection, after_row: int = -1, last_row: int = 2**63 - 1) -> np.ndarray:
    """The stored embeddings of the passages (those with a rowid above ``after_row``, up to ``last_row``), in
    rowid order."""
    blobs = [row[0] for row in conn.execute(
        "SELECT embedding FROM passages WHERE rowid > ? AND rowid <= ? ORDER BY rowid", (after_row, last_row))]
    if not blobs:
        return np.zeros((0, stored_dim(conn)), dtype=np.float32)
    return np.vstack([np.frombuffer(blob, dtype=np.float32) for blob in blobs])


@contextmanager
def database_errors(path: Path) -> Iterator[None]:
    """SQLite's errors while reading, as citesum's: the index is damaged, or gone."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if not (path / DB_NAME).exists():
            raise IndexStoreError(f"the index at {path} is gone (no {DB_NAME})") from exc
        raise IndexStoreError(f"index at {path} is unreadable or corrupt: {exc}") from exc
