"""Meta-evaluation of coverage judges against human labels, as the SummHay paper measures it: Pearson r of the
labels mapped to 1 / 0.5 / 0 over all insight judgments, and linking accuracy over the insights both the human
and the judge mark covered; with bootstrap intervals that resample whole groups of judgments (summaries, or
better subtopics: :func:`by_subtopic`). It reproduces the paper's
numbers for the stored judges of ``eval_benchmark_dev.json``."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from citesum.errors import IngestError
from citesum.evaluate.judges import HUMAN_LABELS, LABEL_VALUE, Judge
from citesum.evaluate.summhay import STORED_LABELS, Judgment


@dataclass(frozen=True)
class AnnotatedSample:
    """One summary of the human judge benchmark."""

    topic: str
    subtopic: str
    summary: tuple[str, ...]
    insights: tuple[tuple[str, str], ...]
    human: Mapping[str, Judgment]
    stored: Mapping[str, Mapping[str, Judgment]]  # judge name -> insight id -> judgment


def load_annotations(path: str | Path) -> list[AnnotatedSample]:
    """``eval_benchmark_dev.json``: human labels (0-based ``candidate_id``) and stored LLM judges (1-based).

    A file that is not such a benchmark (unreadable, not JSON, missing fields, no summaries) raises
    :class:`IngestError` naming the file and the reason."""
    samples = []
    try:
        for row in json.loads(Path(path).read_text(encoding="utf-8")):
            human = {}
            for a in row["annotation"]:
                candidate = a.get("candidate_id")
                bullet = int(candidate) + 1 if candidate not in (None, "no_selection") else None
                human[a["insight_id"]] = Judgment(a["insight_id"], HUMAN_LABELS[a["coverage"]], bullet)
            stored = {}
            for key, predictions in row.items():
                if key.startswith("predictions_"):
                    stored[key.removeprefix("predictions_")] = {
                        p["insight_id"]: Judgment(p["insight_id"], STORED_LABELS[p["coverage"]],
                                                  p["bullet_id"] if isinstance(p["bullet_id"], int) else None)
                        for p in predictions}
            insights = tuple((i["insight_id"], i["insight"]) for i in row["reference_insights"])
            if unlabelled := [i for i, _ in insights if i not in human]:
                raise KeyError(f"insight(s) without a human label: {unlabelled}")
            # the conversation samples name their topic file (topic_fn), the news samples of the SummHay
            # repository their topic (topic_id)
            topic = row["topic_fn"] if "topic_fn" in row else row["topic_id"]
            samples.append(AnnotatedSample(str(topic), str(row.get("subtopic_id", "")), tuple(row["summary"]),
                                           insights, human, stored))
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise IngestError(f"{path}: not a judge benchmark file like eval_benchmark_dev.json "
                          f"({type(exc).__name__}: {exc})") from exc
    if not samples:
        raise IngestError(f"{path}: no annotated summaries")
    return samples


def stored_judge_names(samples: Sequence[AnnotatedSample]) -> list[str]:
    """The stored judges that judged every insight of every summary (in the first summary's order)."""
    return [name for name in samples[0].stored
            if all(name in s.stored and all(i in s.stored[name] for i, _ in s.insights) for s in samples)]


@dataclass(frozen=True)
class JudgeQuality:
    pearson: float
    linking_accuracy: float
    judgments: int


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson r, 0 where one side is constant (a judge that says NO to everything correlates with nothing)."""
    return float(np.corrcoef(a, b)[0, 1]) if np.std(a) > 0 and np.std(b) > 0 else 0.0


def judge_quality(pairs: Iterable[tuple[Judgment, Judgment]]) -> JudgeQuality:
    """(human, judge) pairs -> Pearson r of the 1 / 0.5 / 0 labels and linking accuracy (same bullet, over
    insights both mark covered)."""
    human, judged, linked = [], [], []
    for truth, guess in pairs:
        human.append(LABEL_VALUE[truth.coverage])
        judged.append(LABEL_VALUE[guess.coverage])
        if truth.coverage != "NO" and guess.coverage != "NO":
            linked.append(truth.bullet == guess.bullet)
    return JudgeQuality(_pearson(np.array(human), np.array(judged)), float(np.mean(linked)) if linked else 0.0,
                        len(human))


def judgments_by_summary(samples: Sequence[AnnotatedSample], judge: Judge | str) -> list[list[tuple[Judgment, Judgment]]]:
    """For each summary, its (human, judge) pairs; a judge given by name is one of the stored judges."""
    out = []
    for sample in samples:
        if isinstance(judge, str):
            predicted = sample.stored[judge]
        else:
            predicted = {j.insight_id: j for j in judge.judge(sample.insights, sample.summary)}
        out.append([(sample.human[i], predicted[i]) for i, _ in sample.insights])
    return out


def by_subtopic(samples: Sequence[AnnotatedSample],
                judged: Sequence[Sequence[tuple[Judgment, Judgment]]]) -> list[list[tuple[Judgment, Judgment]]]:
    """The pairs of :func:`judgments_by_summary` regrouped by subtopic, the unit to resample: the summaries of
    one subtopic share its insights (and, in the paper's benchmark, often an annotator), so they are not
    independent draws, and resampling them would give too narrow an interval."""
    groups: dict[tuple[str, str], list[tuple[Judgment, Judgment]]] = {}
    for sample, pairs in zip(samples, judged):
        groups.setdefault((sample.topic, sample.subtopic), []).extend(pairs)
    return list(groups.values())


def meta_evaluate(samples: Sequence[AnnotatedSample], judge: Judge | str) -> JudgeQuality:
    """Quality of a judge (or of a stored judge, by name) against the human labels."""
    return judge_quality(pair for summary in judgments_by_summary(samples, judge) for pair in summary)


def quality_with_interval(judged: Sequence[Sequence[tuple[Judgment, Judgment]]]) -> dict[str, object]:
    """Pearson r with its 95% interval, linking accuracy and the number of judgments, from the (human, judge)
    pairs of each summary (:func:`judgments_by_summary`)."""
    quality = judge_quality(pair for summary in judged for pair in summary)
    return {**quality.__dict__, "pearson_ci95": pearson_interval(label_values(judged))}


def pearson_interval(labels_by_summary: Sequence[np.ndarray], confidence: float = 0.95, resamples: int = 2000,
                     seed: int = 0) -> tuple[float, float] | None:
    """Bootstrap confidence interval (BCa) of judge quality, resampling whole groups (a summary, or a subtopic's
    summaries: :func:`by_subtopic`).

    ``labels_by_summary[s]`` holds one row per insight of group ``s``: the human label value, then one column
    per judge. With one judge the statistic is its Pearson r with the humans; with two, the first judge's r
    minus the second's on the same resampled insights (a paired comparison: an interval that excludes 0 says
    one judge agrees with the humans better than the other beyond the luck of this benchmark's draw).
    Groups, not insights, are resampled because one summary's insights share its bullets and its annotator,
    so they are not independent draws; resampling insights would give too narrow an interval. None for fewer
    than two groups: there is nothing to resample.
    """
    from scipy.stats import DegenerateDataWarning, bootstrap

    if len(labels_by_summary) < 2:
        return None

    widths = {labels.shape[1] for labels in labels_by_summary}
    if len(widths) != 1 or (width := widths.pop()) not in (2, 3):
        raise ValueError("labels_by_summary: every summary needs (insights x 2) or (insights x 3) label values")
    # Pearson r of pooled insights needs only sums, so each summary is reduced to its sums once and a resample's
    # r comes from adding rows: the whole bootstrap is a few array operations instead of a loop of corrcoefs.
    sums = np.array([[len(labels), labels[:, 0].sum(), (labels[:, 0] ** 2).sum(),
                      *(value for j in range(1, width)
                        for value in (labels[:, j].sum(), (labels[:, j] ** 2).sum(), labels[:, 0] @ labels[:, j]))]
                     for labels in labels_by_summary])

    def pooled_r(total: np.ndarray, judge: int) -> np.ndarray:
        n, human, human_squares = total[..., 0], total[..., 1], total[..., 2]
        judged, judged_squares, products = (total[..., 3 + 3 * judge + k] for k in range(3))
        spread = (n * human_squares - human**2) * (n * judged_squares - judged**2)
        # 0 where one side is constant, as in _pearson
        return np.where(spread > 1e-12, (n * products - human * judged) / np.sqrt(np.maximum(spread, 1e-12)), 0.0)

    def statistic(chosen: np.ndarray, axis: int = -1) -> np.ndarray:
        total = sums[np.moveaxis(chosen, axis, -1)].sum(axis=-2)  # summaries x sums -> sums, per resample
        return pooled_r(total, 0) - pooled_r(total, 1) if width == 3 else pooled_r(total, 0)

    everything = np.arange(len(labels_by_summary))
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        # BCa cannot be computed when every resample gives the same value (a judge compared with itself, or one
        # that never disagrees with the humans); that case is answered below.
        warnings.simplefilter("ignore", DegenerateDataWarning)
        result = bootstrap((everything,), statistic, n_resamples=resamples, vectorized=True,
                           confidence_level=confidence, method="BCa", rng=np.random.default_rng(seed))
    if np.ptp(result.bootstrap_distribution) < 1e-12:
        point = float(statistic(everything))
        return point, point
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def label_values(*judged: Sequence[Sequence[tuple[Judgment, Judgment]]]) -> list[np.ndarray]:
    """The label values ``pearson_interval`` takes, from ``judgments_by_summary`` of one or two judges on the
    same summaries (the human labels are taken from the first)."""
    return [np.array([[LABEL_VALUE[pairs[0][k][0].coverage], *(LABEL_VALUE[p[k][1].coverage] for p in pairs)]
                      for k in range(len(pairs[0]))], dtype=float).reshape(-1, 1 + len(judged))
            for pairs in zip(*judged)]
