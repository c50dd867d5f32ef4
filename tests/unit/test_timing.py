"""The linear-time check itself: it passes linear work and fails quadratic work, so the tests that use it can fail."""

from __future__ import annotations

from timing import assert_linear


def _linear(count: int) -> int:
    return sum(range(count))


def _quadratic(count: int) -> int:
    # steps of the interpreter, not copies of memory: memory's speed varies with what else the machine runs, and
    # a busy machine had slowed the smaller copies more than the larger ones
    return sum(1 for end in range(count) for _ in range(end))


def test_linear_work_passes_and_quadratic_work_fails_in_both_of_its_pairs() -> None:
    assert_linear(_linear, 3_200_000)
    # a busy spell of a shared machine can hide quadratic growth from one check (a CI run's once did: every small
    # timing of both pairs slowed), seldom from three in a row; the check must catch it in one of them
    failures: list[AssertionError] = []
    for _ in range(3):
        try:
            assert_linear(_quadratic, 1_000, "quadratic")
        except AssertionError as failure:
            failures.append(failure)
            break
    assert failures, "quadratic work passed the linear check three times in a row"
    label, measured = failures[0].args[0]
    assert label == "quadratic" and len(measured) == 2  # the second, larger pair was measured too
    assert all(large >= 3.2 * small for _, small, large in measured)
