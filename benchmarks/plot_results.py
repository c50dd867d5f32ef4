"""Draw the PNG plots from benchmarks/results/*.json (run the benchmarks first).

Run: python benchmarks/plot_results.py
Writes: benchmarks/results/summhay_baselines.png, summhay_budget.png, retrieval_summhay.png
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS  # noqa: E402

from citesum.evaluate.plots import plot_scores_against_budget, plot_scores_per_system  # noqa: E402


def main() -> None:
    baselines = RESULTS / "summhay_baselines.json"
    if baselines.exists():
        rows = json.loads(baselines.read_text())["rows"]
        labeled = [{**r, "label": f"{r['retriever']} / {r['model']}"} for r in rows]
        print(plot_scores_per_system(labeled, RESULTS / "summhay_baselines.png",
                                     "SummHay, 3 news haystacks, offline judge"))
    budget = RESULTS / "summhay_budget.json"
    if budget.exists():
        rows = json.loads(budget.read_text())["rows"]
        print(plot_scores_against_budget([r["budget"] for r in rows],
                                         {m: [r[m] for r in rows] for m in ("coverage", "citation", "joint")},
                                         RESULTS / "summhay_budget.png", "hybrid + extractive, offline judge"))
    retrieval = RESULTS / "retrieval_summhay.json"
    if retrieval.exists():
        table = json.loads(retrieval.read_text())["results"]
        chosen = [k for k in table if k.startswith("paper:") or k in (
            "ours:hybrid:document:wordllama", "ours:hybrid:passage:wordllama", "ours:bm25:passage",
            "ours:dense:passage:wordllama", "ours:keywords:passage")]
        rows = [{"label": k, **table[k]} for k in sorted(chosen, key=lambda k: -table[k]["ndcg@10"])]
        print(plot_scores_per_system(rows, RESULTS / "retrieval_summhay.png", "Retrieval on 3 SummHay haystacks",
                                     metrics=("ndcg@10", "insight_coverage@15k", "insight_recall@15k"),
                                     ylabel="score (0-1)"))


if __name__ == "__main__":
    main()
