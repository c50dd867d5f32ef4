"""One pipeline behind every front end: an index and a question in, a cited answer out.

``citesum summarize``, ``citesum serve`` (and its page), the demo and the evaluation runner all call
:class:`Pipeline`; they only parse what they are given and print or send what it answers.

Example:
    >>> from citesum import Index, Pipeline, PipelineOptions  # doctest: +SKIP
    >>> pipeline = Pipeline(Index.open("ix"), PipelineOptions(bullets=3))  # doctest: +SKIP
    >>> answer = pipeline.summarize("What changed in the water rates?")  # doctest: +SKIP
    >>> for bullet in answer.bullets:  # doctest: +SKIP
    ...     print(bullet.text, [answer.documents[d].title for d in bullet.citations])
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterator, Literal, Mapping, Sequence

from citesum.defaults import DEFAULT_BUDGET, DEFAULT_BULLETS, DEFAULT_WORDS
from citesum.errors import ConfigError
from citesum.index.store import Index, IndexReader
from citesum.llm.base import LLM
from citesum.llm.options import LLMOptions
from citesum.pack import Order, PackOptions
from citesum.responses import (SourceOf, bullet_response, context_documents, context_response, search_response,
                               sources_response, stored_source, summary_response)
from citesum.summarize import Summarizer, build_context, spelled_as_indexed, summarize_context, summarizer_for
from citesum.summarize.verify import check_bullet, check_summary, context_verifier
from citesum.tokens import Tokenizer, get_tokenizer
from citesum.types import Bullet, Context, ContextBlock, Document, Summary, TermFrequencies

if TYPE_CHECKING:
    from citesum.llm.likelihood import Likelihood
    from citesum.summarize.verify import VerifiedBullet

#: who writes the answer: sentences of the documents (offline), an LLM, or ReadAgent's reading of the index
#: (gists and look-ups, written by the LLM when one is named, else offline) followed by either
SUMMARIZER_NAMES = ("extractive", "llm", "readagent")
#: the retriever name that reads RAPTOR's tree of cluster summaries (built by ``citesum tree``)
RAPTOR = "raptor"


@dataclass(frozen=True)
class PipelineOptions:
    """Everything that decides an answer, with the defaults of ``citesum summarize`` and the page."""

    #: a retriever of :data:`citesum.retrieve.RETRIEVER_NAMES`, ``hybrid:<a>+<b>``, or ``raptor`` (RAPTOR's tree)
    retriever: str = "hybrid"
    #: context budget in the summarizer's tokens
    budget: int = DEFAULT_BUDGET
    #: ``original``: DOS RAG (retrieved units in document order); ``score``: Vanilla RAG; ``full``: everything
    order: Order = "original"
    stop_at_first_overflow: bool = False
    #: keep at most this many retrieved units before packing
    top_k: int | None = None
    #: one of :data:`SUMMARIZER_NAMES`
    summarizer: str = "extractive"
    #: bullets at most: fewer when fewer facts answer, none when nothing does
    bullets: int = DEFAULT_BULLETS
    #: the whole answer's word limit
    words: int = DEFAULT_WORDS
    #: extractive: score sentences against the query with this embedder (default: its own)
    relevance_embedder: str | None = None
    #: the budget's tokenizer (default: the index's)
    tokenizer: str | None = None
    #: LLM: the prompt (``cited``, ``summhay``, ``answer``, ``long`` or a template file)
    template: str = "cited"
    temperature: float = 0.0
    #: the seed of what is random: the LLM's sampling, the ``random`` retriever
    seed: int = 0
    #: LLM: answer tokens (None: what the bullets and words take, :func:`~citesum.summarize.answer_tokens`)
    max_tokens: int | None = None
    #: check every citation against the context and give each its evidence sentence
    verify: bool = False
    #: replace each bullet's citations by the context documents that state it (None: on for an LLM's answer,
    #: whose citations are its own; the extractive summarizer cites by construction)
    repair: bool | None = None
    #: Summary RAG: retrieve over this summary index (``citesum summary-index``); budget and order do not apply
    summary_index: str | os.PathLike[str] | None = None
    #: Summary RAG: the top documents given (their summary, and their full text while within ``char_limit``)
    summary_documents: int = 3
    char_limit: int = 12_000
    #: the model of the ``llm`` and ``readagent`` summarizers
    llm: LLMOptions = field(default_factory=LLMOptions)
    #: a model (on ``llm``'s server) that decides borderline citations
    confirm_model: str | None = None

    def __post_init__(self) -> None:
        if self.summarizer not in SUMMARIZER_NAMES:
            raise ConfigError(f"unknown summarizer '{self.summarizer}'; choose one of: {', '.join(SUMMARIZER_NAMES)}")
        if self.relevance_embedder is not None and self.summarizer != "extractive":
            raise ConfigError("a relevance embedder applies to the extractive summarizer")
        PackOptions(budget=self.budget, order=self.order)  # its own checks of the budget and the order

    @property
    def repairs(self) -> bool:
        """Whether citations are repaired: asked, or by default for an LLM's answer."""
        return repair_by_default(self.summarizer, self.repair)


