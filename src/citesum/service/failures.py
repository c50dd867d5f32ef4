"""What the service answers for each error: one table from the exception to its status, label and headers,
the detail without server paths. Requests at fault get 4xx, the server's state 503 with ``Retry-After``, a
failing LLM server 502, time limits 504, and a bug 500 with the exception's type only."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Callable

from citesum.errors import CitesumError, IndexStoreError, LLMError, LLMTimeout
from citesum.service.errors import (BodyTimeout, BodyTooLarge, ClientLeft, NotFound, Overloaded, RequestTimeout,
                                    WorkerDied, error_body, storage_fault)
from citesum.service.state import Service

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger("citesum.service")


@dataclass(frozen=True)
class Failure:
    status: int
    label: str
    #: the Retry-After header's seconds, or None
    retry_after: Callable[[Any], str] | None = None


#: exception -> answer; the first entry the exception is an instance of wins (subclasses before their bases)
TABLE: list[tuple[type[BaseException], Failure]] = [
    (NotFound, Failure(404, "not found")),
    (IndexStoreError, Failure(503, "index unavailable", lambda _: "10")),  # the index is gone, damaged or locked
    (LLMTimeout, Failure(504, "timeout")),
    (LLMError, Failure(502, "summarizer unavailable")),
    (CitesumError, Failure(400, "bad request")),  # an unknown retriever, a budget too small...
    (Overloaded, Failure(503, "overloaded", lambda exc: str(exc.retry_after))),
    (WorkerDied, Failure(503, "worker restarted", lambda _: "1")),
    (RequestTimeout, Failure(504, "timeout")),
    (BodyTooLarge, Failure(413, "request too large")),
    (BodyTimeout, Failure(408, "request timeout")),
]


def failure_of(exc: BaseException) -> Failure | None:
    return next((failure for kind, failure in TABLE if isinstance(exc, kind)), None)


def json_error(service: Service, status: int, label: str, detail: Any,
               headers: dict[str, str] | None = None) -> Response:
    """``{"error", "detail"}`` with the status, the detail's paths hidden, never cached."""
    return Response(error_body(label, service.hide.json(detail)), status_code=status, media_type="application/json",
                    headers={"Cache-Control": "no-store", **(headers or {})})


def install(app: FastAPI, service: Service) -> None:
    """The error handlers of ``app``: the table's, FastAPI's own (its 404s, 405s and 422s) in the same shape, a
    storage fault as 503, anything else as 500."""

    async def tabled(_: Request, exc: Exception) -> Response:
        failure = failure_of(exc)
        assert failure is not None  # registered for the table's types only
        detail = str(exc)
        if isinstance(exc, LLMTimeout):
            detail += (f" (the service's limit for a summary by the model: {service.config.llm_timeout_s:g} s, "
                       "--llm-timeout)")
        headers = {"Retry-After": failure.retry_after(exc)} if failure.retry_after else None
        return json_error(service, failure.status, failure.label, detail, headers)

    async def http_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        label = "invalid request" if exc.status_code == 422 else HTTPStatus(exc.status_code).phrase.lower()
        headers = dict(exc.headers or {})
        detail = exc.detail
        if exc.status_code == 405 and headers.get("Allow"):  # which method to use instead ("GET /summarize")
            detail = f"{detail}: this path takes {headers['Allow'].replace(', ', ' or ')}"
        return json_error(service, exc.status_code, label, detail, headers)

    async def invalid(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        problems = ["{}: {}".format(".".join(str(p) for p in e["loc"]), e["msg"].removeprefix("Value error, "))
                    for e in exc.errors()]
        return json_error(service, 422, "invalid request", "; ".join(problems))

    async def client_left(_: Request, exc: Exception) -> Response:
        return Response(status_code=499)  # nobody reads it: the status is for the log

    async def unexpected(_: Request, exc: Exception) -> Response:
        fault = storage_fault(exc)
        if fault is not None:
            log.warning("storage failed: %s", exc)
            return json_error(service, 503, "storage unavailable", fault, {"Retry-After": "30"})
        log.exception("unexpected error")
        return json_error(service, 500, "internal error", f"{type(exc).__name__} (the server log has the details)")

    for kind in dict.fromkeys(kind for kind, _ in TABLE):
        app.add_exception_handler(kind, tabled)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(ClientLeft, client_left)
    app.add_exception_handler(Exception, unexpected)
