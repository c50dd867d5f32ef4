"""The HTTP API and the web page over one index (FastAPI).

Reads run in two lanes of workers (processes by default, see :mod:`citesum.service.pool`), each request on
its own pinned generation of the index: one lane for summaries, one for searches and documents, so a search
never waits behind a summary. Writes (uploads, deletions) run as jobs on one writer thread.
Every error is JSON ``{"error", "detail"}`` with a status that says whose fault it is: 400/408/413/415/422 for
the request, 401/403 for credentials, 404 for what does not exist, 502 for a failing LLM server, 503 with
``Retry-After`` when the service is at capacity or the index is unavailable, 504 past the deadline.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import threading
import time
import unicodedata
import uuid
from contextlib import asynccontextmanager
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any, AsyncIterator

from citesum.errors import CitesumError, ConfigError, IndexStoreError, LLMError, LLMTimeout, MissingExtraError
from citesum.index.store import Index
from citesum.ingest import SUPPORTED_EXTENSIONS, IngestOptions
from citesum.llm.base import LLM
from citesum.service import reader as read_work
from citesum.service.config import ServiceConfig
from citesum.service.errors import (BodyTimeout, BodyTooLarge, ClientLeft, NotFound, Overloaded, PathHider,
                                    RequestTimeout, WorkerDied, json_bytes, storage_fault)
from citesum.service.guard import Guard
from citesum.service.jobs import STAGING, JobQueue
from citesum.service.models import SearchRequest, SummarizeRequest, check_limits, checked_text
from citesum.service.pool import ReadPool
from citesum.service.reader import ModelPace, Reader
from citesum.summarize import window_budget

try:
    from fastapi import FastAPI, HTTPException, Query, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, Response
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException as StarletteHTTPException
except ImportError as exc:  # the module is imported only by `citesum serve` and by users of the service
    raise MissingExtraError("the HTTP service", "service", "fastapi") from exc

log = logging.getLogger("citesum.service")
#: the page's own files, served from the wheel (no CDN: the page works without internet)
STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
#: how much lower the summary workers' CPU priority is than the search workers' (Unix niceness)
SUMMARY_NICENESS = 10
#: a stopping service lets the upload or deletion in hand finish for this long
WRITER_STOP_S = 30.0
PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
               "form-action 'none'; frame-ancestors 'none'; base-uri 'none'")


class SafeJSONResponse(JSONResponse):
    """JSON whose text can always be sent (see :func:`~citesum.service.errors.json_bytes`)."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)


def _json(encoded: bytes, status: int = 200) -> Response:
    """A response of JSON a worker already encoded."""
    return Response(encoded, status_code=status, media_type="application/json")


def _error(status: int, error: str, detail: Any, headers: dict[str, str] | None = None) -> SafeJSONResponse:
    return SafeJSONResponse({"error": error, "detail": detail}, status_code=status,
                            headers={"Cache-Control": "no-store", **(headers or {})})