def repair_by_default(summarizer: str, asked: bool | None) -> bool:
    """Whether a summarizer's citations are repaired: as ``asked``, by default on for an LLM's answer, whose
    citations are the model's own (repair lifts every stored LLM system of SummHay: benchmarks/citation_repair.py).
    The extractive summarizer cites by construction, at most 5 documents a bullet; repair would drop that
    limit, so it is off by default."""
    return summarizer == "llm" if asked is None else asked


@dataclass(frozen=True)
class Answer:
    """A cited answer: the summary (bullets, or an abstention with leads), each citation's check when citations
    were verified, and the documents of the context by id. :meth:`to_json` is the answer every front end
    prints or sends."""

    query: str
    summary: Summary
    #: the verifier's findings, one per bullet (empty when citations were neither verified nor repaired)
    checks: tuple[VerifiedBullet, ...]
    #: the context's documents by id (every cited document is one)
    documents: Mapping[str, Document]

    @property
    def bullets(self) -> tuple[Bullet, ...]:
        return self.summary.bullets

    @property
    def leads(self) -> tuple[Bullet, ...]:
        """When nothing answers: the closest sentences, to follow up (not stated as an answer)."""
        return self.summary.leads

    @property
    def abstained(self) -> bool:
        return self.summary.abstained

    @property
    def notes(self) -> tuple[str, ...]:
        return self.summary.notes

    def to_json(self, *, source_of: SourceOf = stored_source, include_context: bool = True) -> dict[str, Any]:
        """The answer as JSON: bullets with their citations (and evidence, when checked), leads, the numbered
        sources named by ``source_of``; ``include_context`` adds the context, the prompt and the model's output."""
        return summary_response(self.summary, self.documents, query=self.query, checks=self.checks,
                                source_of=source_of, include_context=include_context)


@dataclass(frozen=True)
class StreamEvent:
    """One event of :meth:`Pipeline.stream`: ``context`` (the sources, before any bullet), ``bullet`` (one
    bullet, its citations checked, with their evidence) or ``done`` (the whole answer)."""

    kind: Literal["context", "bullet", "done"]
    data: dict[str, Any]


