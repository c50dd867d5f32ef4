"""A scripted LLM for tests: queued responses (or errors), every request recorded."""

from __future__ import annotations

from collections import deque
from typing import Iterable, Iterator, Sequence

from citesum.llm.base import LLM, ChatRequest, Completion
from citesum.tokens import get_tokenizer


class FakeLLM(LLM):
    """Answers each request with the next queued response; an Exception in the queue is raised instead. As a
    server does, it writes at most the request's ``max_tokens`` (cl100k tokens) of a response and counts them
    in its usage.

    Example:
        >>> llm = FakeLLM(["- Water rates rise [1]"])
        >>> llm.complete(ChatRequest.from_prompt("hi")).text
        '- Water rates rise [1]'
    """

    name = "fake"

    def __init__(self, responses: Iterable[str | Exception] = ()) -> None:
        super().__init__()
        self.responses: deque[str | Exception] = deque(responses)
        self.requests: list[ChatRequest] = []
        #: :meth:`stream` gives the answer in pieces of this many characters, this many seconds apart
        self.piece_chars = 7
        self.pause = 0.0
        #: pieces :meth:`stream` has given
        self.streamed = 0

    @property
    def prompts(self) -> list[str]:
        return [r.messages[-1].content for r in self.requests]

    async def amap(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        out = []
        for request in requests:
            self.requests.append(request)
            texts = []
            for _ in range(request.n):
                if not self.responses:
                    raise AssertionError("FakeLLM: no scripted response left for this request")
                response = self.responses.popleft()
                if isinstance(response, Exception):
                    raise response
                texts.append(_written(response, request.max_tokens))
            completion = Completion(tuple(texts), {"prompt_tokens": 0, "completion_tokens": max(
                (get_tokenizer().count(text) for text in texts), default=0)})
            self.usage.add(completion)
            out.append(completion)
        return out

    def stream(self, request: ChatRequest, usage: dict[str, int] | None = None) -> Iterator[str]:
        """The next scripted response a few characters at a time (the pieces a server would send); a
        ``pause`` between them, in seconds, lets a test see the first piece before the last."""
        import time

        from citesum.errors import LLMCancelled
        from citesum.llm.base import call_limit

        limit = call_limit()
        completion = self.complete(request)
        text = completion.text
        for start in range(0, len(text), self.piece_chars):
            if start:
                time.sleep(self.pause)
            if limit is not None and limit.abandoned:  # as a server does when its client leaves
                raise LLMCancelled("fake: the request was given up")
            self.streamed += 1
            yield text[start:start + self.piece_chars]
        if usage is not None:
            usage.update(completion.usage)


def _written(response: str, max_tokens: int) -> str:
    """What a server sends of ``response`` when it may write ``max_tokens`` tokens."""
    return get_tokenizer().truncate(response, max_tokens)
