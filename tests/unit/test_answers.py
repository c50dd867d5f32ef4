from __future__ import annotations

from typing import Sequence

import pytest

from citesum.evaluate.answers import AnswerLabels, BulletLabel, label_bullets
from citesum.evaluate.judges import get_judge
from citesum.evaluate.offline import LexicalJudge
from citesum.evaluate.summhay import Judgment

# a small haystack of two subtopics: what the city does about water, and about its football stadium
SUBTOPICS = {
    "water": [("rates", "Household water rates will rise by 7.5 percent on January 1 to pay for new pipes."),
              ("drought", "Reservoir levels fell to 31 percent of capacity after the driest summer on record.")],
    "stadium": [("seats", "The football club will build a new 40,000-seat stadium by the river."),
                ("funding", "The council will lend the club 120 million euros for the stadium's construction.")],
}
BULLETS = [
    # restates an insight of the asked subtopic, with a citation and Markdown emphasis
    "- **Rates**: Water rates for households go up 7.5 percent from January 1, paying for new pipes [3][12].",
    # restates an insight of the other subtopic
    "- A new stadium with 40,000 seats will be built by the football club near the river [7].",
    # states nothing of the haystack
    "- The mayor opened a jazz festival in the old market hall on Saturday evening [9].",
]


@pytest.mark.parametrize("judge", [lambda: get_judge("offline"), LexicalJudge], ids=["offline", "lexical"])
def test_bullets_are_labelled_asked_other_none(judge) -> None:  # type: ignore[no-untyped-def]
    labels = label_bullets(BULLETS, SUBTOPICS, "water", judge())
    assert labels.labels == ["asked", "other", "none"]
    assert labels.bullets[0] == BulletLabel("asked", ("water",), "rates")
    assert labels.bullets[1].subtopics == ("stadium",) and labels.bullets[1].insight == "seats"
    assert labels.bullets[2] == BulletLabel("none", (), None)
    assert labels.shares == pytest.approx({"asked": 1 / 3, "other": 1 / 3, "none": 1 / 3})
    # the same bullets, the other query asked: the stadium bullet is the answer now
    assert label_bullets(BULLETS, SUBTOPICS, "stadium", judge()).labels == ["other", "asked", "none"]


def test_asked_wins_over_other_and_shares_of_an_empty_summary() -> None:
    both = ["Water rates for households rise 7.5 percent from January 1 to pay for new pipes, and the club builds a "
            "new 40,000-seat stadium by the river."]
    labels = label_bullets(both, SUBTOPICS, "water", LexicalJudge())
    assert labels.labels == ["asked"] and set(labels.bullets[0].subtopics) == {"water", "stadium"}
    assert labels.bullets[0].subtopics[0] == "water"
    empty = label_bullets([], SUBTOPICS, "water", LexicalJudge())
    assert empty == AnswerLabels(()) and empty.precision == 0.0
    with pytest.raises(KeyError, match="transit"):
        label_bullets(BULLETS, SUBTOPICS, "transit", LexicalJudge())


class _KeywordJudge:
    """A judge without scores (like an LLM judge): FULL when the insight's id is a word of the bullet."""

    name = "keyword"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def judge(self, insights: Sequence[tuple[str, str]], bullets: Sequence[str]) -> list[Judgment]:
        self.calls.append(len(bullets))
        return [Judgment(i, "FULL", 1) if i in bullets[0].split() else Judgment(i, "NO") for i, _ in insights]


def test_a_judge_without_scores_is_asked_about_each_bullet_alone() -> None:
    judge = _KeywordJudge()
    labels = label_bullets(["about rates", "about seats", "about jazz"], SUBTOPICS, "water", judge)
    assert labels.labels == ["asked", "other", "none"] and set(judge.calls) == {1}
    assert labels.precision == pytest.approx(1 / 3)
