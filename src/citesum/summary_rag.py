"""Summary RAG (Hernandez de Leon & Kondratiuk): retrieve over one summary per document, read the documents.

A summary index holds one short summary per document of a content index (same ids, same embedder); a query is
matched against the summaries, and the generator gets each of the top-k documents' summary and full content,
until a character limit, after which documents contribute their summary only.

Summaries come from an LLM (the paper's way: 150-300 tokens keeping numbers, entities and dates) or, offline,
from the document's most central sentences. Building is incremental: a document whose text is unchanged keeps
its summary; a document an LLM could not summarize gets the offline summary and is reported.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from citesum.chunking import sentence_spans
from citesum.embed import Embedder, get_embedder
from citesum.errors import CitesumError, ConfigError, LLMError
from citesum.index.store import DB_NAME, TASKS_DIR, Index, IndexReader, IndexSettings, ProgressFn
from citesum.llm.base import LLM, ChatRequest
from citesum.parallel import BatchExecutor, InProcess, TaskResults, job_key, resumable_map, settings_of
from citesum.pack import BLOCK_SEPARATOR, block_header, counted_context, document_passage
from citesum.summarize.extractive import central_sentences
from citesum.tokens import Tokenizer, get_tokenizer
from citesum.types import Context, ContextBlock, Document

#: the paper's settings: 3 documents, 12,000 characters of context
DEFAULT_DOCUMENTS = 3
DEFAULT_CHAR_LIMIT = 12_000
SUMMARY_TOKENS = 200
MIN_SENTENCE_WORDS = 4

SUMMARY_PROMPT = """Summarize the document below in 150 to 300 tokens. Keep every number, named entity and date
that matters; write plain sentences, no preamble.

Title: {title}

{text}"""


class DocumentSummarizer(Protocol):
    name: str

    def summarize_document(self, document: Document) -> str: ...


class CentralSentences:
    """Offline: the document's sentences most similar to its mean sentence vector, up to ``max_tokens``, in the
    document's order (a lead-style summary that does not assume the news convention of the first paragraph)."""

    name = "central-sentences"

    def __init__(self, max_tokens: int = SUMMARY_TOKENS, embedder: Embedder | None = None,
                 tokenizer: Tokenizer | None = None) -> None:
        self.max_tokens = max_tokens
        self._embedder = embedder
        self._embedder_given = embedder is not None
        self.tokenizer = tokenizer or get_tokenizer()

    @property
    def settings(self) -> tuple[object, ...]:
        return (self.name, self.max_tokens, self._embedder.name if self._embedder_given else "wordllama")  # type: ignore[union-attr]

    def __getstate__(self) -> dict[str, object]:
        """Without the default embedder it loaded (a parallel build sends the summarizer with every task; each
        worker process loads the model once)."""
        state = dict(self.__dict__)
        if not self._embedder_given:
            state["_embedder"] = None
        return state

    def summarize_document(self, document: Document) -> str:
        spans = [document.text[s.start : s.end] for s in sentence_spans(document.text)]
        # Headings and title lines are spans too; a summary is made of sentences.
        sentences = [" ".join(s.split()) for s in spans if len(s.split()) >= MIN_SENTENCE_WORDS]
        if not sentences:
            return self.tokenizer.truncate(" ".join(" ".join(spans).split()), self.max_tokens) or document.title
        if self._embedder is None:
            self._embedder = get_embedder("wordllama")
        chosen = central_sentences(self._embedder.encode_documents(sentences),
                                   [self.tokenizer.count(s) for s in sentences], self.max_tokens)
        return " ".join(sentences[i] for i in chosen)


