"""Whether a piece of work grows linearly with its input, measured so that a busy machine does not fail it."""

from __future__ import annotations

import gc
import time
from typing import Callable

#: the shortest time compared: below it, a timer's and the machine's noise are as large as what is measured
_MEASURABLE_SECONDS = 0.05
#: the most the input is doubled to reach it
_MOST_DOUBLINGS = 6
#: how much longer twice the input may take: linear work takes 2 times as long, quadratic work 4 times
_MOST_GROWTH = 3.2


def best_seconds(work: Callable[[], object], runs: int = 3) -> float:
    """The fastest of ``runs`` timings of ``work``: noise from other processes only ever adds time. The garbage
    collector is held off while it runs, since its passes over everything alive grow with the input's objects."""
    timings = []
    for _ in range(runs):
        gc.collect()
        gc.disable()
        try:
            started = time.perf_counter()
            work()
            timings.append(time.perf_counter() - started)
        finally:
            gc.enable()
    return min(timings)


def _growth(work: Callable[[int], object], size: int) -> tuple[float, float]:
    """The best timings of ``work`` at ``size`` and at twice it, run in turn, so that a busy spell of the machine
    slows both rather than one."""
    small: list[float] = []
    large: list[float] = []
    for _ in range(3):
        small.append(best_seconds(lambda: work(size), runs=1))
        large.append(best_seconds(lambda: work(2 * size), runs=1))
    return min(small), min(large)


def assert_linear(work: Callable[[int], object], size: int, label: object = "") -> None:
    """Fail when doubling the input of ``work`` takes more than 3.2 times as long (quadratic work takes 4 times),
    the input first doubled from ``size`` until the work takes long enough to be measured. A pair that grows too
    much is measured once more at twice the size, and the work fails only when both pairs do: a busy machine
    seldom slows the larger run of two pairs, while quadratic work grows 4 times in each."""
    for _ in range(_MOST_DOUBLINGS):
        if best_seconds(lambda: work(size), runs=1) >= _MEASURABLE_SECONDS:
            break
        size *= 2
    measured = []
    for pair_size in (size, 2 * size):
        small, large = _growth(work, pair_size)
        measured.append((pair_size, small, large))
        if large < _MOST_GROWTH * small:
            return
    raise AssertionError((label, measured))
