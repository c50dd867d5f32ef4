"""The LLM interface: chat requests in, one or more completions out; async first, with a sync wrapper."""

from __future__ import annotations

import asyncio
import threading
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping, Sequence


RETRY_TEMPERATURE = 0.7
@dataclass(frozen=True)
class CallLimit:
    """When the LLM calls made in a context must have answered (``deadline``, a ``time.time()``: it crosses to
    worker processes), and an event set when their request was given up (its client left)."""

    deadline: float | None = None
    given_up: threading.Event | None = None

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.time()

    @property
    def abandoned(self) -> bool:
        return self.given_up is not None and self.given_up.is_set()


_LIMIT: ContextVar[CallLimit | None] = ContextVar("citesum_llm_limit", default=None)


@contextmanager
def answer_by(deadline: float | None, given_up: threading.Event | None = None) -> Iterator[None]:
    """The LLM calls made in the block are cancelled at ``deadline`` (``time.time()``; None: no limit), or once
    ``given_up`` is set: a service request's time limit, or its client leaving, reaches the model call, which
    closes its connection instead of running on."""
    token = _LIMIT.set(CallLimit(deadline, given_up))
    try:
        yield
    finally:
        _LIMIT.reset(token)


def call_limit() -> CallLimit | None:
    """The limit of :func:`answer_by` on the calls made here, or None."""
    return _LIMIT.get()


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class ChatRequest:
    """Everything that determines an answer; the response cache is keyed by all of it."""

    messages: tuple[Message, ...]
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    seed: int | None = None
    max_tokens: int = 1024
    #: A JSON schema the answer must follow. Backends that can constrain decoding to it do (OpenAI's and
    #: vLLM's structured outputs, llama.cpp's grammars); the caller still validates the answer.
    json_schema: Mapping[str, Any] | None = field(default=None, hash=False)

    @classmethod
    def from_prompt(cls, prompt: str, **options: object) -> "ChatRequest":
        return cls(messages=(Message("user", prompt),), **options)  # type: ignore[arg-type]

    def retry(self, attempt: int) -> "ChatRequest":
        """The request to send again after an unusable answer: the next seed (so the response cache cannot replay
        the answer) and at least :data:`RETRY_TEMPERATURE` (greedy decoding would repeat it)."""
        return replace(self, seed=(self.seed or 0) + attempt, temperature=max(self.temperature, RETRY_TEMPERATURE))

    def as_payload(self) -> dict[str, object]:
        payload: dict[str, object] = {
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "temperature": self.temperature, "top_p": self.top_p, "n": self.n, "max_tokens": self.max_tokens,
        }
        if self.seed is not None:
            payload["seed"] = self.seed
        if self.json_schema is not None:
            payload["response_format"] = json_response_format(self.json_schema, "json_schema")
        return payload


#: The ways servers take a JSON schema in ``response_format``, most standard first: OpenAI, vLLM, the llama.cpp
#: server and Ollama take ``json_schema``; llama-cpp-python's server only ``json_object`` with a ``schema``;
#: ``none`` leaves the schema to the prompt.
JSON_DIALECTS = ("json_schema", "json_object", "none")


def json_response_format(schema: Mapping[str, Any], dialect: str) -> dict[str, Any] | None:
    if dialect == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": dict(schema), "strict": True}}
    if dialect == "json_object":
        return {"type": "json_object", "schema": dict(schema)}
    return None


@dataclass(frozen=True)
class Completion:
    texts: tuple[str, ...]
    usage: Mapping[str, int] = field(default_factory=dict)
    cached: bool = False

    @property
    def text(self) -> str:
        return self.texts[0] if self.texts else ""


@dataclass
class Usage:
    """Running totals over every call of one backend instance."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, completion: Completion) -> None:
        if completion.cached:
            self.cache_hits += 1
            return
        self.requests += 1
        self.prompt_tokens += int(completion.usage.get("prompt_tokens", 0))
        self.completion_tokens += int(completion.usage.get("completion_tokens", 0))


class LLM(ABC):
    """A chat model. Subclasses implement :meth:`amap`; :meth:`complete` runs one request synchronously."""

    name: str
    #: tokens the model reads and writes in one request, when known (it caps the context budget)
    context_window: int | None = None
    #: where ``context_window`` came from, said to the user (the server's answer, ``--window``, a default)
    context_window_source: str | None = None
    #: the model's prompt tokens per token of citesum's tokenizer, the largest seen in its answers (None: none
    #: seen yet): budgets are counted with citesum's tokenizer, the window is filled by the model's
    prompt_token_ratio: float | None = None

    def __init__(self) -> None:
        self.usage = Usage()

    @property
    def settings(self) -> tuple[object, ...]:
        """What decides this backend's answers, for the key of a job that keeps them (the model's name;
        backends add their endpoints or context)."""
        return (self.name,)

    @abstractmethod
    async def amap(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        """Answer many requests (concurrently where the backend can), in order."""

    async def acomplete(self, request: ChatRequest) -> Completion:
        return (await self.amap([request]))[0]

    def complete(self, request: ChatRequest) -> Completion:
        return self.map([request])[0]

    def stream(self, request: ChatRequest, usage: dict[str, int] | None = None) -> Iterator[str]:
        """The answer's text as the model writes it, a piece at a time; ``usage`` (when given) gets the
        request's token counts once the answer is whole. Closing the iterator early stops the model where the
        backend can. A backend that cannot stream gives the whole answer as one piece."""
        completion = self.complete(request)
        if usage is not None:
            usage.update(completion.usage)
        yield completion.text

    def map(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.amap(requests))
        raise RuntimeError("LLM.map() was called inside a running event loop; await LLM.amap() instead")
