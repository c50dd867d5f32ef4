"""PromptRank with a scripted likelihood (the beam search, the prompt, the registry, the CLI), and the
/v1/completions likelihood client against loopback servers that misbehave on purpose."""

from __future__ import annotations

import json
import re
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from citesum.errors import ConfigError, LLMError, MissingExtraError
from citesum.index.store import Index, IndexSettings
from citesum.llm.likelihood import CompletionsLikelihood, LlamaCppLikelihood, default_likelihood
from citesum.retrieve import RETRIEVER_NAMES, get_retriever
from citesum.retrieve.base import Retriever
from citesum.retrieve.lightpal import PassageGraph
from citesum.retrieve.promptrank import INSTRUCTION, PromptRankRetriever, chain_prompt
from citesum.types import Document
from loopback import answer, reply

pytest.importorskip("httpx")

QUESTION = "Who kept the lighthouse?"


class ScriptedLikelihood:
    """Scores a prompt by the texts of its documents (a tuple, looked up in ``scores``; else ``default``) and
    records every prompt and continuation it was asked."""

    name = "scripted"

    def __init__(self, scores: dict[tuple[str, ...], float] | None = None, default: float = -50.0) -> None:
        self.scores = scores or {}
        self.default = default
        self.asked: list[tuple[str, str]] = []

    def log_likelihoods(self, prompts: Sequence[str], continuation: str) -> np.ndarray:
        self.asked += [(prompt, continuation) for prompt in prompts]
        return np.array([self.scores.get(tuple(re.findall(r"Document: (.*?)\n\n", p)), self.default)
                         for p in prompts])

    @property
    def chains(self) -> list[tuple[str, ...]]:
        return [tuple(re.findall(r"Document: (.*?)\n\n", prompt)) for prompt, _ in self.asked]


class GivenOrder(Retriever):
    """A base retriever that ranks the units in a given order (the test is about what PromptRank does with it)."""

    name = "given"

    def __init__(self, index: Index, order: Sequence[int]) -> None:
        super().__init__(index)
        self._scores = np.zeros(len(index.passages), dtype=np.float32)
        self._scores[list(order)] = np.arange(len(order), 0, -1)

    def scores(self, query: str) -> np.ndarray:
        return self._scores


def _index(path: Path, count: int) -> Index:
    """``count`` one-unit documents whose texts are "u0", "u1", ... in unit order."""
    index = Index.create(path, IndexSettings(unit="document"))
    index.add([Document(id=f"d{i}", title="", text=f"u{i}") for i in range(count)])
    assert [p.text for p in index.passages] == [f"u{i}" for i in range(count)]
    return index


def _texts(index: Index, hits: Sequence[object]) -> list[str]:
    return [hit.passage.text for hit in hits]  # type: ignore[attr-defined]


