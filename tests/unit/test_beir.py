from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.datasets import Dataset, Query, load_dataset
from citesum.datasets.beir import load_beir, write_beir
from citesum.errors import ConfigError, IngestError
from citesum.evaluate.retrieval import beir_scores, evaluate_ranker
from citesum.types import Document

TOPICS = {
    "water": "The Lakemont reservoir fell to a third of its capacity after a dry summer; water use is rationed.",
    "bus": "Bus fares rise by ten cents in March while students ride the city buses free of charge.",
    "school": "The school board approved a new science building and hired twelve chemistry teachers.",
    "park": "The riverside park reopens with a playground, picnic tables and a bicycle path along the water.",
    "library": "The public library extends its opening hours and lends laptops to students for the term.",
    "market": "The farmers market moves to the town square on Saturdays, with forty stalls of local produce.",
}


def _dataset() -> Dataset:
    documents = [Document(id=name, title=name.title(), text=text, metadata={"url": f"https://example.org/{name}"})
                 for name, text in TOPICS.items()]
    queries = [Query(id="q1", text="reservoir water rationing", relevance={"water": 2, "park": 1}),
               Query(id="q2", text="bus fares for students", relevance={"bus": 1, "library": 0}),
               Query(id="q3", text="farmers market stalls", relevance={"market": 1, "gone": 1})]
    return Dataset("small", documents, queries)


def test_a_dataset_written_as_beir_reads_back_the_same(tmp_path: Path) -> None:
    folder = write_beir(_dataset(), tmp_path / "small")
    assert (folder / "qrels" / "test.tsv").read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"
    loaded = load_beir(folder)
    assert loaded.name == "beir:small:test"
    assert [(d.id, d.title, d.text, dict(d.metadata)) for d in loaded.documents] == \
        [(d.id, d.title, d.text, dict(d.metadata)) for d in _dataset().documents]
    assert [(q.id, q.text, dict(q.relevance)) for q in loaded.queries] == \
        [(q.id, q.text, dict(q.relevance)) for q in _dataset().queries]  # "gone" is judged, though not in the corpus


def test_splits_trec_qrels_and_a_corpus_without_qrels(tmp_path: Path) -> None:
    folder = write_beir(_dataset(), tmp_path / "small", split="dev")
    assert len(load_beir(folder).queries) == 3  # the only split
    both = write_beir(_dataset(), tmp_path / "both", split="dev",
                      other_splits={"test": [Query(id="q4", text="library laptops", relevance={"library": 1})]})
    assert [q.id for q in load_beir(both).queries] == ["q4"] and len(load_beir(both, "dev").queries) == 3
    (folder / "qrels" / "train.tsv").write_text("q1 0 bus 1\nq1\t0\tschool\t2\n".replace(" ", "\t"))
    with pytest.raises(IngestError, match=r"no qrels/test.tsv; it has qrels/dev.tsv, qrels/train.tsv"):
        load_beir(folder)
    train = load_beir(folder, "train")  # TREC's four columns
    assert [(q.id, dict(q.relevance)) for q in train.queries] == [("q1", {"bus": 1, "school": 2})]
    for qrels in (folder / "qrels").glob("*.tsv"):
        qrels.unlink()
    corpus_only = load_beir(folder)
    assert len(corpus_only.documents) == 6 and corpus_only.queries == []


