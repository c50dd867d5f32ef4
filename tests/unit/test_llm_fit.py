"""An LLM's window holds the prompt, the context and the answer: the context is cut to what the window holds,
and a server that still finds the request too long gets it once more, cut to what it said. The budget is
citesum's choice, never a failure the user sees."""

from __future__ import annotations

import json
from typing import Any

import pytest

from citesum.demo.haystack import generate_haystack
from citesum.errors import LLMError
from citesum.index.store import Index, IndexSettings
from citesum.llm.openai_compat import OpenAIChat, context_too_long
from citesum.pack import PackOptions
from citesum.summarize import summarize_query
from citesum.summarize.llm import LLMSummarizer
from citesum.tokens import get_tokenizer
from loopback import answer, reply

WINDOW = 8192
#: the model's tokens per token of citesum's tokenizer: a small model's vocabulary cuts text finer
RATIO = 1.3
QUESTION = "What is happening with the city's water supply?"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """An index of about 100,000 tokens: every budget of the tests can be filled."""
    built = Index.create(tmp_path_factory.mktemp("fit") / "ix", IndexSettings())
    built.add(generate_haystack(documents=1000, seed=7).documents)
    return built


def vllm_like(style: str = "vllm"):  # type: ignore[no-untyped-def]  # noqa: C901
    """A server of a ``WINDOW``-token model that counts ``RATIO`` tokens per token of ours and refuses a longer
    request as vLLM does (``style`` "vllm"), as llama.cpp's server does ("llamacpp"), or with OpenAI's code and
    no numbers ("bare")."""
    tokenizer = get_tokenizer()

    def script(handler, request: dict[str, Any], n: int) -> None:  # type: ignore[no-untyped-def]
        prompt = int(RATIO * sum(tokenizer.count(m["content"]) for m in request["messages"])) + 8
        requested = prompt + request["max_tokens"]
        if requested > WINDOW:
            if style == "vllm-new":
                message = (f"This model's maximum context length is {WINDOW} tokens. However, you requested "
                           f"{request['max_tokens']} output tokens and your prompt contains at least "
                           f"{prompt + 1} input tokens, for a total of at least {requested + 1} tokens.")
                body = {"object": "error", "message": message, "type": "BadRequestError", "code": 400}
            elif style == "vllm":
                message = (f"This model's maximum context length is {WINDOW} tokens. However, you requested "
                           f"{requested} tokens ({prompt} in the messages, {request['max_tokens']} in the "
                           "completion). Please reduce the length of the messages or completion.")
                body = {"object": "error", "message": message, "type": "BadRequestError", "code": 400}
            elif style == "llamacpp":
                body = {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                                  "increasing it", "type": "exceed_context_size_error",
                                  "n_prompt_tokens": prompt, "n_ctx": WINDOW}}
            else:
                body = {"error": {"message": "too long", "code": "context_length_exceeded"}}
            reply(handler, 400, json.dumps(body).encode())
            return
        answer(handler, "- The city's water supply is low: the Lakemont reservoir fell to 41 percent. [1]")

    return script


def test_the_servers_ways_of_saying_too_long_are_read() -> None:
    assert context_too_long("This model's maximum context length is 8192 tokens. However, you requested 9000 "
                            "tokens (8000 in the messages, 1000 in the completion).") == (8192, 9000, True)
    assert context_too_long("Requested tokens (9000) exceed context window of 8192") == (8192, 9000, False)
    assert context_too_long("This model's maximum context length is 8192 tokens. However, your request has 9000 "
                            "input tokens. Please reduce the length of the input messages.") == (8192, 9000, False)
    assert context_too_long("This model's maximum context length is 8192 tokens. However, you requested 1024 "
                            "output tokens and your prompt contains at least 9000 input tokens") == (8192, 9000, False)
    assert context_too_long("This model's maximum context length is 8192 tokens.") == (8192, None, True)
    assert context_too_long('{"error": {"type": "exceed_context_size_error", "message": "the request exceeds the '
                            'available context size", "n_prompt_tokens": 9000, "n_ctx": 8192}}') == (8192, 9000, False)
    assert context_too_long('{"error": {"code": "context_length_exceeded"}}') == (None, None, True)
    assert context_too_long("model 'x' not found") is None


@pytest.mark.parametrize("budget", [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 100_000])
def test_no_budget_fails_on_a_small_window(index, serve, budget: int) -> None:  # type: ignore[no-untyped-def]
    server = serve(vllm_like())
    llm = OpenAIChat("m", server.url, cache=None, max_retries=0)  # the window is not known: nothing to fit first
    summary = summarize_query(QUESTION, index, LLMSummarizer(llm), options=PackOptions(budget=budget))
    assert summary.bullets  # before: HTTP 400 "maximum context length" for every budget over the window
    cut = any("cut from" in note for note in summary.notes)
    assert server.calls == (2 if cut else 1), (server.calls, summary.notes)  # a cut costs one refused call
    assert cut == (budget >= 8_000)  # what the window cannot hold is cut, and only that


def test_what_the_server_said_is_kept_so_the_next_request_fits_at_once(index, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(vllm_like())
    llm = OpenAIChat("m", server.url, cache=None, max_retries=0)
    summarizer = LLMSummarizer(llm)
    summarize_query(QUESTION, index, summarizer, options=PackOptions(budget=30_000))
    assert server.calls == 2 and llm.context_window == WINDOW and llm.prompt_token_ratio >= RATIO * 0.95
    again = summarize_query("How is the city's water supply managed?", index, summarizer,
                            options=PackOptions(budget=30_000))
    assert server.calls == 3 and again.bullets and any("cut from" in note for note in again.notes)


@pytest.mark.parametrize("style", ["llamacpp", "bare", "vllm-new"])
def test_other_servers_refusals_are_fitted_too(index, serve, style: str) -> None:  # type: ignore[no-untyped-def]
    server = serve(vllm_like(style))
    llm = OpenAIChat("m", server.url, cache=None, max_retries=0)
    budget = 9_000 if style == "bare" else 40_000  # without numbers the context is halved, once
    summary = summarize_query(QUESTION, index, LLMSummarizer(llm), options=PackOptions(budget=budget))
    assert summary.bullets and server.calls == 2


def test_a_window_known_beforehand_fits_the_first_call(index, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(vllm_like())
    llm = OpenAIChat("m", server.url, cache=None, max_retries=0, context_window=WINDOW)
    llm.prompt_token_ratio = RATIO
    summary = summarize_query(QUESTION, index, LLMSummarizer(llm), options=PackOptions(budget=50_000))
    assert summary.bullets and server.calls == 1


def test_a_refusal_the_summarizer_cannot_fit_says_so(index, serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(vllm_like())
    llm = OpenAIChat("m", server.url, cache=None, max_retries=0)
    # an answer longer than the window itself: no cut of the context can help
    with pytest.raises(LLMError, match="window cannot hold the prompt without any context"):
        summarize_query(QUESTION, index, LLMSummarizer(llm, max_tokens=WINDOW + 1),
                        options=PackOptions(budget=2_000))
    assert server.calls == 1
