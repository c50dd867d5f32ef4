"""What the routes share: the service as a dependency, JSON answers, and the check of a request's limits."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.responses import JSONResponse, Response

from citesum.errors import ConfigError
from citesum.service.errors import json_bytes
from citesum.service.models import SearchRequest, SummarizeRequest, check_limits
from citesum.service.state import Service


def service_of(request: Request) -> Service:
    """The service a request was sent to."""
    return request.app.state.service  # type: ignore[no-any-return]


#: a route's parameter that is the running service
Running = Annotated[Service, Depends(service_of)]


class SafeJSONResponse(JSONResponse):
    """JSON whose text can always be sent (see :func:`~citesum.service.errors.json_bytes`)."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)


def encoded(body: bytes, status: int = 200) -> Response:
    """A response of JSON a worker already encoded."""
    return Response(body, status_code=status, media_type="application/json")


def within_limits(service: Service, request: SearchRequest | SummarizeRequest) -> None:
    """A request over one of the service's limits is answered 422, naming the limit."""
    try:
        check_limits(service.config, request)
    except ConfigError as exc:
        raise HTTPException(422, str(exc)) from None
