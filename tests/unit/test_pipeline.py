"""One pipeline behind every front end: the Python API answers as the CLI does, and the service offers every
retriever and summarizer the CLI offers (RAPTOR's tree, ReadAgent, Summary RAG), asked through HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.errors import ConfigError

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

QUESTION = "How did household water rates change?"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, haystack: Any) -> Path:
    return haystack.write(tmp_path_factory.mktemp("corpus") / "corpus").resolve()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> tuple[Path, Path]:
    """An index with LightPAL's passage graph, RAPTOR's tree, and its summary index, all built offline (as
    `citesum graph`, `citesum tree` and `citesum summary-index` build them without a model)."""
    from citesum import Index, ingest_paths
    from citesum.raptor import build_tree
    from citesum.retrieve.lightpal import build_passage_graph
    from citesum.summarize.statements import CentralStatements
    from citesum.summary_rag import CentralSentences, build_summary_index

    folder = tmp_path_factory.mktemp("pipeline")
    documents, _ = ingest_paths([corpus], exclude=["gold.json"])
    index = Index.create(folder / "ix")
    index.add(documents)
    build_passage_graph(index).save(index.path)
    build_tree(index, CentralStatements(), levels=1).save(index.path)
    build_summary_index(index, folder / "summaries", CentralSentences())
    return index.path, folder / "summaries"


def test_the_readme_example_answers_as_the_cli_does(built: tuple[Path, Path], corpus: Path) -> None:
    from citesum import Index, Pipeline, ingest_paths

    documents, report = ingest_paths([corpus], exclude=["gold.json"])
    assert len(documents) == len(report.files) - len(report.skipped) > 0
    answer = Pipeline(Index.open(built[0])).summarize(QUESTION)
    assert answer.bullets and not answer.abstained
    for bullet in answer.bullets:
        assert bullet.citations and all(answer.documents[d].text for d in bullet.citations)
        assert any(bullet.text in answer.documents[d].text for d in bullet.citations)  # quoted as written
    printed = CliRunner().invoke(main, ["summarize", QUESTION, "--index", str(built[0]), "--json"])
    assert printed.exit_code == 0, printed.stderr
    cli, api = json.loads(printed.stdout), answer.to_json()
    for timed in (cli, api):
        timed.pop("timings")
    assert cli == api


def test_import_citesum_loads_nothing_heavy() -> None:
    # every command imports the package: its start must not pay for numpy, the index or the embedders
    code = ("import sys, citesum; heavy = sorted(m for m in ('numpy', 'citesum.index.store', 'citesum.pipeline') "
            "if m in sys.modules); print(heavy); assert citesum.Pipeline.__name__ == 'Pipeline'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_options_that_cannot_work_are_refused_before_anything_runs(built: tuple[Path, Path]) -> None:
    from citesum import Pipeline, PipelineOptions

    with pytest.raises(ConfigError, match="needs a model name"):
        Pipeline(built[0], PipelineOptions(summarizer="llm"))
    with pytest.raises(ConfigError, match="unknown summarizer 'gpt'"):
        PipelineOptions(summarizer="gpt")
    with pytest.raises(ConfigError, match="applies to the extractive summarizer"):
        PipelineOptions(summarizer="readagent", relevance_embedder="minilm")
    with pytest.raises(ConfigError, match="unknown order"):
        PipelineOptions(order="random")  # type: ignore[arg-type]


def _client(index: Path, summaries: Path | None = None, llm: Any = None,
            relevance_embedder: str | None = None) -> TestClient:
    from citesum.service.app import create_app
    from citesum.service.config import ServiceConfig

    config = ServiceConfig(worker_kind="thread", summary_index=summaries, relevance_embedder=relevance_embedder)
    return TestClient(create_app(index, config, llm=llm), base_url="http://127.0.0.1:8000")


def test_a_service_answers_with_the_relevance_embedder_it_is_served_with(built: tuple[Path, Path]) -> None:
    # `citesum serve --relevance-embedder minilm` answers as `citesum summarize --relevance-embedder minilm`
    pytest.importorskip("sentence_transformers")  # the minilm extra
    from citesum import Pipeline, PipelineOptions

    index = built[0]
    direct = Pipeline(index, PipelineOptions(relevance_embedder="minilm", verify=True)).summarize(QUESTION)
    with _client(index, relevance_embedder="minilm") as client:
        assert client.get("/health").json()["offers"]["relevance_embedder"] == "minilm"
        served = client.post("/summarize", json={"query": QUESTION})
        assert served.status_code == 200, served.text
        assert [b["text"] for b in served.json()["bullets"]] == [b.text for b in direct.bullets]


def test_health_names_a_relevance_model_given_by_its_path_without_the_path(built: tuple[Path, Path]) -> None:
    from citesum.service.config import ServiceConfig
    from citesum.service.state import Service

    config = ServiceConfig(worker_kind="thread", relevance_embedder="st:/srv/private/models/e5-base")
    service = Service.open(built[0], config, llm=None)  # (not started: the model is not loaded)
    try:
        offered = service.offers(next(iter(service.collections.values())))
        assert offered["relevance_embedder"] == "st:e5-base"
    finally:
        service.searches.shutdown()
        service.summaries.shutdown()
        service.close(5.0)


def test_serving_with_an_embedder_that_cannot_load_stops_before_listening(built: tuple[Path, Path]) -> None:
    import socket

    with socket.socket() as taken:  # a busy port: had the server gone on to listen, it would say so instead
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        refused = CliRunner().invoke(main, ["serve", "--index", str(built[0]), "--port", str(taken.getsockname()[1]),
                                            "--relevance-embedder", "no-such-model"])
    assert refused.exit_code != 0
    assert "unknown embedder 'no-such-model'" in refused.output


def test_the_service_offers_every_retriever_and_summarizer_of_the_cli(built: tuple[Path, Path]) -> None:
    from citesum.retrieve import RETRIEVER_NAMES

    index, summaries = built
    with _client(index, summaries) as client:
        offers = client.get("/health").json()["offers"]
        # every retriever of the CLI but oracle (it ranks by relevance judgments a request does not carry)
        assert offers == {"retrievers": [n for n in RETRIEVER_NAMES if n != "oracle"] + ["raptor"],
                          "summarizers": ["extractive", "readagent"], "summary_index": True,
                          "relevance_embedder": None}
        for retriever in offers["retrievers"]:
            if retriever == "promptrank":
                continue  # its language model runs in this process: asked once below, over a few passages
            found = client.post("/summarize", json={"query": QUESTION, "retriever": retriever})
            assert found.status_code == 200, (retriever, found.text)
            answer = found.json()
            assert answer["bullets"] or answer["abstained"], retriever
            if retriever == "raptor":
                assert answer["context"]["order"] == "raptor"
        readagent = client.post("/summarize", json={"query": QUESTION, "summarizer": "readagent"}).json()
        assert readagent["bullets"] and readagent["context"]["order"] == "readagent"
        # a new user's trial: the answer named the extractive summarizer, and nothing said why
        assert readagent["notes"][0].startswith("ReadAgent without a model")
        rag = client.post("/summarize", json={"query": QUESTION, "summary_index": True}).json()
        assert rag["bullets"] and rag["context"]["order"] == "summary-rag"
        for bullet in [*readagent["bullets"], *rag["bullets"]]:  # checked: each citation has its evidence
            assert bullet["evidence"] and all(e["supported"] for e in bullet["evidence"])
        no_model = client.post("/summarize", json={"query": QUESTION, "summarizer": "llm"})
        assert no_model.status_code == 400 and "no LLM" in no_model.json()["detail"]


def test_promptrank_is_served_too_within_the_time_limit_of_a_language_model(tmp_path: Path) -> None:
    """PromptRank reads every chain of candidates with the packaged SmolLM2 in the server's process: its search
    gets --llm-timeout, as a summary by a model does. Before, it had the 60 s of a search, and a search over a
    collection of 40 news articles was answered 504 on a slow two-core machine."""
    pytest.importorskip("llama_cpp")  # its default language model: the packaged SmolLM2 run here
    import time

    from citesum import Index, ingest_paths
    from citesum.service.app import create_app
    from citesum.service.config import ServiceConfig

    folder = tmp_path / "notes"  # a few passages: the model reads each chain of them
    folder.mkdir()
    (folder / "water.txt").write_text("Household water rates rose by 12 percent in 2023. The council blamed the "
                                      "cost of treating river water.\n", encoding="utf-8")
    (folder / "roads.txt").write_text("The city repaved forty streets last summer.\n", encoding="utf-8")
    (folder / "parks.txt").write_text("Two new parks opened near the river in May.\n", encoding="utf-8")
    documents, _ = ingest_paths([folder])
    index = Index.create(tmp_path / "ix")
    index.add(documents)
    config = ServiceConfig(worker_kind="thread", timeout_s=0.2)  # a search's limit the model cannot keep
    with TestClient(create_app(index.path, config), base_url="http://127.0.0.1:8000") as client:
        assert "promptrank" in client.get("/health").json()["offers"]["retrievers"]
        started = time.monotonic()
        found = client.post("/search", json={"query": QUESTION, "retriever": "promptrank", "k": 3})
        took = time.monotonic() - started
        assert found.status_code == 200, found.text
        assert took > config.timeout_s  # so the search's own limit would have cut it
        assert found.json()["retriever"].startswith("promptrank")
        assert sorted(Path(hit["document_id"]).name for hit in found.json()["hits"]) == \
            ["parks.txt", "roads.txt", "water.txt"]  # (the order is the small model's: not looked at)
        answer = client.post("/summarize", json={"query": QUESTION, "retriever": "promptrank"})
        assert answer.status_code == 200, answer.text  # a summary over its ranking has the same limit
        assert answer.json()["bullets"][0]["text"].startswith("Household water rates rose")


def test_promptrank_is_not_offered_without_the_model_it_reads_with(built: tuple[Path, Path],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    # a fresh install without the llamacpp extra (a new user's trial): the page offered promptrank, and asking
    # with it showed "... needs the optional dependency 'llama-cpp-python' ... pip install 'citesum[llamacpp]'"
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == "llama_cpp"
                        else found(name, *rest))
    with _client(built[0]) as client:
        offered = client.get("/health").json()["offers"]["retrievers"]
        assert "promptrank" not in offered and "bm25" in offered and "hybrid" in offered


def test_what_a_service_does_not_hold_is_a_422_naming_the_fix(built: tuple[Path, Path], tmp_path: Path,
                                                                corpus: Path) -> None:
    from citesum import Index, ingest_paths

    with _client(built[0]) as client:  # no --summary-index
        refused = client.post("/summarize", json={"query": QUESTION, "summary_index": True})
        assert refused.status_code == 400 and "--summary-index" in refused.json()["detail"]
    bare = Index.create(tmp_path / "bare")
    bare.add(ingest_paths([corpus], exclude=["gold.json"])[0][:10])
    with _client(bare.path) as client:  # no graph, no tree: not offered, and asking names the fix
        offered = client.get("/health").json()["offers"]["retrievers"]
        assert "raptor" not in offered and "lightpal" not in offered and "hybrid" in offered
        for retriever, fix in (("raptor", "citesum tree"), ("lightpal", "citesum graph")):
            refused = client.post("/summarize", json={"query": QUESTION, "retriever": retriever})
            assert refused.status_code == 400 and fix in refused.json()["detail"]
            assert str(tmp_path) not in refused.text  # the server's path is not told


def test_the_service_with_a_model_writes_with_it_by_default_and_offers_the_rest(built: tuple[Path, Path]) -> None:
    from citesum.llm.fake import FakeLLM

    llm = FakeLLM(["- Household water rates rose 7.5 percent. [1]"] * 3)
    with _client(built[0], llm=llm) as client:
        assert client.get("/health").json()["offers"]["summarizers"] == ["llm", "extractive", "readagent"]
        by_model = client.post("/summarize", json={"query": QUESTION}).json()
        assert by_model["summarizer"].startswith("llm") and len(llm.prompts) == 1
        offline = client.post("/summarize", json={"query": QUESTION, "summarizer": "extractive"}).json()
        assert offline["summarizer"] == "extractive" and len(llm.prompts) == 1  # the model was not asked


def test_citesum_serve_offers_them_from_its_own_processes(corpus: Path, tmp_path: Path) -> None:
    """As a user runs it: the index, its tree and its summary index each built by a command of its own, then
    `citesum serve --summary-index` (worker processes, the offline default) asked over real HTTP."""
    import httpx

    from live import citesum_serve, run_citesum

    index, summaries = tmp_path / "ix", tmp_path / "summaries"
    for command in (["index", str(corpus), "--index", str(index), "--exclude", "gold.json"],
                    ["tree", "--index", str(index), "--levels", "1"],
                    ["graph", "--index", str(index)],
                    ["summary-index", "--index", str(index), "--out", str(summaries)]):
        done = run_citesum(*command, timeout=300)
        assert done.returncode == 0, (command, done.stderr)
    server = citesum_serve(index, tmp_path / "serve.log", "--summary-index", str(summaries), "--workers", "1",
                           "--search-workers", "1")
    try:
        health = httpx.get(f"{server.url}/health", timeout=30).json()
        assert health["workers"]["summarize"]["kind"] == "process"
        assert {"raptor", "lightpal"} <= set(health["offers"]["retrievers"]) and health["offers"]["summary_index"]
        for request, order in (({"retriever": "raptor"}, "raptor"), ({"retriever": "lightpal"}, "original"),
                               ({"summarizer": "readagent"}, "readagent"), ({"summary_index": True}, "summary-rag")):
            answer = httpx.post(f"{server.url}/summarize", json={"query": QUESTION, **request}, timeout=120)
            assert answer.status_code == 200, (request, answer.text)
            assert answer.json()["bullets"] and answer.json()["context"]["order"] == order, request
    finally:
        server.close()


def _streamed(index: Path, output: str) -> tuple[list[str], dict[str, Any]]:
    """(the texts of the bullet events, the done event) of the pipeline streaming ``output`` of a scripted model."""
    from citesum import Pipeline, PipelineOptions
    from citesum.llm.fake import FakeLLM

    llm = FakeLLM([output, output])
    events = list(Pipeline(index, PipelineOptions(summarizer="llm", verify=True), llm=llm).stream(QUESTION))
    assert events[0].kind == "context" and events[-1].kind == "done"
    return [e.data["text"] for e in events if e.kind == "bullet"], events[-1].data


def test_a_streamed_answer_gives_the_bullets_of_the_whole_answer_and_nothing_else(built: tuple[Path, Path]) -> None:
    # a preamble before the bullets is no bullet, and the first bullet is not skipped for it
    preamble = ("Here is what the documents say about household water rates:\n- Household water rates rose by 7.5 "
                "percent. [1]\n- Household water rates pay for new pipes. [2]\n- Household water rates change on "
                "January 1. [3]")
    bullets, done = _streamed(built[0], preamble)
    assert bullets == [b["text"] for b in done["bullets"]] and len(bullets) == 3
    # an abstention streams no bullet, whatever follows it
    bullets, done = _streamed(built[0], "NO ANSWER\n- Household water rates rose. [1]\n- And more. [1]")
    assert bullets == [] and done["abstained"] and done["bullets"] == []


def test_an_injected_summarizer_whose_window_cuts_the_budget_says_so(built: tuple[Path, Path]) -> None:
    """The evaluation's summarizer is the pipeline's own object: its model's window fits the budget (before: an
    AttributeError on the pipeline's model, which it does not have)."""
    from citesum import Pipeline, PipelineOptions
    from citesum.llm.fake import FakeLLM
    from citesum.summarize.llm import LLMSummarizer

    llm = FakeLLM(["- Household water rates rose by 7.5 percent. [1]"])
    llm.context_window = 3000
    answer = Pipeline(built[0], PipelineOptions(budget=15_000), summarizer=LLMSummarizer(llm)).summarize(QUESTION)
    assert answer.notes[0].startswith("the model's window is 3,000 tokens") and answer.summary.context.budget < 3000


@pytest.mark.parametrize("line", ['data: {"error": {"message": "out of memory"}}', "error: slot unavailable"])
def test_an_error_in_a_servers_stream_is_an_error_not_the_end_of_the_answer(line: str) -> None:
    from citesum.errors import LLMError
    from citesum.llm.openai_compat import _stream_pieces

    with pytest.raises(LLMError, match="ended with an error"):
        _stream_pieces(line, {})
    assert _stream_pieces('data: {"choices": [{"delta": {"content": "Wa"}}]}', {}) == ["Wa"]
