"""LLM backends by name: ``openai`` (any OpenAI-compatible server), ``llamacpp`` (in-process GGUF), ``fake``."""

from __future__ import annotations

from typing import Iterable

from citesum.errors import ConfigError, unknown_name_error
from citesum.llm.base import LLM, ChatRequest, Completion, Message
from citesum.llm.cache import ResponseCache

LLM_BACKENDS = ["openai", "llamacpp", "fake"]


def get_llm(
    backend: str,
    model: str | None = None,
    *,
    base_url: str | Iterable[str] | None = None,
    cache: ResponseCache | None = None,
    **options: object,
) -> LLM:
    """Build an LLM backend. ``llamacpp`` takes a GGUF path as ``model`` (default: the packaged SmolLM2);
    ``openai`` takes one ``base_url`` or several (a pool of replicas, see :mod:`citesum.llm.pool`)."""
    if backend == "openai":
        from citesum.llm.openai_compat import OpenAIChat

        if not model:
            raise ConfigError("the 'openai' backend needs a model name (--model)")
        return OpenAIChat(model, base_url, cache=cache, **options)  # type: ignore[arg-type]
    if backend == "llamacpp":
        from citesum.llm.llamacpp import LlamaCppChat, packaged_smollm2_path

        return LlamaCppChat(model or packaged_smollm2_path(), **options)  # type: ignore[arg-type]
    if backend == "fake":
        from citesum.llm.fake import FakeLLM

        return FakeLLM(**options)  # type: ignore[arg-type]
    raise unknown_name_error("LLM backend", backend, LLM_BACKENDS)


__all__ = ["LLM", "LLM_BACKENDS", "ChatRequest", "Completion", "Message", "ResponseCache", "get_llm"]