class Pipeline:
    """Retrieve, pack, summarize and check citations over one index, with one set of options.

    ``llm``: the model to use instead of building one from ``options.llm`` (a service shares its model between
    requests). ``summarizer``: any object with ``summarize(query, context)``, instead of the one the options
    name (the evaluation's one-bullet-per-insight summarizers). ``likelihood``: PromptRank's language model.
    Building a pipeline is cheap when ``llm`` is given: a service builds one per request."""

    def __init__(self, index: Index | str | os.PathLike[str], options: PipelineOptions | None = None, *,
                 llm: LLM | None = None, summarizer: Summarizer | None = None,
                 likelihood: Likelihood | None = None) -> None:
        self.index = index if isinstance(index, Index) else Index.open(index)
        self.options = options = options or PipelineOptions()
        if llm is None and options.summarizer != "extractive":
            llm = options.llm.build_fitted()
        if llm is None and options.summarizer == "llm":
            raise ConfigError("the 'llm' summarizer needs a model name: give --model (or --llm llamacpp for the packaged model)")
        #: the model of the ``llm`` and ``readagent`` summarizers (None offline)
        self.llm = llm if options.summarizer != "extractive" else None
        self.likelihood = likelihood
        self.tokenizer: Tokenizer = get_tokenizer(options.tokenizer or self.index.settings.tokenizer)
        self.summarizer: Summarizer = summarizer or summarizer_for(
            self.llm, bullets=options.bullets, words=options.words, relevance_embedder=options.relevance_embedder,
            **({"template": options.template, "temperature": options.temperature, "seed": options.seed,
                "max_tokens": options.max_tokens} if self.llm is not None else {}))

    # ---- searching ---------------------------------------------------------------------------------------------

    def search(self, query: str, k: int = 10, *, documents: bool = False,
               relevance: Mapping[str, float] | None = None, source_of: SourceOf = stored_source) -> dict[str, Any]:
        """The ``k`` best units (or ``documents``, ranked by their best units) for ``query``, as JSON."""
        from citesum.retrieve import get_retriever

        with self.index.read() as view:
            ranker = get_retriever(self.options.retriever, view, relevance=relevance, seed=self.options.seed,
                                   likelihood=self.likelihood)
            # a word the index holds only in its other spelling is searched for as the index writes it; the
            # response names the query as asked
            found = search_response(ranker, view, spelled_as_indexed(query, view), k, documents=documents,
                                    source_of=source_of)
            return {**found, "query": query}

    # ---- answering ---------------------------------------------------------------------------------------------

    def budget_for(self, query: str, budget: int | None = None) -> int:
        """The context budget of ``query``: ``budget`` (default: the options'), or less when the model's window
        would not hold that much beside this query's prompt and the answer. The one place a window budget is
        computed: from the real prompt, by the summarizer's own count of its model's tokens."""
        budget = budget or self.options.budget
        fits = getattr(self.summarizer, "context_budget", None)
        return budget if fits is None else int(fits(query, budget))

    def summarize(self, query: str, *, budget: int | None = None,
                  relevance: Mapping[str, float] | None = None) -> Answer:
        """Answer ``query``: at most ``options.bullets`` bullets citing the documents that state them, or an
        abstention with the closest sentences as leads. ``budget`` overrides the options' for this question;
        ``relevance`` (document id -> grade) is what the ``oracle`` retriever ranks by."""
        with self.index.read() as view:
            context, notes, started = self._context(query, view, budget, relevance)
            summary = summarize_context(query, context, self.summarizer,
                                        retrieve_pack_s=time.perf_counter() - started)
            return self._answer(query, view, self._noted(summary, notes))

    def stream(self, query: str, *, budget: int | None = None, source_of: SourceOf = stored_source,
               include_context: bool = True) -> Iterator[StreamEvent]:
        """:meth:`summarize` as it happens: a ``context`` event (the numbered sources, how the context was
        packed), a ``bullet`` event for each bullet as soon as it is written and its citations checked (and
        repaired, as :meth:`summarize` repairs them), then ``done`` with the whole answer, as :meth:`Answer.to_json`
        gives it. An LLM summarizer's bullets come as the model writes them; another's all come once written.
        Closing the iterator early stops the model's writing."""
        started = time.perf_counter()
        with self.index.read() as view:
            context, notes, packing = self._context(query, view, budget, None)
            documents = context_documents(context, view)
            yield StreamEvent("context", {"query": query, "context": context_response(context), "notes": list(notes),
                                          "sources": sources_response(context, documents, source_of)})
            checking = self.options.verify or self.options.repairs
            verifier = context_verifier(context, confirm=self._confirm()) if checking else None
            checked: dict[str, tuple[Bullet, VerifiedBullet]] = {}  # by the bullet's text, as written
            first: float | None = None
            summary: Summary | None = None
            for item in self._written(query, context, packing):
                if isinstance(item, Summary):
                    summary = item
                    continue
                if verifier is not None:
                    checked[item.text] = check_bullet(verifier, context, item, self.options.repairs)
                bullet, verified = checked.get(item.text, (item, None))
                first = first if first is not None else time.perf_counter() - started
                yield StreamEvent("bullet", bullet_response(bullet, context, documents, verified))
            assert summary is not None, "a summarizer's stream ends with its summary"
            summary = self._noted(summary, notes)
            if first is not None:
                summary = replace(summary, timings={**summary.timings, "first_bullet_s": round(first, 4)})
            if verifier is not None and summary.context is context:
                # each bullet checked once: as it was sent, or now (one the stream did not give)
                pairs = [checked.get(b.text) or check_bullet(verifier, context, b, self.options.repairs)
                         for b in summary.bullets]
                summary = replace(summary, bullets=tuple(b for b, _ in pairs))
                answer = Answer(query, summary, tuple(v for _, v in pairs), documents)
            else:  # unchecked, or the summarizer cut the context to its model's window: checked against that
                answer = self._answer(query, view, summary)
            yield StreamEvent("done", answer.to_json(source_of=source_of, include_context=include_context))

    def _written(self, query: str, context: Context, packing: float) -> Iterator[Bullet | Summary]:
        """The summarizer's bullets as they are written, then its summary (timed as :func:`summarize_context`
        times it)."""
        stream = getattr(self.summarizer, "stream", None)
        if stream is None:
            summary = summarize_context(query, context, self.summarizer,
                                        retrieve_pack_s=time.perf_counter() - packing)
            yield from summary.bullets
            yield summary
            return
        started = time.perf_counter()
        for item in stream(query, context):
            if isinstance(item, Summary):
                elapsed = time.perf_counter() - started
                item = replace(item, timings={**item.timings, "retrieve_pack_s": round(started - packing, 4),
                                              "total_s": round(started - packing + elapsed, 4)})
            yield item

    def _noted(self, summary: Summary, notes: Sequence[str]) -> Summary:
        return replace(summary, notes=(*notes, *summary.notes)) if notes else summary

    def _answer(self, query: str, view: IndexReader, summary: Summary) -> Answer:
        """The answer of ``summary``, from ``view``: see :meth:`_checked`."""
        return self._checked(query, summary, context_documents(summary.context, view))

    def _checked(self, query: str, summary: Summary, documents: Mapping[str, Document]) -> Answer:
        """The answer of ``summary`` (whose context's documents are ``documents``): its citations checked (and
        repaired) when the options ask."""
        checks: Sequence[VerifiedBullet] = ()
        if self.options.verify or self.options.repairs:
            summary, checks = check_summary(summary, repair=self.options.repairs, confirm=self._confirm())
        return Answer(query, summary, tuple(checks), documents)

    def _context(self, query: str, view: IndexReader, budget: int | None,
                 relevance: Mapping[str, float] | None) -> tuple[Context, tuple[str, ...], float]:
        """(the context of ``query``: retrieved and packed, or RAPTOR's tree, ReadAgent's memory, the summary
        index; notes for the reader; when building it started)."""
        asked = budget or self.options.budget
        fitted = self.budget_for(query, budget)
        notes: tuple[str, ...] = ()
        if fitted < asked and self.options.summary_index is None:  # Summary RAG's limit is in characters, its own
            # only a summarizer whose model has a window fits the budget to it
            window = getattr(getattr(self.summarizer, "llm", None), "context_window", None)
            notes = (f"the model's window is {window:,} tokens: the budget is {fitted:,} tokens, not {asked:,}",)
        options = self.options
        started = time.perf_counter()
        if options.summary_index is not None:
            from citesum.summary_rag import summaries_for, summary_rag_context

            context = summary_rag_context(query, summaries_for(view, options.summary_index), view,
                                          retriever=options.retriever, documents=options.summary_documents,
                                          char_limit=options.char_limit, tokenizer=self.tokenizer)
            return context, notes, started
        if options.summarizer == "readagent" or options.retriever == RAPTOR:
            context, more = self._multistage_context(query, view, fitted)
            return context, (*notes, *more), started
        context = build_context(query, view, retriever=self._retriever(view), relevance=relevance,
                                tokenizer=self.tokenizer,
                                options=PackOptions(budget=fitted, order=options.order, top_k=options.top_k,
                                                    stop_at_first_overflow=options.stop_at_first_overflow))
        return context, notes, started

    def _retriever(self, view: IndexReader) -> Any:
        if self.likelihood is None:
            return self.options.retriever
        from citesum.retrieve import get_retriever

        return get_retriever(self.options.retriever, view, likelihood=self.likelihood)

    def _multistage_context(self, query: str, view: IndexReader, budget: int) -> tuple[Context, list[str]]:
        """The context of RAPTOR's collapsed tree (the tree ``citesum tree`` built), or of ReadAgent (its memory
        of the index, built and stored on first use, written by the model or offline), and notes for the
        reader."""
        if self.options.summarizer != "readagent":
            from citesum.raptor import raptor_context

            return raptor_context(query, view, budget=budget, tokenizer=self.tokenizer), []
        from citesum.readagent import ReadAgent, ReadReport
        from citesum.summarize.statements import GIST_INSTRUCTION, statement_writer

        agent = ReadAgent(statement_writer(self.llm, GIST_INSTRUCTION), self.llm)
        report = ReadReport()
        memory = agent.memory(view, tokenizer=self.tokenizer, report=report)
        context, notes = agent.context(query, view, memory, budget=budget, tokenizer=self.tokenizer)
        if report.gists.fallbacks or report.pagination_fallbacks:
            notes.insert(0, f"reading the index: {len(report.pagination_fallbacks)} page break(s) and "
                            f"{len(report.gists.fallbacks)} gist(s) of {report.pages} pages fell back to the "
                            "offline way")
        if self.llm is None:  # (the summarizer named with the answer is the extractive one: say why)
            notes.insert(0, "ReadAgent without a model: it chose the pages the offline way, and the answer is "
                            "the documents' own sentences")
        return context, notes

    def _confirm(self) -> LLM | None:
        if not self.options.confirm_model:
            return None
        return replace(self.options.llm, backend="openai", model=self.options.confirm_model).build()


