"""``/health``: whether each collection the token holds answers, what the workers are doing, the limits, and the
model's state."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from citesum.defaults import DEFAULT_WORDS
from citesum.errors import IndexStoreError
from citesum.ingest import SUPPORTED_EXTENSIONS
from citesum.service.access import Principal
from citesum.service.routes.common import Running, SafeJSONResponse, principal_of
from citesum.service.state import Collection, Service

router = APIRouter()


def _collection_status(service: Service, collection: Collection) -> dict[str, Any]:
    """The collection's index as the database says (this process holds no copy of it), checked: a damaged
    database, or a store that does not answer a real search, raises IndexStoreError."""
    index = collection.index
    status = index.status()
    problems = collection.integrity.problems()
    if problems:
        raise IndexStoreError(f"index at {index.path} is damaged: {'; '.join(problems)}")
    # a real search of the store (a collection may exist and still not answer), as the workers search it
    index.store.probe(other_processes="process" in (service.searches.kind, service.summaries.kind))
    return {"name": collection.name, **status, "pending_jobs": collection.jobs.pending,
            "offers": service.offers(collection)}


def _status(service: Service, principal: Principal) -> dict[str, Any]:
    """The collections ``principal`` holds (the first's status also at the top, as a service of one index gives
    it), the workers, the model and the limits."""
    config, searches, summaries = service.config, service.searches, service.summaries
    collections = [_collection_status(service, c) for c in service.held(principal)]
    first = {key: value for key, value in collections[0].items() if key != "name"} if collections else {}
    budget, max_budget = service.budgets()
    return {"status": "ok", **first, "collections": collections, "role": principal.role,
            "summarizer": service.summarizer_name, "workers": {
        "search": {"busy": searches.busy, "capacity": searches.capacity, "kind": searches.kind},
        "summarize": {"busy": summaries.busy, "capacity": summaries.capacity, "kind": summaries.kind}},
        **({"model": service.model_status()} if service.llm else {}),
        "limits": {
            "max_k": config.max_k, "max_budget": max_budget, "budget": budget,
            "words": DEFAULT_WORDS, "min_words": config.min_words, "max_words": config.max_words,
            "max_bullets": config.max_bullets,
            "max_query_chars": config.max_query_chars, "max_upload_bytes": config.max_upload_bytes,
            "extensions": list(SUPPORTED_EXTENSIONS)}}


@router.get("/health", summary="200 when the index answers; 503 with the reason when it does not")
async def health(service: Running, request: Request) -> Response:
    try:  # not through the read lanes: health answers even when every worker is busy
        return SafeJSONResponse(await run_in_threadpool(_status, service, principal_of(request)))
    except IndexStoreError as exc:
        return SafeJSONResponse({"status": "degraded", "error": "index unavailable",
                                 "detail": service.hide(str(exc))}, status_code=503, headers={"Retry-After": "10"})
