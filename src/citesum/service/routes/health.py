"""``/health``: whether the index answers, what the workers are doing, the limits, and the model's state."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from citesum.errors import IndexStoreError
from citesum.ingest import SUPPORTED_EXTENSIONS
from citesum.service.routes.common import Running, SafeJSONResponse
from citesum.service.state import Service

router = APIRouter()


def _status(service: Service) -> dict[str, Any]:
    index, config, searches, summaries = service.index, service.config, service.searches, service.summaries
    status = index.status()  # from the database alone: this process holds no copy of the index
    problems = service.integrity.problems()
    if problems:
        raise IndexStoreError(f"index at {index.path} is damaged: {'; '.join(problems)}")
    # a real search of the store (a collection may exist and still not answer), as the workers search it
    index.store.probe(other_processes="process" in (searches.kind, summaries.kind))
    budget, max_budget = service.budgets()
    return {"status": "ok", **status, "summarizer": service.summarizer_name, "workers": {
        "search": {"busy": searches.busy, "capacity": searches.capacity, "kind": searches.kind},
        "summarize": {"busy": summaries.busy, "capacity": summaries.capacity, "kind": summaries.kind}},
        "pending_jobs": service.jobs.pending, **({"model": service.model_status()} if service.llm else {}),
        "offers": service.offers(),
        "limits": {
            "max_k": config.max_k, "max_budget": max_budget, "budget": budget,
            "min_words": config.min_words, "max_words": config.max_words, "max_bullets": config.max_bullets,
            "max_query_chars": config.max_query_chars, "max_upload_bytes": config.max_upload_bytes,
            "extensions": list(SUPPORTED_EXTENSIONS)}}


@router.get("/health", summary="200 when the index answers; 503 with the reason when it does not")
async def health(service: Running) -> Response:
    try:  # not through the read lanes: health answers even when every worker is busy
        return SafeJSONResponse(await run_in_threadpool(_status, service))
    except IndexStoreError as exc:
        return SafeJSONResponse({"status": "degraded", "error": "index unavailable",
                                 "detail": service.hide(str(exc))}, status_code=503, headers={"Retry-After": "10"})
