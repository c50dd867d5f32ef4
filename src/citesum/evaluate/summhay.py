"""SummHay scoring (Laban et al., 2024): coverage, citation and joint scores per reference insight.

Per insight, a judge gives a coverage label (FULL = 100, PARTIAL = 50, NO = 0) and the covering bullet;
citation = F1 between the document numbers cited in that bullet (``[\\d, ]+`` in brackets) and the 1-based
positions of the documents that contain the insight; joint = coverage x citation. Coverage and joint are
averaged over all insights, citation over the covered ones. On the stored GPT-4o judgments of the three shared
haystacks this reproduces the paper's scores for full-context GPT-4o (tests/integration checks them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal, Mapping, Sequence

from citesum.datasets.summhay import Haystack, Subtopic

Coverage = Literal["FULL", "PARTIAL", "NO"]
COVERAGE_SCORE: dict[Coverage, float] = {"FULL": 100.0, "PARTIAL": 50.0, "NO": 0.0}
#: the coverage labels of the SummHay data set's stored judgments (and of its judge benchmark's LLM judges)
STORED_LABELS: dict[str, Coverage] = {"FULL_COVERAGE": "FULL", "PARTIAL_COVERAGE": "PARTIAL", "NO_COVERAGE": "NO"}
_CITATION_GROUP = re.compile(r"\[([\d, ]+)\]")


@dataclass(frozen=True)
class Judgment:
    """A judge's decision for one reference insight: its coverage and the 1-based covering bullet."""

    insight_id: str
    coverage: Coverage
    bullet: int | None = None


@dataclass(frozen=True)
class InsightScore:
    insight_id: str
    coverage: float
    citation: float | None  # F1; None when the insight is not covered
    joint: float
    bullet: int | None
    cited: tuple[int, ...]
    gold: tuple[int, ...]
    citation_precision: float | None = None
    citation_recall: float | None = None


@dataclass(frozen=True)
class Scores:
    coverage: float
    citation: float
    joint: float
    insights: int
    #: the citation F1 broken down, over covered insights
    citation_precision: float = 0.0
    citation_recall: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {"coverage": round(self.coverage, 1), "citation": round(self.citation, 1),
                "joint": round(self.joint, 1), "citation_precision": round(self.citation_precision, 1),
                "citation_recall": round(self.citation_recall, 1), "insights": self.insights}


def bullet_citations(line: str) -> tuple[int, ...]:
    """Document numbers cited in a bullet, as the SummHay scorer reads them: every ``[\\d, ]+`` group."""
    numbers: list[int] = []
    for group in _CITATION_GROUP.findall(line):
        numbers.extend(int(n) for n in re.split(r"[, ]+", group.strip()) if n)
    return tuple(dict.fromkeys(numbers))


def f1(predicted: Iterable[int], gold: Iterable[int]) -> float:
    predicted, gold = set(predicted), set(gold)
    overlap = len(predicted & gold)
    return 0.0 if overlap == 0 else 2 * overlap / (len(predicted) + len(gold))


def score_insights(lines: Sequence[str], judgments: Iterable[Judgment],
                   gold_positions: Mapping[str, Sequence[int]]) -> list[InsightScore]:
    """Score one summary (its lines; bullet ids index them from 1) against per-insight judgments."""
    scores = []
    for judgment in judgments:
        coverage = COVERAGE_SCORE[judgment.coverage]
        gold = tuple(sorted(gold_positions[judgment.insight_id]))
        if coverage == 0:
            scores.append(InsightScore(judgment.insight_id, 0.0, None, 0.0, None, (), gold))
            continue
        bullet = judgment.bullet
        line = lines[bullet - 1] if bullet is not None and 0 < bullet <= len(lines) else ""
        cited = bullet_citations(line)
        citation = 100.0 * f1(cited, gold)
        correct = len(set(cited) & set(gold))
        scores.append(InsightScore(judgment.insight_id, coverage, citation, coverage * citation / 100.0, bullet,
                                   cited, gold, 100.0 * correct / len(cited) if cited else 0.0,
                                   100.0 * correct / len(gold) if gold else 0.0))
    return scores


def aggregate(scores: Sequence[InsightScore]) -> Scores:
    """Insight-level means: coverage and joint over all insights, citation over covered ones."""
    if not scores:
        return Scores(0.0, 0.0, 0.0, 0)
    covered = [s for s in scores if s.citation is not None]

    def mean_over_covered(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    return Scores(sum(s.coverage for s in scores) / len(scores),
                  mean_over_covered([s.citation for s in covered]),  # type: ignore[misc]
                  sum(s.joint for s in scores) / len(scores), len(scores),
                  mean_over_covered([s.citation_precision for s in covered]),  # type: ignore[misc]
                  mean_over_covered([s.citation_recall for s in covered]))  # type: ignore[misc]


def gold_positions(haystack: Haystack, subtopic: Subtopic) -> dict[str, list[int]]:
    """Insight id -> 1-based positions (citation numbers) of the documents containing it."""
    position = haystack.citation_numbers
    return {insight: [position[d] for d in documents] for insight, documents in subtopic.insight_documents.items()}


def stored_judgments(subtopic: Subtopic, system: str) -> list[Judgment]:
    """The GPT-4o judgments stored with the data set for one system's summary."""
    return [Judgment(j["insight_id"], STORED_LABELS[j["coverage"]], j.get("bullet_id"))
            for j in subtopic.eval_summaries[system]]


def stored_systems(haystacks: Sequence[Haystack]) -> list[str]:
    """Systems with a stored summary and stored judgments for every subtopic of every haystack."""
    sets = [set(s.summaries) & set(s.eval_summaries) for h in haystacks for s in h.subtopics]
    return sorted(set.intersection(*sets)) if sets else []


def score_stored(haystacks: Sequence[Haystack], system: str) -> tuple[Scores, list[InsightScore]]:
    """Score a stored system with the stored judgments, pooled over every insight of every haystack."""
    every: list[InsightScore] = []
    for haystack in haystacks:
        for subtopic in haystack.subtopics:
            every.extend(score_insights(subtopic.summaries[system], stored_judgments(subtopic, system),
                                        gold_positions(haystack, subtopic)))
    return aggregate(every), every


def system_label(key: str) -> tuple[str, str]:
    """(retriever, model) of a stored summary key: ``summary_subtopic_rerank3_gpt-4o`` -> (rerank3, gpt-4o);
    no retriever in the key means full context."""
    rest = key.removeprefix("summary_subtopic_")
    retriever, _, model = rest.rpartition("_")
    return (retriever or "full", model)
