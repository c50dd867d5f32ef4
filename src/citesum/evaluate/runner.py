"""Run a pipeline on a SummHay haystack and score it with a judge, as the paper does.

Bullets cite documents by their 1-based position in the haystack (the paper's citation numbers), so the
scores are comparable with the stored systems judged by the same judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from citesum.datasets.summhay import Haystack
from citesum.evaluate.judges import Judge
from citesum.evaluate.summhay import InsightScore, Scores, aggregate, gold_positions, score_insights
from citesum.index.store import Index, IndexSettings
from citesum.pack import PackOptions
from citesum.summarize import Summarizer, summarize_query
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer


@dataclass(frozen=True)
class PipelineConfig:
    retriever: str = "hybrid"
    budget: int = 15_000
    order: str = "original"
    unit: str = "document"
    embedder: str = "wordllama"


def haystack_index(haystack: Haystack, folder: Path, config: PipelineConfig) -> Index:
    """The haystack's index (built once; reopening an unchanged one costs nothing)."""
    index = Index.create(folder, IndexSettings.for_unit(config.unit, embedder=config.embedder))  # type: ignore[arg-type]
    index.add(haystack.documents)
    return index


#: builds the summarizer for a subtopic from its number of bullets (SummHay asks for one per insight)
SummarizerFactory = Callable[[int], Summarizer]


def extractive_factory(bullets: int) -> Summarizer:
    return ExtractiveSummarizer(ExtractiveOptions(bullets=bullets))


def pipeline_summaries(haystack: Haystack, index: Index, config: PipelineConfig,
                       make_summarizer: SummarizerFactory = extractive_factory,
                       repair_citations: bool = False) -> dict[str, list[str]]:
    """Subtopic id -> summary lines ``- text [p][q]`` with haystack positions as citation numbers."""
    position = {d.id: int(d.metadata["idx"]) + 1 for d in haystack.documents}
    out = {}
    for subtopic in haystack.subtopics:
        engine = make_summarizer(len(subtopic.insights))
        summary = summarize_query(subtopic.query, index, engine, retriever=config.retriever,
                                  options=PackOptions(budget=config.budget, order=config.order),  # type: ignore[arg-type]
                                  relevance=subtopic.relevance)
        if repair_citations:
            from citesum.summarize.verify import check_summary

            summary, _ = check_summary(summary, repair=True)
        out[subtopic.id] = [f"- {b.text} " + "".join(f"[{position[d]}]" for d in b.citations) for b in summary.bullets]
    return out


def run_on_haystacks(haystacks: Sequence[Haystack], index_folders: Sequence[Path], config: PipelineConfig,
                     make_summarizer: SummarizerFactory = extractive_factory,
                     repair_citations: bool = False) -> list[dict[str, list[str]]]:
    """:func:`pipeline_summaries` for each haystack, each with its own (reused) index folder."""
    return [pipeline_summaries(h, haystack_index(h, folder, config), config, make_summarizer, repair_citations)
            for h, folder in zip(haystacks, index_folders)]


def judge_summaries(haystacks: Sequence[Haystack], summaries: Sequence[dict[str, Sequence[str]]],
                    judge: Judge) -> tuple[Scores, list[InsightScore]]:
    """Judge and score one system's summaries over the haystacks (insight-level pooled means)."""
    every: list[InsightScore] = []
    for haystack, by_subtopic in zip(haystacks, summaries):
        for subtopic in haystack.subtopics:
            lines = list(by_subtopic[subtopic.id])
            judgments = judge.judge([(i.id, i.text) for i in subtopic.insights], lines)
            every.extend(score_insights(lines, judgments, gold_positions(haystack, subtopic)))
    return aggregate(every), every
