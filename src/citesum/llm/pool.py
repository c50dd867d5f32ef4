"""A pool of OpenAI-compatible endpoints that serve the same model (replicas of a vLLM or llama.cpp server).

Each request goes to the endpoint with the fewest requests outstanding (least-outstanding-requests routing: a
slow replica keeps its requests longer, so it is given fewer), never beyond an endpoint's own concurrency
limit. An endpoint that fails (connection error, timeout, 5xx, 429) is ejected for a while, the longer the more
times in a row it failed, and the request is sent again at once to another endpoint when one is free; when
every endpoint is ejected, the request waits for the first to come back, which is the backoff a single server
gets. After an ejection the endpoint takes one request at a time (the probe) until one succeeds; requests
that were already on it when it was ejected do not lengthen the ejection when they fail while it lasts.

Endpoints are given as URLs, or as ``@FILE``: a pool file with one endpoint a line, ``URL [max_concurrency]``,
and ``#`` comments. The pool is shared by every thread and event loop that calls the same backend (a service
with thread workers calls it from several threads at once), so its state sits under a lock and a waiter is woken
on its own loop. A copy in another process (the service's process workers) has its own counts and limits.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Literal, Sequence

from citesum.errors import ConfigError


#: how a request on an endpoint ended (see :meth:`EndpointPool.release`)
Outcome = Literal["answered", "failed", "abandoned"]


@dataclass(frozen=True)
class EndpointSpec:
    url: str
    #: requests in flight at once on this endpoint; None: the backend's ``concurrency``
    max_concurrency: int | None = None


def endpoint_specs(values: str | Iterable[str]) -> list[EndpointSpec]:
    """The endpoints named by URLs and ``@FILE`` pool files, in order, each URL once."""
    specs: list[EndpointSpec] = []
    for value in [values] if isinstance(values, str) else values:
        specs += _pool_file(Path(value[1:])) if value.startswith("@") else [EndpointSpec(_url(value, value))]
    seen: set[str] = set()
    unique = [spec for spec in specs if not (spec.url in seen or seen.add(spec.url))]  # type: ignore[func-returns-value]
    if not unique:
        raise ConfigError("no LLM endpoint given (a --base-url, or a pool file with one URL a line)")
    return unique


def _url(text: str, where: str) -> str:
    if not text.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: an endpoint must be an http:// or https:// URL, got {text!r}")
    return text.rstrip("/")


def _pool_file(path: Path) -> list[EndpointSpec]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the endpoint pool file {path}: {exc}") from exc
    specs = []
    for number, line in enumerate(lines, start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"{path}:{number}"
        if len(fields) > 2 or (len(fields) == 2 and not (fields[1].isdigit() and int(fields[1]) > 0)):
            raise ConfigError(f"{where}: expected 'URL [max_concurrency]' (a positive whole number), got {line.strip()!r}")
        specs.append(EndpointSpec(_url(fields[0], where), int(fields[1]) if len(fields) == 2 else None))
    if not specs:
        raise ConfigError(f"the endpoint pool file {path} names no endpoint")
    return specs


@dataclass
class Endpoint:
    url: str
    max_concurrency: int
    outstanding: int = 0
    sent: int = 0
    answered: int = 0
    failed: int = 0
    failed_in_a_row: int = 0
    ejected_until: float = 0.0
    ejections: int = 0


class EndpointPool:
    """The endpoints' health and load, shared by all callers of one backend.

    Args:
        specs: The endpoints.
        concurrency: Each endpoint's limit when its spec has none.
        backoff_base, backoff_max: An endpoint that failed ``n`` times in a row is ejected for a random time
            between half and all of ``min(backoff_max, backoff_base * 2 ** (n - 1))`` seconds (or for the
            server's ``Retry-After``).
        clock: Seconds, monotonic (a parameter for tests).
    """

    def __init__(
        self,
        specs: Sequence[EndpointSpec],
        *,
        concurrency: int,
        backoff_base: float,
        backoff_max: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.endpoints = [Endpoint(spec.url, spec.max_concurrency or concurrency) for spec in specs]
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self._clock = clock
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def __getstate__(self) -> tuple[list[EndpointSpec], float, float]:
        """A copy in another process starts with the endpoints' configuration, not this process's traffic."""
        return [EndpointSpec(e.url, e.max_concurrency) for e in self.endpoints], self.backoff_base, self.backoff_max

    def __setstate__(self, state: tuple[list[EndpointSpec], float, float]) -> None:
        specs, base, most = state
        self.__init__(specs, concurrency=1, backoff_base=base, backoff_max=most)  # type: ignore[misc]

    @property
    def capacity(self) -> int:
        return sum(e.max_concurrency for e in self.endpoints)

    async def acquire(self) -> Endpoint:
        """The endpoint for the next request, counted as outstanding until :meth:`release`; waits while every
        endpoint is ejected or full."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                now = self._clock()
                chosen = self._least_outstanding(now)
                if chosen is not None:
                    chosen.outstanding += 1
                    chosen.sent += 1
                    return chosen
                returning = [e.ejected_until for e in self.endpoints if e.ejected_until > now]
                woken: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, woken))
            # every endpoint ejected or full: wait for a release, or for the first ejection to end
            timeout = max(0.0, min(returning) - now) if returning else None
            try:
                # asyncio.wait, not wait_for: on Python 3.11 wait_for with a timeout returns when the future is
                # woken in the same turn as its caller is cancelled, and the cancellation is lost (tested)
                await asyncio.wait((woken,), timeout=timeout)
            finally:
                woken.cancel()  # a wake-up that comes later finds it done
                with self._lock:
                    if (loop, woken) in self._waiters:
                        self._waiters.remove((loop, woken))

    def _least_outstanding(self, now: float) -> Endpoint | None:
        free = [e for e in self.endpoints if e.ejected_until <= now
                and e.outstanding < (1 if e.failed_in_a_row else e.max_concurrency)]
        # ties go to the endpoint sent the fewest requests, so an idle pool is used in turn
        return min(free, key=lambda e: (e.outstanding, e.sent), default=None)

    def release(self, endpoint: Endpoint, outcome: Outcome = "answered", wait: float | None = None) -> None:
        """The request on ``endpoint`` is over: ``answered`` (any answer, even a 4xx: the server is up),
        ``failed`` (the endpoint is ejected for ``wait`` seconds, a Retry-After, or else its backoff) or
        ``abandoned`` (cancelled by the caller: says nothing of the endpoint)."""
        with self._lock:
            endpoint.outstanding -= 1
            now = self._clock()
            if outcome == "failed":
                endpoint.failed += 1
                if endpoint.ejected_until <= now:  # else a request sent before the ejection: already counted
                    endpoint.failed_in_a_row += 1
                    endpoint.ejections += 1
                if wait is None:
                    wait = min(self.backoff_max, self.backoff_base * 2 ** (endpoint.failed_in_a_row - 1))
                    wait *= random.uniform(0.5, 1.0)
                endpoint.ejected_until = max(endpoint.ejected_until, now + wait)
            elif outcome == "answered":
                endpoint.answered += 1
                endpoint.failed_in_a_row = 0
            waiters, self._waiters = self._waiters, []
        for loop, woken in waiters:
            try:
                loop.call_soon_threadsafe(_wake, woken)
            except RuntimeError:  # its loop has ended meanwhile (the waiter timed out and returned): none to wake
                pass

    def stats(self) -> list[dict[str, object]]:
        """Per endpoint: requests sent, answered and failed, times ejected, and whether it is ejected now."""
        with self._lock:
            now = self._clock()
            return [{"url": e.url, "max_concurrency": e.max_concurrency, "sent": e.sent, "answered": e.answered,
                     "failed": e.failed, "ejections": e.ejections, "ejected_now": e.ejected_until > now}
                    for e in self.endpoints]


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)
