"""Answer precision: does each bullet of a summary state an insight of the subtopic that was asked?

Each bullet gets one label:

* ``asked``: it states an insight of the asked subtopic;
* ``other``: it states an insight of another subtopic of the same haystack, and none of the asked one;
* ``none``: it states no insight of the haystack.

"States" is a coverage judge's FULL or PARTIAL label for the (insight, bullet) pair. With a similarity judge
(:class:`~citesum.evaluate.offline.OfflineJudge`, :class:`~citesum.evaluate.offline.LexicalJudge`) that is the
judge's own score of the pair against its own PARTIAL threshold, scored one subtopic at a time over the whole
summary: the same call, with the same texts behind its local IDF, as when the summary is judged against that
subtopic's insights. Unlike SummHay coverage, every bullet that states an insight counts, not only the one the
judge links to it (two bullets restating one insight are both ``asked``). Any other judge (an LLM's) is asked
about each bullet alone.

Answer precision is the share of ``asked`` bullets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from citesum.evaluate.judges import Judge, judged_text
from citesum.evaluate.offline import Thresholds

AnswerLabel = Literal["asked", "other", "none"]
ANSWER_LABELS: tuple[AnswerLabel, ...] = ("asked", "other", "none")


@runtime_checkable
class ScoringJudge(Protocol):
    """A judge with a similarity score per (insight, bullet) and the thresholds that label it (the offline
    judges)."""

    name: str
    thresholds: Thresholds

    def scores(self, insights: Sequence[str], bullets: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class BulletLabel:
    label: AnswerLabel
    #: ids of the subtopics of which the bullet states an insight (the asked one first when it is there)
    subtopics: tuple[str, ...]
    #: the insight the bullet states best, of the asked subtopic if any, else of another one; None for ``none``
    insight: str | None


@dataclass(frozen=True)
class AnswerLabels:
    bullets: tuple[BulletLabel, ...]

    @property
    def labels(self) -> list[AnswerLabel]:
        return [b.label for b in self.bullets]

    @property
    def shares(self) -> dict[AnswerLabel, float]:
        """Share of the bullets with each label (all 0.0 for a summary without bullets)."""
        total = len(self.bullets)
        return {label: (sum(b.label == label for b in self.bullets) / total if total else 0.0)
                for label in ANSWER_LABELS}

    @property
    def precision(self) -> float:
        """Answer precision: the share of ``asked`` bullets."""
        return self.shares["asked"]


def _stated(judge: Judge, insights: Sequence[tuple[str, str]],
            bullets: Sequence[str]) -> list[tuple[str, float] | None]:
    """Per bullet, the insight of ``insights`` it states best and the judge's score of that pair (1.0 for a
    judge without scores), or None when it states none of them."""
    if not insights or not bullets:
        return [None for _ in bullets]
    if isinstance(judge, ScoringJudge):
        matrix = judge.scores([text for _, text in insights], [judged_text(b) for b in bullets])
        best = matrix.argmax(axis=0)
        return [(insights[i][0], float(matrix[i, j])) if judge.thresholds.label(float(matrix[i, j])) != "NO"
                else None for j, i in enumerate(best)]
    stated: list[tuple[str, float] | None] = []
    for bullet in bullets:
        covered = [j.insight_id for j in judge.judge(insights, [bullet]) if j.coverage != "NO"]
        stated.append((covered[0], 1.0) if covered else None)
    return stated


def label_bullets(bullets: Sequence[str], subtopics: Mapping[str, Sequence[tuple[str, str]]], asked: str,
                  judge: Judge) -> AnswerLabels:
    """Label each of a summary's ``bullets`` (their text; citations and Markdown emphasis are ignored) against
    the haystack's ``subtopics`` (subtopic id -> its insights as (id, text)), ``asked`` being the subtopic whose
    query the summary answers. ``judge``: a coverage judge, e.g. ``get_judge("offline")`` (the default judge of
    ``citesum eval summhay``)."""
    if asked not in subtopics:
        raise KeyError(f"the asked subtopic {asked!r} is not one of the {len(subtopics)} subtopics given")
    order = [asked, *(s for s in subtopics if s != asked)]
    stated = {s: _stated(judge, subtopics[s], bullets) for s in order}
    out = []
    for j in range(len(bullets)):
        found = [(s, pair) for s in order if (pair := stated[s][j]) is not None]
        if not found:
            out.append(BulletLabel("none", (), None))
        elif found[0][0] == asked:
            out.append(BulletLabel("asked", tuple(s for s, _ in found), found[0][1][0]))
        else:
            best = max(found, key=lambda item: item[1][1])[1]
            out.append(BulletLabel("other", tuple(s for s, _ in found), best[0]))
    return AnswerLabels(tuple(out))
