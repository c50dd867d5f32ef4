"""The BEIR path on real data: ODSum Story written as a BEIR folder (as benchmarks/beir_odsum.py writes it) reads
back as the same dataset, and `citesum eval retrieval` on it scores what the dataset's own index scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.datasets import load_dataset
from citesum.datasets.beir import load_beir, write_beir
from citesum.evaluate.retrieval import evaluate_retrievers
from citesum.index.store import Index, IndexSettings


def test_odsum_story_through_beir_scores_as_the_dataset_itself(tmp_path: Path, shared_data: Path) -> None:
    story = load_dataset("odsum-story", str(shared_data / "odsum" / "story" / "documents_dev.jsonl"))
    folder = write_beir(story, tmp_path / "story", split="dev")
    read = load_beir(folder)
    assert [(d.id, d.title, d.text) for d in read.documents] == [(d.id, d.title, d.text) for d in story.documents]
    assert [(q.id, q.text, dict(q.relevance)) for q in read.queries] == \
        [(q.id, q.text, dict(q.relevance)) for q in story.queries]
    assert len(read.documents) == 238 and len(read.queries) == 125

    direct = Index.create(tmp_path / "direct", IndexSettings.for_unit("document"))
    direct.add(story.documents)
    expected = {r.ranker: r for r in evaluate_retrievers(story.queries, direct, ["bm25", "dense"])}
    runner = CliRunner()
    built = runner.invoke(main, ["index", str(folder), "--dataset", "beir", "--unit", "document",
                                 "--index", str(tmp_path / "ix")])
    assert built.exit_code == 0, built.stderr
    result = runner.invoke(main, ["eval", "retrieval", "--beir", str(folder), "--index", str(tmp_path / "ix"),
                                  "--retriever", "bm25", "--retriever", "dense", "--json"])
    assert result.exit_code == 0, result.stderr
    for report in json.loads(result.stdout)["reports"]:
        assert report["queries"] == 125
        theirs = expected[report["ranker"]].per_query
        assert report["per_query"].keys() == theirs.keys()
        for query_id, scores in report["per_query"].items():
            assert scores == pytest.approx(theirs[query_id])
    assert 0.2 < expected["bm25"].means["ndcg@10"] < 0.9  # questions without their title: a hard pool
