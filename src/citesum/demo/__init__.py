"""A deterministic synthetic haystack: our own demo corpus and test fixture, with known fact-to-document gold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from citesum.demo.haystack import SyntheticHaystack
    from citesum.index.store import Index
    from citesum.types import Summary

#: what ``citesum demo`` asks for: bullets per answer and context tokens
DEMO_BULLETS = 4
DEMO_BUDGET = 3000


def answer_questions(haystack: SyntheticHaystack, index: Index) -> Iterator[tuple[str, str, Summary]]:
    """(subtopic, question, summary) for each of the haystack's questions, answered as ``citesum demo`` does:
    the offline default pipeline (hybrid retrieval, DOS RAG packing, extractive summary) over ``index``."""
    from citesum.pack import PackOptions
    from citesum.summarize import summarize_query
    from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer

    summarizer = ExtractiveSummarizer(ExtractiveOptions(bullets=DEMO_BULLETS))
    for subtopic, query in haystack.queries.items():
        yield subtopic, query, summarize_query(query, index, summarizer, options=PackOptions(budget=DEMO_BUDGET))
