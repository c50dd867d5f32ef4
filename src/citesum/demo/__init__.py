"""A deterministic synthetic haystack: our own demo corpus and test fixture, with known fact-to-document gold."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from citesum.demo.haystack import SyntheticHaystack
    from citesum.index.store import Index
    from citesum.types import Summary


def answer_questions(haystack: SyntheticHaystack, index: Index) -> Iterator[tuple[str, str, Summary]]:
    """(subtopic, question, summary) for each of the haystack's questions, answered as ``citesum summarize``
    answers with its defaults (:data:`~citesum.defaults.DEFAULT_BULLETS` bullets at most, a
    :data:`~citesum.defaults.DEFAULT_WORDS`-word limit, the default context budget): the offline default
    pipeline (hybrid retrieval, DOS RAG packing, extractive summary) over ``index``."""
    from citesum.pipeline import Pipeline

    pipeline = Pipeline(index)
    for subtopic, query in haystack.queries.items():
        yield subtopic, query, pipeline.summarize(query).summary