class LLMSummaries:
    """The paper's summaries, from any chat backend (responses are cached by the backend)."""

    def __init__(self, llm: LLM, max_tokens: int = 400, prompt: str = SUMMARY_PROMPT) -> None:
        self.llm = llm
        self.max_tokens = max_tokens
        self.prompt = prompt
        self.name = f"llm:{llm.name}"

    @property
    def settings(self) -> tuple[object, ...]:
        return (self.name, self.llm.settings, self.prompt, self.max_tokens)

    def summarize_document(self, document: Document) -> str:
        request = ChatRequest.from_prompt(self.prompt.format(title=document.title, text=document.text),
                                          max_tokens=self.max_tokens)
        text = self.llm.complete(request).text.strip()
        if not text:
            raise LLMError("the model returned an empty summary")
        return text


@dataclass
class SummaryIndexReport:
    summarized: int = 0
    unchanged: int = 0
    deleted: int = 0
    #: (document id, reason) of documents whose summary came from the offline fallback
    fallbacks: list[tuple[str, str]] = field(default_factory=list)


#: documents a worker summarizes in one task of a parallel build (``summary-index --ray``)
DOCUMENTS_PER_TASK = 16


def build_summary_index(content: Index, path: str | Path, summarizer: DocumentSummarizer, *,
                        fallback: DocumentSummarizer | None = None, progress: ProgressFn | None = None,
                        executor: BatchExecutor | None = None) -> tuple[Index, SummaryIndexReport]:
    """Create or bring up to date the summary index of ``content`` at ``path``.

    The documents to summarize go ``DOCUMENTS_PER_TASK`` at a time to ``executor``'s workers (default: one
    after the other here; the summarizers travel by pickling). Each finished batch is kept in the summary
    index's ``tasks/`` until the summaries are committed, so a build interrupted half-way and run again
    summarizes only the documents left."""
    path = Path(path)
    if path.resolve() == Path(content.path).resolve():
        raise ConfigError(f"{path}: the summary index must be a folder of its own, not the content index")
    settings = IndexSettings(unit="document", tokenizer=content.settings.tokenizer,
                             embedder=content.settings.embedder)
    # A folder without an index in it (made by the user beforehand) gets a new one.
    summaries = Index.open(path, expect=settings) if (path / DB_NAME).exists() else Index.create(path, settings)
    existing = list(summaries.documents())
    foreign = [d.id for d in existing if d.format != "summary"]
    if foreign:  # another index of whole documents: summarizing into it would replace its documents
        raise ConfigError(f"{path} is not a summary index (it holds documents such as '{foreign[0]}'); nothing "
                          "was changed: give a new folder")
    known = {d.id: d.metadata.get("summary_of") for d in existing}
    documents = list(content.documents())
    todo = [d for d in documents if known.get(d.id) != d.content_hash]
    report = SummaryIndexReport(unchanged=len(documents) - len(todo))
    batches = [todo[start : start + DOCUMENTS_PER_TASK] for start in range(0, len(todo), DOCUMENTS_PER_TASK)]
    results = TaskResults(path / TASKS_DIR, job_key(
        "summaries", settings_of(summarizer), settings_of(fallback) if fallback else None,
        [(d.id, d.content_hash) for d in todo]))
    summarized, _ = resumable_map(
        executor or InProcess(), functools.partial(_summarize_batch, summarizer, fallback), batches, results,
        (lambda done, total: progress("summarize", report.unchanged + min(done * DOCUMENTS_PER_TASK, len(todo)),
                                      len(documents))) if progress else None)
    upserts = []
    for summary, failure in (one for batch in summarized for one in batch):
        upserts.append(summary)
        if failure is not None:
            report.fallbacks.append((summary.id, failure))
    gone = set(known) - {d.id for d in documents}
    if upserts or gone:
        summaries.update(upsert=upserts, delete=gone, progress=progress)
    results.clear()
    report.summarized, report.deleted = len(upserts), len(gone)
    return summaries, report


def _summarize_batch(summarizer: DocumentSummarizer, fallback: DocumentSummarizer | None,
                     documents: list[Document]) -> list[tuple[Document, str | None]]:
    """One task: each document's summary document, and why the summarizer failed when the fallback wrote it."""
    return [_summary_document(document, summarizer, fallback) for document in documents]


