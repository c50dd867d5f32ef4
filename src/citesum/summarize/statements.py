"""Short statements about a group of texts that keep their sources: RAPTOR's summary nodes and ReadAgent's gists.

Both multi-stage readers compress part of a collection before the question is known, and what they write is
later packed into a context that must still be cited. So a group's summary here is a list of
:class:`~citesum.types.Statement`, each with the documents it was written from:

* offline (:class:`CentralStatements`), the group's sentences most similar to their mean, each from one
  document: the extractive summarizer's way, without a query;
* with an LLM (:class:`LLMStatements`), the model's cited bullets, written from a numbered rendering of the
  group (RAPTOR's and ReadAgent's prompts, asked to cite), many groups at once; a group the model fails on
  gets the offline statements, and is reported.
"""

from __future__ import annotations

import contextvars
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol, Sequence

from citesum.chunking import sentence_spans
from citesum.embed import Embedder, get_embedder
from citesum.errors import CitesumError
from citesum.llm.base import LLM
from citesum.summarize.extractive import central_sentences
from citesum.summarize.llm import LLMSummarizer
from citesum.summarize.prompts import PromptTemplate
from citesum.tokens import Tokenizer, get_tokenizer
from citesum.types import Context, ContextBlock, Statement

#: a sentence shorter than this is a heading or a fragment, not a statement
MIN_STATEMENT_WORDS = 4
#: LLM requests in flight at once (the backend's own limits apply below this)
DEFAULT_WORKERS = 8

GROUP_TEMPLATE = PromptTemplate("statements", """Below are documents, each introduced by its number in brackets, \
e.g. "Document [3]".

{context}

{query} Write at most {num_words} words as bullet points ("- "). Every bullet ends with the numbers of the \
documents it comes from, each in its own brackets, e.g. [2][5]. Write nothing but the bullets.""")
#: RAPTOR's instruction for a cluster's summary, and ReadAgent's for a page's gist
RAPTOR_INSTRUCTION = "Write a summary of the text above, including as many key details as possible."
GIST_INSTRUCTION = "Shorten the text above: keep its facts, names, numbers and dates, and drop the rest."


@dataclass
class WriteReport:
    groups: int = 0
    #: (group number, reason) of the groups whose statements came from the offline fallback
    fallbacks: list[tuple[int, str]] = field(default_factory=list)


class StatementWriter(Protocol):
    name: str

    def write(self, groups: Sequence[Sequence[Statement]], sizes: Sequence[int],
              report: WriteReport | None = None) -> list[tuple[Statement, ...]]:
        """Statements of about ``sizes[i]`` tokens for each group ``groups[i]`` of texts (with their
        documents)."""


class CentralStatements:
    """Offline: the group's most central sentences, up to ``max_tokens``, in the group's order."""

    name = "central-sentences"

    def __init__(self, embedder: Embedder | None = None, tokenizer: Tokenizer | None = None) -> None:
        self._embedder = embedder
        self.tokenizer = tokenizer or get_tokenizer()

    @property
    def settings(self) -> tuple[object, ...]:
        return (self.name, self._embedder.name if self._embedder is not None else "wordllama")

    def write(self, groups: Sequence[Sequence[Statement]], sizes: Sequence[int],
              report: WriteReport | None = None) -> list[tuple[Statement, ...]]:
        if report is not None:
            report.groups += len(groups)
        return [self._one(group, size) for group, size in zip(groups, sizes, strict=True)]

    def _one(self, group: Sequence[Statement], max_tokens: int) -> tuple[Statement, ...]:
        sentences = [Statement(" ".join(item.text[s.start : s.end].split()), item.documents)
                     for item in group for s in sentence_spans(item.text)]
        sentences = [s for s in sentences if len(s.text.split()) >= MIN_STATEMENT_WORDS] or \
            [Statement(" ".join(item.text.split()), item.documents) for item in group if item.text.strip()]
        if not sentences:
            return ()
        if self._embedder is None:
            self._embedder = get_embedder("wordllama")
        vectors = self._embedder.encode_documents([s.text for s in sentences])
        counts = [self.tokenizer.count(s.text) for s in sentences]
        return tuple(sentences[i] for i in central_sentences(vectors, counts, max_tokens))


