"""A generation's units are read from the database when asked (citesum.index.passages): every way of reading them
gives what the database holds, a read inside ``index.read()`` sees that generation however the index changes, and
a unit removed since is reported, never replaced by another."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest

from citesum.errors import IndexStoreError
from citesum.index import passages as stored
from citesum.index.store import DB_NAME, Index, IndexSettings
from citesum.types import Document, Passage

SETTINGS = IndexSettings(embedder="test-hashing", max_tokens=12)


def _documents(count: int, words: int = 30, tag: str = "") -> list[Document]:
    return [Document(id=f"d{i}", title=f"D{i}",
                     text=" ".join(f"word{i}x{j}{tag}" for j in range(words)) + ".") for i in range(count)]


def _in_database(path: Path) -> list[Passage]:
    """The units as the database holds them, in rowid order: what a generation's units must read as."""
    with sqlite3.connect(path / DB_NAME) as conn:
        rows = conn.execute("SELECT id, document_id, ordinal, char_start, char_end, text, token_count, continues "
                            "FROM passages ORDER BY rowid").fetchall()
    return [Passage(*row[:-1], continues=bool(row[-1])) for row in rows]


@pytest.fixture
def index(tmp_path: Path, hashing_embedder) -> Index:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_documents(40), embedder=hashing_embedder)
    return index


