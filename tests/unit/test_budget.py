from __future__ import annotations

import pytest

from citesum.budget import (
    estimate_budget, mbr_select, panel_candidates, parse_budgets, rouge_utility, sample_examples,
)
from citesum.errors import ConfigError
from citesum.llm.fake import FakeLLM


def jaccard(a: str, b: str) -> float:
    x, y = set(a.split()), set(b.split())
    return len(x & y) / len(x | y)


def test_mbr_keeps_the_candidates_that_agree_most_with_the_others() -> None:
    candidates = ["rates rise pipes leak", "rates rise pipes", "rates rise leak", "tram opens in May"]
    # mean Jaccard with the others: 0 -> (3/4 + 3/4 + 0) / 3 = 0.5; 1 -> (3/4 + 2/4 + 0) / 3; 2 -> the same as 1;
    # 3 -> 0. The best three: 0, then 1 and 2 tied (the earlier first).
    assert mbr_select(candidates, jaccard, keep=3) == [0, 1, 2]
    assert mbr_select(candidates, jaccard, keep=1) == [0]
    assert mbr_select(["only one"], jaccard) == [0]
    with pytest.raises(ConfigError):
        mbr_select([], jaccard)


def test_examples_are_sampled_reproducibly_in_their_order() -> None:
    ids = [f"q{i}" for i in range(20)]
    chosen = sample_examples(ids, 0.25, seed=3)
    assert len(chosen) == 5 and chosen == sample_examples(ids, 0.25, seed=3)
    assert chosen == [i for i in ids if i in chosen] and chosen != sample_examples(ids, 0.25, seed=4)
    assert sample_examples(ids[:2], 0.1) and sample_examples(ids, 1.0) == ids
    with pytest.raises(ConfigError):
        sample_examples(ids, 0.0)


def test_the_estimate_is_the_smallest_budget_within_one_std_of_the_best() -> None:
    # utility = the number the pipeline "writes"; per budget the two sample sets score:
    scripted = {1000: (0.50, 0.50), 2000: (0.68, 0.72), 4000: (0.70, 0.80), 8000: (0.74, 0.76)}

    def run(example: str, budget: int, sample: int) -> str:
        return str(scripted[budget][sample])

    estimate = estimate_budget({"a": ["ref"], "b": ["ref"]}, run, list(scripted), samples=2, fraction=1.0,
                               utility=lambda candidate, reference: float(candidate))
    assert estimate.means == pytest.approx({1000: 0.50, 2000: 0.70, 4000: 0.75, 8000: 0.75})
    assert estimate.stds[4000] == pytest.approx(0.05) and estimate.stds[8000] == pytest.approx(0.01)
    # the best mean is 0.75 (4000 and 8000 tie: the smaller counts), its std 0.05: 2000 (0.70) is within it
    assert estimate.best_budget == 4000 and estimate.budget == 2000
    assert estimate.examples == ("a", "b") and estimate.silver == {"a": ("ref",), "b": ("ref",)}


def test_silver_references_are_the_mbr_choice_among_the_panel_candidates() -> None:
    candidates = {"q": ["rates rise pipes leak", "rates rise pipes", "rates rise leak", "tram opens in May"]}
    seen: list[str] = []

    def run(example: str, budget: int, sample: int) -> str:
        seen.append(example)
        return "tram opens in May" if budget == 1 else "rates rise pipes leak"

    estimate = estimate_budget(candidates, run, [1, 2], samples=1, fraction=1.0, utility=jaccard)
    assert estimate.silver["q"] == ("rates rise pipes leak", "rates rise pipes", "rates rise leak")
    assert estimate.means[1] == 0.0 and estimate.means[2] == 1.0 and estimate.budget == 2
    with pytest.raises(ConfigError):
        estimate_budget(candidates, run, [], utility=jaccard)


def test_the_panel_samples_each_model_at_temperature_half() -> None:
    first, second = FakeLLM(["summary one", "summary two"]), FakeLLM(["", "summary four"])
    texts = panel_candidates("Summarize: ...", [first, second], samples=2)
    assert texts == ["summary one", "summary two", "summary four"]  # the empty answer is no candidate
    requests = first.requests + second.requests
    assert [r.temperature for r in requests] == [0.5] * 4 and [r.seed for r in requests] == [0, 1, 0, 1]


def test_rouge_utility_is_one_for_the_same_text_and_zero_for_disjoint_texts() -> None:
    assert rouge_utility("water rates rise in January", "water rates rise in January") == pytest.approx(1.0)
    assert rouge_utility("water rates rise", "tram opens today") == 0.0


def test_budget_grids_from_the_command_line() -> None:
    # K = 1,024 as in the paper and the long-context benchmarks: "8K" is 8,192, so RULER's 32K is on the grid
    assert parse_budgets("paper") == [8_192 * k for k in range(1, 11)] and 32_768 in parse_budgets("paper")
    assert parse_budgets(" 4000, 2000,4000 ") == [2_000, 4_000]
    for bad in ("lots", "", "0,100", "-5"):
        with pytest.raises(ConfigError, match="--budgets"):
            parse_budgets(bad)
