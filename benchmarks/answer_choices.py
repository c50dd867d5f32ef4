"""The fifth round's two choices of the offline summarizer, on the real-document splits it was tuned on.

1. ``rarest_word_factor``: a specific question's sentence without the rarest word of the clause that asks
   (what the question asks most precisely: "colored" in "How do I get colored output from diff?") has its answer
   score scaled by this (1, 0.9, 0.85, 0.8 tried).
2. ``relevance_candidates``: with ``--relevance-embedder minilm`` (extra ``minilm``), how many first candidate
   sentences, by the answer score, MiniLM scores against the question again: a contextual model that reads "wipe
   the old metadata" closer to "zero the superblock" than static word vectors do, at the cost of embedding those
   sentences once more (the first 20, 40, 80, or every sentence).

The script answers the real-documents benchmark's questions (``benchmarks/realdocs.py``) in one process, over
the indexes that ``realdocs.py --split S --check-only`` builds, with each setting (the others at their
defaults), and scores the answers with realdocs' own functions. Both defaults (0.9 and 40) were chosen on the
six splits ``dev``, ``test``, ``holdout``, ``fresh``, ``next`` and ``sixth`` pooled, the ones the summarizer's
rules were tuned on; the ``seventh`` split, held out from both choices, is reported by ``realdocs.py`` itself
(``--split seventh``, and ``--split seventh -- --relevance-embedder minilm``). The seconds are the summarizer's
own time a question (median), models' loading apart, on this machine.

Run: python benchmarks/answer_choices.py [--splits dev,test,...] [--work DIR]
Writes: benchmarks/results/answer_choices.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_script, write_result  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TUNING_SPLITS = ("dev", "test", "holdout", "fresh", "next", "sixth")
#: (name, the summarizer's options apart from its defaults)
SETTINGS: list[tuple[str, dict[str, Any]]] = [
    ("rarest word factor 1 (off)", {"rarest_word_factor": 1.0}),
    ("rarest word factor 0.9 (default)", {}),
    ("rarest word factor 0.85", {"rarest_word_factor": 0.85}),
    ("rarest word factor 0.8", {"rarest_word_factor": 0.8}),
    ("minilm, first 20", {"relevance_embedder": "minilm", "relevance_candidates": 20}),
    ("minilm, first 40 (its default)", {"relevance_embedder": "minilm"}),
    ("minilm, first 80", {"relevance_embedder": "minilm", "relevance_candidates": 80}),
    ("minilm, every sentence", {"relevance_embedder": "minilm", "relevance_candidates": None}),
]


def _realdocs() -> Any:
    return load_script(ROOT / "benchmarks" / "realdocs.py", "realdocs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", default=",".join(TUNING_SPLITS))
    parser.add_argument("--work", type=Path, default=ROOT / ".bench-cache" / "realdocs",
                        help="Where realdocs.py --check-only left each split's index.")
    args = parser.parse_args()
    from citesum.pipeline import Pipeline, PipelineOptions
    from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer

    rd = _realdocs()
    splits = args.splits.split(",")
    defaults = PipelineOptions()
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in SETTINGS}
    seconds: dict[str, list[float]] = {name: [] for name, _ in SETTINGS}
    summarizers = {name: ExtractiveSummarizer(ExtractiveOptions(bullets=defaults.bullets, max_words=defaults.words,
                                                                **options)) for name, options in SETTINGS}
    for summarizer in summarizers.values():  # the model's loading is not a question's time
        summarizer.relevance_embedder.encode_query("warm up")
    for split in splits:
        index = args.work / split / "index"
        if not index.exists():
            raise SystemExit(f"error: no index at {index}: run python benchmarks/realdocs.py --split {split} "
                             "--check-only first")
        stored = rd.indexed_documents(Path(sys.executable), index)
        documents = {d["id"]: d for d in stored}
        texts = [d["text"] for d in stored]
        pipeline = Pipeline(index, defaults)
        for q in rd.load_questions(split):
            context = pipeline.summarize(q["question"]).summary.context  # retrieval and packing as citesum's
            for name, summarizer in summarizers.items():
                started = time.perf_counter()
                summary = summarizer.summarize(q["question"], context)
                took = time.perf_counter() - started
                payload = {"abstained": summary.abstained, "notes": list(summary.notes), "timings": {},
                           "bullets": [{"text": b.text, "citations": list(b.citations)} for b in summary.bullets]}
                row = rd.score_question(q, payload, took, documents, texts)
                rows[name].append({**row, "split": split})
                seconds[name].append(took)
        print(f"[{split}] done", flush=True)
    settings = []
    for name, options in SETTINGS:
        metrics = rd.aggregate(rows[name])
        settings.append({"name": name, "options": options,
                         "median_summarize_seconds": round(statistics.median(seconds[name]), 3),
                         "pooled": metrics,
                         "by_split": {s: rd.aggregate([r for r in rows[name] if r["split"] == s]) for s in splits}})
        print(f"{name:32} precision {metrics['answer_precision']}  coverage {metrics['answer_coverage']}  "
              f"specific {metrics['specific_gold_rate']}  unanswerable abstained {metrics['abstention']}  "
              f"answerable abstained {metrics['false_abstention']}  {settings[-1]['median_summarize_seconds']} s")
    write_result("answer_choices", {"splits": splits, "questions": len(rows[SETTINGS[0][0]]),
                                          "settings": settings})


if __name__ == "__main__":
    main()