def test_every_read_gives_what_the_database_holds(index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _in_database(index.path)
    assert len(expected) > 80  # several units a document, so ranges and blocks are exercised
    monkeypatch.setattr(stored, "_BLOCK", 7)  # iteration crosses many blocks
    monkeypatch.setattr(stored, "_IN_LIST", 5)  # and ``take`` many statements
    units = index.passages
    assert len(units) == len(expected)
    assert list(units) == expected and units == expected
    assert units[0] == expected[0] and units[-1] == expected[-1] and units[17] == expected[17]
    assert units[10:30] == expected[10:30] and units[::9] == expected[::9] and units[-5:] == expected[-5:]
    assert units[30:10] == [] and units[len(expected):] == []
    assert units[::-1] == expected[::-1] and units[5::-2] == expected[5::-2] and list(reversed(units)) == expected[::-1]
    assert units[np.array([4, 1])] == [expected[4], expected[1]] and units[[-1]] == [expected[-1]]
    order = [33, 2, 33, len(expected) - 1, 0, 58, 11]
    assert units.take(order) == [expected[i] for i in order] and units.take([]) == []
    with pytest.raises(IndexError):
        units[len(expected)]
    with pytest.raises(IndexError):
        units[-len(expected) - 1]


def test_far_apart_units_are_read_without_what_lies_between(  # type: ignore[no-untyped-def]
    index: Index, hashing_embedder
) -> None:
    """After most documents are deleted, the units left are far apart in rowid: a slice still reads them right."""
    index.delete([f"d{i}" for i in range(1, 39)])
    index.update(_documents(3, tag="new"), embedder=hashing_embedder)  # d0..d2 revised: new rowids at the end
    expected = _in_database(index.path)
    assert index.passages[:] == expected and list(index.passages) == expected


def test_a_read_inside_a_view_sees_its_generation_while_the_index_changes(  # type: ignore[no-untyped-def]
    index: Index, hashing_embedder
) -> None:
    before = _in_database(index.path)
    writer = Index.open(index.path)
    with index.read() as view:
        units = view.passages
        first = units[:5]
        # another writer deletes and revises documents, in another thread (it opens its own connection)
        done = threading.Thread(target=lambda: (writer.delete(["d0", "d1"]),
                                                writer.update(_documents(5, tag="v2"), embedder=hashing_embedder)))
        done.start()
        done.join()
        assert writer.generation > view.generation
        # the deleted and revised units are still read, as the generation holds them
        assert list(units) == before and units[:5] == first
        assert index.passages == before  # the index's own reads on this thread see the view's generation
    assert Index.open(index.path).passages == _in_database(index.path) != before


def test_a_unit_removed_since_is_reported_outside_a_view(index: Index, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    units = index.passages  # outside any view: later reads see the latest database
    kept = units[-1]
    removed = [i for i, unit in enumerate(units) if unit.document_id == "d0"]
    Index.open(index.path).delete(["d0"])
    assert units[len(units) - 1] == kept  # a unit the update kept reads the same
    with pytest.raises(IndexStoreError, match=r"unit\(s\) of generation 1 are gone .*a later update removed them"):
        units.take(removed)
    with pytest.raises(IndexStoreError, match="gone"):
        list(units)
    # the index itself moves on to the new generation
    assert [u.document_id for u in index.passages].count("d0") == 0


def test_units_of_an_index_rebuilt_in_place_are_not_read_from_the_new_one(  # type: ignore[no-untyped-def]
    index: Index, hashing_embedder
) -> None:
    """A rebuilt index gives the same rowids to other units: an old generation's read must fail, not mix them."""
    units = index.passages
    shutil.rmtree(index.path)
    Index.create(index.path, SETTINGS).update(_documents(40, tag="other"), embedder=hashing_embedder)
    with pytest.raises(IndexStoreError, match="was rebuilt since this generation was read"):
        units[0]
    assert index.passages[0].text.startswith("word0x0other")


def test_a_damaged_database_is_reported_as_such(index: Index) -> None:
    units = index.passages
    with sqlite3.connect(index.path / DB_NAME) as conn:
        conn.execute("DROP TABLE passages")
    with pytest.raises(IndexStoreError, match="unreadable or corrupt"):
        units[0]


def test_a_read_block_keeps_its_snapshot_when_the_index_is_rebuilt_in_place(  # type: ignore[no-untyped-def]
    index: Index, hashing_embedder
) -> None:
    before = _in_database(index.path)
    with index.read() as view:
        view.passages[0]
        shutil.rmtree(index.path)
        Index.create(index.path, SETTINGS).update(_documents(3, tag="other"), embedder=hashing_embedder)
        # the block reads the file it began on (unlinked, still open): its units and documents
        assert list(view.passages) == before and index.passages == before
        assert index.document("d7").text.startswith("word7x0 ")
    assert index.passages[0].text.startswith("word0x0other") and index.passages == _in_database(index.path)


def test_units_outlive_the_index_object_that_loaded_them_without_a_cycle(index: Index) -> None:
    """``Index.open(path).passages`` stays readable once the index object is dropped, and the index object is freed
    at once (no cycle through its loaded generation keeps its connections and mapped files alive)."""
    opened = Index.open(index.path)
    units = opened.passages
    alive = weakref.ref(opened)
    del opened
    assert alive() is None
    assert list(units) == _in_database(index.path)


def test_a_unit_that_goes_on_with_a_cut_sentence_says_so_and_an_older_index_still_reads(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder) -> None:
    # each document is one sentence of 30 words, more than a unit of 12 tokens holds: its later pieces go on
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_documents(3), embedder=hashing_embedder)
    units = list(index.passages)
    assert [u.continues for u in units if u.document_id == "d0"] == [False] + [True] * (
        sum(u.document_id == "d0" for u in units) - 1)
    assert units == _in_database(index.path)
    # an index made before the column: opened again, its units read as they were read when it was made; then
    # given the column by its next write, its earlier units unchanged
    with sqlite3.connect(index.path / DB_NAME) as conn:
        conn.execute("ALTER TABLE passages DROP COLUMN continues")
    before = Index.open(index.path)
    assert [u.continues for u in before.passages] == [False] * len(units)
    assert [(u.id, u.text) for u in before.passages] == [(u.id, u.text) for u in units]
    before.update(_documents(1, tag="new"), embedder=hashing_embedder)  # d0 again, now with other words
    again = list(Index.open(index.path).passages)
    assert [u.continues for u in again if u.document_id == "d0"][:2] == [False, True]
    assert not any(u.continues for u in again if u.document_id != "d0")
