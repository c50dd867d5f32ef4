"""Reads run on a fixed set of workers, with a bounded queue in front and a deadline on each request.

There is no global lock: each request reads its own pinned generation of the index (``Index.read``). The
workers are processes by default: retrieval and the extractive summarizer are mostly Python holding the
interpreter lock, so threads gain little on several cores where processes use them all (each worker process has
its own index object, one SQLite connection, and picks up new generations like any reader). Threads are the
lighter choice for tests and for LLM-bound services. When every worker is busy and the queue is full, a
request is refused at once with 503 and a ``Retry-After`` estimated from recent service times.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import threading
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, AsyncIterator, Awaitable, Callable

from citesum.service import reader as read_work
from citesum.service.config import WorkerKind
from citesum.service.errors import ClientLeft, Overloaded, RequestTimeout, WorkerDied
from citesum.service.reader import Readers

log = logging.getLogger("citesum.service")
#: how long before a request's time limit its LLM calls are cancelled (at most: a tenth of a short limit)
DEADLINE_MARGIN_S = 0.5
#: how often a request that can be given up looks whether its client is still there
CLIENT_POLL_S = 0.5


def _ready(readers: Readers) -> bool:
    return True


class ReadPool:
    """Runs the functions of :mod:`citesum.service.reader` on ``workers`` threads or processes, each on the
    reader of the collection a request names: the workers are shared by every collection of the service."""

    def __init__(self, readers: Readers, workers: int, queue: int, timeout_s: float,
                 kind: WorkerKind = "process", niceness: int = 0) -> None:
        self.readers = readers
        self.niceness = niceness
        self.workers = workers
        self.kind = kind
        self.capacity = workers + queue
        self.timeout_s = timeout_s
        self._busy = 0  # admitted and not finished; only touched on the event loop's thread
        self._mean_s = 0.05  # moving average of the work's own time (not the wait), for Retry-After
        self._executor = self._start()

    def _start(self) -> Executor:
        if self.kind == "thread":
            read_work.one_thread_each()  # for the whole server process, whose threads are the workers
            return ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="citesum-read")
        # spawn, not fork: the server process already runs threads (a forked child could inherit held locks)
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=read_work.start_worker,
                                   initargs=(self.readers.paths(), self.readers.llm, self.readers.default_budget,
                                             self.niceness, self.readers.pace, self.readers.summary_indexes,
                                             self.readers.relevance_embedder))

    async def warm_up(self) -> None:
        """Start every worker and load what the first request needs, before the server takes requests."""
        loop = asyncio.get_running_loop()
        if self.kind == "thread":
            await loop.run_in_executor(self._executor, self.readers.warm_up)
            return
        # one task per worker at once: each finds no idle worker and starts a new one (whose initializer
        # warms it up); a worker that could not open the index answers its task with the reason
        tasks = [loop.run_in_executor(self._executor, read_work.in_worker, _ready) for _ in range(self.workers)]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                log.warning("a read worker is not ready: %s", result)

    @property
    def busy(self) -> int:
        return self._busy

    def retry_after(self) -> int:
        """Seconds until the queue ahead of a new request has been worked off, at the recent pace."""
        return max(1, math.ceil(self._mean_s * (self._busy - self.workers + 1) / self.workers))

    async def run_json(self, collection: str | None, function: Callable[..., Any], *args: Any,
                       client_left: Callable[[], Awaitable[bool]] | None = None,
                       time_limit_s: float | None = None) -> bytes:
        """``function(reader, *args)`` on a worker, as JSON bytes (see :func:`~citesum.service.reader.timed_json`)."""
        seconds, encoded = await self.run(collection, read_work.timed_json, function, *args, client_left=client_left,
                                          time_limit_s=time_limit_s)
        self._mean_s = 0.9 * self._mean_s + 0.1 * seconds
        return encoded  # type: ignore[no-any-return]

    async def run(self, collection: str | None, function: Callable[..., Any], *args: Any,
                  client_left: Callable[[], Awaitable[bool]] | None = None,
                  time_limit_s: float | None = None) -> Any:
        """``function(reader, *args)`` on a worker, with the reader of ``collection`` (None: the readers of every
        collection, for a request over several); raises :class:`Overloaded` at capacity, :class:`RequestTimeout`
        past the deadline (the work then finishes in the background and keeps its place until it does, so slow
        requests cannot overfill the machine) and :class:`WorkerDied` when its worker process died. With
        ``client_left`` (whether the client has gone), a thread worker's LLM calls are cancelled once it has.
        ``time_limit_s`` replaces the pool's own limit for this request (a search that runs a language model)."""
        limit = time_limit_s or self.timeout_s
        given_up = threading.Event() if client_left is not None and self.kind == "thread" else None
        future, executor = self._admit(collection, limit, given_up, function, *args)
        outcome = self._outcome(future)
        work = asyncio.shield(outcome)
        try:
            if given_up is not None and client_left is not None:
                return await self._unless_the_client_leaves(work, limit, given_up, client_left)
            return await asyncio.wait_for(work, limit)
        except ClientLeft:
            future.cancel()  # drops it if it has not started yet
            raise
        except asyncio.TimeoutError:
            future.cancel()  # drops it if it has not started yet
            raise RequestTimeout(limit) from None
        except BrokenProcessPool:
            self._restart(executor)
            raise WorkerDied() from None

    async def run_stream(self, collection: str, function: Callable[..., None], *args: Any,
                         time_limit_s: float | None = None) -> AsyncIterator[bytes]:
        """What ``function(reader, *args, emit)`` gives ``emit``, as it comes: a thread worker's events one by
        one, a worker process's all at once when it is done (see :func:`~citesum.service.reader.collected`).
        Admitted, timed and refused as :meth:`run`; closing the iterator (the client left) gives the work up,
        and its LLM calls are cancelled."""
        if self.kind != "thread":
            for event in await self.run(collection, read_work.collected, function, *args, time_limit_s=time_limit_s):
                yield event
            return
        limit = time_limit_s or self.timeout_s
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[bytes] = asyncio.Queue()
        given_up = threading.Event()
        future, _ = self._admit(collection, limit, given_up, function, *args,
                                lambda event: loop.call_soon_threadsafe(events.put_nowait, event))
        outcome = self._outcome(future)
        deadline = time.monotonic() + limit
        try:
            while True:
                waiting = asyncio.ensure_future(events.get())
                await asyncio.wait({waiting, outcome}, timeout=max(deadline - time.monotonic(), 0),
                                   return_when=asyncio.FIRST_COMPLETED)
                if waiting.done():
                    yield waiting.result()
                    continue
                waiting.cancel()
                if outcome.done():
                    while not events.empty():  # what was emitted just before the end
                        yield events.get_nowait()
                    outcome.result()  # the work's error, if it failed
                    return
                raise RequestTimeout(limit)
        finally:
            if not outcome.done():
                given_up.set()  # the client left, or the time is up: the model stops writing
                future.cancel()

    def _admit(self, collection: str | None, limit: float, given_up: threading.Event | None,
               function: Callable[..., Any], *args: Any) -> tuple[Future[Any], Executor]:
        """``function(reader, *args)`` submitted to a worker, to end within ``limit`` seconds, counted busy until
        it ends (and the executor it went to); :class:`Overloaded` at capacity. A pool a dead worker broke
        earlier is restarted, once."""
        if self._busy >= self.capacity:
            raise Overloaded(self.retry_after())
        loop = asyncio.get_running_loop()
        self._busy += 1
        executor = self._executor
        try:
            try:
                future = self._submit(executor, collection, limit, given_up, function, *args)
            except BrokenProcessPool:  # a worker died earlier (killed, out of memory): start a new set, once
                executor = self._restart(executor)
                future = self._submit(executor, collection, limit, given_up, function, *args)
        except BaseException:
            self._busy -= 1
            raise
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._release))
        return future, executor

    @staticmethod
    def _outcome(future: Future[Any]) -> "asyncio.Future[Any]":
        """``future`` on the event loop. A request given up (past its deadline, or its client gone) leaves the
        work's end unawaited: its error is looked at here, so that it is not logged as never retrieved."""
        outcome = asyncio.wrap_future(future)
        outcome.add_done_callback(lambda done: done.cancelled() or done.exception())
        return outcome

    @staticmethod
    async def _unless_the_client_leaves(work: "asyncio.Future[Any]", limit: float, given_up: threading.Event,
                                        client_left: Callable[[], Awaitable[bool]]) -> Any:
        """``work``'s result, within ``limit`` seconds; a client that left gives it up (``given_up``: its LLM
        calls are cancelled), and the answer goes nowhere."""
        deadline = time.monotonic() + limit
        while not work.done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise asyncio.TimeoutError
            await asyncio.wait({work}, timeout=min(CLIENT_POLL_S, left))
            if not work.done() and await client_left():
                given_up.set()
                raise ClientLeft()
        return work.result()

    def _submit(self, executor: Executor, collection: str | None, limit: float, given_up: threading.Event | None,
                function: Callable[..., Any], *args: Any) -> Future[Any]:
        # the work's LLM calls end just before the request's time limit: the worker says the model was too slow
        # (and its connection to the model is closed) before the limit answers 504 in its place
        deadline = time.time() + limit - min(DEADLINE_MARGIN_S, limit / 10)
        if self.kind == "thread":
            return executor.submit(read_work.on_collection, self.readers, collection, deadline, given_up, function,
                                   *args)
        return executor.submit(read_work.in_worker, read_work.on_collection, collection, deadline, None, function,
                               *args)

    def _restart(self, broken: Executor) -> Executor:
        """New workers in place of ``broken`` — unless another request already replaced it: every request of
        a broken pool sees it broken, and each restarting would kill the new workers in turn."""
        if self._executor is broken:
            log.warning("a read worker process died; starting new workers")
            broken.shutdown(wait=False, cancel_futures=True)
            self._executor = self._start()
        return self._executor

    def _release(self) -> None:
        self._busy -= 1

    def shutdown(self) -> None:
        # waits for the work in hand (the server stops taking requests first) and stops the workers
        self._executor.shutdown(wait=True, cancel_futures=True)
