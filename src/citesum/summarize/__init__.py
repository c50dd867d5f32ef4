"""From query to cited summary: retrieve, pack, summarize (extractive offline, or an LLM).

Example:
    >>> from citesum.summarize import summarize_query  # doctest: +SKIP
    >>> summary = summarize_query("What changed in water rates?", index)  # doctest: +SKIP
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Mapping, Protocol

from citesum.defaults import DEFAULT_BULLETS, DEFAULT_WORDS
from citesum.index.lexical import document_frequency, tokenize
from citesum.index.store import IndexReader
from citesum.llm.base import LLM
from citesum.pack import PackOptions, pack
from citesum.retrieve import Retriever, get_retriever
from citesum.tokens import Tokenizer
from citesum.types import Context, Summary, TermFrequencies

SUMMARIZERS = ["extractive", "llm"]
#: answer tokens an LLM summarizer is given for each word asked, when none are given: cl100k takes under two a word
#: of the stored SummHay systems' bullets, citations in; technical text (paths, options, code) takes more
ANSWER_TOKENS_PER_WORD = 2
#: and for each bullet asked: its marker, its citations ("[3][12][17]") and its line's end
ANSWER_TOKENS_PER_BULLET = 24
#: the most answer tokens asked when none are given: a long answer asked (2,000 words) leaves a small model's
#: window room for a context; more is asked with ``max_tokens`` (``--max-tokens``)
MOST_ANSWER_TOKENS = 1024
#: retrieved units considered before packing (the budget usually binds first)
RETRIEVE_DEPTH = 1000
#: what is kept free of a window when the prompt is fitted to it, for the difference between two counts of the
#: same text by the model's tokenizer (the chat template's tokens, a ratio taken from another prompt)
WINDOW_SLACK = 0.05


class Summarizer(Protocol):
    name: str

    def summarize(self, query: str, context: Context) -> Summary: ...


def build_context(query: str, index: IndexReader, *, retriever: str | Retriever = "hybrid",
                  options: PackOptions | None = None, relevance: Mapping[str, float] | None = None,
                  tokenizer: Tokenizer | None = None) -> Context:
    """Retrieve and pack; ``retriever`` is a name (:func:`~citesum.retrieve.get_retriever`) or a retriever built
    over ``index`` with options of its own (PromptRank's language model); ``tokenizer`` should be the
    summarizer's (default: the index's cl100k)."""
    options = options or PackOptions()
    if options.order == "full":
        return pack(index, [], options, tokenizer)
    ranker = get_retriever(retriever, index, relevance=relevance) if isinstance(retriever, str) else retriever
    from citesum.summarize.extractive import written_as

    written = respellings_in(query, index)
    query = written_as(query, written)
    hits = ranker.retrieve(query, max(RETRIEVE_DEPTH, options.top_k or 0))
    context = pack(index, hits, options, tokenizer)
    if ranker.ranking_depends_on_k:
        # K is what the context holds: rank again for that K, then the rest as before (to fill what is left).
        first = ranker.retrieve(query, sum(len(block.passages) for block in context.blocks))
        taken = {hit.passage.id for hit in first}
        context = pack(index, first + [hit for hit in hits if hit.passage.id not in taken], options, tokenizer)
    if not ranker.scores_reach_the_summarizer:
        context = replace(context, blocks=tuple(replace(block, score=None) for block in context.blocks))
    # (the summarizer reads the question as the search did, and says which slips it read)
    return replace(context, terms=term_frequencies(index, context, query), respellings=written)


def respellings_in(query: str, index: IndexReader) -> dict[str, str] | None:
    """The words of ``query`` that no unit of the index holds, but one holds spelled otherwise ("colour" over
    documents that say "color") or one slip of the keys away, each with the word as the index writes it
    (:func:`citesum.summarize.extractive.respellings`); None when the search store keeps no term statistics."""
    from citesum.summarize.extractive import held_by_counts, respellings

    lexical = index.lexical
    if not getattr(lexical, "term_statistics", False):
        return None
    return respellings(query, held_by_counts(lexical.unit_frequencies))  # type: ignore[attr-defined]


def spelled_as_indexed(query: str, index: IndexReader) -> str:
    """``query`` with its words written as the index writes them (:func:`respellings_in`), for the search to
    find them; ``query`` as it is when the search store keeps no term statistics."""
    from citesum.summarize.extractive import written_as

    return written_as(query, respellings_in(query, index))


def term_frequencies(index: IndexReader, context: Context, query: str = "") -> TermFrequencies | None:
    """The context's analysed terms and the ``query``'s, each with how many of the context's units and of the
    index's units hold it (a query term the context lacks is held by none of its units: how rare it is in the
    collection tells whether the context misses what the query asks); None when the index's search store keeps
    no term statistics (Milvus) or the context holds no unit."""
    units = [passage.text for block in context.blocks for passage in block.passages]
    lexical = index.lexical  # once: an index being updated may give the next call another generation's
    if not units or not getattr(lexical, "term_statistics", False):
        return None
    in_context = document_frequency([set(tokens) for tokens in tokenize(units)])
    for term in tokenize([query])[0] if query else ():
        in_context.setdefault(term, 0)
    terms = list(in_context)
    in_collection = lexical.unit_frequencies(terms)  # type: ignore[attr-defined]
    return TermFrequencies(len(units), lexical.size,  # type: ignore[attr-defined]
                           {term: (in_context[term], int(count)) for term, count in zip(terms, in_collection)})


def summarize_query(query: str, index: IndexReader, summarizer: Summarizer | None = None, *,
                    retriever: str | Retriever = "hybrid",
                    options: PackOptions | None = None, relevance: Mapping[str, float] | None = None,
                    tokenizer: Tokenizer | None = None) -> Summary:
    """Retrieve, pack and summarize; the summary carries the context, the prompt and timings."""
    started = time.perf_counter()
    context = build_context(query, index, retriever=retriever, options=options, relevance=relevance,
                            tokenizer=tokenizer)
    return summarize_context(query, context, summarizer, retrieve_pack_s=time.perf_counter() - started)


def summarize_context(query: str, context: Context, summarizer: Summarizer | None = None, *,
                      retrieve_pack_s: float = 0.0) -> Summary:
    """Summarize a packed context (``summarize_query`` packs it; Summary RAG packs its own); the timings add
    ``retrieve_pack_s``, the time it took to build the context."""
    if summarizer is None:
        from citesum.summarize.extractive import ExtractiveSummarizer

        summarizer = ExtractiveSummarizer()
    started = time.perf_counter()
    summary = summarizer.summarize(query, context)
    timings = {**summary.timings, "retrieve_pack_s": round(retrieve_pack_s, 4),
               "total_s": round(retrieve_pack_s + time.perf_counter() - started, 4)}
    return replace(summary, timings=timings)


def prompt_room(window: int, answer_tokens: int, ratio: float = 1.0) -> float:
    """The prompt's room in a ``window``-token model window beside an answer of ``answer_tokens``, in citesum's
    tokens (the model counts ``ratio`` of its own per one of ours), less :data:`WINDOW_SLACK`. The one formula
    of a window's room: the pipeline's budget and the LLM summarizer's cut both use it."""
    return (window - answer_tokens) * (1 - WINDOW_SLACK) / ratio