__all__ = ["Answer", "DEFAULT_BUDGET", "Pipeline", "PipelineOptions", "SUMMARIZER_NAMES", "StreamEvent",
           "repair_by_default"]


# ---- several indexes at once --------------------------------------------------------------------------------

def answer_across(parts: Mapping[str, Pipeline], query: str, *, budget: int | None = None) -> Answer:
    """Answer ``query`` from several indexes at once (a service's collections, by name): each index gets an
    equal share of the budget for its own context (their retrieval scores are not on one scale, so the shares
    are not chosen by score), the contexts are numbered as one, and the first pipeline's summarizer writes the
    answer and checks its citations. A document's id becomes ``NAME/ID`` (two indexes may both hold a
    ``README.md``); leads and citations name it so."""
    from contextlib import ExitStack

    if not parts:
        raise ConfigError("no index to answer from")
    first = next(iter(parts.values()))
    whole = first.budget_for(query, budget)
    share = max(1, whole // len(parts))
    blocks: list[ContextBlock] = []
    documents: dict[str, Document] = {}
    terms: list[TermFrequencies] = []
    notes: list[str] = []
    started = time.perf_counter()
    with ExitStack() as stack:
        for name, pipeline in parts.items():
            view = stack.enter_context(pipeline.index.read())
            context, more, _ = pipeline._context(query, view, share, None)
            notes += [f"{name}: {note}" for note in more]
            for block in context.blocks:
                blocks.append(_renamed(block, name, len(blocks) + 1))
            documents.update({f"{name}/{key}": replace(document, id=f"{name}/{key}")
                              for key, document in context_documents(context, view).items()})
            if context.terms is not None:
                terms.append(context.terms)
    # each collection's blocks in its own order, one collection after the other
    merged = Context(tuple(blocks), f"{first.options.order}, by collection", whole, sum(b.token_count for b in blocks),
                     _joined_terms(terms) if len(terms) == len(parts) else None)
    summary = first._noted(summarize_context(query, merged, first.summarizer,
                                             retrieve_pack_s=time.perf_counter() - started), notes)
    return first._checked(query, summary, documents)


def _renamed(block: ContextBlock, name: str, number: int) -> ContextBlock:
    """``block`` numbered ``number`` in a context of several indexes, its document named ``NAME/ID``."""
    document_id = f"{name}/{block.document_id}"
    return replace(block, number=number, document_id=document_id,
                   passages=tuple(replace(p, id=f"{name}/{p.id}", document_id=document_id) for p in block.passages))


def _joined_terms(parts: Sequence[TermFrequencies]) -> TermFrequencies:
    """The term statistics of a context joined from several indexes' contexts: units and holdings added (a term
    one context does not hold counts what the others know of it)."""
    holding: dict[str, tuple[int, int]] = {}
    for part in parts:
        for term, (in_context, in_collection) in part.holding.items():
            was = holding.get(term, (0, 0))
            holding[term] = (was[0] + in_context, was[1] + in_collection)
    return TermFrequencies(sum(p.context_units for p in parts), sum(p.collection_units for p in parts), holding)
