"""Run a pipeline on a SummHay haystack and score it with a judge, as the paper does.

Bullets cite documents by their 1-based position in the haystack (the paper's citation numbers), so the
scores are comparable with the stored systems judged by the same judge. Two kinds of run: a retrieval
pipeline (:func:`run_on_haystacks`) and the position-bias experiment (:func:`position_experiment`: the whole
haystack as context, the relevant documents placed at the top, bottom, middle or at random).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from citesum.datasets.summhay import Haystack, load_haystack
from citesum.defaults import DEFAULT_BUDGET
from citesum.errors import IngestError
from citesum.evaluate.judges import Judge
from citesum.evaluate.position import PLACEMENTS, Placement, place_relevant, sensitivity
from citesum.evaluate.summhay import InsightScore, Scores, aggregate, gold_positions, score_insights
from citesum.index.store import Index, IndexSettings
from citesum.pack import pack_full
from citesum.parallel import BatchExecutor, InProcess, Shared, TaskResults, job_key, resumable_map, settings_of
from citesum.summarize import Summarizer
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer
from citesum.tokens import Tokenizer, get_tokenizer
from citesum.types import Summary


@dataclass(frozen=True)
class PipelineConfig:
    retriever: str = "hybrid"
    budget: int = DEFAULT_BUDGET
    order: str = "original"
    unit: str = "document"
    embedder: str = "wordllama"
    #: stop at the first unit that does not fit, as the papers' code and the recall@15K metric do; by default
    #: it is skipped and filling goes on
    stop_at_first_overflow: bool = False


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
    from citesum.pipeline import Pipeline, PipelineOptions

    options = PipelineOptions(retriever=config.retriever, budget=config.budget, order=config.order,  # type: ignore[arg-type]
                              stop_at_first_overflow=config.stop_at_first_overflow, repair=repair_citations)
    out = {}
    for subtopic in haystack.subtopics:
        pipeline = Pipeline(index, options, summarizer=make_summarizer(len(subtopic.insights)))
        answer = pipeline.summarize(subtopic.query, relevance=subtopic.relevance)
        out[subtopic.id] = summary_lines(haystack, answer.summary)
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


@dataclass(frozen=True)
class SweepPoint:
    """One configuration of a sweep, judged: its scores, every insight's decision, the judge, and the judge's
    replies it could not read (an LLM judge's, counted as NO coverage; None for a judge that reads none)."""

    config: PipelineConfig
    scores: Scores
    insights: list[InsightScore]
    judge: str
    unparsed: list[str] | None


@dataclass(frozen=True)
class _SweepJob:
    """What every run of a sweep shares: the haystacks, their index folders (built before the runs), the
    summarizer and the judge (by name: a worker loads its model once)."""

    haystacks: Shared[Sequence[Haystack]]
    index_bases: tuple[Path, ...]
    make_summarizer: SummarizerFactory
    repair_citations: bool
    judge_name: str
    judge_llm: object

    def run(self, config: PipelineConfig) -> SweepPoint:
        haystacks = self.haystacks.get()
        summaries = [pipeline_summaries(h, Index.open(folder), config, self.make_summarizer, self.repair_citations)
                     for h, folder in zip(haystacks, sweep_index_folders(self.index_bases, config))]
        judge = _worker_judge(self.judge_name, self.judge_llm)
        unread = getattr(judge, "unparsed", None)  # an LLM judge's, over every run of this process
        seen = len(unread) if unread is not None else 0
        scores, insights = judge_summaries(haystacks, summaries, judge)
        return SweepPoint(config, scores, insights, judge.name, unread[seen:] if unread is not None else None)


_judges: dict[tuple[str, object], Judge] = {}


def _worker_judge(name: str, llm: object) -> Judge:
    """The judge ``name`` of this process, loaded once (an embedding judge's model takes seconds)."""
    from citesum.evaluate.judges import get_judge

    key = (name, settings_of(llm) if llm is not None else None)
    if key not in _judges:
        _judges[key] = get_judge(name, llm=llm)
    return _judges[key]


def sweep_index_folders(index_bases: Sequence[Path], config: PipelineConfig) -> list[Path]:
    """Each haystack's index folder for ``config``'s unit (and embedder, when not the default)."""
    suffix = f"-{config.unit}" + ("" if config.embedder == PipelineConfig.embedder else f"-{config.embedder}")
    return [base.with_name(base.name + suffix) for base in index_bases]


def sweep_haystacks(haystacks: Sequence[Haystack], index_bases: Sequence[Path], configs: Sequence[PipelineConfig],
                    make_summarizer: SummarizerFactory = extractive_factory, *, repair_citations: bool = False,
                    judge_name: str = "offline", judge_llm: object = None, executor: BatchExecutor | None = None,
                    results: TaskResults | None = None,
                    progress: Callable[[int, int], None] | None = None) -> list[SweepPoint]:
    """Each of ``configs`` (retrievers, budgets, orders, units) run on the haystacks and judged: the runs spread
    over ``executor``'s workers (default: one after the other here). Each haystack's index is built once per
    unit and embedder (:func:`sweep_index_folders` of its ``index_bases``) before the runs, which only read it
    (on a cluster, the folders must be shared with the workers). With ``results``, each finished run is kept as
    it arrives, under its configuration: a sweep interrupted half-way and run again does only the runs left.
    The judge is loaded here first, so that a judge that cannot be had is said before any run."""
    _worker_judge(judge_name, judge_llm)
    for config in {(c.unit, c.embedder): c for c in configs}.values():
        for haystack, folder in zip(haystacks, sweep_index_folders(index_bases, config)):
            haystack_index(haystack, folder, config)
    executor = executor or InProcess()
    job = _SweepJob(executor.share(list(haystacks)), tuple(index_bases), make_summarizer, repair_citations,
                    judge_name, judge_llm)
    points, _ = resumable_map(executor, job.run, list(configs), results, progress,
                              keys=[job_key("run", config) for config in configs])
    return points


def sweep_haystack_files(haystack_files: Sequence[str], configs: Sequence[PipelineConfig],
                         make_summarizer: SummarizerFactory, *, label: str, repair_citations: bool,
                         judge_name: str, judge_llm: object = None, index_dir: str | Path | None = None,
                         executor: BatchExecutor | None = None, run_key: Sequence[object] = ()) -> list[SweepPoint]:
    """:func:`sweep_haystacks` over SummHay topic files, their indexes kept in ``index_dir`` (reused when
    unchanged), or in a temporary folder without one. With ``index_dir``, each finished run is kept under its
    configuration, the files' modification times, the summarizer's ``label`` and ``run_key`` (what else decides
    the answers): a sweep run again with more budgets redoes none of the others."""
    import tempfile

    from citesum.index.store import TASKS_DIR

    haystacks = [load_haystack(f) for f in haystack_files]
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(index_dir or temporary).resolve()  # workers open the indexes by path
        results = TaskResults(folder / TASKS_DIR, job_key(
            "summhay sweep", [(f, Path(f).stat().st_mtime_ns) for f in haystack_files], label,
            *run_key)) if index_dir else None
        points = sweep_haystacks(haystacks, [folder / Path(f).stem for f in haystack_files], configs,
                                 make_summarizer, repair_citations=repair_citations, judge_name=judge_name,
                                 judge_llm=judge_llm, executor=executor, results=results)
        if results is not None:
            results.clear()
    return points


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


#: one system's summaries, in the shape judge_summaries takes: per haystack, subtopic id -> summary lines
SystemSummaries = list[dict[str, list[str]]]


def load_summaries(paths: Sequence[str | Path], haystacks: Sequence[Haystack]) -> dict[str, SystemSummaries]:
    """Summaries to judge, read from files, by system name.

    A file is either a SummHay topic file whose subtopics carry ``summaries`` ({system: lines}, the format the
    SummHay repository writes its systems' output in), or JSON ``{system: {subtopic id: summary}}``, or
    ``{subtopic id: summary}`` (one system, named after the file). A summary is a list of lines (bullets, with
    citations as ``[n]``, n the document's 1-based position in the haystack) or one text, split into its
    non-empty lines. Several files are merged. Every system must have a summary for every subtopic of the
    given haystacks, and every summary must belong to one of them: anything else is an :class:`IngestError`,
    since a score over part of the subtopics is not comparable with the paper's.
    """
    found: dict[str, dict[str, list[str]]] = {}
    for path in paths:
        for system, by_subtopic in _summaries_in(Path(path)).items():
            found.setdefault(system, {}).update(by_subtopic)
    files = ", ".join(map(str, paths))
    if not found:
        raise IngestError(f"{files}: no summaries")
    known = {s.id for h in haystacks for s in h.subtopics}
    out = {}
    for system, by_subtopic in found.items():
        if stray := sorted(set(by_subtopic) - known):
            raise IngestError(f"{files}: summaries of {system!r} for {len(stray)} subtopic(s) of none of the given "
                              f"haystacks, e.g. {stray[0]!r}: pass the haystack they belong to")
        if missing := sorted(known - set(by_subtopic)):
            raise IngestError(f"{files}: {system!r} has no summary for {len(missing)} of the {len(known)} subtopics, e.g. "
                              f"{missing[0]!r}: every subtopic needs one")
        out[system] = [{s.id: by_subtopic[s.id] for s in h.subtopics} for h in haystacks]
    return out


def _summaries_in(path: Path) -> dict[str, dict[str, list[str]]]:
    """system -> subtopic id -> lines, from one file of :func:`load_summaries`."""
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise IngestError(f"{path}: cannot read summaries ({type(exc).__name__}: {exc})") from exc
    if isinstance(content, dict) and "subtopics" in content:  # a SummHay topic file
        found: dict[str, dict[str, list[str]]] = {}
        for subtopic in load_haystack(path).subtopics:
            for system, lines in subtopic.summaries.items():
                found.setdefault(system, {})[subtopic.id] = _lines(path, system, subtopic.id, lines)
        return found
    if not isinstance(content, dict) or not content:
        raise IngestError(f"{path}: expected a JSON object of summaries by subtopic id (or by system, then "
                          "subtopic id), or a SummHay topic file")
    if all(isinstance(v, dict) for v in content.values()):
        return {system: {subtopic: _lines(path, system, subtopic, summary) for subtopic, summary in v.items()}
                for system, v in content.items()}
    return {path.stem: {subtopic: _lines(path, path.stem, subtopic, summary) for subtopic, summary in content.items()}}


def _lines(path: Path, system: str, subtopic: str, summary: Any) -> list[str]:
    if isinstance(summary, str):
        summary = summary.splitlines()
    if not isinstance(summary, list) or not all(isinstance(line, str) for line in summary):
        raise IngestError(f"{path}: the summary of {system!r} for subtopic {subtopic!r} is neither a text nor a "
                          f"list of lines (it is {type(summary).__name__})")
    return [line for line in summary if line.strip()]


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
