"""ROUGE of the offline pipeline on ODSum (open-domain: the whole split is the collection).

For every dev question: hybrid retrieval over 100-token passages, DOS RAG packing at 8,000 tokens, the
extractive summarizer with a word limit (ODSum Story: 250, Meeting: 200), ROUGE-1/2/L F1 against the human
reference summaries (best reference per metric).

Run: python benchmarks/odsum_rouge.py [--cache DIR]
Writes: benchmarks/results/odsum_rouge.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, mean_rouge, write_result  # noqa: E402

from citesum.datasets import load_dataset  # noqa: E402
from citesum.index.store import Index, IndexSettings  # noqa: E402
from citesum.pipeline import Pipeline, PipelineOptions  # noqa: E402
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer  # noqa: E402

SPLITS = {"odsum-story": (SHARED_DATA / "odsum" / "story" / "documents_dev.jsonl", 250),
          "odsum-meeting": (SHARED_DATA / "odsum" / "meeting", 200)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as temporary:
        for name, (path, words) in SPLITS.items():
            dataset = load_dataset(name, str(path))
            index = Index.create(Path(args.cache or temporary) / name, IndexSettings())
            index.add(dataset.documents)
            summarizer = ExtractiveSummarizer(ExtractiveOptions(bullets=None, max_words=words))
            pipeline = Pipeline(index, PipelineOptions(retriever="hybrid", budget=8_000), summarizer=summarizer)
            started = time.perf_counter()
            answers = [" ".join(b.text for b in pipeline.summarize(query.text).bullets) for query in dataset.queries]
            results[name] = {"queries": len(dataset.queries), "word_limit": words,
                             **mean_rouge(answers, [q.references for q in dataset.queries]),
                             "seconds_per_query": round((time.perf_counter() - started) / len(dataset.queries), 3)}
            print(name, results[name], flush=True)
    write_result("odsum_rouge", {"retriever": "hybrid", "budget": 8_000, "summarizer": "extractive",
                                 "results": results})


if __name__ == "__main__":
    main()
