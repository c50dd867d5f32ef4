"""RAPTOR's tree with the vectors reduced by PCA (citesum's default) or by UMAP (RAPTOR's own way), compared at
equal budgets with the offline tree (central sentences) and the extractive summarizer, as
benchmarks/multistage_summhay.py and multistage_odsum.py run RAPTOR:
- the three SummHay news haystacks (26 subtopics), one bullet per insight, the offline judge's joint score;
- ODSum Story dev (238 sections, 125 questions asked with their story's title), 250 words, ROUGE-1/2/L F1.
Also the seconds each tree takes to build and how many nodes it has. Nothing is tuned: both reductions run
with RAPTOR's settings (10 dimensions; UMAP with cosine distance, sqrt(n - 1) neighbours globally, 10 locally).

Run: python benchmarks/raptor_reduction.py [--budgets 4000,8000,15000] [--cache DIR]
Writes: benchmarks/results/raptor_reduction.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, news_haystacks, write_result  # noqa: E402
from lightpal_odsum import open_index, titled  # noqa: E402

from citesum.datasets import load_dataset  # noqa: E402
from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.rouge import METRICS, rouge  # noqa: E402
from citesum.evaluate.runner import PipelineConfig, haystack_index, judge_summaries, summary_lines  # noqa: E402
from citesum.index.store import IndexSettings  # noqa: E402
from citesum.raptor import REDUCTIONS, ClusterOptions, build_tree, raptor_context, tree_summary  # noqa: E402
from citesum.summarize import summarize_context  # noqa: E402
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer  # noqa: E402
from citesum.summarize.statements import CentralStatements  # noqa: E402


def timed_tree(index, reduction: str):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    tree = build_tree(index, CentralStatements(), options=ClusterOptions(reduction=reduction))
    return tree, {"reduction": reduction, **tree_summary(tree), "seconds": round(time.perf_counter() - started, 1)}


def summhay(root: Path, budgets: list[int]) -> dict:
    judge = get_judge("offline")
    haystacks = news_haystacks()
    indexes = [haystack_index(h, root / f"passages-{h.topic}", PipelineConfig(unit="passage")) for h in haystacks]
    trees, rows = {}, []
    for reduction in REDUCTIONS:
        built = [timed_tree(index, reduction) for index in indexes]
        trees[reduction] = [{"topic": h.topic, **about} for h, (_, about) in zip(haystacks, built)]
        print(trees[reduction], flush=True)
        for budget in budgets:
            summaries = []
            for haystack, index, (tree, _) in zip(haystacks, indexes, built):
                summaries.append({s.id: summary_lines(haystack, summarize_context(
                    s.query, raptor_context(s.query, index, tree, budget=budget),
                    ExtractiveSummarizer(ExtractiveOptions(bullets=len(s.insights))))) for s in haystack.subtopics})
            scores, _ = judge_summaries(haystacks, summaries, judge)
            rows.append({"reduction": reduction, "budget": budget, "judge": judge.name, **scores.as_dict()})
            print(rows[-1], flush=True)
    return {"trees": trees, "rows": rows}


def odsum_story(root: Path, budgets: list[int]) -> dict:
    dataset = load_dataset("odsum-story", str(SHARED_DATA / "odsum" / "story" / "documents_dev.jsonl"))
    queries = titled(dataset)
    index = open_index(root / "multistage-story", IndexSettings(), dataset.documents)
    summarizer = ExtractiveSummarizer(ExtractiveOptions(bullets=None, max_words=250))
    trees, rows = {}, []
    for reduction in REDUCTIONS:
        tree, trees[reduction] = timed_tree(index, reduction)
        print(trees[reduction], flush=True)
        for budget in budgets:
            scores: dict[str, list[float]] = {m: [] for m in METRICS}
            for query in queries:
                summary = summarize_context(query.text, raptor_context(query.text, index, tree, budget=budget),
                                            summarizer)
                for metric, value in rouge(" ".join(b.text for b in summary.bullets), query.references).items():
                    scores[metric].append(value)
            rows.append({"reduction": reduction, "budget": budget,
                         **{m: round(100 * float(np.mean(v)), 2) for m, v in scores.items()}})
            print(rows[-1], flush=True)
    return {"trees": trees, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", default="4000,8000,15000")
    parser.add_argument("--cache", default=None, help="keep the indexes here (multistage_*.py's names)")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(args.cache or temporary)
        results = {"summhay": summhay(root, budgets), "odsum_story": odsum_story(root, budgets)}
    write_result("raptor_reduction", {
        "data": "SummHay news haystacks (26 subtopics; offline judge) and ODSum Story dev (125 titled questions; "
                "ROUGE F1, best reference); nothing was tuned on them",
        "units": "passages of at most 100 tokens (cl100k)", "tree": "offline central sentences",
        "summarizer": "extractive (SummHay: one bullet per insight; ODSum: 250 words)", "results": results})


if __name__ == "__main__":
    main()
