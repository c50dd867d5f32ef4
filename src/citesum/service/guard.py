"""The service's front door, as plain ASGI middleware: every request passes here before FastAPI parses it.

In order: the Host header must be a well-formed, allowed name (DNS rebinding); the bearer token must be one the
service knows, when it has any (:mod:`citesum.service.access`; its principal goes with the request; the page and
its assets are public, they hold no data); a state-changing request that carries an ``Origin`` must come from
the service's own origin (scheme, host and port: a page on another local port is a foreign site); the body must
fit its limit, checked on ``Content-Length`` before a byte is read. A JSON body is read here whole (it is small),
within a time limit, and must be UTF-8 JSON sent as ``application/json``; an upload is counted while it streams.
Refusals are JSON ``{"error", "detail"}`` like every other error.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Awaitable, Callable, MutableMapping
from urllib.parse import urlsplit

from citesum.service.access import EVERYONE, Access, Principal
from citesum.service.config import ServiceConfig
from citesum.service.errors import BodyTimeout, BodyTooLarge, error_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UPLOAD_PATH = "/documents"
JSON_PATHS = ("/search", "/summarize", "/summarize/stream")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
#: an over-long body is read and dropped up to this many bytes before the 413 goes out, so that a client still
#: sending it gets the answer instead of a reset connection; past it the connection is closed
DRAIN_LIMIT = 64 * 1024 * 1024
SECURITY_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY")]
#: a host name or an IPv4 address, or a bracketed IPv6 address, then an optional port: nothing else
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._-]+))(?::(?P<port>[0-9]{1,5}))?$")


async def send_error(send: Send, status: int, error: str, detail: Any,
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = error_body(error, detail)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"), *SECURITY_HEADERS, *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def host_name(value: str) -> str | None:
    """``example.org:8000`` -> ``example.org``; ``[::1]:8000`` -> ``::1``; None for anything malformed."""
    match = _HOST.match(value.strip().lower())
    if match is None:
        return None
    return match.group("v6") or match.group("name")


class Guard:
    def __init__(self, app: ASGIApp, config: ServiceConfig, access: Access | None = None) -> None:
        self.app = app
        self.config = config
        self.access = access if access is not None else Access(config.token)

    def _public(self, path: str) -> bool:
        if path in ("/", "/favicon.ico") or path.startswith("/static/"):
            return True
        return self.config.docs and (path in ("/docs", "/openapi.json") or path.startswith("/docs/"))

    async def _principal(self, headers: dict[str, str], send: Send) -> Principal | None:
        """Who the bearer token is (everyone, on a service without tokens); None once refused (401, 403)."""
        if not self.access.required:
            return EVERYONE
        given = headers.get("authorization", "")
        if not given.lower().startswith("bearer "):
            await send_error(send, 401, "unauthorized", "this service needs 'Authorization: Bearer <token>'",
                             [(b"www-authenticate", b'Bearer realm="citesum"')])
            return None
        found = self.access.principal(given[7:].strip())
        if found is None:
            await send_error(send, 403, "forbidden", "the bearer token is not valid",
                             [(b"www-authenticate", b'Bearer realm="citesum", error="invalid_token"')])
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket or other protocol is served
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        method, path = scope["method"], scope["path"]
        raw_host = headers.get("host", "")
        host = host_name(raw_host)
        if host is None:
            await send_error(send, 400, "bad request", f"the Host header {raw_host!r} is not a host name")
            return
        if not self.config.host_allowed(host):
            await send_error(send, 400, "host not allowed",
                             f"this service does not answer to the host name '{host}' (DNS rebinding protection); "
                             "the operator can add it with --allowed-host")
            return
        principal = EVERYONE if self._public(path) else await self._principal(headers, send)
        if principal is None:
            return
        scope.setdefault("state", {})["principal"] = principal  # what the routes may let it do
        origin = headers.get("origin")
        if method not in SAFE_METHODS and origin is not None \
                and not _same_origin(origin, scope.get("scheme", "http"), raw_host):
            await send_error(send, 403, "forbidden", f"requests from the web origin '{origin}' are refused: only "
                                                     "pages of this service may change it")
            return
        limit = self.config.max_upload_bytes if (method == "POST" and path == UPLOAD_PATH) \
            else self.config.max_json_bytes
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                await send_error(send, 400, "bad request", f"Content-Length '{declared}' is not a byte count")
                return
            if int(declared) > limit:
                if headers.get("expect", "").lower() != "100-continue":
                    # the client is sending it: take it, then answer
                    await _drain(receive, DRAIN_LIMIT, self.config.body_timeout_s)
                await send_error(send, 413, "request too large",
                                 f"the request body is {int(declared):,} bytes; the limit here is {limit:,}")
                return
        timeout = self.config.body_timeout_s
        if method == "POST" and path in JSON_PATHS:
            problem = await self._json_body(headers, receive, limit, timeout)
            if isinstance(problem, tuple):
                await send_error(send, *problem)
                return
            receive = _replay(problem, receive)
        await self.app(scope, _counting(receive, limit, timeout), _with_headers(send))

    @staticmethod
    async def _json_body(headers: dict[str, str], receive: Receive, limit: int,
                         timeout: float) -> bytes | tuple[int, str, str]:
        """The body, read whole, or (status, error, detail) saying what is wrong with it."""
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return 415, "unsupported media type", f"send the body as JSON with 'Content-Type: application/json' " \
                                                  f"(got '{kind or 'none'}')"
        try:
            body = await _read_body(receive, limit, timeout)
        except BodyTimeout as exc:
            return 408, "request timeout", str(exc)
        if body is None:
            return 413, "request too large", f"the request body is over the {limit:,}-byte limit"
        try:
            json.loads(body.decode("utf-8"))
        except UnicodeDecodeError as exc:
            return 400, "bad request", f"the body is not UTF-8 (byte {exc.start}: {exc.reason})"
        except json.JSONDecodeError as exc:
            # ("Unterminated string starting at" already ends with its "at")
            told = exc.msg if exc.msg.endswith(" at") else f"{exc.msg} at"
            return 400, "bad request", f"the body is not valid JSON: {told} line {exc.lineno}, column {exc.colno}"
        except RecursionError:
            return 400, "bad request", "the body's JSON is nested too deeply"
        except ValueError as exc:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
            return 400, "bad request", f"the body's JSON holds a number too long to read ({exc})"
        return body


def _same_origin(origin: str, scheme: str, raw_host: str) -> bool:
    """The web origin is this service's own: a page of the scheme the service is reached by (``http`` or
    ``https``), whose host and port are those the request was sent to. An ``https`` page of the same host and
    port is another origin for a plain-HTTP service (and something else is listening there, if anything)."""
    parts = urlsplit(origin)
    return parts.scheme == scheme and parts.netloc.lower() == raw_host.strip().lower()


async def _receive_within(receive: Receive, timeout: float) -> Message:
    try:
        return await asyncio.wait_for(receive(), timeout)
    except asyncio.TimeoutError:
        raise BodyTimeout(timeout) from None


def _counting(receive: Receive, limit: int, timeout: float) -> Receive:
    """``receive`` that raises :class:`BodyTooLarge` once more than ``limit`` body bytes have come, and
    :class:`BodyTimeout` when the next part of the body does not come within ``timeout`` seconds (once it is
    whole, waiting for the client to leave has no limit)."""
    seen = 0
    whole = False

    async def counted() -> Message:
        nonlocal seen, whole
        if whole:  # the body has come: what comes next is the client leaving, whenever it does (a long stream)
            return await receive()
        message = await _receive_within(receive, timeout)
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
            whole = not message.get("more_body")
        return message

    return counted


async def _read_body(receive: Receive, limit: int, timeout: float) -> bytes | None:
    """The whole body, or None once it passes ``limit`` (the rest is then drained, within DRAIN_LIMIT)."""
    parts: list[bytes] = []
    seen = 0
    while True:
        message = await _receive_within(receive, timeout)
        if message["type"] != "http.request":
            return b"".join(parts)
        parts.append(message.get("body", b""))
        seen += len(parts[-1])
        if seen > limit:
            if message.get("more_body"):
                await _drain(receive, DRAIN_LIMIT, timeout)
            return None
        if not message.get("more_body"):
            return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` of a request whose ``body`` was read already: the body, then what the client does next (it
    leaves: ``http.disconnect``), so that a long request can tell whether anyone still waits for its answer."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {k.lower() for k, _ in message.get("headers", [])}
            message["headers"] = [*message.get("headers", []),
                                  *(h for h in SECURITY_HEADERS if h[0] not in present)]
        await send(message)

    return sending


async def _drain(receive: Receive, limit: int, timeout: float) -> None:
    seen = 0
    while seen <= limit:
        try:
            message = await _receive_within(receive, timeout)
        except BodyTimeout:
            return
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body"):
            return
