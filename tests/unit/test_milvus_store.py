"""The Milvus search store, on milvus-lite (in-process, offline): the same rankings as the local store, updates,
generations kept whole through failed writes, and clear errors for an unreachable server or a foreign
collection."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from citesum.demo.haystack import generate_haystack
from citesum.errors import ConfigError, IndexMismatchError, IndexStoreError
from citesum.index.check import check_index, repair_index
from citesum.index.store import Index
from citesum.retrieve import get_retriever

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from citesum.index import milvus as milvus_store  # noqa: E402

DOCUMENTS = generate_haystack(documents=90, seed=5).documents
QUERIES = ["What is happening with the city's water supply?", "How is public transit changing?",
           "median rent two-bedroom", "desalination plant cost", "bus drivers strike in May"]


@pytest.fixture(scope="module", autouse=True)
def _servers_stopped_after_the_module() -> Iterator[None]:
    """Each milvus-lite file opened here runs a server in this process, with threads that stay after its tests
    and slowed the tests after them (the linear-time checks most)."""
    yield
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_all()


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Index, Index]:
    """The same documents in the local store and in milvus-lite."""
    folder = tmp_path_factory.mktemp("stores")
    local = Index.create(folder / "local")
    local.add(DOCUMENTS)
    milvus = Index.create(folder / "milvus", store="milvus")
    milvus.add(DOCUMENTS)
    return local, milvus


def _tie_aware_overlap(local: Index, milvus: Index, retriever: str, query: str, k: int = 10) -> float:
    """Share of the Milvus top ``k`` that the local store ranks in its top ``k`` too, a unit tied with the local
    ``k``-th score counting as in it (the generated haystack repeats sentences, and ties may fall either way)."""
    local_scores = get_retriever(retriever, local).scores(query)
    threshold = np.sort(local_scores)[-k]
    found = get_retriever(retriever, milvus).retrieve(query, k)
    position = {p.id: i for i, p in enumerate(local.passages)}
    return sum(local_scores[position[hit.passage.id]] >= threshold - 1e-6 for hit in found) / k


@pytest.mark.parametrize("retriever", ["bm25", "dense"])
def test_milvus_ranks_like_the_local_store(pair: tuple[Index, Index], retriever: str) -> None:
    local, milvus = pair
    assert milvus.store.spec == "milvus" and local.store.spec == "local"
    assert [p.id for p in milvus.passages] == [p.id for p in local.passages]
    overlaps = [_tie_aware_overlap(local, milvus, retriever, query) for query in QUERIES]
    assert min(overlaps) >= 0.9, overlaps


def test_a_hybrid_query_is_fused_by_milvus_and_agrees_with_the_local_fusion(pair: tuple[Index, Index]) -> None:
    local, milvus = pair
    hybrid = get_retriever("hybrid", milvus)
    assert hybrid.name == "hybrid(bm25+dense)"  # Milvus's RRF ranker, one round trip
    for query in QUERIES:
        ours = {h.passage.document_id for h in get_retriever("hybrid:bm25+dense", local).retrieve(query, 10)}
        theirs = {h.passage.document_id for h in hybrid.retrieve(query, 10)}
        assert len(ours & theirs) >= 6, (query, ours, theirs)
    ranked = hybrid.rank_documents(QUERIES[0], 5)
    assert len(ranked) == 5 and all(score > 0 for _, score in ranked)


def test_what_the_milvus_store_cannot_do_is_said(pair: tuple[Index, Index]) -> None:
    _, milvus = pair
    with pytest.raises(ConfigError, match="bm25-rm3"):
        get_retriever("bm25-rm3", milvus)
    with pytest.raises(ConfigError, match="local store"):
        milvus.set_ann_min_units(10)
    # the other retrievers read the vectors from the database when they need them
    assert get_retriever("dense-prf", milvus).retrieve(QUERIES[1], 3)
    assert get_retriever("hybrid:bm25+dense+keywords", milvus).retrieve(QUERIES[1], 3)
    assert np.asarray(milvus.vectors).shape == (len(milvus), np.asarray(pair[0].vectors).shape[1])


def test_rocchio_over_milvus_searches_the_server_again_for_the_expanded_query(
        pair: tuple[Index, Index], monkeypatch: pytest.MonkeyPatch) -> None:
    """The server holds the vectors: Rocchio reads its 10 feedback units' from the database and asks the server
    for the expanded query, not the 1,000 candidates' vectors to score them again."""
    from citesum.index.milvus import MilvusSearch, StoredVectors

    _, milvus = pair
    searched: list[int] = []
    rows_read: list[int] = []
    nearest, read = MilvusSearch.nearest, StoredVectors.__getitem__

    def counted_search(self: MilvusSearch, query_vector: np.ndarray, count: int | None = None):  # type: ignore[no-untyped-def]
        searched.append(1)
        return nearest(self, query_vector, count)

    def counted_rows(self: StoredVectors, positions):  # type: ignore[no-untyped-def]
        rows_read.append(int(np.size(positions)))
        return read(self, positions)

    monkeypatch.setattr(MilvusSearch, "nearest", counted_search)
    monkeypatch.setattr(StoredVectors, "__getitem__", counted_rows)
    hits = get_retriever("dense-prf", milvus).retrieve(QUERIES[1], 5)
    assert len(hits) == 5 and searched == [1, 1] and rows_read == [10]


