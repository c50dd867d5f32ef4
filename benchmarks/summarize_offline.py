"""End-to-end latency of the offline pipeline (hybrid retrieval -> DOS RAG packing at 15,000 tokens ->
extractive summarizer) for each SummHay subtopic, with the index already built, and its p50 over the p50 of
retrieval and packing alone (the summarizer's share of the time). Each answer is the CLI's:
:class:`citesum.pipeline.Pipeline`'s ``summarize`` (its read of the index and its context's documents
included in the seconds), with one bullet per insight and no citation check.

Run: python benchmarks/summarize_offline.py [--cache DIR]
Writes: benchmarks/results/summarize_offline.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, SHARED_DATA, peak_rss_mb, write_result  # noqa: E402

from citesum.datasets.summhay import load_haystack  # noqa: E402
from citesum.index.store import Index, IndexSettings  # noqa: E402
from citesum.pipeline import Pipeline, PipelineOptions  # noqa: E402
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        for topic in HAYSTACKS:
            haystack = load_haystack(SHARED_DATA / "summhay" / topic)
            index = Index.create(Path(args.cache or temporary) / f"{topic}-wordllama-passage", IndexSettings())
            index.add(haystack.documents)
            summarizer = ExtractiveSummarizer(ExtractiveOptions(bullets=5))
            pipeline = Pipeline(index, PipelineOptions(retriever="hybrid", budget=15_000, order="original"),
                                summarizer=summarizer)
            pipeline.summarize(haystack.subtopics[0].query)  # warm-up: models and artifacts
            for subtopic in haystack.subtopics:
                summarizer.options = ExtractiveOptions(bullets=len(subtopic.insights))
                started = time.perf_counter()
                summary = pipeline.summarize(subtopic.query).summary
                rows.append({"topic": topic, "subtopic": subtopic.id, "seconds": time.perf_counter() - started,
                             "context_tokens": summary.context.token_count, "bullets": len(summary.bullets),
                             **{k: v for k, v in summary.timings.items()}})
    seconds = [r["seconds"] for r in rows]
    retrieve_pack = float(np.percentile([r["retrieve_pack_s"] for r in rows], 50))
    result = {"queries": len(rows), "p50_s": round(float(np.percentile(seconds, 50)), 3),
              "retrieve_pack_p50_s": round(retrieve_pack, 3),
              # issue 19's goal: the whole offline summary within 2x what retrieval and packing alone take
              "p50_over_retrieve_pack_p50": round(float(np.percentile(seconds, 50)) / retrieve_pack, 2),
              "p95_s": round(float(np.percentile(seconds, 95)), 3), "max_s": round(max(seconds), 3),
              "mean_context_tokens": round(float(np.mean([r["context_tokens"] for r in rows]))),
              "peak_rss_mb": round(peak_rss_mb(), 1), "per_query": rows}
    print({k: v for k, v in result.items() if k != "per_query"})
    write_result("summarize_offline", result)


if __name__ == "__main__":
    main()
