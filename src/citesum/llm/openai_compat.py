"""Any OpenAI-compatible chat-completions server (vLLM, llama.cpp server, Ollama, OpenAI) over HTTP.

Transient failures are retried: timeouts, connection errors, 429 (honouring ``Retry-After``) and 5xx after the
failing endpoint's exponential backoff (jittered between half and all of it; see :mod:`citesum.llm.pool`), and
bodies that are not the expected JSON after the request's own backoff (full jitter); other 4xx fail at once with
the server's message. Responses are cached on disk, keyed by the whole request, so a rerun costs no call.

Several base URLs (replicas serving the same model) make a pool (:mod:`citesum.llm.pool`): least-outstanding
routing, a concurrency limit per endpoint, and a failing endpoint ejected for a while so that the retry goes to
another at once. A pool's responses are cached under its first URL, so a pool that begins with the URL used
alone before reuses that cache.

A request with a JSON schema is sent with the most standard ``response_format`` first; a server that refuses
that form (its error names ``response_format``) gets the next form of :data:`~citesum.llm.base.JSON_DIALECTS`,
and so does every later request of this backend, down to the prompt alone.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import re
import time
import json
from typing import Any, AsyncIterator, Iterable, Iterator, Sequence

from citesum.errors import ContextTooLong, LLMCancelled, LLMError, LLMTimeout, MissingExtraError
from citesum.llm.base import JSON_DIALECTS, LLM, CallLimit, ChatRequest, Completion, call_limit, json_response_format
from citesum.llm.cache import ResponseCache, request_key
from citesum.llm.pool import EndpointPool, endpoint_specs

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
#: how often a call under a limit (:func:`citesum.llm.base.answer_by`) looks whether its request was given up
LIMIT_POLL_S = 0.1


class _FormatRefused(Exception):
    """The server rejected the form of ``response_format`` this request was sent with."""

    def __init__(self, dialect: int) -> None:
        super().__init__(JSON_DIALECTS[dialect])
        self.dialect = dialect


class _Retryable(Exception):
    """A transient failure. ``of_endpoint``: the server is down, overloaded or slow (it is set aside for its
    backoff); else it answered with a body this request cannot use (only this request waits before its retry)."""

    def __init__(self, reason: str, wait: float | None = None, *, of_endpoint: bool = True) -> None:
        super().__init__(reason)
        self.wait = wait
        self.of_endpoint = of_endpoint


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


#: how servers say a request is longer than the window: the pattern, the groups of (window, requested tokens),
#: and whether the requested tokens count the answer's (``max_tokens``) besides the prompt's
_TOO_LONG = [
    # vLLM and OpenAI: "This model's maximum context length is 8192 tokens. However, you requested 18161 tokens"
    (re.compile(r"maximum context length is (\d+) tokens\. However, you requested (\d+) tokens"), (1, 2), True),
    # vLLM since 0.6: "... maximum context length is 8192 tokens. However, your request has 9000 input tokens", or
    # "... your prompt contains at least 9000 input tokens" (where it stopped counting: the least it can be)
    (re.compile(r"maximum context length is (\d+) tokens\. However, (?:your request has|you requested \d+ output "
                r"tokens and your prompt contains at least) (\d+) input tokens"), (1, 2), False),
    # llama-cpp-python (its prompt's tokens only): "Requested tokens (18161) exceed context window of 8192"
    (re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)"), (2, 1), False),
    # llama.cpp's server: its JSON error carries the prompt's n_prompt_tokens and n_ctx
    (re.compile(r"exceed.{0,40}context size.*?\"n_prompt_tokens\"\s*:\s*(\d+).*?\"n_ctx\"\s*:\s*(\d+)", re.S),
     (2, 1), False),
    # the window without the request's size ("your prompt contains at least N input tokens" is a lower bound)
    (re.compile(r"maximum context length is (\d+) tokens"), (1, None), True),
    # the same, or OpenAI's code, without numbers
    (re.compile(r"context_length_exceeded|exceeds? (?:the )?(?:available )?context (?:size|window|length)", re.I),
     None, True),
]


def context_too_long(text: str) -> tuple[int | None, int | None, bool] | None:
    """(window, requested tokens, whether those count the answer's) when an error body says the request is longer
    than the model's window (the numbers may be None: not every server gives them); None for any other error."""
    for pattern, groups, with_answer in _TOO_LONG:
        match = pattern.search(text)
        if match:
            if groups is None:
                return None, None, with_answer
            window, requested = groups
            return (int(match.group(window)), None if requested is None else int(match.group(requested)),
                    with_answer)
    return None


def _completion_of(response: Any) -> Completion:
    """The completion of a chat-completions response body; :class:`_Retryable` when it is not one."""
    try:
        body = response.json()
        texts = tuple(choice["message"]["content"] or "" for choice in
                      sorted(body["choices"], key=lambda c: c.get("index", 0)))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _Retryable(f"malformed response body ({type(exc).__name__}): {response.text[:200]!r}",
                         of_endpoint=False) from exc
    if not texts:
        raise _Retryable("response has no choices", of_endpoint=False)
    usage = {k: int(v) for k, v in (body.get("usage") or {}).items() if isinstance(v, int)}
    return Completion(texts=texts, usage=usage)


def _stream_pieces(line: str, counts: dict[str, int]) -> list[str]:
    """The text pieces of one line of a chat-completions event stream (``data: {...}``); its token counts, when
    the server sends them, go to ``counts``."""
    if line.startswith("error:"):
        raise LLMError(f"the server's stream ended with an error: {line[6:].strip()[:300]}")
    if not line.startswith("data:"):
        return []
    data = line[5:].strip()
    if not data or data == "[DONE]":
        return []
    try:
        event = json.loads(data)
    except ValueError as exc:
        raise _Retryable(f"malformed event in the stream: {data[:200]!r}", of_endpoint=False) from exc
    if event.get("error"):  # the server failed part-way (OpenAI, vLLM and llama.cpp say it in the stream)
        raise LLMError(f"the server's stream ended with an error: {str(event['error'])[:300]}")
    if isinstance(event.get("usage"), dict):
        counts.update({k: int(v) for k, v in event["usage"].items() if isinstance(v, int)})
    return [text for choice in event.get("choices") or [] if (text := (choice.get("delta") or {}).get("content"))]


def raise_for_status(response: Any, base_url: str) -> None:
    """:class:`_Retryable` for a status worth retrying (429 with its ``Retry-After``), :class:`ContextTooLong` for a
    request longer than the model's window, :class:`LLMError` for any other error status."""
    if 400 <= response.status_code < 500 or response.status_code == 500:
        too_long = context_too_long(response.text)
        if too_long is not None:  # llama-cpp-python says it with a 500
            raise ContextTooLong(f"{base_url}: the request is longer than the model's window (HTTP "
                                 f"{response.status_code}: {response.text[:300]})", *too_long)
    if response.status_code in RETRYABLE_STATUS:
        wait = _retry_after(response.headers.get("Retry-After")) if response.status_code == 429 else None
        raise _Retryable(f"HTTP {response.status_code}: {response.text[:200]}", wait)
    if response.status_code >= 400:
        raise LLMError(f"{base_url}: HTTP {response.status_code} (not retried): {response.text[:300]}")


class OpenAIChat(LLM):
    """Chat completions over HTTP with retries, a concurrency limit and a persistent response cache.

    Args:
        model: Model name sent to the server.
        base_url: e.g. ``http://127.0.0.1:8080/v1``, or several (and ``@FILE`` pool files) for a pool of
            replicas; default ``$OPENAI_BASE_URL`` or OpenAI's.
        api_key_env: Environment variable holding the key (never stored in the cache or in errors).
        timeout: Seconds per attempt.
        max_retries: Retries after the first attempt for transient failures (a retry on another endpoint of a
            pool counts).
        concurrency: Requests in flight at once on each endpoint (a pool file may set its own per endpoint).
        cache: A :class:`ResponseCache`, or None to disable caching.
        context_window: The model's window in tokens, when known (``--window``): it caps context budgets.
    """

    def __init__(
        self,
        model: str,
        base_url: str | Iterable[str] | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_retries: int = 5,
        concurrency: int = 8,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        cache: ResponseCache | None = None,
        context_window: int | None = None,
    ) -> None:
        super().__init__()
        try:
            import httpx  # noqa: F401
        except ImportError as exc:
            raise MissingExtraError("the 'openai' LLM backend", "openai", "httpx") from exc
        self.model = model
        self.pool = EndpointPool(
            endpoint_specs(base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"),
            concurrency=concurrency, backoff_base=backoff_base, backoff_max=backoff_max)
        self.base_url = self.pool.endpoints[0].url
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.cache = cache
        self.context_window = context_window
        self.name = f"openai:{model}"
        self._json_dialect = 0  # index into JSON_DIALECTS: the first form this server has not refused

    @property
    def settings(self) -> tuple[object, ...]:
        return (self.name, tuple(endpoint.url for endpoint in self.pool.endpoints))

    def _key(self, request: ChatRequest) -> str:
        return request_key(base_url=self.base_url, model=self.model, **request.as_payload())

    async def amap(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        import httpx

        key = os.environ.get(self.api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        capacity = self.pool.capacity
        limits = httpx.Limits(max_connections=capacity, max_keepalive_connections=capacity)
        async with httpx.AsyncClient(timeout=self.timeout, headers=headers, limits=limits) as client:

            async def one(request: ChatRequest) -> Completion:
                cache_key = self._key(request)
                if self.cache is not None and (hit := self.cache.get(cache_key)) is not None:
                    self.usage.add(hit)
                    return hit
                completion = await self._with_retries(client, request)
                if self.cache is not None:
                    self.cache.put(cache_key, completion)
                self.usage.add(completion)
                return completion

            tasks = [asyncio.ensure_future(one(r)) for r in requests]
            answers = asyncio.gather(*tasks)
            limit = call_limit()
            try:
                return list(await answers) if limit is None else await self._within(answers, limit)
            except BaseException:
                # one request failed (a 4xx, or gave up): the others are cancelled and awaited before the client
                # closes, so they end as abandoned, not as transport failures that would eject a sound endpoint
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                if answers.done() and not answers.cancelled():
                    answers.exception()  # seen: what is raised here says what went wrong
                raise

    def stream(self, request: ChatRequest, usage: dict[str, int] | None = None) -> Iterator[str]:
        """The answer as the server writes it (``"stream": true``: server-sent events). A cached answer comes
        whole; a whole answer streamed is cached. A failure before the first piece is retried as
        :meth:`amap`'s are; after it, it is an :class:`LLMError`. The request's time limit and its client
        leaving (:func:`~citesum.llm.base.answer_by`), or the caller closing the iterator, close the connection,
        and the server stops writing."""
        key = self._key(request)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self.usage.add(hit)
            if usage is not None:
                usage.update(hit.usage, cached=1)
            yield hit.text
            return
        counts: dict[str, int] = {}
        pieces: list[str] = []
        loop = asyncio.new_event_loop()
        written = self._astream(request, counts)
        step: asyncio.Future[str] | None = None
        try:
            while True:
                step = asyncio.ensure_future(written.__anext__(), loop=loop)
                try:
                    piece = self._wait(loop, step)
                except StopAsyncIteration:
                    break
                pieces.append(piece)
                yield piece
        finally:
            try:
                if step is not None and not step.done():  # interrupted while waiting (Ctrl+C): the step first
                    step.cancel()
                    loop.run_until_complete(asyncio.gather(step, return_exceptions=True))
                loop.run_until_complete(written.aclose())  # closes the connection: the server stops writing
            finally:
                loop.close()
        completion = Completion(("".join(pieces),), counts)
        self.usage.add(completion)
        if usage is not None:
            usage.update(counts)
        if self.cache is not None:
            self.cache.put(key, completion)

    def _wait(self, loop: asyncio.AbstractEventLoop, step: "asyncio.Task[str]") -> str:
        """The next piece of the answer, once it comes; past the request's time limit, or once it is given up,
        the step is cancelled and :class:`LLMTimeout` or :class:`LLMCancelled` raised."""
        limit = call_limit()
        while not step.done():
            left = None if limit is None else limit.seconds_left()
            if limit is not None and ((left is not None and left <= 0) or limit.abandoned):
                step.cancel()
                loop.run_until_complete(asyncio.gather(step, return_exceptions=True))
                if limit.abandoned:
                    raise LLMCancelled(f"{self.base_url}: the request was given up; the call was cancelled")
                raise LLMTimeout(f"{self.base_url}: the model did not answer within the request's time limit; "
                                 "the call was cancelled")
            poll = LIMIT_POLL_S if left is None else min(LIMIT_POLL_S, max(left, 0.001))
            loop.run_until_complete(asyncio.wait({step}, timeout=poll if limit is not None else None))
        return step.result()

    async def _astream(self, request: ChatRequest, counts: dict[str, int]) -> AsyncIterator[str]:
        import httpx

        key = os.environ.get(self.api_key_env, "")
        payload = {"model": self.model, **request.as_payload(), "stream": True}
        failures: list[str] = []
        async with httpx.AsyncClient(timeout=self.timeout,
                                     headers={"Authorization": f"Bearer {key}"} if key else {}) as client:
            while True:
                endpoint = await self.pool.acquire()
                written = 0
                outcome, wait = "abandoned", None
                try:
                    async with client.stream("POST", f"{endpoint.url}/chat/completions", json=payload) as response:
                        if response.status_code >= 400:
                            await response.aread()
                            outcome = "answered"  # a 4xx is an answer (a retryable status says otherwise below)
                            raise_for_status(response, endpoint.url)  # too long, retryable, or an error
                        if "text/event-stream" not in response.headers.get("content-type", "text/event-stream"):
                            # a server that does not stream answers whole: its answer is the one piece
                            await response.aread()
                            completion = _completion_of(response)
                            counts.update(completion.usage)
                            yield completion.text
                            outcome = "answered"
                            return
                        async for line in response.aiter_lines():
                            for piece in _stream_pieces(line, counts):
                                written += 1
                                yield piece
                    outcome = "answered"
                    return
                except (httpx.TimeoutException, httpx.TransportError, _Retryable) as exc:
                    retryable = exc if isinstance(exc, _Retryable) else _Retryable(str(exc) or type(exc).__name__)
                    # an unusable body says nothing of the server's health: it is not set aside for it
                    outcome = "failed" if retryable.of_endpoint else "answered"
                    wait = retryable.wait
                    if written:
                        raise LLMError(f"{endpoint.url}: the answer broke off after {written} piece(s): "
                                       f"{exc}") from exc
                    failures.append(str(exc) or type(exc).__name__)
                    if len(failures) > self.max_retries:
                        raise LLMError(f"{self.base_url}: gave up after {len(failures)} attempt(s); last error: "
                                       f"{failures[-1]}") from exc
                    self.usage.retries += 1
                    if not retryable.of_endpoint:
                        await self._own_backoff(len(failures))
                finally:
                    self.pool.release(endpoint, outcome, wait)

    async def _within(self, answers: "asyncio.Future[list[Completion]]", limit: CallLimit) -> list[Completion]:
        """``answers`` once they come, or :class:`LLMTimeout` past the limit's deadline, :class:`LLMCancelled` once
        its request is given up: the caller then cancels the calls and closes their connections, and the server
        sees the client leave and frees its slot instead of finishing an answer nobody reads."""
        while not answers.done():
            left = limit.seconds_left()
            if left is not None and left <= 0:
                raise LLMTimeout(f"{self.base_url}: the model did not answer within the request's time limit; the "
                                 "call was cancelled")
            if limit.abandoned:
                raise LLMCancelled(f"{self.base_url}: the request was given up; the call was cancelled")
            await asyncio.wait({answers}, timeout=LIMIT_POLL_S if left is None else min(LIMIT_POLL_S, left))
        return list(answers.result())

    async def _own_backoff(self, failures: int) -> None:
        """A request's own wait before its next try, after ``failures`` of its own (not of the endpoint: an
        unusable body): exponential, with full jitter."""
        limit = min(self.pool.backoff_max, self.pool.backoff_base * 2 ** (failures - 1))
        await asyncio.sleep(random.uniform(0, limit))

    async def _with_retries(self, client: Any, request: ChatRequest) -> Completion:
        """Send ``request`` until an answer, retrying transient failures. The pool delays the retry: the
        endpoint that failed is ejected for its backoff (or Retry-After), so the retry goes to another endpoint
        at once, or waits for this one when it is the only one."""
        failures: list[str] = []
        while True:
            endpoint = await self.pool.acquire()
            try:
                completion = await self._attempt(client, endpoint.url, request)
            except _FormatRefused as refused:
                # Not a failure of this request: resend it (and every later one) in the next form.
                self.pool.release(endpoint)
                self._json_dialect = max(self._json_dialect, refused.dialect + 1)
                continue
            except _Retryable as exc:
                # an unusable body says nothing of the server's health: other requests keep it at full width
                self.pool.release(endpoint, "failed" if exc.of_endpoint else "answered", exc.wait)
                failures.append(f"{endpoint.url}: {exc}" if len(self.pool.endpoints) > 1 else str(exc))
                if len(failures) > self.max_retries:
                    break
                self.usage.retries += 1
                if not exc.of_endpoint:
                    await self._own_backoff(len(failures))
                continue
            except LLMError:
                self.pool.release(endpoint)  # a 4xx: an answer, not retried
                raise
            except BaseException:
                self.pool.release(endpoint, "abandoned")  # cancelled, or a bug: says nothing of the endpoint
                raise
            self.pool.release(endpoint)
            return completion
        where = self.base_url if len(self.pool.endpoints) == 1 else f"{len(self.pool.endpoints)} endpoints"
        raise LLMError(f"{where}: gave up after {len(failures)} attempt(s); last error: {failures[-1]}")

    async def _post(self, client: Any, url: str, payload: dict[str, Any]) -> Any:
        """The server's response, whatever its status; :class:`_Retryable` when it could not be reached in time."""
        import httpx

        try:
            return await client.post(url, json=payload)
        except httpx.TimeoutException as exc:
            raise _Retryable(f"timed out after {self.timeout:g}s ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise _Retryable(f"connection failed ({type(exc).__name__}: {exc})") from exc

    async def _attempt(self, client: Any, base_url: str, request: ChatRequest) -> Completion:
        payload = {"model": self.model, **request.as_payload()}
        dialect = self._json_dialect
        if request.json_schema is not None:
            payload["response_format"] = json_response_format(request.json_schema, JSON_DIALECTS[dialect])
            if payload["response_format"] is None:
                del payload["response_format"]
        response = await self._post(client, f"{base_url}/chat/completions", payload)
        if response.status_code >= 400 and "response_format" in payload and "response_format" in response.text:
            raise _FormatRefused(dialect)  # llama-cpp-python answers an unknown form with a 500, not a 400
        raise_for_status(response, base_url)
        return _completion_of(response)
