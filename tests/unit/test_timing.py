"""The linear-time check itself: it passes linear work and fails quadratic work, so the tests that use it can fail."""

from __future__ import annotations

import pytest

from timing import assert_linear


def _linear(count: int) -> int:
    return sum(range(count))


def _quadratic(count: int) -> int:
    data = bytes(count)
    return sum(len(data[:end]) for end in range(count))  # copies 1, 2, ..., count bytes


def test_linear_work_passes_and_quadratic_work_fails_in_both_of_its_pairs() -> None:
    assert_linear(_linear, 3_200_000)
    with pytest.raises(AssertionError) as failure:
        assert_linear(_quadratic, 60_000, "quadratic")
    label, measured = failure.value.args[0]
    assert label == "quadratic" and len(measured) == 2  # the second, larger pair was measured too
    assert all(large >= 3.2 * small for _, small, large in measured)
