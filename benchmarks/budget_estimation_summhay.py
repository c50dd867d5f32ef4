"""Estimating the context budget with silver references (Pratapa & Mitamura) on the SummHay news haystacks,
checked against the budget the SummHay judge prefers.

Pipeline: hybrid retrieval, DOS RAG packing and the extractive summarizer (as ``summhay_budget.py``) at budgets
of 2K to 32K tokens. Silver-reference candidates: the stored full-context summaries of the paper's eight LMs
(gpt-4o, gpt4-turbo, claude3-opus/sonnet/haiku, gemini-1.5-pro/flash, command-r; one sample each, the data set
stores one), citations removed; minimum Bayes risk keeps 3 per subtopic; utility = mean ROUGE-1/2/L F1. The
extractive summarizer is deterministic, so one sample set per budget (standard deviation 0: the estimate is the
best mean). Estimates on 25% of the 26 subtopics for five seeds, and on all of them; beside them the joint
score of every budget under the offline judge, and the correlation of the two curves.

Run: python benchmarks/budget_estimation_summhay.py [--cache DIR]
Writes: benchmarks/results/budget_estimation_summhay.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import document_index_folders, news_haystacks, write_result  # noqa: E402

from citesum.budget import estimate_budget, rouge_utility  # noqa: E402
from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.runner import PipelineConfig, judge_summaries, run_on_haystacks  # noqa: E402
from citesum.summarize.citations import strip_citations  # noqa: E402

BUDGETS = [2_000, 4_000, 8_000, 15_000, 24_000, 32_000]
PANEL = ["gpt-4o", "gpt4-turbo", "claude3-opus", "claude3-sonnet", "claude3-haiku", "gemini-1.5-pro",
         "gemini-1.5-flash", "command-r"]


def text(lines: list[str]) -> str:
    return " ".join(strip_citations(line.lstrip("-*• ").strip()) for line in lines if line.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    haystacks = news_haystacks()
    candidates = {f"{h.topic}/{s.id}": [text(s.summaries[f"summary_subtopic_{model}"]) for model in PANEL]
                  for h in haystacks for s in h.subtopics}
    judge = get_judge("offline")
    outputs: dict[int, dict[str, str]] = {}
    joint: dict[int, float] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as temporary:
        folders = document_index_folders(args.cache or temporary)
        for budget in BUDGETS:
            summaries = run_on_haystacks(haystacks, folders, PipelineConfig(retriever="hybrid", budget=budget))
            outputs[budget] = {f"{h.topic}/{sid}": text(lines) for h, by in zip(haystacks, summaries)
                               for sid, lines in by.items()}
            scores, _ = judge_summaries(haystacks, summaries, judge)
            joint[budget] = round(scores.joint, 1)
            print(budget, "joint", joint[budget], flush=True)

    def run(example: str, budget: int, sample: int) -> str:
        return outputs[budget][example]

    estimates = []
    for fraction, seed in [(0.25, s) for s in range(5)] + [(1.0, 0)]:
        found = estimate_budget(candidates, run, BUDGETS, utility=rouge_utility, samples=1, fraction=fraction,
                                seed=seed)
        estimates.append({"fraction": fraction, "seed": seed, "examples": len(found.examples),
                          "estimate": found.budget, "silver_utility": {b: round(m, 4) for b, m in found.means.items()}})
        print(estimates[-1], flush=True)
    curve = estimates[-1]["silver_utility"]
    write_result("budget_estimation_summhay", {
        "pipeline": "hybrid + DOS RAG + extractive", "panel": PANEL, "utility": "mean ROUGE-1/2/L F1",
        "budgets": BUDGETS, "estimates": estimates, "judge": judge.name, "joint_by_budget": joint,
        "best_budget_by_judge": max(joint, key=lambda b: (joint[b], -b)),
        "pearson_silver_utility_vs_joint": round(float(np.corrcoef([curve[b] for b in BUDGETS],
                                                                   [joint[b] for b in BUDGETS])[0, 1]), 3),
        "seconds": round(time.perf_counter() - started, 1)})


if __name__ == "__main__":
    main()
