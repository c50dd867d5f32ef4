from __future__ import annotations

import fcntl
import functools
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from citesum.errors import CitesumError, ConfigError, IndexLockedError, IndexMismatchError, IndexStoreError
from citesum.index import artifacts
from citesum.index.store import DB_NAME, LOCK_NAME, Index, IndexSettings
from citesum.types import Document
from fixtures import overwrite

SETTINGS = IndexSettings(embedder="test-hashing")


def _docs(*pairs: tuple[str, str]) -> list[Document]:
    return [Document(id=i, title=i, text=t) for i, t in pairs]


def _state(index: Index) -> dict[str, list[str]]:
    state: dict[str, list[str]] = {}
    for passage in index.passages:
        state.setdefault(passage.document_id, []).append(passage.text)
    return state


def test_add_update_delete_are_incremental(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", SETTINGS)
    stats = index.update(_docs(("a", "Apples are red. Apples grow on trees."), ("b", "Bananas are yellow.")),
                         embedder=hashing_embedder)
    assert (stats.added, stats.updated, stats.unchanged, stats.passages_embedded) == (2, 0, 0, 2)

    hashing_embedder.embedded_texts.clear()
    stats = index.update(
        _docs(("a", "Apples are red. Apples grow on trees."), ("b", "Bananas are yellow and sweet."),
              ("c", "Cherries are small.")),
        embedder=hashing_embedder,
    )
    assert (stats.added, stats.updated, stats.unchanged) == (1, 1, 1)
    # only the changed and the new document were embedded
    assert hashing_embedder.embedded_texts == ["Bananas are yellow and sweet.", "Cherries are small."]

    reopened = Index.open(tmp_path / "ix")
    assert _state(reopened) == {"a": ["Apples are red. Apples grow on trees."],
                                "b": ["Bananas are yellow and sweet."], "c": ["Cherries are small."]}
    assert reopened.vectors.shape == (3, 64)
    # the stored vectors are those of the current texts, in passage order
    expected = hashing_embedder.encode_documents([p.text for p in reopened.passages])
    np.testing.assert_allclose(reopened.vectors, expected, rtol=1e-6)
    assert reopened.lexical.scores("bananas sweet").argmax() == [p.document_id for p in reopened.passages].index("b")

    stats = reopened.delete(["a", "not-there"])
    assert stats.deleted == 1
    assert sorted(_state(Index.open(tmp_path / "ix"))) == ["b", "c"]
    assert [d.id for d in Index.open(tmp_path / "ix").documents()] == ["b", "c"]  # collection order kept
    # one generation directory remains
    assert [p.name for p in (tmp_path / "ix").glob("gen-*")] == [f"gen-{stats.generation}"]


def test_unchanged_input_writes_nothing(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", SETTINGS)
    docs = _docs(("a", "Some text here."))
    first = index.update(docs, embedder=hashing_embedder)
    second = index.update(docs, embedder=hashing_embedder)
    assert second.generation == first.generation and second.unchanged == 1


def test_document_positions_follow_ingestion_order(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(("z", "Zed."), ("m", "Em."), ("a", "Ay.")), embedder=hashing_embedder)
    index.update(_docs(("m", "Em changed.")), embedder=hashing_embedder)  # an update keeps its position
    assert [index.document_position(i) for i in ("z", "m", "a")] == [0, 1, 2]
    # what a sync reads of every document: ids and metadata, in the same order, without the text
    index.update([Document(id="t", title="t", text="Tee.", metadata={"file": "t.txt", "page": 2})],
                 embedder=hashing_embedder)
    assert list(index.document_metadata()) == [(d.id, d.metadata) for d in index.documents()]
    assert list(index.document_metadata())[-1] == ("t", {"file": "t.txt", "page": 2})


def test_deleting_every_document_leaves_an_empty_usable_index(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(("a", "Alpha beta."), ("b", "Gamma delta.")), embedder=hashing_embedder)
    assert index.delete(["a", "b"]).deleted == 2
    empty = Index.open(tmp_path / "ix")
    assert empty.passages == [] and empty.lexical.scores("gamma").shape == (0,)
    empty.update(_docs(("c", "Gamma again.")), embedder=hashing_embedder)
    assert Index.open(tmp_path / "ix").lexical.scores("gamma")[0] > 0


def test_reader_rebuilds_missing_artifacts_from_the_database(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", SETTINGS)
    stats = index.update(_docs(("a", "Alpha beta."), ("b", "Gamma delta.")), embedder=hashing_embedder)
    vectors = np.array(Index.open(tmp_path / "ix").vectors)
    for file in (tmp_path / "ix" / f"gen-{stats.generation}").rglob("*"):
        if file.is_file():
            file.unlink()
    reopened = Index.open(tmp_path / "ix")
    np.testing.assert_array_equal(reopened.vectors, vectors)
    assert reopened.lexical.scores("gamma")[1] > 0


def test_second_writer_gets_index_locked(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", SETTINGS)
    with open(tmp_path / "ix" / LOCK_NAME, "a+") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another writer holds the lock
        with pytest.raises(IndexLockedError, match="locked"):
            index.update(_docs(("a", "Text.")), embedder=hashing_embedder)
    assert index.update(_docs(("a", "Text.")), embedder=hashing_embedder).added == 1


def test_other_embedder_or_settings_are_refused(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    Index.create(tmp_path / "ix", SETTINGS)
    with pytest.raises(IndexMismatchError, match="embedder 'test-hashing', not 'wordllama'"):
        Index.open(tmp_path / "ix", embedder="wordllama")
    with pytest.raises(IndexMismatchError, match="max_tokens=100"):
        Index.create(tmp_path / "ix", IndexSettings(embedder="test-hashing", max_tokens=50))
    from citesum.embed import get_embedder

    with pytest.raises(IndexMismatchError, match="got 'wordllama'"):
        Index.open(tmp_path / "ix").update(_docs(("a", "x")), embedder=get_embedder("wordllama"))


def test_schema_version_and_corruption_errors(tmp_path: Path) -> None:
    Index.create(tmp_path / "ix", SETTINGS)
    conn = sqlite3.connect(tmp_path / "ix" / DB_NAME)
    conn.execute("UPDATE manifest SET value='999' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(IndexMismatchError, match="schema version 999"):
        Index.open(tmp_path / "ix")

    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / DB_NAME).write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexStoreError, match="corrupt"):
        Index.open(tmp_path / "bad")
    with pytest.raises(IndexStoreError, match="no index at"):
        Index.open(tmp_path / "missing")


def test_document_unit_index(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    settings = IndexSettings.for_unit("document", embedder="test-hashing")
    assert settings.max_tokens == 1024
    index = Index.create(tmp_path / "ix", settings)
    long_text = " ".join(f"Sentence {i} is here." for i in range(600))
    index.update(_docs(("long", long_text), ("short", "Short one.")), embedder=hashing_embedder)
    assert [p.document_id for p in index.passages] == ["long", "short"]
    assert index.passages[0].token_count <= 1024 and index.passages[0].text.endswith("here.")
    assert index.document("long").text == long_text  # the full text stays in the content store


def test_update_and_delete_of_the_same_document_is_refused(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    from citesum.errors import ConfigError

    index = Index.create(tmp_path / "ix", SETTINGS)
    with pytest.raises(ConfigError, match="both updated and deleted in one call: a"):
        index.update(_docs(("a", "Text.")), delete=["a"], embedder=hashing_embedder)


def test_duplicate_ids_in_one_update_are_refused(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    from citesum.errors import ConfigError

    index = Index.create(tmp_path / "ix", SETTINGS)
    with pytest.raises(ConfigError, match="more than once in one update: a"):
        index.update(_docs(("a", "One."), ("a", "Two.")), embedder=hashing_embedder)
    assert len(Index.open(tmp_path / "ix")) == 0


def test_a_reader_of_earlier_generations_sees_what_a_fresh_reader_sees(  # type: ignore[no-untyped-def]
    tmp_path: Path, hashing_embedder
) -> None:
    """A reader that loaded earlier generations reads each new one (after updates, deletions, an update of the last
    document, whose rows are replaced at the end, and a rebuilt index) exactly as a reader that loads it first."""
    writer = Index.create(tmp_path / "ix", SETTINGS)
    writer.update(_docs(("a", "Apples are red. Apples grow on trees."), ("b", "Bananas are yellow."),
                        ("c", "Cherries are small.")), embedder=hashing_embedder)
    reader = Index.open(tmp_path / "ix")
    assert len(reader.passages) == 3

    def same_as_fresh() -> None:
        fresh = Index.open(tmp_path / "ix")
        assert reader.passages == fresh.passages
        assert reader.unit_documents[1] == fresh.unit_documents[1]
        assert reader.unit_documents[0].tolist() == fresh.unit_documents[0].tolist()
        assert np.array_equal(reader.vectors, fresh.vectors)

    writer.update(_docs(("c", "Cherries are small and dark red.")), embedder=hashing_embedder)
    same_as_fresh()
    writer.delete(["a"])
    same_as_fresh()
    writer.update(_docs(("d", "Dates are sweet."), ("b", "Bananas are yellow when ripe.")), embedder=hashing_embedder)
    same_as_fresh()
    assert [p.text for p in reader.passages] == ["Cherries are small and dark red.", "Dates are sweet.",
                                                 "Bananas are yellow when ripe."]

    # rebuilt in place: generation numbers start again, rowids too; nothing of the old index may be reused
    shutil.rmtree(tmp_path / "ix")
    rebuilt = Index.create(tmp_path / "ix", SETTINGS)
    rebuilt.update(_docs(*[(f"z{i}", f"Zucchini number {i} is green.") for i in range(6)]),
                   embedder=hashing_embedder)  # rowids 1-6 again, where the old index had 4, 5 and 6
    same_as_fresh()
    assert [p.text for p in reader.passages] == [f"Zucchini number {i} is green." for i in range(6)]


def test_generation_files_checksummed_by_older_versions_still_verify(  # type: ignore[no-untyped-def]
    tmp_path: Path, hashing_embedder
) -> None:
    """Indexes written before the change to CRC-32 recorded BLAKE2b digests: they must still verify, and a damaged
    file must still be found."""
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(("a", "Apples are red."), ("b", "Bananas are yellow.")), embedder=hashing_embedder)
    folder = next((tmp_path / "ix").glob("gen-*"))
    recorded = artifacts.checksums(folder)
    assert all(kept[1].startswith("crc32:") for kept in recorded.values())
    older = {name: [kept[0], artifacts.file_digest(folder / name, like="0" * 32)] for name, kept in recorded.items()}
    assert all(len(digest) == 32 for _, digest in older.values())
    with sqlite3.connect(tmp_path / "ix" / DB_NAME) as conn:
        conn.execute("UPDATE manifest SET value = ? WHERE key = 'files'", (json.dumps(older),))
    conn.close()
    assert artifacts.verify(folder, older) == []
    assert isinstance(Index.open(tmp_path / "ix").vectors, np.memmap)  # read from its verified file
    vectors = next(folder.glob("segments/*/vectors.npy"))
    data = bytearray(vectors.read_bytes())
    data[-4:] = b"\x00\x00\x80\x7f"  # the last float becomes infinity: same size, other bytes
    overwrite(vectors, bytes(data))
    assert any("checksum differs" in problem for problem in artifacts.verify(folder, older))
    assert any("checksum differs" in problem for problem in artifacts.verify(folder, recorded))


def test_updates_give_the_bm25_index_and_vectors_a_rebuild_gives(  # type: ignore[no-untyped-def]
    tmp_path: Path, hashing_embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The BM25 index is built beside the embedding, before the transaction, from the kept units and the new
    ones; after adds, replacements and deletions it scores as one built from the database alone, and the vectors
    embedded batch by batch on the second thread stay in unit order."""
    from citesum.index.lexical import LexicalIndex

    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(*[(f"d{i}", f"Report {i} on reservoir levels. Rationing {i % 3} continues.") for i in range(9)]),
                 embedder=hashing_embedder)
    # the first build writes the vectors it embedded (not read back from the database): the same, in unit order
    np.testing.assert_allclose(index.vectors, hashing_embedder.encode_documents([p.text for p in index.passages]),
                               rtol=1e-6)
    analysed: list[int] = []  # how many texts each BM25 index was built from
    build = LexicalIndex.build.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(LexicalIndex, "build", classmethod(lambda cls, texts: analysed.append(len(texts)) or build(cls, texts)))
    index.update(_docs(("d4", "The tram to the airport opens."), ("n1", "Reservoir rationing ends in May.")),
                 delete=["d1", "d7"], embedder=hashing_embedder)
    assert analysed == [], "the update analysed the kept units again instead of reusing their term counts"
    monkeypatch.undo()
    queries = ["reservoir rationing", "tram airport", "report 4", "may"]
    incremental = [index.lexical.scores(q) for q in queries]
    incremental_vectors = np.array(index.vectors)  # the kept rows of the previous file, then the new as embedded
    index.rewrite_generation()  # the files again, from the database alone
    for query, scores in zip(queries, incremental):
        np.testing.assert_array_equal(scores, index.lexical.scores(query))
    texts = [p.text for p in index.passages]
    assert texts[-2:] == ["The tram to the airport opens.", "Reservoir rationing ends in May."]
    np.testing.assert_allclose(index.vectors, hashing_embedder.encode_documents(texts), rtol=1e-6)
    np.testing.assert_array_equal(incremental_vectors, index.vectors)


def test_an_embedder_failure_mid_build_leaves_the_index_as_it_was(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(("a", "Apples are red.")), embedder=hashing_embedder)
    generation = index.generation
    encode = hashing_embedder.encode_documents
    calls = []

    def failing(texts):  # type: ignore[no-untyped-def]
        calls.append(len(texts))
        if len(calls) == 2:
            raise RuntimeError("embedding server went away")
        return encode(texts)

    hashing_embedder.encode_documents = failing
    many = [(f"n{i}", f"New document number {i} about pears.") for i in range(1200)]  # three batches of 512
    with pytest.raises(RuntimeError, match="went away"):
        index.update(_docs(*many), embedder=hashing_embedder)
    assert index.generation == generation and _state(index) == {"a": ["Apples are red."]}


def test_an_index_written_before_segments_is_read_from_the_database_and_updates_exactly(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder, caplog: pytest.LogCaptureFixture) -> None:
    """A generation in the layout before segments (no list of segments) is not searched from its files: it is
    read from the database, `citesum check` says so, and the next update writes every unit again, scoring as a
    rebuild."""
    from citesum.index.check import check_index

    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(*[(f"d{i}", f"Report {i} on reservoir levels and rationing.") for i in range(6)]),
                 embedder=hashing_embedder)
    expected = index.lexical.scores("reservoir rationing")
    folder = tmp_path / "ix" / f"gen-{index.generation}"
    (folder / "segments.json").unlink()
    with sqlite3.connect(tmp_path / "ix" / DB_NAME) as conn:  # the checksums such a version recorded
        conn.execute("UPDATE manifest SET value=? WHERE key='files'", (json.dumps(artifacts.checksums(folder)),))
    conn.close()
    reopened = Index.open(tmp_path / "ix")
    with caplog.at_level("WARNING"):
        np.testing.assert_array_equal(reopened.lexical.scores("reservoir rationing"), expected)
    assert not isinstance(reopened.vectors, np.memmap)  # from the database
    assert any("older citesum" in problem for problem in check_index(tmp_path / "ix").problems)
    reopened.update(_docs(("n", "Reservoir rationing ends.")), delete=["d2"], embedder=hashing_embedder)
    assert (tmp_path / "ix" / f"gen-{reopened.generation}" / "segments.json").is_file()
    updated = [reopened.lexical.scores(q) for q in ("reservoir rationing", "report 4")]
    reopened.rewrite_generation()
    assert all(np.array_equal(a, reopened.lexical.scores(q)) for a, q in zip(updated, ("reservoir rationing", "report 4")))
    assert check_index(tmp_path / "ix").ok


def test_terms_no_unit_holds_are_dropped_as_updates_replace_the_collection(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    """Updates that replace every document leave terms no unit holds; past a fifth of the vocabulary they are
    dropped, and the scores stay those of a rebuild."""
    index = Index.create(tmp_path / "ix", SETTINGS)
    for round_ in range(6):
        index.update(_docs(*[(f"d{i}", f"Topic{round_}x{i} words{round_} shared text") for i in range(20)]),
                     embedder=hashing_embedder)
        lexical = index.lexical
        held = {t for unit in range(lexical.size) for t in (lexical.terms[i] for i in lexical.unit_term_counts(unit)[0])}
        assert len(lexical.terms) <= len(held) / 0.8 + 1  # the empty term aside
    assert index.lexical.term_id("topic0x3") is None
    scores = index.lexical.scores("topic5x3 words5")
    index.rewrite_generation()
    assert np.array_equal(scores, index.lexical.scores("topic5x3 words5")) and scores.max() > 0


def test_segment_vectors_read_as_one_matrix_of_the_held_units() -> None:
    """A generation's vectors across segments that each hold some of their units: a product, rows by position
    (any order, negative, a slice) and the whole, as the matrix of the held rows one segment after the other."""
    from citesum.index.segments import SegmentVectors

    rng = np.random.default_rng(5)
    saved = [rng.standard_normal((n, 8)).astype(np.float32) for n in (30, 1, 12, 0, 9)]
    held = [np.arange(30)[rng.random(30) < 0.6], None, np.array([0, 11]), None, np.zeros(0, dtype=np.int64)]
    expected = np.vstack([vectors if rows is None else vectors[rows] for vectors, rows in zip(saved, held)])
    vectors = SegmentVectors(list(zip(saved, held)), 8)
    assert len(vectors) == len(expected) and vectors.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(vectors), expected)
    query = rng.standard_normal(8).astype(np.float32)
    np.testing.assert_allclose(vectors @ query, expected @ query, rtol=1e-6)
    positions = rng.permutation(len(expected))[:10]
    np.testing.assert_array_equal(vectors[positions], expected[positions])
    np.testing.assert_array_equal(vectors[[-1, 0]], expected[[-1, 0]])
    np.testing.assert_array_equal(vectors[3:7], expected[3:7])
    with pytest.raises(IndexError):
        vectors[[len(expected)]]


def test_merge_runs_bound_the_segments_and_rewrite_those_that_lost_units() -> None:
    from citesum.index.segments import DELETED_SHARE, MAX_SEGMENTS, merge_runs

    unbounded = 10**9
    assert merge_runs([1000, 10], [1000, 10], unbounded) == []  # few segments, none lost much
    assert merge_runs([600, 10], [1000, 10], unbounded) == [(0, 1)]  # lost 40%: written again without them
    assert merge_runs([int(1000 * (1 - DELETED_SHARE)) + 1], [1000], unbounded) == []
    sizes = [1000, 50, 40, 30, 20, 10, 5, 5, 5]  # one too many: the two smallest neighbours merge
    assert merge_runs(sizes, sizes, unbounded) == [(6, 8)]
    many = [100] * (3 * MAX_SEGMENTS)
    runs = merge_runs(many, many, unbounded)
    assert len(many) - sum(stop - start - 1 for start, stop in runs) == MAX_SEGMENTS
    assert all(b[0] >= a[1] for a, b in zip(runs, runs[1:]))  # neighbours, not overlapping
    # no merge makes a segment of more than segment_units units: past MAX_SEGMENTS x that, more segments stay
    assert merge_runs(many, many, 199) == []
    runs = merge_runs(many, many, 300)
    assert runs and all(sum(many[start:stop]) <= 300 for start, stop in runs)
    # the smallest neighbours first: pairs of 200, and no pair of those fits in 300
    assert len(many) - sum(stop - start - 1 for start, stop in runs) == 12
    assert merge_runs([600, 10], [1000, 10], 500) == [(0, 1)]  # a rewrite only shrinks a segment
    assert merge_runs([0, 500], [0, 500], unbounded) == [(0, 1)]  # an empty one (older citesum) goes


def test_updates_write_only_the_new_units_and_link_the_rest(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    """An update's generation shares the previous one's segment files (the same inodes: linked, not written),
    adds a segment of its new units, and searches as a rebuild does; units of revised documents stay in their
    segment's files and are never returned."""
    from citesum.retrieve import get_retriever
    from citesum.retrieve.dense import DenseRetriever
    from citesum.retrieve.feedback import DensePRFRetriever
    from citesum.retrieve.fusion import HybridRetriever

    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(*[(f"d{i}", f"Report {i} on reservoir levels. Rationing {i % 3} continues.") for i in range(40)]),
                 embedder=hashing_embedder)
    first = tmp_path / "ix" / f"gen-{index.generation}"
    [base] = json.loads((first / "segments.json").read_text())
    inode = (first / "segments" / base / "vectors.npy").stat().st_ino
    index.update(_docs(("d3", "The tram to the airport opens."), ("n1", "Reservoir rationing ends in May.")),
                 delete=["d5"], embedder=hashing_embedder)
    second = tmp_path / "ix" / f"gen-{index.generation}"
    names = json.loads((second / "segments.json").read_text())
    assert names[0] == base and len(names) == 2 and not first.exists()
    assert (second / "segments" / base / "vectors.npy").stat().st_ino == inode
    assert len(np.load(second / "segments" / names[1] / "rows.npy")) == 2  # only the new units were written
    texts = [p.text for p in index.passages]
    assert "Report 3 on reservoir levels. Rationing 0 continues." not in texts and texts[-2:] == [
        "The tram to the airport opens.", "Reservoir rationing ends in May."]
    queries = ["reservoir rationing", "tram airport", "report 3", "report 5"]

    def hybrid():  # type: ignore[no-untyped-def]
        return HybridRetriever(index, [get_retriever("bm25", index), get_retriever("bm25-rm3", index),
                                       DenseRetriever(index, hashing_embedder), DensePRFRetriever(index, hashing_embedder)])

    hits = {q: [h.passage.id for h in hybrid().retrieve(q, k=5)] for q in queries}
    scores = {q: index.lexical.scores(q) for q in queries}
    np.testing.assert_allclose(np.asarray(index.vectors), hashing_embedder.encode_documents(texts), rtol=1e-6)
    index.rewrite_generation()
    assert len(json.loads((tmp_path / "ix" / f"gen-{index.generation}" / "segments.json").read_text())) == 1
    for query in queries:
        np.testing.assert_array_equal(scores[query], index.lexical.scores(query))
        assert hits[query] == [h.passage.id for h in hybrid().retrieve(query, k=5)]


def test_a_build_lets_each_vector_batch_go_once_stacked(tmp_path: Path, hashing_embedder,  # type: ignore[no-untyped-def]
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing else holds the batches (the embedding futures did): stacking frees each as it is copied, and a
    million units' vectors are not held twice."""
    import weakref

    from citesum.index import store

    alive: list[bool] = []
    stack = store._stacked

    def watched(parts):  # type: ignore[no-untyped-def]
        batches = [weakref.ref(part) for part in parts]
        stacked = stack(parts)
        alive.extend(batch() is not None for batch in batches)  # while the build still runs
        return stacked

    monkeypatch.setattr(store, "_stacked", watched)
    index = Index.create(tmp_path / "ix", IndexSettings(embedder="test-hashing"))
    documents = [Document(id=f"d{i}", title="t", text=f"Document {i} says something about topic {i}.") for i in range(30)]
    units, vectors, _ = index._chunk_and_embed(documents, hashing_embedder, None, lambda taken, texts: None, batch=4)
    assert len(alive) == 8 and len(vectors) == sum(len(group) for group in units) == 30
    assert not any(alive)


def test_vector_batches_are_stacked_in_order_and_let_go() -> None:
    from citesum.index.store import _stacked

    parts = [np.full((n, 3), i, dtype=np.float32) for i, n in enumerate((512, 512, 7, 1))]
    expected = np.vstack(parts)
    stacked = _stacked(parts)
    np.testing.assert_array_equal(stacked, expected)
    assert parts == [] and stacked.dtype == np.float32  # each batch is dropped once copied
    # as many batches as a large build has (more than NumPy 1.x takes as arguments), one of them wider
    many = [np.full((2, 3), i, dtype=np.float64 if i == 7 else np.float32) for i in range(300)]
    expected = np.vstack(many)
    stacked = _stacked(many)
    np.testing.assert_array_equal(stacked, expected)
    assert stacked.dtype == np.float64
    assert _stacked([]).shape == (0, 0)


def test_unit_frequencies_count_the_units_that_hold_each_analysed_term() -> None:
    from citesum.index.lexical import LexicalIndex

    lexical = LexicalIndex.build(["The cat sat on the mat.", "A cat ran; the cat hid.", "A dog barked."])
    assert lexical.unit_frequencies(["cat", "dog", "mat", "unicorn"]).tolist() == [2, 1, 1, 0]
    assert LexicalIndex.build([]).unit_frequencies(["cat"]).tolist() == [0]


def test_merges_and_rewrites_keep_the_scores_of_a_rebuild(tmp_path: Path, hashing_embedder,  # type: ignore[no-untyped-def]
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Update after update: past MAX_SEGMENTS the smallest neighbours merge, a segment that lost most of its
    units is written again without them, and the index scores and reads as one rebuilt from its database."""
    from citesum.index import segments

    monkeypatch.setattr(segments, "MAX_SEGMENTS", 3)
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(*[(f"d{i}", f"Report {i} on reservoir levels. Rationing {i % 3} continues.") for i in range(30)]),
                 embedder=hashing_embedder)
    for round_ in range(5):  # a new document per round, and a revision
        index.update(_docs((f"n{round_}", f"Tram line {round_} opens to the airport."),
                           (f"d{round_}", f"Report {round_} revised: desalination plant {round_}.")),
                     embedder=hashing_embedder)
        names = json.loads((tmp_path / "ix" / f"gen-{index.generation}" / "segments.json").read_text())
        assert len(names) <= 3
    index.delete([f"d{i}" for i in range(5, 25)])  # two thirds of the first segment's units
    folder = tmp_path / "ix" / f"gen-{index.generation}"
    names = json.loads((folder / "segments.json").read_text())
    rows = [len(np.load(folder / "segments" / name / "rows.npy")) for name in names]
    assert sum(rows) == len(index)  # every segment was written again without the deleted units
    queries = ["reservoir rationing", "tram airport", "desalination plant 3", "report 27"]
    scores = [index.lexical.scores(q) for q in queries]
    vectors = np.array(index.vectors)
    texts = [p.text for p in index.passages]
    index.rewrite_generation()
    assert [p.text for p in index.passages] == texts
    np.testing.assert_array_equal(np.array(index.vectors), vectors)
    for query, before in zip(queries, scores):
        np.testing.assert_array_equal(before, index.lexical.scores(query))


def test_a_segment_whose_units_are_all_revised_leaves_no_empty_segment(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    """The same documents revised twice: the first revision's segment holds none of its units after the second,
    and the generation lists no segment without units (one would count towards MAX_SEGMENTS for ever)."""
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(*[(f"d{i}", f"Report {i} on reservoir levels.") for i in range(20)]), embedder=hashing_embedder)
    for note in ("revised", "revised twice"):
        index.update(_docs(("d3", f"Report 3 {note}: tram line."), ("d4", f"Report 4 {note}: airport.")),
                     embedder=hashing_embedder)
    folder = tmp_path / "ix" / f"gen-{index.generation}"
    names = json.loads((folder / "segments.json").read_text())
    rows = [len(np.load(folder / "segments" / name / "rows.npy")) for name in names]
    # the first segment's files keep the rows of the two revised units (18 held), the second has their revisions
    assert len(names) == 2 and rows == [20, 2]
    assert sorted(p.name for p in (folder / "segments").iterdir()) == sorted(names)
    scores = index.lexical.scores("tram line revised twice")
    index.rewrite_generation()
    np.testing.assert_array_equal(scores, index.lexical.scores("tram line revised twice"))


def test_an_update_past_segment_units_commits_several_generations_that_equal_one_write(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder) -> None:
    """With segment_units 7, 20 one-unit documents and a deletion are written as three generations of 7, 7 and 6
    new units (the deletion with the first), each its own segment; the index reads and scores as one written
    in a single generation."""
    documents = _docs(*[(f"d{i}", f"Report {i} on reservoir levels; rationing {i % 4} continues.") for i in range(20)])
    bounded, whole = Index.create(tmp_path / "bounded", SETTINGS), Index.create(tmp_path / "whole", SETTINGS)
    for index in (bounded, whole):
        index.update(_docs(("old", "An old report on tram lines.")), embedder=hashing_embedder)
    with pytest.raises(ConfigError, match="segment_units must be a positive number of units, got 0"):
        bounded.set_segment_units(0)
    bounded.set_segment_units(7)
    seen = []
    stats = bounded.update(documents, delete=["old"], embedder=hashing_embedder,
                           progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert (stats.added, stats.deleted, stats.passages_embedded, stats.generation) == (20, 1, 20, 4)
    assert seen.count(("bm25", 1, 1)) == 3
    whole.update(documents, delete=["old"], embedder=hashing_embedder)
    folder = tmp_path / "bounded" / "gen-4"
    names = json.loads((folder / "segments.json").read_text())
    # the old document's segment, emptied by the deletion, is gone
    assert [len(np.load(folder / "segments" / name / "rows.npy")) for name in names] == [7, 7, 6]
    assert [p.text for p in bounded.passages] == [p.text for p in whole.passages]
    np.testing.assert_array_equal(np.array(bounded.vectors), np.array(whole.vectors))
    for query in ("reservoir rationing 3", "report 17", "tram lines"):
        np.testing.assert_array_equal(bounded.lexical.scores(query), whole.lexical.scores(query))


def test_a_large_update_interrupted_after_some_generations_resumes_where_it_stopped(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder) -> None:
    """The embedder fails while the second generation is embedded: the first stays committed and complete, and
    the update run again embeds only the documents the first did not take."""
    documents = _docs(*[(f"d{i}", f"Report {i} on reservoir levels.") for i in range(12)])

    class FailsOnTheSecondBatch(type(hashing_embedder)):  # type: ignore[misc]
        def __init__(self, error: Exception) -> None:
            super().__init__()
            self.error = error

        def _encode(self, texts):  # type: ignore[no-untyped-def]
            if self.embedded_texts:
                raise self.error
            return super()._encode(texts)

    # a connection that drops, or an embedding server's error as citesum reports it
    for number, error in enumerate((CitesumError("embedding server answered 503"),
                                    ConnectionError("embedding server gone"))):
        index = Index.create(tmp_path / f"ix{number}", SETTINGS)
        index.set_segment_units(5)
        with pytest.raises(IndexStoreError, match=f"{error}.; 5 of the 12 documents were written .generation 1.; "
                                                  "the same update run again writes the others"):
            index.update(documents, embedder=FailsOnTheSecondBatch(error))
        assert index.generation == 1 and len(index) == 5
    assert [p.document_id for p in index.passages] == [f"d{i}" for i in range(5)]
    stats = index.update(documents, embedder=hashing_embedder)
    assert (stats.unchanged, stats.added, stats.passages_embedded) == (5, 7, 7)
    assert len(hashing_embedder.embedded_texts) == 7 and len(index) == 12 and index.generation == 3


def test_a_rewrite_from_the_database_writes_segments_of_segment_units(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder) -> None:
    """``citesum check --repair`` (a rewrite) of an index larger than segment_units reads the database a segment
    at a time: segments of at most that many units, each with its graph where one is wanted, no folder left
    behind, and the index reads and scores as before."""
    pytest.importorskip("usearch")
    from citesum.index import ann
    from citesum.index.check import check_index
    from citesum.index.segments import SegmentNearest

    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(*[(f"d{i}", f"Report {i} on reservoir levels; rationing {i % 4} continues.") for i in range(23)]),
                 embedder=hashing_embedder)
    texts, vectors = [p.text for p in index.passages], np.array(index.vectors)
    queries = ("reservoir rationing 3", "report 17")
    scores = [index.lexical.scores(q) for q in queries]
    index.set_segment_units(10)
    index.set_ann_min_units(5, rewrite=False)
    # what a writer killed while it staged the same generation's segments left
    leftover = tmp_path / "ix" / f"gen-{index.generation + 1}.segments" / f"s{index.generation + 1}-r0"
    leftover.mkdir(parents=True)
    (leftover / "rows.npy").write_bytes(b"half a file")
    generation = index.rewrite_generation()
    folder = tmp_path / "ix" / f"gen-{generation}"
    names = json.loads((folder / "segments.json").read_text())
    assert [len(np.load(folder / "segments" / name / "rows.npy")) for name in names] == [10, 10, 3]
    # a graph for each segment of min(SEGMENT_GRAPH_UNITS, ann_min_units) units or more
    assert [ann.saved_in(folder / "segments" / name) is not None for name in names] == [True, True, False]
    assert isinstance(index.ann, SegmentNearest) and len(index.ann) == 23
    assert sorted(p.name for p in (tmp_path / "ix").iterdir() if p.name.startswith("gen-")) == [folder.name]
    assert [p.text for p in index.passages] == texts
    np.testing.assert_array_equal(np.array(index.vectors), vectors)
    for query, before in zip(queries, scores):
        np.testing.assert_array_equal(index.lexical.scores(query), before)
    assert not check_index(tmp_path / "ix").problems
    # an update that cannot build on its generation (a damaged file) writes it from the database the same way
    vectors_file = folder / "segments" / names[0] / "vectors.npy"
    overwrite(vectors_file, b"\0" * vectors_file.stat().st_size)
    index.update(_docs(("new", "A new report on tram lines.")), embedder=hashing_embedder)
    folder = tmp_path / "ix" / f"gen-{index.generation}"
    names = json.loads((folder / "segments.json").read_text())
    assert [len(np.load(folder / "segments" / name / "rows.npy")) for name in names] == [10, 10, 4]
    assert not check_index(tmp_path / "ix").problems


def test_without_hard_links_the_kept_segments_are_copied(tmp_path: Path, hashing_embedder,  # type: ignore[no-untyped-def]
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system that refuses hard links (EPERM, EXDEV) gets copies of the kept segments' files, with the
    same checksums: the update succeeds and the index reads as before."""
    import errno
    import os

    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(*[(f"d{i}", f"Report {i} on reservoir levels.") for i in range(6)]), embedder=hashing_embedder)
    first = tmp_path / "ix" / f"gen-{index.generation}"
    [base] = json.loads((first / "segments.json").read_text())
    inode = (first / "segments" / base / "vectors.npy").stat().st_ino

    def no_links(source: object, target: object) -> None:
        raise OSError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(os, "link", no_links)
    index.update(_docs(("n", "Reservoir rationing ends.")), embedder=hashing_embedder)
    second = tmp_path / "ix" / f"gen-{index.generation}"
    assert (second / "segments" / base / "vectors.npy").stat().st_ino != inode  # a copy
    with sqlite3.connect(tmp_path / "ix" / DB_NAME) as conn:
        recorded = json.loads(conn.execute("SELECT value FROM manifest WHERE key='files'").fetchone()[0])
    conn.close()
    assert len(recorded[f"segments/{base}/vectors.npy"]) == 2  # a record that names no file: read at a load
    from citesum.index.check import check_index

    assert check_index(tmp_path / "ix").ok
    assert [p.text for p in index.passages][-1] == "Reservoir rationing ends." and isinstance(
        Index.open(tmp_path / "ix").lexical.segments[0][0].term_units, np.memmap)  # read from the files


def test_a_list_of_segments_that_is_not_json_makes_the_update_write_every_unit(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder) -> None:
    """A damaged list of segments whose checksum was recorded again (by hand, or an index without checksums): the
    generation cannot be built on, so the update writes every unit again instead of failing."""
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(*[(f"d{i}", f"Report {i} on reservoir levels.") for i in range(6)]), embedder=hashing_embedder)
    folder = tmp_path / "ix" / f"gen-{index.generation}"
    (folder / "segments.json").write_bytes(b"\xff not json")
    with sqlite3.connect(tmp_path / "ix" / DB_NAME) as conn:
        conn.execute("UPDATE manifest SET value=? WHERE key='files'", (json.dumps(artifacts.checksums(folder)),))
    conn.close()
    index.update(_docs(("n", "Reservoir rationing ends.")), embedder=hashing_embedder)
    names = json.loads((tmp_path / "ix" / f"gen-{index.generation}" / "segments.json").read_text())
    assert len(names) == 1 and len(index) == 7  # one segment of every unit


def test_a_file_found_sound_is_not_read_again_until_it_changes(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A record names its file (inode, size, modification time): that file, or a link to it in the next
    generation, is not read again by any process until it is written to; a record without them (an older index)
    is read once per process. Damage made since is found; damage that keeps the file's time is found by a
    thorough check."""
    import os

    monkeypatch.setattr(artifacts, "_REMEMBERED_FROM_BYTES", 0)
    monkeypatch.setattr(artifacts, "_verified", set())
    folder = tmp_path / "gen"
    folder.mkdir()
    (folder / "vectors.npy").write_bytes(b"a" * 4096)
    recorded = artifacts.checksums(folder)
    reads = []
    digest = artifacts.file_digest
    monkeypatch.setattr(artifacts, "file_digest", lambda path, **kw: reads.append(path) or digest(path, **kw))
    assert artifacts.verify(folder, recorded) == [] and reads == []
    assert artifacts.verify(folder, recorded, thorough=True) == [] and len(reads) == 1
    following = tmp_path / "next"
    following.mkdir()
    os.link(folder / "vectors.npy", following / "vectors.npy")  # linked into the next generation: not read again
    assert artifacts.verify(following, recorded) == [] and len(reads) == 1
    older = {name: kept[:2] for name, kept in recorded.items()}  # as an index written before these records
    artifacts._verified.clear()  # another process
    assert artifacts.verify(following, older) == [] and len(reads) == 2
    assert artifacts.verify(following, older) == [] and len(reads) == 2  # this process found it sound
    written = (folder / "vectors.npy").stat()
    with open(folder / "vectors.npy", "r+b") as handle:  # damaged in place, same size
        handle.write(b"b")
    os.utime(folder / "vectors.npy", ns=(written.st_atime_ns, written.st_mtime_ns))  # its time put back
    assert artifacts.verify(following, recorded) == []  # trusted: the same file, untouched by its look
    assert any("checksum differs" in problem for problem in artifacts.verify(following, recorded, thorough=True))
    # a later write: its own modification time, even where a clock tick is coarser than this test
    os.utime(folder / "vectors.npy", ns=(written.st_atime_ns, written.st_mtime_ns + 10**9))
    for kept in (recorded, older):
        assert any("checksum differs" in problem for problem in artifacts.verify(following, kept))


def test_an_update_reads_none_of_the_files_it_links(tmp_path: Path, hashing_embedder,  # type: ignore[no-untyped-def]
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An update in a new process (nothing verified in it yet) builds on the current generation without reading
    the segment files it links into the next one; check reads every file."""
    import os

    from citesum.index.check import check_index

    index = Index.create(tmp_path / "ix", SETTINGS)
    index.update(_docs(*[(f"d{i}", f"Report {i} on reservoir levels.") for i in range(12)]), embedder=hashing_embedder)
    first = tmp_path / "ix" / f"gen-{index.generation}"
    built_on = {file.stat().st_ino for file in first.rglob("*") if file.is_file()}
    monkeypatch.setattr(artifacts, "_verified", set())
    reads: list[int] = []
    digest = artifacts.file_digest
    monkeypatch.setattr(artifacts, "file_digest", lambda path, **kw: reads.append(os.stat(path).st_ino)
                        or digest(path, **kw))
    Index.open(tmp_path / "ix").update(_docs(("n", "Reservoir rationing ends.")), embedder=hashing_embedder)
    latest = tmp_path / "ix" / f"gen-{Index.open(tmp_path / 'ix').generation}"
    linked = {file.stat().st_ino for file in latest.rglob("*") if file.is_file()} & built_on
    assert len(linked) >= 5 and not set(reads) & built_on  # the build's segment: linked, none of it read
    reads.clear()
    assert check_index(tmp_path / "ix").ok and linked <= set(reads)  # check reads them all


def test_a_stream_of_documents_is_indexed_a_batch_at_a_time(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder) -> None:
    """update_from takes documents as they come, an update per batch of about segment_units units' worth of text:
    the first batches are committed before the last documents are even read, and the index equals one written
    at once. The stale documents go with the last batch."""
    texts = [f"Report {i} on reservoir levels; rationing {i % 4} continues in district {i}. " * 4 for i in range(30)]
    streamed, whole = Index.create(tmp_path / "streamed", SETTINGS), Index.create(tmp_path / "whole", SETTINGS)
    for index in (streamed, whole):
        index.update(_docs(("old", "An old report on tram lines."), ("kept", "A kept note.")),
                     embedder=hashing_embedder)
    streamed.set_segment_units(10)  # 10 x 100 tokens x 4 characters a batch: about 13 of these documents
    committed_when_read = []

    def stream():  # type: ignore[no-untyped-def]
        for i, text in enumerate(texts):
            committed_when_read.append(Index.open(tmp_path / "streamed").generation)
            yield Document(id=f"d{i}", title=f"d{i}", text=text)

    asked = []
    stats = streamed.update_from(stream(), stale=lambda seen: asked.append(set(seen)) or ["old"],
                                 embedder=hashing_embedder)
    # the last documents were read after the first batches were written
    assert committed_when_read[0] == 1 and committed_when_read[-1] > 2
    assert asked == [{f"d{i}" for i in range(30)}]  # asked once, with every id, after the last document
    assert (stats.added, stats.deleted, stats.passages_embedded) == (30, 1, 30) and stats.generation > 3
    whole.update(_docs(*[(f"d{i}", t) for i, t in enumerate(texts)]), delete=["old"], embedder=hashing_embedder)
    assert [p.text for p in streamed.passages] == [p.text for p in whole.passages]
    np.testing.assert_array_equal(np.array(streamed.vectors), np.array(whole.vectors))
    for query in ("reservoir rationing 3", "district 27", "kept note"):
        np.testing.assert_array_equal(streamed.lexical.scores(query), whole.lexical.scores(query))
    # run again: nothing changed, one update that writes nothing
    again = streamed.update_from(stream(), embedder=hashing_embedder)
    assert (again.unchanged, again.added, again.generation) == (30, 0, stats.generation)


def test_a_stream_interrupted_after_a_batch_keeps_it_and_says_so(  # type: ignore[no-untyped-def]
        tmp_path: Path, hashing_embedder) -> None:
    index = Index.create(tmp_path / "ix", SETTINGS)
    index.set_segment_units(1)  # about 1,024 characters a batch: each of these documents is a batch of its own
    documents = [Document(id=f"d{i}", title="", text=f"Document {i}. " + "words " * 200) for i in range(4)]
    with pytest.raises(ConfigError, match=r"more than once in one update: d1$"):  # a list: refused before writing
        index.update_from([*documents[:2], documents[1], documents[3]], embedder=hashing_embedder)
    assert not list(index.documents())
    with pytest.raises(ConfigError, match=r"more than once in one update: d1; the batches before wrote 2 document\(s\) "
                                          r"\(generation 2\); run again, they are unchanged"):
        index.update_from(iter([*documents[:2], documents[1], documents[3]]), embedder=hashing_embedder)
    assert sorted(d.id for d in index.documents()) == ["d0", "d1"]

    class FailingOnThird(type(hashing_embedder)):  # type: ignore[misc]
        calls = 0

        def encode_documents(self, texts):  # type: ignore[no-untyped-def]
            type(self).calls += 1
            if type(self).calls == 2:
                raise IndexStoreError("embedding server answered 503")
            return super().encode_documents(texts)

    with pytest.raises(IndexStoreError, match=r"503; the batches before wrote 1 document\(s\) \(generation 3\)"):
        index.update_from(documents, embedder=FailingOnThird())  # d0, d1 unchanged, d2 written, d3 fails
    hashing_embedder.embedded_texts.clear()
    stats = index.update_from(documents, embedder=hashing_embedder)
    # only d3 is embedded (its units)
    assert (stats.unchanged, stats.added) == (3, 1) and hashing_embedder.embedded_texts[0].startswith("Document 3.")
    assert stats.passages_embedded == len(hashing_embedder.embedded_texts) == len(index.unit_documents[0]) // 4


@pytest.mark.parametrize("row_ids", [np.arange(5, 15), np.array([5, 6, 7, 9, 10, 14]), np.array([3]),
                                     np.zeros(0, dtype=np.int64), np.array([5, 9, 30, 31]),
                                     np.array([5, 6, 8, 9, 12, 13, 14])])
@pytest.mark.parametrize("asked_again", [False, True])
def test_positions_among_rowids_consecutive_or_not(row_ids: np.ndarray, asked_again: bool) -> None:
    """A search's rowids found at their positions (consecutive rowids by offset, others by binary search, or by a
    table when the same rowids are asked again and fill a quarter of their span); those the generation lacks,
    below, between or above its rowids, marked unknown."""
    from citesum.index.search_store import RowPositions, positions_among

    found = np.array([14, 5, 2, 8, 9, 20, 15, 4, 7, 13, 31, 32, 30], dtype=np.int64)
    ask = RowPositions(row_ids) if asked_again else functools.partial(positions_among, row_ids)
    if asked_again:
        ask(found[::-1])  # the first question makes the table the next reads
        # a table where the rowids have gaps and fill at least a quarter of their span
        span = int(np.ptp(row_ids)) + 1 if len(row_ids) else 0
        assert (ask._table is not None) == (len(row_ids) < span <= 4 * len(row_ids))
    positions, known = ask(found)
    at = {int(rowid): position for position, rowid in enumerate(row_ids.tolist())}
    assert known.tolist() == [int(rowid) in at for rowid in found]
    assert positions[known].tolist() == [at[int(rowid)] for rowid in found[known]]
    assert ((positions >= 0) & (positions <= len(row_ids))).all()  # in range, for the caller's masks
