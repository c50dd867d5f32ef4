"""The service's front door, as plain ASGI middleware: every request passes here before FastAPI parses it.

In order: the Host header must be an allowed name (DNS rebinding), the bearer token must match (when one is
set; the page and its assets are public, they hold no data), a state-changing request from a browser must
come from an allowed origin (cross-site form posts), and the body must fit its limit, checked on the
``Content-Length`` before a byte is read; without one, a JSON body is read here within its limit, and an
upload is counted while it streams. Refusals are JSON
``{"error", "detail"}`` like every other error of the service.
"""

from __future__ import annotations

import hmac
import json
from typing import Any, Awaitable, Callable, MutableMapping
from urllib.parse import urlsplit

from citesum.service.config import ServiceConfig

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UPLOAD_PATH = "/documents"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
#: an over-long body is read and dropped up to this many bytes before the 413 goes out, so that a client
#: still sending it gets the answer instead of a reset connection; past it the connection is closed
DRAIN_LIMIT = 256 * 1024 * 1024
SECURITY_HEADERS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY")]


class BodyTooLarge(Exception):
    """A streamed body (no Content-Length) passed its limit while it was being read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is over the {limit:,}-byte limit")
        self.limit = limit


def error_body(error: str, detail: Any) -> bytes:
    return json.dumps({"error": error, "detail": detail}, ensure_ascii=False).encode("utf-8", "replace")


async def send_error(send: Send, status: int, error: str, detail: Any,
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = error_body(error, detail)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"), *SECURITY_HEADERS, *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def host_name(value: str) -> str:
    """``example.org:8000`` -> ``example.org``; ``[::1]:8000`` -> ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    def __init__(self, app: ASGIApp, config: ServiceConfig) -> None:
        self.app = app
        self.config = config
        self._token = config.token.encode() if config.token else None

    def _public(self, path: str) -> bool:
        if path == "/" or path.startswith("/static/"):
            return True
        return self.config.docs and (path in ("/docs", "/openapi.json") or path.startswith("/docs/"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        method, path = scope["method"], scope["path"]
        host = host_name(headers.get("host", ""))
        if not self.config.host_allowed(host):
            await send_error(send, 400, "host not allowed",
                             f"this service does not answer to the host name '{host}' (DNS rebinding protection); "
                             "the operator can add it with --allowed-host")
            return
        if self._token is not None and not self._public(path):
            given = headers.get("authorization", "")
            if not given.lower().startswith("bearer "):
                await send_error(send, 401, "unauthorized", "this service needs 'Authorization: Bearer <token>'",
                                 [(b"www-authenticate", b'Bearer realm="citesum"')])
                return
            if not hmac.compare_digest(given[7:].strip().encode("latin-1"), self._token):
                await send_error(send, 403, "forbidden", "the bearer token is not valid",
                                 [(b"www-authenticate", b'Bearer realm="citesum", error="invalid_token"')])
                return
        origin = headers.get("origin")
        if method not in SAFE_METHODS and origin is not None:
            origin_host = urlsplit(origin).hostname or ""
            if origin == "null" or not self.config.host_allowed(origin_host):
                await send_error(send, 403, "forbidden", f"requests from the web origin '{origin}' are refused")
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
                    await _drain(receive, DRAIN_LIMIT)  # the client asked to send it: take it, then answer
                await send_error(send, 413, "request too large",
                                 f"the request body is {int(declared):,} bytes; the limit here is {limit:,}")
                return
        elif path != UPLOAD_PATH and method not in SAFE_METHODS:
            # A streamed JSON body (no Content-Length) is read here, within its small limit: FastAPI would turn
            # an error raised while it reads the body into a vague 400.
            body = await _read_body(receive, limit)
            if body is None:
                await send_error(send, 413, "request too large", f"the request body is over the {limit:,}-byte limit")
                return
            receive = _replay(body)
        await self.app(scope, _counting(receive, limit), _with_headers(send))


def _counting(receive: Receive, limit: int) -> Receive:
    """``receive`` that raises :class:`BodyTooLarge` once more than ``limit`` body bytes have come."""
    seen = 0

    async def counted() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
        return message

    return counted


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {k.lower() for k, _ in message.get("headers", [])}
            message["headers"] = [*message.get("headers", []),
                                  *(h for h in SECURITY_HEADERS if h[0] not in present)]
        await send(message)

    return sending


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None once it passes ``limit`` (the rest is then drained, within DRAIN_LIMIT)."""
    parts: list[bytes] = []
    seen = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(parts)
        parts.append(message.get("body", b""))
        seen += len(parts[-1])
        if seen > limit:
            if message.get("more_body"):
                await _drain(receive, DRAIN_LIMIT)
            return None
        if not message.get("more_body"):
            return b"".join(parts)


def _replay(body: bytes) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


async def _drain(receive: Receive, limit: int) -> None:
    seen = 0
    while seen <= limit:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body"):
            return
