"""Whether a piece of work grows linearly with its input, measured so that a busy machine does not fail it."""

from __future__ import annotations

import time
from typing import Callable


def best_seconds(work: Callable[[], object], runs: int = 3) -> float:
    """The fastest of ``runs`` timings of ``work``: noise from other processes only ever adds time."""
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        timings.append(time.perf_counter() - started)
    return min(timings)


def doubling_ratio(work: Callable[[int], object], size: int) -> tuple[float, float]:
    """The best times of ``work(size)`` and ``work(2 * size)``: about twice for linear work, four times for
    quadratic."""
    return best_seconds(lambda: work(size)), best_seconds(lambda: work(2 * size))


def assert_linear(work: Callable[[int], object], size: int, label: object = "") -> None:
    """Fail when doubling the input takes more than 3.2 times as long (quadratic work takes 4 times)."""
    small, large = doubling_ratio(work, size)
    assert large < 3.2 * small + 0.02, (label, small, large)