def _documents_found(index: Index, query: str, k: int = 200) -> set[str]:
    return {hit.passage.document_id for hit in get_retriever("bm25", index).retrieve(query, k) if hit.score > 0}


def test_updates_and_deletions_reach_the_collection(tmp_path: Path) -> None:
    index = Index.create(tmp_path / "ix", store="milvus")
    index.add(DOCUMENTS[:40])
    gone, changed = DOCUMENTS[0], DOCUMENTS[1]
    assert gone.id in _documents_found(index, gone.text)
    stats = index.update(upsert=[dataclasses.replace(changed, text=changed.text + " Zanzibar flamingo parade.")]
                         + DOCUMENTS[40:50],
                         delete=[gone.id])
    assert (stats.added, stats.updated, stats.deleted) == (10, 1, 1)
    assert _documents_found(index, "zanzibar flamingo") == {changed.id}
    assert gone.id not in _documents_found(index, gone.text)
    dense = {h.passage.document_id for h in get_retriever("dense", index).retrieve(gone.text, 50)}
    assert gone.id not in dense
    report = check_index(index.path)
    assert report.ok, report.problems
    assert report.counts["passages"] == len(index)


def test_a_write_that_fails_before_its_commit_leaves_the_previous_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = Index.create(tmp_path / "ix", store="milvus")
    index.add(DOCUMENTS[:30])
    before = (index.generation, len(index), _documents_found(index, DOCUMENTS[0].text))
    real_write = milvus_store.MilvusStore.write

    def write_then_fail(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        real_write(self, *args, **kwargs)  # the new rows are in the collection ...
        raise OSError("disk gone")  # ... and the transaction never commits

    monkeypatch.setattr(milvus_store.MilvusStore, "write", write_then_fail)
    with pytest.raises(IndexStoreError):
        index.update(upsert=DOCUMENTS[30:45], delete=[DOCUMENTS[0].id])
    monkeypatch.undo()
    reopened = Index.open(index.path)
    assert (reopened.generation, len(reopened), _documents_found(reopened, DOCUMENTS[0].text)) == before
    assert check_index(index.path).ok  # the rows of the failed write were taken out again
    reopened.update(upsert=DOCUMENTS[30:35])
    report = check_index(index.path)
    assert report.ok and report.counts["documents"] == 35


def test_deletions_a_writer_did_not_live_to_make_are_made_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    index = Index.create(tmp_path / "ix", store="milvus")
    index.add(DOCUMENTS[:30])

    def unreachable(self, row_ids):  # type: ignore[no-untyped-def]
        raise IndexStoreError("Milvus at there failed to delete removed passages: connection reset")

    monkeypatch.setattr(milvus_store.MilvusStore, "_delete", unreachable)
    with caplog.at_level(logging.WARNING):
        index.delete([DOCUMENTS[2].id])  # committed; the rows stay in the collection
    assert "the next write deletes them" in caplog.text
    monkeypatch.undo()
    assert DOCUMENTS[2].id not in _documents_found(index, DOCUMENTS[2].text)  # readers drop them
    assert check_index(index.path).ok  # the recorded deletions account for the extra rows
    index.add(DOCUMENTS[30:31])
    manifest = index.info()
    assert "milvus_pending_delete" not in manifest
    assert check_index(index.path).ok


def test_an_unreachable_server_is_a_clear_error_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(IndexStoreError, match=r"cannot reach Milvus at http://127\.0\.0\.1:9"):
        Index.create(tmp_path / "ix", store="milvus:http://127.0.0.1:9")
    assert not (tmp_path / "ix").exists()
    from citesum.cli import main

    source = tmp_path / "docs"
    source.mkdir()
    (source / "a.txt").write_text("Rents rose again this spring.")
    result = CliRunner().invoke(main, ["index", str(source), "--index", str(tmp_path / "ix"),
                                       "--store", "milvus:http://127.0.0.1:9"])
    assert result.exit_code != 0 and "cannot reach Milvus" in result.output
    assert "Traceback" not in result.output
    result = CliRunner().invoke(main, ["index", str(source), "--index", str(tmp_path / "ix"), "--store", "faiss"])
    assert result.exit_code != 0 and "unknown store 'faiss'" in result.output


def test_a_server_without_the_bm25_function_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pymilvus

    from citesum.index.milvus import server_version

    assert server_version("v2.5.4") == (2, 5, 4) and server_version("2.6.0-gpu") == (2, 6, 0)
    assert server_version("v2.4.15") < (2, 5) and server_version("unknown") < (2, 5)

    class MilvusOf24:
        """A reachable server that predates full-text search (Milvus 2.4 has hybrid search, not BM25)."""

        def __init__(self, uri: str, **options: object) -> None:
            self.uri = uri

        def get_server_version(self) -> str:
            return "v2.4.15"

    monkeypatch.setattr(pymilvus, "MilvusClient", MilvusOf24)
    with pytest.raises(IndexStoreError, match=r"version v2\.4\.15; citesum's Milvus store needs 2\.5 or later"):
        Index.create(tmp_path / "ix", store="milvus:http://milvus.internal:19530")
    assert not (tmp_path / "ix").exists()


def test_a_collection_of_another_schema_is_refused(tmp_path: Path) -> None:
    import pymilvus

    lite = tmp_path / "shared.db"
    index = Index.create(tmp_path / "ix", store=f"milvus:{lite}")
    collection = index.info()["milvus_collection"]
    client = pymilvus.MilvusClient(str(lite))
    client.create_collection(collection, dimension=8)  # someone else's collection, under the same name
    client.close()
    with pytest.raises(IndexMismatchError, match="another schema"):
        index.add(DOCUMENTS[:3])
    assert len(Index.open(index.path)) == 0  # nothing was committed


def test_a_lost_collection_is_found_by_check_and_written_again_by_repair(tmp_path: Path) -> None:
    index = Index.create(tmp_path / "ix", store="milvus")
    index.add(DOCUMENTS[:20])
    expected = [h.passage.id for h in get_retriever("bm25", index).retrieve(QUERIES[0], 5)]
    index.store.client().drop_collection(index.info()["milvus_collection"])
    report = check_index(index.path)
    assert not report.ok and "is missing" in report.problems[0]
    assert repair_index(index.path).ok
    assert [h.passage.id for h in get_retriever("bm25", Index.open(index.path)).retrieve(QUERIES[0], 5)] == expected


def _ranked(index: Index, retriever: str) -> list[str]:
    return [h.passage.id for h in get_retriever(retriever, index).retrieve(QUERIES[0], 5)]


def test_a_released_collection_is_loaded_for_the_search(tmp_path: Path) -> None:
    """milvus-lite opens an indexed collection released in every new process, and anyone may release a server's:
    a store loads it before its first search, and again when a search finds it released."""
    index = Index.create(tmp_path / "ix", store="milvus")
    index.add(DOCUMENTS[:20])
    expected = {retriever: _ranked(index, retriever) for retriever in ("bm25", "dense", "hybrid")}
    collection = str(index.info()["milvus_collection"])
    index.store.client().release_collection(collection)
    assert _ranked(index, "bm25") == expected["bm25"]  # this store had loaded it: it finds it released, loads it
    index.store.client().release_collection(collection)
    reopened = Index.open(index.path)  # a new store, as in a new process: it loads before its first search
    assert {retriever: _ranked(reopened, retriever) for retriever in expected} == expected
    assert check_index(index.path).ok


def test_check_and_health_report_a_collection_that_cannot_answer_a_search(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The collection is there with every row, but cannot be loaded: check and /health ask it a search, and say
    why it fails (naming the milvus-lite file inside the index folder by its name, not by its server path)."""
    import pymilvus
    from fastapi.testclient import TestClient

    from citesum.service.app import create_app
    from citesum.service.config import ServiceConfig

    index = Index.create(tmp_path / "ix", store="milvus")
    index.add(DOCUMENTS[:10])
    assert check_index(index.path).ok
    index.store.client().release_collection(str(index.info()["milvus_collection"]))

    def cannot_load(self: object, collection_name: str, **options: object) -> None:
        raise pymilvus.MilvusException(message="not enough memory to load the collection")

    monkeypatch.setattr(pymilvus.MilvusClient, "load_collection", cannot_load)
    report = check_index(index.path)
    assert not report.ok and "not enough memory" in report.problems[0], report.problems
    assert "Milvus at milvus.db failed to load the collection" in report.problems[0]
    with TestClient(create_app(index.path, ServiceConfig(worker_kind="thread")),
                    base_url="http://127.0.0.1:8000") as client:
        health = client.get("/health")
        assert health.status_code == 503 and "not enough memory" in health.json()["detail"], health.text
        assert str(tmp_path) not in health.text


def test_the_cli_keeps_the_store_in_the_index_folder(tmp_path: Path) -> None:
    from citesum.cli import main

    source = tmp_path / "docs"
    source.mkdir()
    for document in DOCUMENTS[:12]:
        (source / f"{document.id}.txt").write_text(document.text)
    folder = tmp_path / "ix"
    runner = CliRunner()
    result = runner.invoke(main, ["index", str(source), "--index", str(folder), "--store", "milvus",
                                  "--milvus-index", "IVF_FLAT"])
    assert result.exit_code == 0, result.output
    manifest = json.loads(runner.invoke(main, ["info", "--index", str(folder), "--json"]).output)
    assert (manifest["store"], manifest["milvus_dense_index"]) == ("milvus", "IVF_FLAT")
    # every other command finds the store from --index alone
    result = runner.invoke(main, ["search", "--index", str(folder), "--json", "-k", "3", QUERIES[0]])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)["hits"]) == 3
    result = runner.invoke(main, ["index", str(source), "--index", str(folder), "--store", "local"])
    assert result.exit_code != 0 and "keeps its searches in milvus" in result.output


def test_rows_no_committed_generation_has_never_take_a_readers_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = Index.create(tmp_path / "ix", store="milvus")
    index.add(DOCUMENTS[:30])
    query = DOCUMENTS[0].text
    best = get_retriever("bm25", index).retrieve(query, 1)[0].passage
    dense_expected = [h.passage.id for h in get_retriever("dense", index).retrieve(query, 10)]
    # a writer killed before its commit left 30 copies of the best unit under rowids above the generation's
    last = int(index.row_ids[-1])
    position = [p.id for p in index.passages].index(best.id)
    copies = [{"id": last + n, "terms": milvus_store.analysed([best.text])[0],
               "dense": np.asarray(index.vectors[position]).tolist()} for n in range(1, 31)]
    collection = index.info()["milvus_collection"]
    index.store.client().upsert(collection, copies)
    index.store.client().flush(collection)
    monkeypatch.setattr(milvus_store, "SEARCH_DEPTH", 20)  # fewer places than copies
    monkeypatch.setattr(milvus_store, "CANDIDATES", 20)
    hits = get_retriever("bm25", index).retrieve(query, 10)
    assert hits[0].passage.id == best.id and all(hit.score > 0 for hit in hits)  # ten of the generation's
    assert [h.passage.id for h in get_retriever("dense", index).retrieve(query, 10)] == dense_expected
    assert not check_index(index.path).ok  # 30 rows the database does not have
    index.add(DOCUMENTS[30:31])  # the next writer takes them out before it writes
    assert check_index(index.path).ok


def test_a_repair_that_fails_leaves_the_current_collection_searchable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = Index.create(tmp_path / "ix", store="milvus")
    index.add(DOCUMENTS[:20])
    expected = [h.passage.id for h in get_retriever("bm25", index).retrieve(QUERIES[0], 5)]
    real_analysed = milvus_store.analysed
    calls = []

    def fails_half_way(texts):  # type: ignore[no-untyped-def]
        calls.append(len(texts))
        if len(calls) > 1:
            raise OSError("connection reset")
        return real_analysed(texts)

    monkeypatch.setattr(milvus_store, "UPSERT_BATCH", 10)
    monkeypatch.setattr(milvus_store, "analysed", fails_half_way)
    with pytest.raises(IndexStoreError, match="connection reset"):
        index.rewrite_generation()
    monkeypatch.undo()
    reopened = Index.open(index.path)
    assert [h.passage.id for h in get_retriever("bm25", reopened).retrieve(QUERIES[0], 5)] == expected
    assert check_index(index.path).ok
    assert repair_index(index.path).ok  # a repair that completes moves to its new collection
    again = Index.open(index.path)
    assert again.info()["milvus_collection"].endswith(f"__{again.generation}")
    assert [h.passage.id for h in get_retriever("bm25", again).retrieve(QUERIES[0], 5)] == expected


def test_summarize_serve_and_eval_read_a_milvus_index_as_a_local_one(tmp_path: Path) -> None:
    """summarize, serve and eval retrieval find the Milvus store from --index alone, as search does: a summary whose
    first bullet states an insight and cites documents that state it, evidence spans that are the documents' own
    text (CLI and service), and BEIR scores within a point of the same documents in the local store."""
    from fastapi.testclient import TestClient

    from citesum.cli import main
    from citesum.datasets import Dataset, Query
    from citesum.datasets.beir import write_beir
    from citesum.service.app import create_app
    from citesum.service.config import ServiceConfig

    haystack = generate_haystack(documents=90, seed=5)
    subtopics = sorted(haystack.queries)
    queries = [Query(id=s, text=haystack.queries[s], relevance=haystack.relevance(s)) for s in subtopics]
    folder = write_beir(Dataset("hay", haystack.documents, queries), tmp_path / "beir")
    runner = CliRunner()
    indexes = {store: str(tmp_path / store) for store in ("milvus", "local")}
    for store, index in indexes.items():
        result = runner.invoke(main, ["index", str(folder), "--dataset", "beir", "--index", index, "--store", store])
        assert result.exit_code == 0, result.output

    def first_bullet_is_cited_by_its_insight(payload: dict, subtopic: str) -> dict:  # type: ignore[type-arg]
        bullet = payload["bullets"][0]
        insight = haystack.insight_stated(bullet["text"])
        assert insight is not None and insight.startswith(subtopic), bullet["text"]
        assert bullet["citations"] and set(bullet["citations"]) <= set(haystack.gold[insight])
        return bullet

    subtopic = subtopics[0]
    result = runner.invoke(main, ["summarize", haystack.queries[subtopic], "--index", indexes["milvus"], "--json",
                                  "--bullets", "3", "--verify-citations"])
    assert result.exit_code == 0, result.stderr
    bullet = first_bullet_is_cited_by_its_insight(json.loads(result.stdout), subtopic)
    milvus = Index.open(indexes["milvus"])
    for evidence in bullet["evidence"]:
        text = milvus.document(evidence["document_id"]).text
        assert evidence["supported"] and text[evidence["char_start"]:evidence["char_end"]] == evidence["text"]

    with TestClient(create_app(Path(indexes["milvus"]), ServiceConfig(worker_kind="thread")),
                    base_url="http://127.0.0.1:8000") as client:
        assert client.get("/health").json()["documents"] == len(haystack.documents)
        hits = client.post("/search", json={"query": haystack.queries[subtopic], "k": 5}).json()["hits"]
        assert len(hits) == 5 and hits[0]["document_id"] in haystack.relevance(subtopic)
        answer = client.post("/summarize", json={"query": haystack.queries[subtopic], "bullets": 3}).json()
        for evidence in first_bullet_is_cited_by_its_insight(answer, subtopic)["evidence"]:
            document = client.get(f"/documents/{evidence['document_id']}").json()
            assert document["text"][evidence["char_start"]:evidence["char_end"]] == evidence["text"]

    means = {}
    for store, index in indexes.items():
        result = runner.invoke(main, ["eval", "retrieval", "--beir", str(folder), "--index", index,
                                      "--retriever", "bm25", "--retriever", "dense", "--json"])
        assert result.exit_code == 0, result.stderr
        means[store] = {r["ranker"]: r["means"]["ndcg@10"] for r in json.loads(result.stdout)["reports"]}
    assert means["milvus"].keys() == {"bm25", "dense"}
    for ranker, local in means["local"].items():
        assert local > 0.3 and means["milvus"][ranker] == pytest.approx(local, abs=0.01), means
