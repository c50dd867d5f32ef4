"""The SummHay baseline table, like for like: our offline pipeline (each retriever x the extractive
summarizer, 15,000-token budget, original order) and a set of stored paper systems, all judged by the same
offline judges on the three news haystacks; the stored systems' GPT-4o-judged scores are shown beside them.

Two independent judges score every row (``--judges``): the default ``offline`` (MiniLM token recall + keyword
recall) and ``lexical`` (TF-IDF cosine, no model), so that a summarizer that happens to suit one judge's
similarity does not pass unseen. The row's top-level scores are the first judge's; ``by_judge`` has each
judge's scores pooled and per haystack.

Run: python benchmarks/summhay_baselines.py [--judges offline,lexical] [--cache DIR]
Writes: benchmarks/results/summhay_baselines.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, document_index_folders, news_haystacks, write_result  # noqa: E402

from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.runner import PipelineConfig, judge_summaries, run_on_haystacks  # noqa: E402
from citesum.evaluate.summhay import bullet_citations, score_stored, system_label  # noqa: E402

RETRIEVERS = ["random", "keywords", "bm25", "dense", "hybrid", "oracle"]
STORED = [f"summary_subtopic_{r}{m}" for m in ("gpt-4o", "claude3-opus", "gemini-1.5-pro")
          for r in ("", "random_", "vector_", "rerank3_", "oracle_")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judges", default="offline,lexical")
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    judges = [get_judge(name) for name in args.judges.split(",")]
    judge = judges[0]
    haystacks = news_haystacks()
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        folders = document_index_folders(args.cache or temporary)
        for retriever in RETRIEVERS:
            for repair in (False, True):
                config = PipelineConfig(retriever=retriever)
                started = time.perf_counter()
                summaries = run_on_haystacks(haystacks, folders, config, repair_citations=repair)
                by_judge = _scores_by_judge(haystacks, summaries, judges)
                model = "extractive + repair" if repair else "extractive"
                rows.append({"system": f"citesum {retriever} + {model}", "retriever": retriever, "model": model,
                             "judge": judge.name, **by_judge[judge.name]["pooled"], "by_judge": by_judge,
                             "citations_per_bullet": _citations_per_bullet(summaries),
                             "seconds": round(time.perf_counter() - started, 1)})
                print(rows[-1], flush=True)
    for system in STORED:
        by_haystack = [{s.id: s.summaries[system] for s in h.subtopics} for h in haystacks]
        by_judge = _scores_by_judge(haystacks, by_haystack, judges)
        reference, _ = score_stored(haystacks, system)
        retriever, model = system_label(system)
        rows.append({"system": system, "retriever": retriever, "model": model, "judge": judge.name,
                     **by_judge[judge.name]["pooled"], "by_judge": by_judge,
                     "citations_per_bullet": _citations_per_bullet(by_haystack),
                     "gpt4o_judged": reference.as_dict()})
        print(rows[-1], flush=True)
    # How well each offline judge ranks systems like GPT-4o does: Pearson r of the joint scores over the
    # stored systems (judged by both).
    agreement = {}
    for name in (j.name for j in judges):
        pairs = [(r["by_judge"][name]["pooled"]["joint"], r["gpt4o_judged"]["joint"]) for r in rows
                 if "gpt4o_judged" in r]
        agreement[name] = round(float(np.corrcoef([a for a, _ in pairs], [b for _, b in pairs])[0, 1]), 3)
    print(f"system-level Pearson r (each judge vs the stored GPT-4o judge, joint): {agreement}")
    write_result("summhay_baselines", {"budget": 15_000, "order": "original", "rows": rows,
                                       "system_level_joint_pearson_vs_gpt4o_judge": agreement})


def _scores_by_judge(haystacks, summaries, judges) -> dict[str, dict[str, object]]:  # type: ignore[no-untyped-def]
    """Each judge's scores of one system, pooled over the haystacks and per haystack."""
    out: dict[str, dict[str, object]] = {}
    for judge in judges:
        pooled, _ = judge_summaries(haystacks, summaries, judge)
        out[judge.name] = {"pooled": pooled.as_dict(), "per_haystack": {
            name: judge_summaries([haystack], [by_subtopic], judge)[0].as_dict()
            for name, haystack, by_subtopic in zip(HAYSTACKS, haystacks, summaries)}}
    return out


def _citations_per_bullet(summaries: list[dict[str, list[str]]]) -> float:
    """Mean number of documents a bullet (a summary line with words) cites."""
    counts = [len(bullet_citations(line)) for by_subtopic in summaries for lines in by_subtopic.values()
              for line in lines if len(line.split()) >= 3]
    return round(float(np.mean(counts)), 2) if counts else 0.0


if __name__ == "__main__":
    main()
