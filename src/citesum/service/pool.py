"""Reads run on a fixed set of workers, with a bounded queue in front and a deadline on each request.

There is no global lock: each request reads its own pinned generation of the index (``Index.read``). The
workers are processes by default: retrieval and the extractive summarizer are mostly Python holding the
interpreter lock, so threads gained 1.2-1.3x on two cores where processes use both (each worker process has
its own index object, one SQLite connection, and picks up new generations like any reader). Threads are the
lighter choice for tests and for LLM-bound services. When every worker is busy and the queue is full, a
request is refused at once with 503 and a ``Retry-After`` estimated from recent service times.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Literal

from citesum.errors import IndexStoreError
from citesum.service import reader as read_work
from citesum.service.reader import Reader

log = logging.getLogger("citesum.service")
WorkerKind = Literal["process", "thread"]


class Overloaded(Exception):
    """Every worker is busy and the queue is full (or the job queue is)."""

    def __init__(self, retry_after: int, what: str = "requests") -> None:
        super().__init__(f"the service is at capacity for {what}; retry in {retry_after} s")
        self.retry_after = retry_after


class RequestTimeout(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"the request took longer than the service's {seconds:g} s limit")


def _ready(reader: Reader) -> bool:
    return True


class ReadPool:
    """Runs the functions of :mod:`citesum.service.reader` on ``workers`` threads or processes."""

    def __init__(self, reader: Reader, workers: int, queue: int, timeout_s: float,
                 kind: WorkerKind = "process", niceness: int = 0) -> None:
        self.reader = reader
        self.niceness = niceness
        self.workers = workers
        self.kind = kind
        self.capacity = workers + queue
        self.timeout_s = timeout_s
        self._busy = 0  # admitted and not finished; only touched on the event loop's thread
        self._mean_s = 0.05  # moving average of service times, for Retry-After
        self._executor = self._start()

    def _start(self) -> Executor:
        if self.kind == "thread":
            return ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="citesum-read")
        # spawn, not fork: the server process already runs threads (a forked child could inherit held locks)
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=read_work.start_worker,
                                   initargs=(str(self.reader.index.path), self.reader.llm,
                                             self.reader.default_budget, self.niceness))

    async def warm_up(self) -> None:
        """Start every worker and load what the first request needs, before the server takes requests."""
        loop = asyncio.get_running_loop()
        if self.kind == "thread":
            await loop.run_in_executor(self._executor, self.reader.warm_up)
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
        return max(1, math.ceil(self._mean_s * self._busy / self.workers))

    async def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(reader, *args)`` on a worker; raises :class:`Overloaded` at capacity and
        :class:`RequestTimeout` past the deadline (the work then finishes in the background and keeps its
        place until it does, so slow requests cannot overfill the machine)."""
        if self._busy >= self.capacity:
            raise Overloaded(self.retry_after())
        loop = asyncio.get_running_loop()
        self._busy += 1
        started = time.perf_counter()

        def finished(_: Future[Any]) -> None:
            loop.call_soon_threadsafe(self._release, time.perf_counter() - started)

        try:
            if self.kind == "thread":
                future = self._executor.submit(function, self.reader, *args)
            else:
                future = self._executor.submit(read_work.in_worker, function, *args)
        except BrokenProcessPool:  # a worker died earlier (killed, out of memory): start a new set
            self._restart()
            future = self._executor.submit(read_work.in_worker, function, *args)
        except BaseException:
            self._busy -= 1
            raise
        future.add_done_callback(finished)
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), self.timeout_s)
        except asyncio.TimeoutError:
            future.cancel()  # drops it if it has not started yet
            raise RequestTimeout(self.timeout_s) from None
        except BrokenProcessPool:
            self._restart()
            raise IndexStoreError("a worker process died while answering (it is restarted); retry") from None

    def _restart(self) -> None:
        log.warning("a read worker process died; starting new ones")
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._executor = self._start()

    def _release(self, seconds: float) -> None:
        self._busy -= 1
        self._mean_s = 0.9 * self._mean_s + 0.1 * seconds

    def shutdown(self) -> None:
        # waits for the work in hand (the server stops taking requests first) and stops the workers
        self._executor.shutdown(wait=True, cancel_futures=True)
