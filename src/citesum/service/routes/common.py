"""What the routes share: the service as a dependency, the collection a request may use, JSON answers, and the
check of a request's limits."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response

from citesum.errors import ConfigError
from citesum.service.errors import json_bytes
from citesum.service.models import SearchRequest, SummarizeRequest, check_limits
from citesum.service.access import EVERYONE, Principal
from citesum.service.state import Collection, Service


def service_of(request: Request) -> Service:
    """The service a request was sent to."""
    return request.app.state.service  # type: ignore[no-any-return]


#: a route's parameter that is the running service
Running = Annotated[Service, Depends(service_of)]
#: the collection a request that has no JSON body names (``?collection=``)
CollectionName = Query(None, max_length=64, description="The collection (default: the first one the token holds).")


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


def offered_retriever(service: Service, collection: Collection, retriever: str, *, raptor: bool) -> None:
    """A request for a retriever no service runs (a name citesum does not know, the oracle, which needs relevance
    judgments a request cannot give, or raptor where it is no retriever: inside a composition, or to search
    with, ``raptor`` False) is answered 400, naming those this one runs on ``collection`` (:meth:`Service.offers`).
    One it knows but cannot run here (lightpal without the index's graph, raptor without its tree, promptrank
    without its model) is refused where it is built, naming the fix."""
    from citesum.pipeline import RAPTOR
    from citesum.retrieve import RETRIEVER_NAMES, retriever_parts

    if raptor and retriever == RAPTOR:
        return
    refused = [part for part in retriever_parts(retriever) if part not in RETRIEVER_NAMES or part == "oracle"]
    if refused:
        offered = [name for name in service.offers(collection)["retrievers"] if raptor or name != RAPTOR]
        why = ("ranks by relevance judgments, which a request cannot give" if refused[0] == "oracle" else
               "is no retriever this service runs" if refused[0] == RAPTOR else "is no retriever citesum knows")
        raise HTTPException(400, f"retriever '{refused[0]}' {why}; for collection '{collection.name}', choose one "
                                 f"of: {', '.join(offered)} (or hybrid:<a>+<b> of them)")


def time_limit(service: Service, request: SearchRequest | SummarizeRequest) -> float | None:
    """The time limit of a request that runs a language model in the service's process (promptrank reads every
    chain of candidates with one, for a search as for a summary): the model's (``--llm-timeout``), or the
    ``--timeout`` of other requests when that is longer; None for every other request (its lane's own limit)."""
    from citesum.retrieve import retriever_parts

    if "promptrank" not in retriever_parts(request.retriever):
        return None
    return max(service.config.llm_timeout_s, service.config.timeout_s)


def principal_of(request: Request) -> Principal:
    """Who sent the request (the guard put it there); everyone, on a service without tokens."""
    return getattr(request.state, "principal", EVERYONE)  # type: ignore[no-any-return]


def collection_for(service: Service, request: Request, name: str | None, *, write: bool = False) -> Collection:
    """The collection ``name`` (default: the first the sender holds), if the sender holds it: else 404, as for a
    collection that does not exist, so a token cannot learn what else is served. ``write``: uploads and
    deletions, which a ``read`` token is refused (403)."""
    principal = principal_of(request)
    if name is None:
        held = service.held(principal)
        if not held:
            raise HTTPException(404, "this token holds no collection")
        found = held[0]
    elif name in service.collections and principal.holds(name):
        found = service.collections[name]
    else:
        raise HTTPException(404, f"no collection '{name}'")
    if write and not principal.writes:
        raise HTTPException(403, "this token may read this collection, not change it (its role is 'read')")
    return found
