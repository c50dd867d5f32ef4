"""Run a pipeline on a SummHay haystack and score it with a judge, as the paper does.

Bullets cite documents by their 1-based position in the haystack (the paper's citation numbers), so the
scores are comparable with the stored systems judged by the same judge. Two kinds of run: a retrieval
pipeline (:func:`run_on_haystacks`) and the position-bias experiment (:func:`position_experiment`: the whole
haystack as context, the relevant documents placed at the top, bottom, middle or at random).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from citesum.datasets.summhay import Haystack
from citesum.evaluate.judges import Judge
from citesum.evaluate.position import PLACEMENTS, Placement, place_relevant, sensitivity
from citesum.evaluate.summhay import InsightScore, Scores, aggregate, gold_positions, score_insights
from citesum.index.store import Index, IndexSettings
from citesum.pack import PackOptions, pack_full
from citesum.summarize import Summarizer, summarize_query
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer
from citesum.tokens import Tokenizer, get_tokenizer
from citesum.types import Summary


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
    out = {}
    for subtopic in haystack.subtopics:
        engine = make_summarizer(len(subtopic.insights))
        summary = summarize_query(subtopic.query, index, engine, retriever=config.retriever,
                                  options=PackOptions(budget=config.budget, order=config.order),  # type: ignore[arg-type]
                                  relevance=subtopic.relevance)
        out[subtopic.id] = summary_lines(haystack, summary, repair_citations)
    return out


def summary_lines(haystack: Haystack, summary: Summary, repair_citations: bool = False) -> list[str]:
    """The summary as SummHay lines, its citations (optionally repaired against its context) as haystack
    positions."""
    if repair_citations:
        from citesum.summarize.verify import check_summary

        summary, _ = check_summary(summary, repair=True)
    position = haystack.citation_numbers
    return [f"- {b.text} " + "".join(f"[{position[d]}]" for d in b.citations) for b in summary.bullets]


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


@dataclass(frozen=True)
class PositionResult:
    """Scores per placement and the sensitivity (largest |joint - joint(random)|) of one summarizer."""

    scores: dict[Placement, Scores]
    insights: dict[Placement, list[InsightScore]]

    @property
    def sensitivity(self) -> float:
        return sensitivity({p: s.joint for p, s in self.scores.items()})


def _text_tokens(haystack: Haystack, tokenizer: Tokenizer) -> dict[str, int]:
    return {d.id: tokenizer.count(d.text) for d in haystack.documents}


def placed_summaries(haystack: Haystack, placement: Placement, make_summarizer: SummarizerFactory, budget: int,
                     tokenizer: Tokenizer, repair_citations: bool = False, seed: int = 0,
                     text_tokens: Mapping[str, int] | None = None) -> dict[str, list[str]]:
    """Subtopic id -> summary lines, each summarizing the whole haystack with that subtopic's relevant
    documents (those holding one of its insights) in ``placement``. Over ``budget``, every document is cut to
    a common length (:func:`~citesum.pack.pack_full`), so the placement is kept at any window size.
    ``text_tokens``: the documents' token counts, when the caller has them (counted here otherwise)."""
    by_id = {d.id: d for d in haystack.documents}
    text_tokens = text_tokens if text_tokens is not None else _text_tokens(haystack, tokenizer)
    out = {}
    for subtopic in haystack.subtopics:
        ordered = place_relevant(list(by_id), subtopic.relevance, placement, seed)
        context = pack_full([by_id[i] for i in ordered], budget, tokenizer, text_tokens)
        summary = make_summarizer(len(subtopic.insights)).summarize(subtopic.query, context)
        out[subtopic.id] = summary_lines(haystack, summary, repair_citations)
    return out


def position_experiment(haystacks: Sequence[Haystack], make_summarizer: SummarizerFactory, judge: Judge,
                        budget: int, tokenizer: Tokenizer | None = None, repair_citations: bool = False,
                        placements: Sequence[Placement] = PLACEMENTS) -> PositionResult:
    """SummHay's position-bias experiment for any summarizer, judged by ``judge``."""
    tokenizer = tokenizer or get_tokenizer()
    text_tokens = [_text_tokens(h, tokenizer) for h in haystacks]  # once, not per placement and subtopic
    scores, insights = {}, {}
    for placement in placements:
        summaries = [placed_summaries(h, placement, make_summarizer, budget, tokenizer, repair_citations,
                                      text_tokens=counts) for h, counts in zip(haystacks, text_tokens)]
        scores[placement], insights[placement] = judge_summaries(haystacks, summaries, judge)
    return PositionResult(scores, insights)
