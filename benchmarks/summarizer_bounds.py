"""What limits the extractive summarizer's SummHay joint score with the default pipeline's contexts: bounds
that no choice of facts can pass, and the score of a summarizer told which facts to choose.

The contexts are summarizer_held_out.py's (hybrid retrieval of whole documents, 15,000 tokens, original
order). Three measurements, pooled over the three news haystacks:

* **the context's bound**: the share of insights that some document of the context states, and the joint score
  if every such insight got a bullet citing the context's documents that state it (all of them, or at most
  ``max_citations``): citation is F1 against every document of the haystack that states the insight, so the
  documents the context lacks cost recall whatever the summary says;
* **fact choice told by the gold** (a diagnostic, never a default): the summarizer with its groups ranked by
  whether their sentence states an insight of the subtopic (TF-IDF cosine >= 0.3 with one, the lexical judge's
  similarity), judged by both offline judges: what a perfect ranking of the summarizer's own groups would get,
  with its grouping, its choice of sentence and its citations unchanged;
* the default summarizer, for comparison (in-sample: it is the mean over the three haystacks, not held out).

Run: python benchmarks/summarizer_bounds.py [--cache DIR]
Writes: benchmarks/results/summarizer_bounds.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import news_haystacks, write_result  # noqa: E402
from summarizer_held_out import contexts  # noqa: E402

from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.offline import tfidf_cosine_matrix  # noqa: E402
from citesum.evaluate.runner import judge_summaries, summary_lines  # noqa: E402
from citesum.index.lexical import tokenize  # noqa: E402
from citesum.summarize import summarize_context  # noqa: E402
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer, _Group, _Sentence  # noqa: E402
from citesum.types import TermFrequencies  # noqa: E402

#: a sentence states an insight when their TF-IDF cosine reaches this (close to the lexical judge's FULL bar)
STATES = 0.3
CAPS: tuple[int | None, ...] = (5, None)


class GoldRankedSummarizer(ExtractiveSummarizer):
    """The extractive summarizer with the groups whose sentences state one of ``insights`` ranked first (by how
    well), the others by the default weight: a diagnostic of fact choice, never a default."""

    def __init__(self, options: ExtractiveOptions, insights: list[str]) -> None:
        super().__init__(options)
        self.insights = insights

    def _weight(self, group: _Group, sentences: list[_Sentence], holding: Counter[str], query_terms: set[str],
                terms: TermFrequencies | None) -> float:
        stated = tfidf_cosine_matrix(tokenize(self.insights),
                                     tokenize([sentences[i].text for i in group.members])).max()
        if stated >= STATES:
            return 1_000.0 + float(stated)
        return super()._weight(group, sentences, holding, query_terms, terms)


def context_bound(haystacks, prepared) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """The share of insights the contexts hold, and the joint score of stating each held insight once with
    citations to the context's documents that state it (all, or at most each cap)."""
    held, joints = [], {cap: [] for cap in CAPS}
    stating_counts, in_context_counts = [], []
    for haystack, by_subtopic in zip(haystacks, prepared):
        for subtopic in haystack.subtopics:
            in_context = {block.document_id for block in by_subtopic[subtopic.id].blocks}
            for insight in subtopic.insights:
                stating = set(subtopic.insight_documents[insight.id])
                cited = len(stating & in_context)
                held.append(cited > 0)
                stating_counts.append(len(stating))
                in_context_counts.append(cited)
                for cap in CAPS:
                    n = cited if cap is None else min(cited, cap)
                    joints[cap].append(2 * n / (n + len(stating)) if n else 0.0)  # F1 with precision 1
    return {"insights_held": round(100 * float(np.mean(held)), 1),
            "documents_stating_an_insight": round(float(np.mean(stating_counts)), 2),
            "of_them_in_the_context": round(float(np.mean(in_context_counts)), 2),
            **{f"joint_max_citations_{cap}": round(100 * float(np.mean(j)), 1) for cap, j in joints.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None, help="keep the haystack indexes here")
    args = parser.parse_args()
    haystacks = news_haystacks()
    judges = [get_judge("offline"), get_judge("lexical")]
    with tempfile.TemporaryDirectory() as temporary:
        prepared = contexts(haystacks, Path(args.cache or temporary))
    rows = {}
    for name, make in (("default", lambda s: ExtractiveSummarizer(ExtractiveOptions(bullets=len(s.insights)))),
                       ("facts chosen by the gold", lambda s: GoldRankedSummarizer(
                           ExtractiveOptions(bullets=len(s.insights)), [i.text for i in s.insights]))):
        summaries = [{s.id: summary_lines(h, summarize_context(s.query, by_subtopic[s.id], make(s)))
                      for s in h.subtopics} for h, by_subtopic in zip(haystacks, prepared)]
        rows[name] = {judge.name: judge_summaries(haystacks, summaries, judge)[0].as_dict() for judge in judges}
        print(name, rows[name], flush=True)
    bound = context_bound(haystacks, prepared)
    print("context bound", bound)
    write_result("summarizer_bounds", {
        "pipeline": "hybrid retrieval, whole documents, 15,000 tokens, original order, one bullet per insight, "
                    "at most 5 citations a bullet",
        "context_bound": bound, "summaries": rows})


if __name__ == "__main__":
    main()
