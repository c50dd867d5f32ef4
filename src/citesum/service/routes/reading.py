"""Reading: searches, summaries and documents, each run by a worker of its lane."""

from __future__ import annotations

import logging
from typing import AsyncIterator

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response, StreamingResponse

from citesum.service import reader as read_work
from citesum.service.errors import event_bytes
from citesum.service.failures import failure_of
from citesum.service.models import SearchRequest, SummarizeRequest, checked_text
from citesum.service.routes.common import (CollectionName, Running, collection_for, encoded, offered_retriever,
                                           time_limit, within_limits)

router = APIRouter()
log = logging.getLogger("citesum.service")


@router.post("/search", summary="Ranked units (or documents) for a query")
async def search(request: SearchRequest, http: Request, service: Running) -> Response:
    within_limits(service, request)
    names = _several(service, http, request)
    if names is not None:
        return encoded(await service.searches.run_json(None, read_work.search_across, names, request,
                                                       time_limit_s=time_limit(service, request)))
    name = _offered(service, http, request)
    return encoded(await service.searches.run_json(name, read_work.search, request,
                                                   time_limit_s=time_limit(service, request)))


@router.post("/summarize", summary="A bullet summary whose citations carry their evidence spans")
async def summarize(request: SummarizeRequest, http: Request, service: Running) -> Response:
    within_limits(service, request)
    # a summary by a model can take minutes: a client that leaves meanwhile frees the model's slot
    client_left = http.is_disconnected if service.llm else None
    names = _several(service, http, request)
    if names is not None:
        return encoded(await service.summaries.run_json(None, read_work.summarize_across, names, request,
                                                        client_left=client_left,
                                                        time_limit_s=time_limit(service, request)))
    name = _offered(service, http, request)
    return encoded(await service.summaries.run_json(name, read_work.summarize, request, client_left=client_left,
                                                    time_limit_s=time_limit(service, request)))


@router.post("/summarize/stream", summary="The summary as server-sent events: sources, each bullet, the whole answer",
             response_class=StreamingResponse)
async def summarize_stream(request: SummarizeRequest, http: Request, service: Running) -> Response:
    """``context`` (the numbered sources), then a ``bullet`` event for each bullet as soon as it is written and
    its citations checked, then ``done`` with what ``/summarize`` answers. An error before the first event is
    an error status, as ``/summarize`` gives it; one after it is an ``error`` event. A client that disconnects
    cancels the model's writing."""
    within_limits(service, request)
    if request.collections is not None:
        raise HTTPException(422, "a streamed answer reads one collection: ask /summarize for several at once")
    name = _offered(service, http, request)
    events = service.summaries.run_stream(name, read_work.summarize_stream, request,
                                          time_limit_s=time_limit(service, request))
    first = await anext(events)  # a refused or failed request is answered with its status, not a stream

    async def body() -> AsyncIterator[bytes]:
        yield first
        try:
            async for event in events:
                yield event
        except Exception as exc:  # the stream has begun: the error is its last event
            failure = failure_of(exc)
            if failure is None:
                log.exception("unexpected error in a streamed answer")
            status, label = (failure.status, failure.label) if failure else (500, "internal error")
            detail = str(exc) if failure else f"{type(exc).__name__} (the server log has the details)"
            yield event_bytes("error", {"status": status, "error": label, "detail": service.hide.json(detail)})
        finally:
            await events.aclose()

    return StreamingResponse(body(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@router.get("/printed/{document_id:path}", summary="A page of a PDF as printed, with the boxes of `evidence` on it")
async def printed(service: Running, http: Request, document_id: str, page: int = Query(..., ge=1, le=100_000),
                  evidence: str | None = Query(None, description="A sentence of the document's text."),
                  collection: str | None = CollectionName) -> Response:
    name = collection_for(service, http, collection).name
    _check_evidence(service, evidence)
    return encoded(await service.searches.run_json(name, read_work.printed, document_id, page, evidence))


@router.get("/printed-image/{document_id:path}", summary="A page of a PDF drawn as a PNG image")
async def printed_image(service: Running, http: Request, document_id: str, page: int = Query(..., ge=1, le=100_000),
                        width: int = Query(1000, ge=100, le=2000), collection: str | None = CollectionName) -> Response:
    name = collection_for(service, http, collection).name
    image = await service.searches.run(name, read_work.printed_image, document_id, page, width)
    return Response(image, media_type="image/png", headers={"Cache-Control": "private, max-age=300"})


@router.get("/documents/{document_id:path}", summary="One document; with `evidence`, the sentence stating it")
async def document(service: Running, http: Request, document_id: str, evidence: str | None = Query(
        None, description="A statement: the response gives the sentence of the document that best states it."),
        collection: str | None = CollectionName) -> Response:
    name = collection_for(service, http, collection).name
    _check_evidence(service, evidence)
    return encoded(await service.searches.run_json(name, read_work.document, document_id, evidence))


def _several(service: Running, http: Request, request: SearchRequest | SummarizeRequest) -> list[str] | None:
    """The collections a request over several names (each one the token must hold, and each one running the
    retriever asked for), or None."""
    if request.collections is None:
        return None
    if request.collection is not None:
        raise HTTPException(422, "give either collection or collections, not both")
    collections = [collection_for(service, http, name) for name in request.collections]
    for collection in collections:
        offered_retriever(service, collection, request.retriever, raptor=isinstance(request, SummarizeRequest))
    return list(dict.fromkeys(collection.name for collection in collections))


def _offered(service: Running, http: Request, request: SearchRequest | SummarizeRequest) -> str:
    """The one collection a request reads (the token must hold it, and it must run the retriever asked for)."""
    collection = collection_for(service, http, request.collection)
    offered_retriever(service, collection, request.retriever, raptor=isinstance(request, SummarizeRequest))
    return collection.name


def _check_evidence(service: Running, evidence: str | None) -> None:
    """422 for an ``evidence`` that is not a real text, or longer than a query may be."""
    if evidence is None:
        return
    try:
        checked_text(evidence, "evidence")
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    limit = service.config.max_query_chars
    if len(evidence) > limit:
        raise HTTPException(422, f"evidence has {len(evidence):,} characters; at most {limit:,}")
