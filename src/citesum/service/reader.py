"""What a read request does, as plain functions of a :class:`Reader` (the index and the summarizer of one
worker). The same functions run on the worker threads of the service's own process or in worker processes
(``ServiceConfig.worker_kind``); each opens a view of one generation (``Index.read``) for the whole request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from citesum.errors import CitesumError, ConfigError, MissingExtraError
from citesum.index.store import Index
from citesum.llm.base import LLM
from citesum.pack import PackOptions
from citesum.responses import document_response, relative_source, search_response, summary_response
from citesum.retrieve import get_retriever
from citesum.service.models import SearchRequest, SummarizeRequest
from citesum.summarize import summarize_query


def json_bytes(content: Any) -> bytes:
    """The JSON of a response. An unpaired surrogate in stored text becomes U+FFFD instead of failing the
    response half-way (a dropped connection)."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8", "replace")


class NotFound(CitesumError):
    """No such document (answered 404)."""


@dataclass
class Reader:
    index: Index
    llm: LLM | None
    default_budget: int

    def warm_up(self) -> None:
        """Load what the first request would (the generation, the embedders), so it is not the slow one."""
        from citesum.embed import get_embedder

        with self.index.read() as view:
            len(view)
        get_embedder(self.index.settings.embedder)
        get_embedder("wordllama")  # the extractive summarizer's and the citation verifier's


def search(reader: Reader, request: SearchRequest) -> dict[str, Any]:
    with reader.index.read() as view:
        ranker = get_retriever(request.retriever, view)
        return search_response(ranker, view, request.query, request.k, documents=request.documents,
                               source_of=relative_source)


def summarize(reader: Reader, request: SummarizeRequest) -> dict[str, Any]:
    from citesum.summarize.verify import check_summary

    engine = _summarizer(reader.llm, request.bullets, request.words)
    options = PackOptions(budget=request.budget or reader.default_budget, order=request.order)
    with reader.index.read() as view:
        summary = summarize_query(request.query, view, engine, retriever=request.retriever, options=options)
        # An LLM's citations are replaced by the documents that state each bullet; the extractive summarizer
        # cites by construction and is only checked. Either way each citation gets the sentence of its
        # document that supports the bullet: the evidence the page highlights.
        summary, checks = check_summary(summary, repair=reader.llm is not None)
        return summary_response(summary, view, query=request.query, checks=checks, source_of=relative_source,
                                include_context=False)


def document(reader: Reader, document_id: str, evidence: str | None) -> dict[str, Any]:
    with reader.index.read() as view:
        try:
            found = view.document(document_id)
        except KeyError:
            raise NotFound(f"no document '{document_id}' in the index") from None
    return document_response(found, source_of=relative_source, evidence=evidence)


def exists(reader: Reader, document_id: str) -> bool:
    with reader.index.read() as view:
        return bool(view.documents_by_id([document_id]))


def _summarizer(llm: LLM | None, bullets: int, words: int) -> Any:
    if llm is None:
        from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer

        return ExtractiveSummarizer(ExtractiveOptions(bullets=bullets, max_words=words))
    from citesum.summarize.llm import LLMSummarizer

    return LLMSummarizer(llm, bullets=bullets, num_words=words)


# ---- worker processes ---------------------------------------------------------------------------------------
_reader: Reader | None = None
_startup_error: CitesumError | None = None


def start_worker(index_path: str, llm: LLM | None, default_budget: int, niceness: int) -> None:
    """Initializer of a worker process: its own index object (one SQLite connection), summarizer and models.
    A failure is kept and raised by each request (a 503 with the reason), never left to break the pool."""
    import os
    import signal

    global _reader, _startup_error
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C stops the server, which stops its workers
    # ``niceness`` > 0 for the summary workers: summaries are the long requests, so the searches (and the
    # server process) get the CPU first when both want it.
    os.nice(niceness)
    # One worker is one core's worth of work. OpenBLAS's own threads spin after each product: with them the
    # server burned 38 CPU-seconds for 480 requests at concurrency 1, 13.7 without (benchmarks/service_load.py).
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # the tokenizer's thread pool, likewise
    _exit_with_parent()
    try:
        _reader = Reader(Index.open(index_path), llm, default_budget)
        _reader.warm_up()
    except CitesumError as exc:
        _startup_error = exc


def _exit_with_parent(every_s: float = 1.0) -> None:
    """A worker outlives a server killed outright (SIGKILL, out of memory): it holds both ends of its task
    queue, so it never reads an end of file. A thread watches the parent and ends the worker when it is gone."""
    import os
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(0)

    threading.Thread(target=watch, name="citesum-parent-watch", daemon=True).start()


def json_call(reader: Reader, function: Callable[..., Any], *args: Any) -> bytes:
    """``function(reader, *args)`` as JSON bytes: encoded by the worker, not by the server's event loop, which
    then only copies bytes to the client."""
    return json_bytes(function(reader, *args))


def in_worker(function: Any, *args: Any) -> Any:
    """Run ``function(reader, *args)`` with this worker process's reader; errors cross back to the server
    process as citesum errors it can answer (an error class with its own arguments does not unpickle)."""
    if _startup_error is not None:
        raise _startup_error
    assert _reader is not None, "start_worker did not run"
    try:
        return function(_reader, *args)
    except MissingExtraError as exc:
        raise ConfigError(str(exc)) from None
