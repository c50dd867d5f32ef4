"""Scores against the context budget: hybrid retrieval + DOS RAG packing + the extractive summarizer on the
three news haystacks at several budgets, judged by the offline judge.

Run: python benchmarks/summhay_budget.py [--cache DIR]
Writes: benchmarks/results/summhay_budget.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import document_index_folders, news_haystacks, write_result  # noqa: E402

from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.runner import PipelineConfig, judge_summaries, run_on_haystacks  # noqa: E402

BUDGETS = [2_000, 4_000, 8_000, 15_000, 24_000, 32_000]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None)
    parser.add_argument("--judge", default="offline")
    args = parser.parse_args()
    judge = get_judge(args.judge)
    haystacks = news_haystacks()
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        folders = document_index_folders(args.cache or temporary)
        for budget in BUDGETS:
            config = PipelineConfig(retriever="hybrid", budget=budget)
            summaries = run_on_haystacks(haystacks, folders, config)
            scores, _ = judge_summaries(haystacks, summaries, judge)
            rows.append({"budget": budget, "judge": judge.name, **scores.as_dict()})
            print(rows[-1], flush=True)
    write_result("summhay_budget", {"retriever": "hybrid", "summarizer": "extractive", "order": "original",
                                    "rows": rows})


if __name__ == "__main__":
    main()
