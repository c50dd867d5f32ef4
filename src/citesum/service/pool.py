"""Reads run on a fixed pool of threads, with a bounded queue in front and a deadline on each request.

There is no global lock: each request reads its own pinned generation of the index (``Index.read``) on its
worker thread, so requests overlap wherever the work leaves the interpreter lock (numpy, bm25s, SQLite,
tokenizers). When every worker is busy and the queue is full, a request is refused at once with 503 and a
``Retry-After`` estimated from recent service times, rather than left to pile up.
"""

from __future__ import annotations

import asyncio
import math
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, TypeVar

T = TypeVar("T")


class Overloaded(Exception):
    """Every worker is busy and the queue is full (or the job queue is)."""

    def __init__(self, retry_after: int, what: str = "requests") -> None:
        super().__init__(f"the service is at capacity for {what}; retry in {retry_after} s")
        self.retry_after = retry_after


class RequestTimeout(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"the request took longer than the service's {seconds:g} s limit")


class ReadPool:
    def __init__(self, workers: int, queue: int, timeout_s: float) -> None:
        self.workers = workers
        self.capacity = workers + queue
        self.timeout_s = timeout_s
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="citesum-read")
        self._busy = 0  # admitted and not finished; only touched on the event loop's thread
        self._mean_s = 0.05  # moving average of service times, for Retry-After

    @property
    def busy(self) -> int:
        return self._busy

    def retry_after(self) -> int:
        return max(1, math.ceil(self._mean_s * self._busy / self.workers))

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` on a worker thread; raises :class:`Overloaded` at capacity and :class:`RequestTimeout`
        past the deadline (the work then finishes in the background and keeps its place until it does, so
        slow requests cannot overfill the machine)."""
        if self._busy >= self.capacity:
            raise Overloaded(self.retry_after())
        loop = asyncio.get_running_loop()
        self._busy += 1
        started = time.perf_counter()

        def finished(_: Future[T]) -> None:
            loop.call_soon_threadsafe(self._release, time.perf_counter() - started)

        future = self._executor.submit(work)
        future.add_done_callback(finished)
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), self.timeout_s)
        except asyncio.TimeoutError:
            future.cancel()  # drops it if it has not started yet
            raise RequestTimeout(self.timeout_s) from None

    def _release(self, seconds: float) -> None:
        self._busy -= 1
        self._mean_s = 0.9 * self._mean_s + 0.1 * seconds

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
