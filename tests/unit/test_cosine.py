"""The kernel of every query-time cosine score: a row's score is the same wherever the row is read from."""

from __future__ import annotations

import numpy as np

from citesum.index.cosine import cosine_scores
from citesum.index.segments import SegmentVectors


def _unit_rows(count: int, dim: int = 256, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_row_scores_the_same_in_any_matrix_and_at_any_alignment() -> None:
    vectors, query = _unit_rows(3000), _unit_rows(1, seed=1)[0]
    every = cosine_scores(vectors, query)
    assert every.dtype == np.float32 and every.shape == (3000,)
    np.testing.assert_allclose(every, vectors.astype(np.float64) @ query.astype(np.float64), atol=1e-5)
    picked = np.random.default_rng(2).choice(3000, 1000, replace=False)
    assert np.array_equal(cosine_scores(vectors[picked], query), every[picked])  # a graph's candidates
    assert all(cosine_scores(vectors[i: i + 1], query)[0] == every[i] for i in range(0, 3000, 97))  # one at a time
    for offset in (1, 3, 7):  # rows and query not aligned as the original's
        shifted = np.empty(vectors.size + offset, dtype=np.float32)[offset:].reshape(vectors.shape)
        shifted[:] = vectors
        moved_query = np.empty(256 + offset, dtype=np.float32)[offset:]
        moved_query[:] = query
        assert np.array_equal(cosine_scores(shifted, moved_query), every)
    copies = np.repeat(vectors[:5], 40, axis=0)  # copies of a passage tie
    assert np.array_equal(cosine_scores(copies, query), np.repeat(every[:5], 40))


def test_vectors_across_segments_score_as_one_matrix() -> None:
    first, second = _unit_rows(500, seed=3), _unit_rows(300, seed=4)
    held = np.array([0, 5, 7, 299])
    vectors = SegmentVectors([(first, None), (second, held)], 256)
    query = _unit_rows(1, seed=5)[0]
    by_part = np.concatenate([cosine_scores(first, query), cosine_scores(second, query)[held]])
    assert np.array_equal(cosine_scores(vectors, query), by_part)  # each part's held rows, in order
    assert np.array_equal(cosine_scores(np.concatenate([first, second[held]]), query), by_part)
    assert np.array_equal(cosine_scores(first.tolist(), query), by_part[:500])  # a list is read as an array
