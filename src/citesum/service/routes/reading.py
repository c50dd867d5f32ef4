"""Reading: searches, summaries and documents, each run by a worker of its lane."""

from __future__ import annotations

from typing import AsyncIterator

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response, StreamingResponse

from citesum.service import reader as read_work
from citesum.service.errors import event_bytes
from citesum.service.failures import failure_of
from citesum.service.models import SearchRequest, SummarizeRequest, checked_text
from citesum.service.routes.common import Running, encoded, within_limits

router = APIRouter()


@router.post("/search", summary="Ranked units (or documents) for a query")
async def search(request: SearchRequest, service: Running) -> Response:
    within_limits(service, request)
    return encoded(await service.searches.run_json(read_work.search, request))


@router.post("/summarize", summary="A bullet summary whose citations carry their evidence spans")
async def summarize(request: SummarizeRequest, http: Request, service: Running) -> Response:
    within_limits(service, request)
    # a summary by a model can take minutes: a client that leaves meanwhile frees the model's slot
    return encoded(await service.summaries.run_json(read_work.summarize, request,
                                                    client_left=http.is_disconnected if service.llm else None))


@router.post("/summarize/stream", summary="The summary as server-sent events: sources, each bullet, the whole answer",
             response_class=StreamingResponse)
async def summarize_stream(request: SummarizeRequest, service: Running) -> Response:
    """``context`` (the numbered sources), then a ``bullet`` event for each bullet as soon as it is written and
    its citations checked, then ``done`` with what ``/summarize`` answers. An error before the first event is
    an error status, as ``/summarize`` gives it; one after it is an ``error`` event. A client that disconnects
    cancels the model's writing."""
    within_limits(service, request)
    events = service.summaries.run_stream(read_work.summarize_stream, request)
    first = await anext(events)  # a refused or failed request is answered with its status, not a stream

    async def body() -> AsyncIterator[bytes]:
        yield first
        try:
            async for event in events:
                yield event
        except Exception as exc:  # the stream has begun: the error is its last event
            failure = failure_of(exc)
            status, label = (failure.status, failure.label) if failure else (500, "internal error")
            detail = str(exc) if failure else f"{type(exc).__name__} (the server log has the details)"
            yield event_bytes("error", {"status": status, "error": label, "detail": service.hide.json(detail)})
        finally:
            await events.aclose()

    return StreamingResponse(body(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@router.get("/documents/{document_id:path}", summary="One document; with `evidence`, the sentence stating it")
async def document(service: Running, document_id: str, evidence: str | None = Query(
        None, description="A statement: the response gives the sentence of the document that best states it.")
) -> Response:
    if evidence is not None:
        try:
            checked_text(evidence, "evidence")
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        limit = service.config.max_query_chars
        if len(evidence) > limit:
            raise HTTPException(422, f"evidence has {len(evidence):,} characters; at most {limit:,}")
    return encoded(await service.searches.run_json(read_work.document, document_id, evidence))
