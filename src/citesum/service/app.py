"""The HTTP API and the web page over one index, or over several collections by name (FastAPI).

Reads run in two lanes of workers (processes by default, see :mod:`citesum.service.pool`) that every collection
shares, each request on its own pinned generation of its collection's index: one lane for summaries, one for
searches and documents, so a search never waits behind a summary. Writes (uploads, deletions) run as jobs on
one writer thread per collection. Who may read or write which collection is :mod:`citesum.service.access`'s.
Every error is JSON ``{"error", "detail"}`` with a status that says whose fault it is: 400/408/413/415/422 for
the request, 401/403 for credentials, 404 for what does not exist, 502 for a failing LLM server, 503 with
``Retry-After`` when the service is at capacity or the index is unavailable, 504 past the deadline
(:mod:`citesum.service.failures`). The routes are in :mod:`citesum.service.routes`, one module each; what they
share is the running :class:`~citesum.service.state.Service`.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Mapping

from citesum.errors import MissingExtraError
from citesum.llm.base import LLM
from citesum.service.config import ServiceConfig
from citesum.service.guard import Guard
from citesum.service.state import Service

try:
    from fastapi import FastAPI
    from starlette.concurrency import run_in_threadpool
except ImportError as exc:  # the module is imported only by `citesum serve` and by users of the service
    raise MissingExtraError("the HTTP service", "service", "fastapi") from exc

from citesum.service import failures  # noqa: E402  (FastAPI first: its absence is said above)
from citesum.service.routes import health, page, reading, writing  # noqa: E402
from citesum.service.routes.common import SafeJSONResponse  # noqa: E402

#: a stopping service lets the upload or deletion in hand finish for this long
WRITER_STOP_S = 30.0

__all__ = ["create_app"]


def create_app(indexes: str | Path | Mapping[str, str | Path], config: ServiceConfig | None = None, *,
               llm: LLM | None = None) -> Any:
    """The service over the index at ``indexes`` (an ASGI app: FastAPI behind the request guard), or over
    several indexes by collection name (``{"handbook": "ix/handbook", ...}``).

    With ``llm``, summaries are written by it and their citations repaired against the context; else by the
    offline extractive summarizer. Summarizer and model are fixed here, never chosen by a request."""
    service = Service.open(indexes, config or ServiceConfig(), llm)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await service.searches.warm_up()
        await service.summaries.warm_up()
        yield
        service.searches.shutdown()
        service.summaries.shutdown()
        await run_in_threadpool(service.close, WRITER_STOP_S)

    docs = service.config.docs
    app = FastAPI(title="citesum", summary="Query-focused summaries with verified citations",
                  docs_url="/docs" if docs else None, redoc_url=None, openapi_url="/openapi.json" if docs else None,
                  default_response_class=SafeJSONResponse, lifespan=lifespan)
    app.state.service = service
    failures.install(app, service)
    for routes in (page, health, reading, writing):
        app.include_router(routes.router)
    return Guard(app, service.config, service.access)
