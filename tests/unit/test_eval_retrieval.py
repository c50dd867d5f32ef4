from __future__ import annotations

import math

import pytest

from citesum.evaluate.retrieval import (
    insight_recall, ndcg_at_k, precision_at_k, recall_at_k, select_within_budget,
)

RELEVANCE = {"a": 3, "b": 0, "c": 1, "d": 2}


def test_ndcg_hand_computed() -> None:
    ranking = ["b", "a", "c"]
    dcg = (2**3 - 1) / math.log2(3) + (2**1 - 1) / math.log2(4)
    ideal = (2**3 - 1) / 1 + (2**2 - 1) / math.log2(3) + (2**1 - 1) / math.log2(4)
    assert ndcg_at_k(ranking, RELEVANCE, 3) == pytest.approx(dcg / ideal)
    linear = (3 / math.log2(3) + 1 / 2) / (3 + 2 / math.log2(3) + 1 / 2)
    assert ndcg_at_k(ranking, RELEVANCE, 3, gain="linear") == pytest.approx(linear)
    assert ndcg_at_k(["a", "d", "c"], RELEVANCE, 3) == pytest.approx(1.0)
    assert ndcg_at_k(["a"], {}, 10) == 0.0


def test_ndcg_matches_trec_eval_through_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels = [ir_measures.Qrel("q", d, g) for d, g in RELEVANCE.items()]
    ranking = ["c", "b", "d", "x", "a"]
    run = [ir_measures.ScoredDoc("q", d, float(10 - i)) for i, d in enumerate(ranking)]
    expected = ir_measures.calc_aggregate([ir_measures.nDCG @ 4], qrels, run)[ir_measures.nDCG @ 4]
    assert ndcg_at_k(ranking, RELEVANCE, 4, gain="linear") == pytest.approx(expected, abs=1e-4)


def test_precision_recall() -> None:
    assert precision_at_k(["a", "b", "c", "x"], RELEVANCE, 4) == 0.5
    assert recall_at_k(["a", "b", "c", "x"], RELEVANCE, 4) == pytest.approx(2 / 3)


def test_budget_selection_and_insight_recall() -> None:
    sizes = {"a": 6, "b": 5, "c": 3, "d": 1}
    assert select_within_budget(["a", "b", "c", "d"], sizes.__getitem__, 10) == ["a"]
    assert select_within_budget(["a", "b", "c", "d"], sizes.__getitem__, 10, stop_at_first_overflow=False) == [
        "a", "c", "d"]
    coverage, occurrences = insight_recall(["a", "c"], {"i1": ["a", "b"], "i2": ["b"], "i3": ["c", "d", "a"]})
    assert coverage == pytest.approx(2 / 3) and occurrences == pytest.approx(3 / 6)