def fit_budget(budget: int, window: int | None, prompt_tokens: int, answer_tokens: int, ratio: float = 1.0) -> int:
    """The context budget that leaves room in the model window for the prompt's own text (``prompt_tokens``,
    the prompt rendered with an empty context) and the answer: ``budget`` or less."""
    from citesum.errors import BudgetError

    if window is None:
        return budget
    room = math.floor(prompt_room(window, answer_tokens, ratio)) - prompt_tokens
    if room < 1:
        raise BudgetError(f"a {window}-token window cannot hold the prompt ({prompt_tokens} tokens) and the "
                          f"answer ({answer_tokens} tokens); raise --window or lower --max-tokens")
    return min(budget, room)


def summarizer_for(llm: LLM | None, *, bullets: int | None = DEFAULT_BULLETS, words: int | None = DEFAULT_WORDS,
                   relevance_embedder: str | None = None, **llm_options: object) -> Summarizer:
    """The offline extractive summarizer (``llm`` None; its sentences scored against the query by
    ``relevance_embedder``, default its own), or an LLM summarizer with ``llm_options`` (template, temperature,
    seed, max_tokens: by default :func:`answer_tokens`), writing at most ``bullets`` bullets and ``words`` words."""
    if llm is None:
        from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer

        return ExtractiveSummarizer(ExtractiveOptions(bullets=bullets, max_words=words,
                                                      relevance_embedder=relevance_embedder))
    from citesum.summarize.llm import LLMSummarizer

    return LLMSummarizer(llm, bullets=bullets or DEFAULT_BULLETS, num_words=words or DEFAULT_WORDS, **llm_options)  # type: ignore[arg-type]


def answer_tokens(bullets: int, words: int) -> int:
    """The answer tokens an LLM summarizer asks for when it is not told: what ``bullets`` bullets of ``words``
    words in all take, with room to spare, and at most ``MOST_ANSWER_TOKENS``. A model that writes on past them
    is cut off, not waited for (a small model can ramble to any limit), and its last, cut bullet is left out;
    the answer's room is also what a model's window keeps free of the prompt, so a room larger than the answer
    needs takes context away."""
    return min(ANSWER_TOKENS_PER_WORD * words + ANSWER_TOKENS_PER_BULLET * bullets, MOST_ANSWER_TOKENS)


def window_budget(window: int, *, bullets: int, words: int, query_tokens: int, template: str = "cited") -> int:
    """The context budget an LLM with a ``window``-token window can take: what the prompt (with a query of
    ``query_tokens`` tokens) and the answer (:func:`answer_tokens`) leave."""
    from citesum.summarize.prompts import get_template
    from citesum.tokens import get_tokenizer

    prompt = get_template(template).render(context="", query="", bullets=bullets, num_words=words)
    return fit_budget(window, window, get_tokenizer().count(prompt) + query_tokens, answer_tokens(bullets, words))