def _summary_document(document: Document, summarizer: DocumentSummarizer, fallback: DocumentSummarizer | None
                      ) -> tuple[Document, str | None]:
    failure = None
    try:
        text = summarizer.summarize_document(document)
        by = summarizer.name
    except CitesumError as exc:
        if fallback is None:
            raise
        failure = str(exc)
        text, by = fallback.summarize_document(document), fallback.name
    return Document(id=document.id, title=document.title, text=text, source=document.source, format="summary",
                    metadata={"summary_of": document.content_hash, "summarizer": by}), failure


def summary_rag_context(query: str, summaries: IndexReader, content: IndexReader, *, retriever: str = "hybrid",
                        documents: int = DEFAULT_DOCUMENTS, char_limit: int = DEFAULT_CHAR_LIMIT,
                        tokenizer: Tokenizer | None = None) -> Context:
    """The top ``documents`` by their summaries, each as its summary and full content while the context stays
    within ``char_limit`` characters, as its summary alone after that. The context's ``budget`` is that limit,
    in characters (the paper's unit), and its order ``summary-rag`` (retrieval order)."""
    from citesum.retrieve import get_retriever

    if documents < 1 or char_limit < 1:
        raise ConfigError(f"documents and char_limit must be >= 1, got {documents} and {char_limit}")
    tokenizer = tokenizer or get_tokenizer(content.settings.tokenizer)
    ranked = get_retriever(retriever, summaries).rank_documents(query, documents)
    summary_of = {d.id: d for d in summaries.documents_by_id([doc_id for doc_id, _ in ranked])}
    full = {d.id: d for d in content.documents_by_id([doc_id for doc_id, _ in ranked])}
    blocks: list[ContextBlock] = []
    used = 0
    summaries_only = False
    for number, (doc_id, score) in enumerate(((d, s) for d, s in ranked if d in full), start=1):
        summary, document = summary_of[doc_id], full[doc_id]
        # The labels stand on lines of their own, so sentence splitting keeps them out of the sentences.
        text = f"Summary:\n{summary.text}\n\nContent:\n{document.text}"
        # Once one document's content does not fit, every later one gives its summary only (the paper's rule): a
        # shorter, less relevant document must not bring its content where a more relevant one could not.
        summaries_only = summaries_only or used + len(text) > char_limit
        if summaries_only:
            text = f"Summary:\n{summary.text}"
        used += len(text) + len(BLOCK_SEPARATOR)
        # The block's text is not the document's (labels, a summary): its one passage is the document itself,
        # so that citation evidence is found in the document, at the document's offsets. A summary-only block
        # stands for its document too: a claim taken from the summary is checked where the reader will look.
        blocks.append(ContextBlock(number, doc_id, document.title, text,
                                   tokenizer.count(block_header(number, document.title) + text),
                                   (document_passage(document, tokenizer),),
                                   score=score))
    return counted_context(blocks, "summary-rag", char_limit, tokenizer)


def summaries_for(content: IndexReader, path: str | Path) -> Index:
    """The summary index at ``path``, checked against ``content`` (same documents, same texts)."""
    summaries = Index.open(path)
    summarized = {d.id: d.metadata.get("summary_of") for d in summaries.documents()}
    current = {d.id: d.content_hash for d in content.documents()}
    if summarized != current:
        changed = sum(1 for doc_id, digest in current.items() if summarized.get(doc_id) != digest)
        raise ConfigError(f"the summary index {path} is out of date for {content.path} ({changed} document(s) new "
                          f"or changed, {len(set(summarized) - set(current))} gone): update it with: "
                          f"citesum summary-index --index {content.path} --out {path}")
    return summaries


__all__ = ["CentralSentences", "DocumentSummarizer", "LLMSummaries", "SummaryIndexReport", "build_summary_index",
           "summaries_for", "summary_rag_context"]
