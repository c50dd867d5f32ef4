"""LightPAL's context score with a real LM: the packaged SmolLM2-135M GGUF run in-process by llama-cpp-python."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from citesum.index.store import Index, IndexSettings
from citesum.retrieve.lightpal import LanguageModelContextScorer, PassageGraph, build_passage_graph
from citesum.types import Document

STORY = ("Mara Ellison kept the lighthouse on Gull Island for thirty winters. Every night she climbed the "
         "ninety-one steps, trimmed the wick and wrote the weather in a green ledger.")
CONTINUATION = ("When the storm of 1911 broke the lens, Mara Ellison climbed the ninety-one steps with a lantern "
                "and kept the light burning from the gallery until dawn.")
UNRELATED = ("Quarterly revenue from cloud subscriptions rose, while hardware margins narrowed because of "
             "component shortages in the second half of the fiscal year.")


def test_the_lm_scores_a_continuation_above_an_unrelated_text(packaged_smollm2: str) -> None:
    scorer = LanguageModelContextScorer(packaged_smollm2, max_tokens=64)
    scores = scorer.score(STORY, [UNRELATED, CONTINUATION, "", STORY])
    assert scores[1] > scores[0]  # names and events of the context make the continuation likelier
    assert scores[3] > scores[1]  # a repeat of the context is the likeliest of all
    assert scores[2] == -np.inf  # an empty candidate gets no edge
    # the KV cache of the context is reused across candidates: the same candidate scores the same again
    again = scorer.score(STORY, [CONTINUATION, UNRELATED])
    assert again[0] == np.float32(scores[1]) and again[1] == np.float32(scores[0])
    assert scorer.name.startswith("lm:") and scorer.name.endswith(".gguf")


def test_graph_built_with_the_lm_is_saved_and_loaded(tmp_path: Path, packaged_smollm2: str) -> None:
    index = Index.create(tmp_path / "ix", IndexSettings(unit="document"))
    index.add([Document(id="a", title="", text=STORY), Document(id="b", title="", text=CONTINUATION),
               Document(id="c", title="", text=UNRELATED)])
    graph = build_passage_graph(index, LanguageModelContextScorer(packaged_smollm2, max_tokens=48),
                                candidates=2, edges=1)
    graph.save(index.path)
    loaded = PassageGraph.load(index)
    assert loaded.scorer.startswith("lm:") and loaded.neighbors.shape == (3, 1)
    owners = [p.document_id for p in index.passages]
    assert owners[int(loaded.neighbors[owners.index("a"), 0])] == "b"  # the story links to its continuation


def test_graph_command_with_the_lm_scorer(tmp_path: Path, packaged_smollm2: str) -> None:
    from click.testing import CliRunner

    from citesum.cli import main

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in (("story", STORY), ("continuation", CONTINUATION), ("unrelated", UNRELATED)):
        (corpus / f"{name}.txt").write_text(text)
    index = str(tmp_path / "ix")
    runner = CliRunner()
    assert runner.invoke(main, ["index", str(corpus), "--index", index, "--unit", "document"]).exit_code == 0
    result = runner.invoke(main, ["graph", "--index", index, "--scorer", "lm", "--model", packaged_smollm2,
                                  "--candidates", "2", "--edges", "1", "--lm-tokens", "48"])
    assert result.exit_code == 0, result.stderr
    assert "scorer lm:" in result.stdout
    result = runner.invoke(main, ["search", "lighthouse keeper", "--index", index, "--retriever", "lightpal",
                                  "-k", "3", "--json"])
    assert result.exit_code == 0 and len(json.loads(result.stdout)["hits"]) == 3