class LLMStatements:
    """An LLM's cited bullets about each group, ``workers`` groups at a time (the backend caches responses, so
    a build run again asks only what it had not)."""

    def __init__(self, llm: LLM, instruction: str = RAPTOR_INSTRUCTION, *, fallback: StatementWriter | None = None,
                 workers: int = DEFAULT_WORKERS, max_tokens: int = 512) -> None:
        self.llm = llm
        self.instruction = instruction
        self.fallback = fallback or CentralStatements()
        self.workers = workers
        self.max_tokens = max_tokens
        self.name = f"llm:{llm.name}"

    @property
    def settings(self) -> tuple[object, ...]:
        return (self.name, self.llm.settings, self.instruction, self.max_tokens)

    def write(self, groups: Sequence[Sequence[Statement]], sizes: Sequence[int],
              report: WriteReport | None = None) -> list[tuple[Statement, ...]]:
        report = report if report is not None else WriteReport()

        def one(group: Sequence[Statement], size: int) -> tuple[Statement, ...] | str:
            words = max(10, round(0.75 * size))  # about 4 tokens to 3 words
            summarizer = LLMSummarizer(self.llm, GROUP_TEMPLATE, num_words=words, max_tokens=self.max_tokens)
            try:
                summary = summarizer.summarize(self.instruction, group_context(group))
            except CitesumError as exc:
                return str(exc)
            return tuple(Statement(b.text, b.citations or _sources(group)) for b in summary.bullets)

        # every group at once, whatever its size: the workers keep the backend busy
        with ThreadPoolExecutor(max_workers=max(1, self.workers)) as pool:
            # each call in the caller's context (a copy each): a service request's time limit, or its client
            # leaving, reaches the model calls made on the pool's threads
            futures = [pool.submit(contextvars.copy_context().run, one, group, size) for group, size in zip(groups, sizes)]
            answers = [future.result() for future in futures]
        out = []
        for number, (group, size, answer) in enumerate(zip(groups, sizes, answers, strict=True)):
            if isinstance(answer, str):
                report.fallbacks.append((number, answer))
                answer = self.fallback.write([group], [size])[0]
            out.append(answer)
        report.groups += len(groups)
        return out


def _sources(group: Sequence[Statement]) -> tuple[str, ...]:
    """Every document of the group (what an uncited bullet about the group may have come from)."""
    return tuple(dict.fromkeys(d for item in group for d in item.documents))


def statement_rows(statements: Sequence[Statement]) -> list[list[object]]:
    """Statements as JSON rows ``[text, [document, ...]]`` (how the tree and the memory store them)."""
    return [[s.text, list(s.documents)] for s in statements]


def statements_of(rows: Sequence[tuple[str, Sequence[str]]]) -> tuple[Statement, ...]:
    """The statements of :func:`statement_rows` (as JSON reads them back)."""
    return tuple(Statement(text, tuple(documents)) for text, documents in rows)


def group_context(group: Sequence[Statement]) -> Context:
    """The group as a numbered context for a model: one block per document (the first each text names), in the
    order of first appearance, so the model's citation numbers map back to documents."""
    texts: dict[str, list[str]] = {}
    for item in group:
        if item.documents and item.text.strip():
            texts.setdefault(item.documents[0], []).append(item.text)
    blocks = tuple(ContextBlock(number, document_id, "", "\n".join(parts), 0)
                   for number, (document_id, parts) in enumerate(texts.items(), start=1))
    return Context(blocks, "group", 0, 0)


__all__ = ["CentralStatements", "GIST_INSTRUCTION", "LLMStatements", "RAPTOR_INSTRUCTION", "StatementWriter",
           "WriteReport", "group_context", "statement_rows", "statements_of"]


def statement_writer(llm: LLM | None, instruction: str) -> StatementWriter:
    """Statements written by ``llm`` following ``instruction`` (offline statements for what it fails on), or
    the offline central statements without a model."""
    return CentralStatements() if llm is None else LLMStatements(llm, instruction)
