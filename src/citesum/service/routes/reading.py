"""Reading: searches, summaries and documents, each run by a worker of its lane."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response

from citesum.service import reader as read_work
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
