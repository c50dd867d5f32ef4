"""Whether a piece of work grows linearly with its input, measured so that a busy machine does not fail it."""

from __future__ import annotations

import time
from typing import Callable

#: the shortest time compared: below it, a timer's and the machine's noise are as large as what is measured
_MEASURABLE_SECONDS = 0.05
#: the most the input is doubled to reach it
_MOST_DOUBLINGS = 6


def best_seconds(work: Callable[[], object], runs: int = 3) -> float:
    """The fastest of ``runs`` timings of ``work``: noise from other processes only ever adds time."""
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        timings.append(time.perf_counter() - started)
    return min(timings)


def assert_linear(work: Callable[[int], object], size: int, label: object = "") -> None:
    """Fail when doubling the input of ``work`` takes more than 3.2 times as long (quadratic work takes 4 times),
    the input first doubled from ``size`` until the work takes long enough to be measured."""
    small = best_seconds(lambda: work(size))
    for _ in range(_MOST_DOUBLINGS):
        if small >= _MEASURABLE_SECONDS:
            break
        size *= 2
        small = best_seconds(lambda: work(size))
    large = best_seconds(lambda: work(2 * size))
    assert large < 3.2 * small, (label, size, small, large)