def test_the_prompt_is_the_papers_instruction_after_the_chain(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", 2)
    likelihood = ScriptedLikelihood()
    PromptRankRetriever(index, GivenOrder(index, [0, 1]), likelihood, hops=2).retrieve(f"  {QUESTION} ", 2)
    assert likelihood.asked[0] == ("Document: u0\n\n" + INSTRUCTION, " " + QUESTION)
    assert ("Document: u0\n\nDocument: u1\n\nReview previous documents and ask some question.\nQuestion:",
            " " + QUESTION) in likelihood.asked
    assert chain_prompt(["a", "b"]) == "Document: a\n\nDocument: b\n\n" + INSTRUCTION


def test_passages_are_cut_to_passage_tokens(tmp_path: Path) -> None:
    index = Index.create(tmp_path / "ix", IndexSettings(unit="document"))
    index.add([Document(id="long", title="", text="water " * 400)])
    likelihood = ScriptedLikelihood()
    PromptRankRetriever(index, get_retriever("bm25", index), likelihood, passage_tokens=8).retrieve("water", 1)
    assert likelihood.chains == [("water" + " water" * 7,)]  # 8 cl100k tokens; one unit: one hop


def test_beam_search_keeps_the_best_chains_and_ranks_units_by_their_best_chain(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", 6)
    base = GivenOrder(index, [0, 1, 2, 3, 4, 5])
    # hop 1 keeps u3 and u1 (beam 2); of their extensions, (u3, u4) is the likeliest, then (u1, u0)
    likelihood = ScriptedLikelihood({("u3",): -1.0, ("u1",): -2.0, ("u0",): -3.0,
                                     ("u3", "u4"): -0.5, ("u1", "u0"): -0.7, ("u3", "u1"): -0.9})
    promptrank = PromptRankRetriever(index, base, likelihood, seeds=4, beam=2, pool=5, hops=2)
    hits = promptrank.retrieve(QUESTION, 6)
    assert _texts(index, hits) == ["u3", "u4", "u1", "u0", "u2", "u5"]  # u5: never in a chain, base order
    assert [hit.rank for hit in hits] == list(range(1, 7)) and hits[0].retriever == "promptrank:given"
    chains = likelihood.chains
    assert chains[:4] == [("u0",), ("u1",), ("u2",), ("u3",)]  # the seeds: the base's best 4
    # hop 2 extends only the kept chains, best first, by the base's best 5 units not in them
    assert chains[4:] == [("u3", u) for u in ("u0", "u1", "u2", "u4")] + [("u1", u) for u in ("u0", "u2", "u3", "u4")]
    assert len(likelihood.asked) == promptrank.seeds + 2 * 4  # the LM calls of a query
    # scores() ranks the same way, 1 / (1 + rank), and documents follow it
    scores = promptrank.scores(QUESTION)
    assert [index.passages[i].text for i in np.argsort(-scores)] == _texts(index, hits)
    assert promptrank.rank_documents(QUESTION, 1) == [("d3", pytest.approx(1.0))]
    assert not promptrank.ranking_depends_on_k


def test_hop_two_follows_the_passage_graph_when_there_is_one(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", 8)
    base = GivenOrder(index, range(8))
    likelihood = ScriptedLikelihood({("u0", "u7"): 0.0})
    neighbors = np.full((8, 2), -1)
    neighbors[0] = [7, 1]  # u7, the base's last, is linked from u0
    graph = PassageGraph(neighbors, index.generation, "hand", 2)
    graph.save(index.path)  # stored beside the index: PromptRank finds it without being given it
    hits = PromptRankRetriever(index, base, likelihood, seeds=2, beam=1, pool=2).retrieve(QUESTION, 3)
    assert _texts(index, hits) == ["u0", "u7", "u1"]
    assert ("u0", "u7") in likelihood.chains and ("u0", "u1") in likelihood.chains  # the pool, then the edges

    (Path(index.path) / "lightpal-graph.npz").unlink()
    without = ScriptedLikelihood({("u0", "u7"): 0.0})
    assert _texts(index, PromptRankRetriever(index, base, without, seeds=2, beam=1, pool=2).retrieve(QUESTION, 3)) \
        == ["u0", "u1", "u2"]
    assert not any("u7" in chain for chain in without.chains)


def test_a_stale_graph_is_refused_with_how_to_rebuild_it(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", 3)
    PassageGraph(np.full((3, 1), -1), index.generation + 1, "hand", 1).save(index.path)
    with pytest.raises(ConfigError, match="citesum graph --index"):
        PromptRankRetriever(index, GivenOrder(index, [0, 1, 2]), ScriptedLikelihood())


def test_ties_keep_the_base_order(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", 5)
    order = [2, 4, 0, 1, 3]
    likelihood = ScriptedLikelihood(default=-3.0)  # every chain equally likely
    hits = PromptRankRetriever(index, GivenOrder(index, order), likelihood, seeds=3, beam=2, pool=3).retrieve(
        QUESTION, 5)
    assert _texts(index, hits) == [f"u{i}" for i in order]


def test_an_empty_index_asks_nothing(tmp_path: Path) -> None:
    index = Index.create(tmp_path / "ix", IndexSettings(unit="document"))
    likelihood = ScriptedLikelihood()
    promptrank = PromptRankRetriever(index, get_retriever("bm25", index), likelihood)
    assert promptrank.retrieve(QUESTION, 10) == [] and len(promptrank.scores(QUESTION)) == 0
    assert likelihood.asked == []


def test_k_larger_than_the_index_gives_every_unit_once(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", 3)
    hits = PromptRankRetriever(index, GivenOrder(index, [1, 0, 2]), ScriptedLikelihood()).retrieve(QUESTION, 50)
    assert sorted(_texts(index, hits)) == ["u0", "u1", "u2"]
    one = _index(tmp_path / "one", 1)  # one unit: no second hop to make
    likelihood = ScriptedLikelihood()
    assert _texts(one, PromptRankRetriever(one, GivenOrder(one, [0]), likelihood).retrieve(QUESTION, 5)) == ["u0"]
    assert likelihood.chains == [("u0",)]


def test_bad_settings_are_refused(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", 2)
    with pytest.raises(ConfigError, match="beam"):
        PromptRankRetriever(index, GivenOrder(index, [0, 1]), ScriptedLikelihood(), beam=0)


def test_the_registry_builds_promptrank_over_a_base(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", 3)
    likelihood = ScriptedLikelihood()
    assert "promptrank" in RETRIEVER_NAMES
    assert get_retriever("promptrank", index, likelihood=likelihood).name == "promptrank:bm25"
    over_dense = get_retriever("promptrank:dense", index, likelihood=likelihood)
    assert isinstance(over_dense, PromptRankRetriever) and over_dense.likelihood is likelihood
    assert over_dense.name == "promptrank:dense"
    with pytest.raises(ConfigError, match="cannot be promptrank"):
        get_retriever("promptrank:promptrank", index)


def test_build_context_takes_a_retriever_instance(tmp_path: Path) -> None:
    from citesum.pack import PackOptions
    from citesum.summarize import build_context

    index = _index(tmp_path / "ix", 4)
    likelihood = ScriptedLikelihood({("u2",): 0.0})
    promptrank = PromptRankRetriever(index, GivenOrder(index, [0, 1, 2, 3]), likelihood, hops=1)
    context = build_context(QUESTION, index, retriever=promptrank, options=PackOptions(budget=1000, order="score"))
    assert [block.document_id for block in context.blocks][0] == "d2"


def test_without_llama_cpp_the_default_model_names_the_extra(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from citesum.cli import main

    index = _index(tmp_path / "ix", 2)
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # what an install without the extra looks like
    default_likelihood.cache_clear()
    with pytest.raises(MissingExtraError, match=r"pip install 'citesum\[llamacpp\]'"):
        LlamaCppLikelihood()
    result = CliRunner().invoke(main, ["search", "u1", "--index", str(index.path), "--retriever", "promptrank"])
    assert result.exit_code == 1 and "pip install 'citesum[llamacpp]'" in result.stderr


def test_a_file_llama_cpp_cannot_load_is_refused_by_name(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    fake = tmp_path / "model.gguf"
    fake.write_text("not a model")
    with pytest.raises(ConfigError, match=r"llama.cpp cannot load .*model.gguf .*give a GGUF model file"):
        LlamaCppLikelihood(str(fake))


# ---- the /v1/completions client ---------------------------------------------------------------------------------
def echo_logprobs(handler: BaseHTTPRequestHandler, request: dict, _: int, logprob: float = -0.5) -> None:
    """A completions server that echoes the prompt as word tokens, each with log-probability ``logprob`` (the
    first None, as OpenAI's API has it), and generates one token "!" with -9."""
    text = request["prompt"]
    spans = [match.start() for match in re.finditer(r"\s*\S+", text)]
    body = {"choices": [{"index": 0, "text": text + "!", "logprobs": {
        "tokens": [text[a:b] for a, b in zip(spans, spans[1:] + [len(text)])] + ["!"],
        "text_offset": spans + [len(text)],
        "token_logprobs": [None] + [logprob] * (len(spans) - 1) + [-9.0]}}],
        "usage": {"prompt_tokens": len(spans), "completion_tokens": 1}}
    reply(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})


def _completions(url: str, **options: object) -> CompletionsLikelihood:
    return CompletionsLikelihood("test-model", url, backoff_base=0.01, backoff_max=0.05, **options)


def test_completions_sum_the_continuations_echoed_log_probabilities(serve) -> None:  # type: ignore[no-untyped-def]
    seen: list[tuple[str, dict]] = []

    def script(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        seen.append((handler.path, request))
        echo_logprobs(handler, request, n)

    likelihood = _completions(serve(script).url)
    scores = likelihood.log_likelihoods(["Document: a b\n\nQuestion:", "Question:"], " who kept it?")
    assert scores.tolist() == [-1.5, -1.5]  # three word tokens of the continuation; not the generated "!"
    # the two requests go out at once: either may arrive first
    path, payload = next((path, r) for path, r in seen if r["prompt"].startswith("Document"))
    assert path == "/v1/completions" and payload["prompt"] == "Document: a b\n\nQuestion: who kept it?"
    assert payload["echo"] is True and payload["logprobs"] == 1 and payload["max_tokens"] == 1
    assert payload["model"] == "test-model" and likelihood.calls == 2


@pytest.mark.parametrize("status", [429, 500])
def test_completions_retry_a_busy_or_failing_server(serve, status: int) -> None:  # type: ignore[no-untyped-def]
    def script(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        if n == 0:
            reply(handler, status, b'{"error": "try again"}', {"Retry-After": "0"})
        else:
            echo_logprobs(handler, request, n)

    server = serve(script)
    assert _completions(server.url).log_likelihoods(["Question:"], " who?").tolist() == [-0.5]
    assert server.calls == 2


def test_a_malformed_body_is_reported(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lambda h, r, n: reply(h, 200, b"<html>proxy error</html>"))
    with pytest.raises(LLMError, match=r"gave up after 2 attempt\(s\); last error: malformed response body"):
        _completions(server.url, max_retries=1).log_likelihoods(["Question:"], " who?")
    broken = serve(lambda h, r, n: reply(h, 200, json.dumps({"choices": [{"logprobs": {
        "text_offset": [0, 9], "token_logprobs": [None]}}]}).encode()))
    with pytest.raises(LLMError, match="malformed logprobs"):
        _completions(broken.url, max_retries=0).log_likelihoods(["Question:"], " who?")


def test_a_chat_only_server_is_named_with_what_it_lacks(serve) -> None:  # type: ignore[no-untyped-def]
    chat = serve(lambda h, r, n: answer(h, "I am a chat model."))  # a 200 without logprobs
    with pytest.raises(LLMError, match=re.escape(chat.url) + r"/completions returned no log-probabilities"):
        _completions(chat.url).log_likelihoods(["Question:"], " who?")
    assert chat.calls == 1  # not retried: it would answer the same
    missing = serve(lambda h, r, n: reply(h, 404, b'{"error": "Not Found"}'))
    with pytest.raises(LLMError, match=re.escape(missing.url) + r"/completions: HTTP 404.*echoes the prompt"):
        _completions(missing.url).log_likelihoods(["Question:"], " who?")
    no_echo = serve(lambda h, r, n: reply(h, 200, json.dumps({"choices": [{"logprobs": {
        "text_offset": [len(r["prompt"])], "token_logprobs": [-1.0]}}]}).encode()))
    with pytest.raises(LLMError, match="did not echo the prompt"):
        _completions(no_echo.url).log_likelihoods(["Question:"], " who?")


def test_search_ranks_through_a_completions_server(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`citesum search --retriever promptrank --rank-url`: the server's likelihoods decide the order."""
    from click.testing import CliRunner

    from citesum.cli import main

    def script(handler: BaseHTTPRequestHandler, request: dict, n: int) -> None:
        # the question is likelier after u2 than after any other unit
        echo_logprobs(handler, request, n, -0.1 if request["prompt"].startswith("Document: u2") else -0.5)

    index = _index(tmp_path / "ix", 3)
    server = serve(script)
    runner = CliRunner()
    arguments = ["search", "which u?", "--index", str(index.path), "--retriever", "promptrank", "--json"]
    result = runner.invoke(main, arguments + ["--rank-url", server.url, "--rank-model", "test-model"])
    assert result.exit_code == 0, result.stderr
    # BM25 finds no term of the question (collection order); the server's likelihoods put u2 first
    assert [hit["text"] for hit in json.loads(result.stdout)["hits"]] == ["u2", "u0", "u1"]
    assert server.calls == 3 + 3 * 2  # three seeds, then each of them extended by the two others
    result = runner.invoke(main, ["summarize", "which u?", "--index", str(index.path), "--retriever", "promptrank",
                                  "--order", "score", "--rank-url", server.url, "--rank-model", "test-model", "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["sources"]["1"]["document_id"] == "d2"  # the context in score order
    result = runner.invoke(main, ["search", "u1", "--index", str(index.path), "--retriever", "bm25", "--rank-url",
                                  server.url])
    assert result.exit_code == 2 and "--retriever promptrank" in result.stderr
    result = runner.invoke(main, arguments + ["--rank-url", server.url])
    assert result.exit_code == 1 and "name the model" in result.stderr