def upload_name(filename: str | None) -> str:
    """The name an uploaded file is kept under: its last path component, NFC-normalised; refused when it is
    empty, hidden, holds control or bidi-format characters, or is too long. Raises ValueError."""
    name = unicodedata.normalize("NFC", filename or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or name in (".", ".."):
        raise ValueError("a file without a name")
    if name.startswith("."):
        raise ValueError(f"'{name}': hidden files are not accepted")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn") for c in name):
        raise ValueError(f"{name!r}: control or invisible formatting characters in the name")
    if len(name.encode("utf-8")) > 200:
        raise ValueError(f"'{name[:40]}...': a name of over 200 bytes")
    return name


def fitted(config: ServiceConfig, llm: LLM | None) -> ServiceConfig:
    """``config`` with its budgets capped to what ``llm``'s window holds beside the prompt and the answer (an
    LLM whose window is not known keeps them: give it with ``--window``)."""
    if llm is None or llm.context_window is None:
        return config
    room = window_budget(llm.context_window, bullets=config.max_bullets, words=config.max_words,
                         query_tokens=config.max_query_tokens)
    largest = min(config.max_budget, room)
    return dataclasses.replace(config, max_budget=largest, default_budget=min(config.default_budget, largest))


def create_app(index_path: str | Path, config: ServiceConfig | None = None, *, llm: LLM | None = None) -> Any:
    """The service over the index at ``index_path`` (an ASGI app: FastAPI behind the request guard).

    With ``llm``, summaries are written by it and their citations repaired against the context; else by the
    offline extractive summarizer. Summarizer and model are fixed here, never chosen by a request."""
    config = fitted(config or ServiceConfig(), llm)
    index = Index.open(index_path)
    uploads_dir = Path(config.uploads_dir or index.path / "uploads")
    reader = Reader(index, llm, config.default_budget, ModelPace(config.llm_timeout_s) if llm else None)
    # Two lanes: summaries take 100-300 ms of CPU each, searches a few ms; in one queue a search waited behind
    # the summaries ahead of it (p95 73x its unloaded p50 at 32 clients, benchmarks/service_load.py). The
    # summary workers also yield the CPU to the search workers (a higher niceness).
    searches = ReadPool(reader, config.search_workers, config.queue, config.timeout_s, config.worker_kind)
    summaries = ReadPool(reader, config.workers, config.queue, config.llm_timeout_s if llm else config.timeout_s,
                         config.worker_kind, niceness=SUMMARY_NICENESS)
    jobs = JobQueue(index, uploads_dir, max_pending=config.max_pending_jobs, lock_wait_s=config.lock_wait_s)
    hide = PathHider(index.path, uploads_dir)
    summarizer_name = "extractive" if llm is None else hide(f"llm:{llm.name}")  # a model's file, by its name
    integrity = _IntegrityCheck(index, config.integrity_every_s)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await searches.warm_up()
        await summaries.warm_up()
        yield
        await run_in_threadpool(jobs.close, WRITER_STOP_S)
        searches.shutdown()
        summaries.shutdown()
        # nothing reads or writes now: the log is merged, so that a copy of the folder (to read-only media, say)
        # opens as it is
        await run_in_threadpool(index.merge_log)

    docs = config.docs
    app = FastAPI(title="citesum", summary="Query-focused summaries with verified citations",
                  docs_url="/docs" if docs else None, redoc_url=None, openapi_url="/openapi.json" if docs else None,
                  default_response_class=SafeJSONResponse, lifespan=lifespan)

    # ---- errors: one JSON shape, the right status, no server path -------------------------------------
    def error(status: int, label: str, detail: Any, headers: dict[str, str] | None = None) -> Response:
        return _error(status, label, hide.json(detail), headers)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> Response:
        label = "invalid request" if exc.status_code == 422 else HTTPStatus(exc.status_code).phrase.lower()
        return error(exc.status_code, label, exc.detail, dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> Response:
        problems = ["{}: {}".format(".".join(str(p) for p in e["loc"]), e["msg"].removeprefix("Value error, "))
                    for e in exc.errors()]
        return error(422, "invalid request", "; ".join(problems))

    @app.exception_handler(Overloaded)
    async def overloaded(_: Request, exc: Overloaded) -> Response:
        return error(503, "overloaded", str(exc), {"Retry-After": str(exc.retry_after)})

    @app.exception_handler(WorkerDied)
    async def worker_died(_: Request, exc: WorkerDied) -> Response:
        return error(503, "worker restarted", str(exc), {"Retry-After": "1"})

    @app.exception_handler(ClientLeft)
    async def client_left(_: Request, exc: ClientLeft) -> Response:
        return Response(status_code=499)  # nobody reads it: the status is for the log

    @app.exception_handler(RequestTimeout)
    async def timed_out(_: Request, exc: RequestTimeout) -> Response:
        return error(504, "timeout", str(exc))

    @app.exception_handler(BodyTooLarge)
    async def too_large(_: Request, exc: BodyTooLarge) -> Response:
        return error(413, "request too large", str(exc))

    @app.exception_handler(BodyTimeout)
    async def body_timeout(_: Request, exc: BodyTimeout) -> Response:
        return error(408, "request timeout", str(exc))

    @app.exception_handler(CitesumError)
    async def citesum_error(_: Request, exc: CitesumError) -> Response:
        if isinstance(exc, NotFound):
            return error(404, "not found", str(exc))
        if isinstance(exc, IndexStoreError):  # the server's fault: the index is gone, damaged or locked
            return error(503, "index unavailable", str(exc), {"Retry-After": "10"})
        if isinstance(exc, LLMTimeout):
            return error(504, "timeout", f"{exc} (the service's limit for a summary by the model: "
                                         f"{config.llm_timeout_s:g} s, --llm-timeout)")
        if isinstance(exc, LLMError):
            return error(502, "summarizer unavailable", str(exc))
        return error(400, "bad request", str(exc))  # an unknown retriever, a budget too small...

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception) -> Response:
        fault = storage_fault(exc)
        if fault is not None:
            log.warning("storage failed: %s", exc)
            return error(503, "storage unavailable", fault, {"Retry-After": "30"})
        log.exception("unexpected error")
        return error(500, "internal error", f"{type(exc).__name__} (the server log has the details)")

    def limited(request: SearchRequest | SummarizeRequest) -> None:
        try:
            check_limits(config, request)
        except ConfigError as exc:
            raise HTTPException(422, str(exc)) from None

    # ---- the page -------------------------------------------------------------------------------------
    static = resources.files("citesum.service") / "static"

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        return Response((static / "index.html").read_bytes(), media_type="text/html; charset=utf-8",
                        headers={"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-cache"})

    @app.get("/static/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        if name not in STATIC:
            raise HTTPException(404, f"no file '{name}'")
        return Response((static / name).read_bytes(), media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)  # no icon, and no 404 in the browser's console

    # ---- reading ----------------------------------------------------------------------------------------
    def model_status() -> dict[str, Any]:
        """The model's window and where it came from, its pace, and the budget that pace allows."""
        assert llm is not None and reader.pace is not None
        pace = reader.pace.tokens_per_s
        budget = reader.budget()
        status: dict[str, Any] = {"window": llm.context_window, "window_source": hide(llm.context_window_source or ""),
                                  "time_limit_s": config.llm_timeout_s,
                                  # prompt tokens per second of its whole calls (their answers' writing included)
                                  "pace_tokens_per_s": None if pace is None else round(pace, 1),
                                  "tokens_per_citesum_token": llm.prompt_token_ratio}
        if budget < config.default_budget:
            status["budget_note"] = (f"the default budget is lowered from {config.default_budget:,} to {budget:,} "
                                     f"tokens: the model reads about {pace:,.0f} tokens a second, and a summary "
                                     f"must come within {config.llm_timeout_s:g} s")
        return status

    @app.get("/health", summary="200 when the index answers; 503 with the reason when it does not")
    async def health() -> Response:
        def work() -> dict[str, Any]:
            status = index.status()  # from the database alone: this process holds no copy of the index
            problems = integrity.problems()
            if problems:
                raise IndexStoreError(f"index at {index.path} is damaged: {'; '.join(problems)}")
            # a real search of the store (a collection may exist and still not answer), as the workers search it
            index.store.probe(other_processes="process" in (searches.kind, summaries.kind))
            return {"status": "ok", **status, "summarizer": summarizer_name, "workers": {
                "search": {"busy": searches.busy, "capacity": searches.capacity, "kind": searches.kind},
                "summarize": {"busy": summaries.busy, "capacity": summaries.capacity, "kind": summaries.kind}},
                "pending_jobs": jobs.pending, **({"model": model_status()} if llm else {}), "limits": {
                    "max_k": config.max_k, "max_budget": config.max_budget, "budget": reader.budget(),
                    "min_words": config.min_words, "max_words": config.max_words,
                    "max_bullets": config.max_bullets, "max_query_chars": config.max_query_chars,
                    "max_upload_bytes": config.max_upload_bytes, "extensions": list(SUPPORTED_EXTENSIONS)}}

        try:  # not through the read lanes: health answers even when every worker is busy
            return SafeJSONResponse(await run_in_threadpool(work))
        except IndexStoreError as exc:
            return SafeJSONResponse({"status": "degraded", "error": "index unavailable", "detail": hide(str(exc))},
                                    status_code=503, headers={"Retry-After": "10"})

    @app.post("/search", summary="Ranked units (or documents) for a query")
    async def search(request: SearchRequest) -> Response:
        limited(request)
        return _json(await searches.run_json(read_work.search, request))

    @app.post("/summarize", summary="A bullet summary whose citations carry their evidence spans")
    async def summarize(request: SummarizeRequest, http: Request) -> Response:
        limited(request)
        # a summary by a model can take minutes: a client that leaves meanwhile frees the model's slot
        return _json(await summaries.run_json(read_work.summarize, request,
                                              client_left=http.is_disconnected if llm else None))

    @app.get("/documents/{document_id:path}", summary="One document; with `evidence`, the sentence stating it")
    async def document(document_id: str, evidence: str | None = Query(
            None, description="A statement: the response gives the sentence of the document that best states it.")
    ) -> Response:
        if evidence is not None:
            try:
                checked_text(evidence, "evidence")
            except ValueError as exc:
                raise HTTPException(422, str(exc)) from None
            if len(evidence) > config.max_query_chars:
                raise HTTPException(422, f"evidence has {len(evidence):,} characters; at most "
                                         f"{config.max_query_chars:,}")
        return _json(await searches.run_json(read_work.document, document_id, evidence))

    # ---- writing ----------------------------------------------------------------------------------------
    @app.post("/documents", status_code=202, summary="Upload files; they are indexed by a background job")
    async def upload(request: Request) -> Response:
        if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
            raise HTTPException(415, "upload files as multipart/form-data (field 'files')")
        form = await request.form(max_files=config.max_upload_files, max_fields=10)
        staging = uploads_dir / STAGING / uuid.uuid4().hex
        try:
            files = [f for f in form.getlist("files") if not isinstance(f, str)]
            if not files:
                raise HTTPException(400, "no file in the upload (send them in the multipart field 'files')")
            names = []
            for file in files:
                try:
                    name = upload_name(file.filename)
                except ValueError as exc:
                    raise HTTPException(400, f"file name refused: {exc}") from None
                if Path(name).suffix.lower() not in SUPPORTED_EXTENSIONS:
                    raise HTTPException(415, f"'{name}': not a supported format; send one of "
                                             f"{', '.join(SUPPORTED_EXTENSIONS)}")
                names.append(name)
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise HTTPException(400, f"the same file name twice in one upload: {', '.join(repeated)}")

            def save() -> list[tuple[str, Path]]:
                staging.mkdir(parents=True)
                saved = []
                for name, file in zip(names, files):
                    file.file.seek(0)
                    with open(staging / name, "wb") as out:
                        shutil.copyfileobj(file.file, out, 1 << 20)
                    saved.append((name, staging / name))
                return saved

            staged = await run_in_threadpool(save)
            job = jobs.submit("upload", jobs.upload(staged, IngestOptions(max_bytes=config.max_upload_bytes)))
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)  # refused, failed to save, or no room in the queue
            raise
        finally:
            await form.close()
        return SafeJSONResponse({"job": job.id, "status": f"/jobs/{job.id}", "files": names}, status_code=202,
                                headers={"Location": f"/jobs/{job.id}"})

    @app.get("/jobs/{job_id}", summary="Progress and per-file report of an upload or delete job")
    async def job_status(job_id: str) -> Response:
        job = jobs.get(job_id)
        if job is None:
            raise HTTPException(404, f"no job '{job_id}' (jobs are kept while the service runs)")
        return SafeJSONResponse(hide.json(job.to_json()))

    @app.delete("/documents/{document_id:path}", summary="Delete a document (waits for the commit)")
    async def delete(document_id: str) -> Response:
        if not await searches.run(read_work.exists, document_id):
            raise HTTPException(404, f"no document '{document_id}' in the index")
        job = jobs.submit("delete", jobs.delete(document_id))
        if not await run_in_threadpool(jobs.wait, job, config.timeout_s):
            return SafeJSONResponse({"job": job.id, "status": f"/jobs/{job.id}", "state": job.state},
                                    status_code=202)
        if job.state == "failed":
            raise IndexStoreError(job.error or "the deletion failed")
        return SafeJSONResponse({"deleted": document_id, "generation": job.generation, "job": job.id})

    return Guard(app, config)


class _IntegrityCheck:
    """SQLite's quick_check of the index, re-run at most every ``every_s`` seconds (it reads every page), by one
    caller at a time; the others get the last result."""

    def __init__(self, index: Index, every_s: float) -> None:
        self.index = index
        self.every_s = every_s
        self._lock = threading.Lock()
        self._checked: float | None = None
        self._problems: list[str] = []

    def problems(self) -> list[str]:
        if self._lock.acquire(blocking=False):
            try:
                if self._checked is None or time.monotonic() - self._checked >= self.every_s:
                    self._problems = self.index.integrity_problems()
                    self._checked = time.monotonic()
            finally:
                self._lock.release()
        return list(self._problems)