@pytest.mark.parametrize("damage, message", [
    (("corpus.jsonl", '{"_id": "a", "text": "fine"}\n{not json}\n'), r"corpus.jsonl:2: not JSON"),
    (("corpus.jsonl", '{"title": "no id"}\n'), r"corpus.jsonl:1: a line needs the keys _id"),
    (("queries.jsonl", '{"_id": "q1"}\n'), r"queries.jsonl:1: a line needs the keys _id, text"),
    (("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\twater\thigh\n"), r"test.tsv:2: expected query-id"),
    (("qrels/test.tsv", "q9\twater\t1\n"), r"query 'q9' is not in queries.jsonl"),
    (("corpus.jsonl", b"\xff\xfe binary"), r"corpus.jsonl: unreadable"),
])
def test_a_damaged_beir_folder_is_refused_naming_the_file_and_line(tmp_path: Path, damage, message) -> None:  # type: ignore[no-untyped-def]
    folder = write_beir(_dataset(), tmp_path / "small")
    name, content = damage
    (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(IngestError, match=message):
        load_beir(folder)
    with pytest.raises(IngestError, match="not a BEIR folder"):
        load_beir(tmp_path)


def test_beir_scores_are_trec_eval_s_linear_ndcg_and_recall() -> None:
    relevance = {"b": 2, "c": 1, "z": 1, "n": 0}
    scores = beir_scores(["a", "b", "c", "n"], relevance)
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert scores["ndcg@10"] == pytest.approx(dcg / ideal) and scores["ndcg@100"] == pytest.approx(dcg / ideal)
    assert scores["recall@100"] == pytest.approx(2 / 3)  # "z" is judged relevant and never ranked
    ranking = [f"x{i}" for i in range(10)] + ["b"]  # found at rank 11: in NDCG@100, not NDCG@10
    late = beir_scores(ranking, relevance)
    assert late["ndcg@10"] == 0 and late["ndcg@100"] == pytest.approx(2 / math.log2(12) / ideal)


def test_evaluate_ranker_averages_the_queries_and_counts_documents_it_cannot_find() -> None:
    queries = _dataset().queries
    perfect = {q.text: sorted(q.relevance, key=lambda d: -q.relevance[d]) for q in queries}
    report = evaluate_ranker("perfect", lambda text, k: perfect[text][:k], queries, set(TOPICS))
    assert report.per_query["q1"]["ndcg@10"] == pytest.approx(1.0)
    assert report.per_query["q3"]["recall@100"] == pytest.approx(1.0)  # the ranker "found" gone: it was told
    assert report.judged_documents_missing == 1 and report.queries == 3
    assert report.means["ndcg@10"] == pytest.approx(sum(s["ndcg@10"] for s in report.per_query.values()) / 3)
    with pytest.raises(ConfigError, match="no judged queries"):
        evaluate_ranker("none", lambda text, k: [], [], set())


def test_indexing_reads_the_corpus_alone(tmp_path: Path) -> None:
    dataset = _dataset()
    folder = write_beir(dataset, tmp_path / "small", split="dev", other_splits={"train": dataset.queries[:1]})
    (folder / "queries.jsonl").unlink()  # neither the splits (no test among two) nor the queries are read
    result = CliRunner().invoke(main, ["index", str(folder), "--dataset", "beir", "--index", str(tmp_path / "ix")])
    assert result.exit_code == 0, result.stderr
    assert len(load_dataset("beir", str(folder)).documents) == 6


def test_an_empty_judged_document_counts_as_one_no_ranker_can_find(tmp_path: Path) -> None:
    dataset = _dataset()
    empty = Dataset("small", [*dataset.documents, Document(id="blank", title="Blank", text="")],
                    [Query(id="q1", text="reservoir water", relevance={"water": 1, "blank": 1})])
    folder = write_beir(empty, tmp_path / "small")
    index = str(tmp_path / "ix")
    assert CliRunner().invoke(main, ["index", str(folder), "--dataset", "beir", "--index", index]).exit_code == 0
    result = CliRunner().invoke(main, ["eval", "retrieval", "--beir", str(folder), "--index", index, "--retriever",
                                       "bm25", "--json"])
    assert result.exit_code == 0 and "1 judged relevant document(s)" in result.stderr
    assert json.loads(result.stdout)["reports"][0]["judged_documents_missing"] == 1


def test_index_a_beir_folder_then_evaluate_retrievers_and_a_summary_index(tmp_path: Path) -> None:
    folder = write_beir(_dataset(), tmp_path / "small")
    index = str(tmp_path / "ix")
    runner = CliRunner()
    assert runner.invoke(main, ["index", str(folder), "--dataset", "beir", "--index", index]).exit_code == 0
    summaries = str(tmp_path / "sx")
    assert runner.invoke(main, ["summary-index", "--index", index, "--out", summaries]).exit_code == 0
    result = runner.invoke(main, ["eval", "retrieval", "--beir", str(folder), "--index", index, "--retriever", "bm25",
                                  "--retriever", "random", "--summary-index", summaries, "--json"])
    assert result.exit_code == 0, result.stderr
    assert "1 judged relevant document(s) of beir:small:test are not in" in result.stderr
    reports = {r["ranker"]: r for r in json.loads(result.stdout)["reports"]}
    assert set(reports) == {"bm25", "random", "summary-rag:bm25", "summary-rag:random"}
    # every query names its topic: BM25 puts the judged document first, and q3 can reach half its relevance
    assert reports["bm25"]["per_query"]["q2"]["ndcg@10"] == pytest.approx(1.0)
    assert reports["bm25"]["per_query"]["q3"]["recall@100"] == pytest.approx(0.5)
    assert reports["bm25"]["means"]["ndcg@10"] > reports["random"]["means"]["ndcg@10"]
    table = runner.invoke(main, ["eval", "retrieval", "--beir", str(folder), "--index", index, "--retriever", "bm25"])
    assert table.exit_code == 0 and "| bm25 |" in table.stdout and "beir:small:test, 3 queries" in table.stdout
    wrong = runner.invoke(main, ["eval", "retrieval", "--beir", str(folder), "--index", index, "--split", "dev"])
    assert wrong.exit_code == 1 and "no qrels/dev.tsv; it has qrels/test.tsv" in wrong.stderr
