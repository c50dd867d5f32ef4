from __future__ import annotations

import pytest

from citesum.errors import ConfigError
from citesum.evaluate.rouge import rouge

pytest.importorskip("rouge_score")


def test_rouge_takes_the_best_reference() -> None:
    prediction = "the cat sat on the mat"
    one = rouge(prediction, ["a dog ran in the park"])
    both = rouge(prediction, ["a dog ran in the park", "the cat sat on the mat"])
    assert both == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0}
    assert 0 < one["rouge1"] < 1 and one["rouge2"] == 0.0
    # unigram F1 by hand: overlap {the, the} -> 2 of 6 predicted and 2 of 6 reference tokens
    assert rouge(prediction, ["the dog ran in the park"])["rouge1"] == pytest.approx(2 / 6)
    with pytest.raises(ConfigError):
        rouge(prediction, [])
