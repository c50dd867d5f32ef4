"""A generation's units as a sequence read from the index database when asked.

A loaded generation keeps each unit's rowid (8 bytes), not its text and ``Passage`` object: at a million
100-token passages those were a large part of a reader's resident memory, which then grew with the collection
(measured by benchmarks/scale.py). A search reads the few units it returns; a job over the whole collection
(RAPTOR, ReadAgent, LightPAL's graph) reads them in blocks, in order.

What a read sees: passages are never changed in place and a rowid is never given to another passage
(AUTOINCREMENT), so a unit read from any later snapshot of the same database is the unit this generation holds,
unless a later update removed it. Inside ``with index.read()`` (where every search runs), on its thread, the read
transaction is the generation's own snapshot, so nothing is ever missing there. Elsewhere, a unit removed since is
reported, never replaced by another.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Callable, Iterator, overload

import numpy as np

from citesum.errors import IndexStoreError
from citesum.index.database import database_errors, parameter_batches
from citesum.types import Passage

_COLUMNS = "rowid, id, document_id, ordinal, char_start, char_end, token_count, text"
#: the columns with whether each unit goes on with a sentence the one before began (0 for an index made before the
#: column: its units read as they were read when it was made)
_COLUMNS_KEPT = f"{_COLUMNS}, continues"
_COLUMNS_BEFORE = f"{_COLUMNS}, 0"
#: units read per statement when a block or a whole collection is read (a range of rowids: one B-tree walk)
_BLOCK = 2_000
#: rowids per ``IN (...)`` list (SQLite bounds the parameters of a statement)
_IN_LIST = 500


def _passage(row: tuple[int, str, str, int, int, int, int, str, int]) -> Passage:
    return Passage(id=row[1], document_id=row[2], ordinal=row[3], char_start=row[4], char_end=row[5],
                   token_count=row[6], text=row[7], continues=bool(row[8]))


class StoredPassages(Sequence[Passage]):
    """The units of one generation, in the row order of its vectors and BM25 scores.

    ``connection`` gives the connection to read through on the calling thread (the index's, so that a read inside
    ``with index.read()`` sees that transaction's snapshot); it raises when the database is no longer the one the
    generation was loaded from.
    """

    def __init__(self, row_ids: np.ndarray, connection: Callable[[], sqlite3.Connection], path: Path,
                 generation: int, *, continues_kept: bool = True) -> None:
        self.row_ids = row_ids
        self._connection = connection
        self._path = path
        self._generation = generation
        self._columns = _COLUMNS_KEPT if continues_kept else _COLUMNS_BEFORE

    def __len__(self) -> int:
        return len(self.row_ids)

    @overload
    def __getitem__(self, at: int) -> Passage: ...

    @overload
    def __getitem__(self, at: slice | Sequence[int] | np.ndarray) -> list[Passage]: ...

    def __getitem__(self, at: int | slice | Sequence[int] | np.ndarray) -> Passage | list[Passage]:
        if isinstance(at, slice):
            return self._read_rows(self.row_ids[at])
        if np.ndim(at):  # positions, as a list or an array: as numpy indexes, but a list of units
            return self.take(np.asarray(at, dtype=np.int64).tolist())
        position = int(at)  # type: ignore[arg-type]
        if not -len(self) <= position < len(self):
            raise IndexError(f"unit {position} of a generation of {len(self)} units")
        return self.take([position])[0]

    def take(self, positions: Sequence[int]) -> list[Passage]:
        """The units at ``positions`` (in that order), in one read per few hundred: what a search returns."""
        wanted = self.row_ids[np.asarray(positions, dtype=np.int64)].tolist() if len(positions) else []
        return self._read_listed(wanted)

    def _read_listed(self, wanted: list[int]) -> list[Passage]:
        """The units of the rowids ``wanted``, in that order, read by ``IN`` lists."""
        found: dict[int, Passage] = {}
        conn = self._connection()
        with database_errors(self._path):
            for batch, marks in parameter_batches(wanted, _IN_LIST):
                rows = conn.execute(f"SELECT {self._columns} FROM passages WHERE rowid IN ({marks})", batch).fetchall()
                found.update((row[0], _passage(row)) for row in rows)
        return self._in_order(wanted, found)

    def __iter__(self) -> Iterator[Passage]:
        for start in range(0, len(self), _BLOCK):
            yield from self._read_rows(self.row_ids[start: start + _BLOCK])

    def __reversed__(self) -> Iterator[Passage]:
        for stop in range(len(self), 0, -_BLOCK):
            yield from reversed(self._read_rows(self.row_ids[max(0, stop - _BLOCK): stop]))

    def _read_rows(self, rows: np.ndarray) -> list[Passage]:
        """The units of the rowids ``rows`` (a slice of the generation's, so sorted one way or the other): one scan
        of the rowids between the lowest and the highest of them."""
        wanted = rows.tolist()
        if not wanted:
            return []
        low, high = min(wanted), max(wanted)
        if high - low > 4 * len(wanted) + _BLOCK:  # a few units far apart: read them, not what lies between
            return self._read_listed(wanted)
        conn = self._connection()
        with database_errors(self._path):
            read = conn.execute(f"SELECT {self._columns} FROM passages WHERE rowid BETWEEN ? AND ?",
                                (low, high)).fetchall()
        return self._in_order(wanted, {row[0]: _passage(row) for row in read})

    def _in_order(self, wanted: list[int], found: dict[int, Passage]) -> list[Passage]:
        missing = [row for row in wanted if row not in found]
        if missing:
            raise IndexStoreError(
                f"{len(missing)} unit(s) of generation {self._generation} are gone from the index at {self._path}: "
                "a later update removed them. Units read inside the `with index.read()` block that gave them, on its "
                "thread, are never gone; ask again")
        return [found[row] for row in wanted]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # equal by content, which is not fixed by the object

    def __repr__(self) -> str:
        return f"StoredPassages({len(self)} units of generation {self._generation} of {self._path})"
