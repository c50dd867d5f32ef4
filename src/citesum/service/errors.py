"""What the service answers when something goes wrong, and how it writes JSON (one writer for every answer,
errors included: ``{"error": ..., "detail": ...}``)."""

from __future__ import annotations

import json
from typing import Any

from citesum.errors import CitesumError


def json_bytes(content: Any) -> bytes:
    """The JSON of an answer. An unpaired surrogate in stored text becomes U+FFFD instead of failing the
    response half-way (a dropped connection)."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8", "replace")


def error_body(error: str, detail: Any) -> bytes:
    return json_bytes({"error": error, "detail": detail})


class NotFound(CitesumError):
    """No such document (answered 404). A citesum error, so it crosses back from a worker process."""


class Overloaded(Exception):
    """Every worker of a lane is busy and its queue is full, or the writer's queue is (503, Retry-After)."""

    def __init__(self, retry_after: int, what: str = "requests") -> None:
        super().__init__(f"the service is at capacity for {what}; retry in {retry_after} s")
        self.retry_after = retry_after


class RequestTimeout(Exception):
    """The request ran past the service's deadline (504)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the request took longer than the service's {seconds:g} s limit")


class WorkerDied(Exception):
    """The worker process answering the request died (killed, out of memory); a new one was started (503)."""

    def __init__(self) -> None:
        super().__init__("the worker process answering this request died and was replaced; retry")


class BodyTooLarge(Exception):
    """A streamed body (no Content-Length) passed its limit while it was being read (413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is over the {limit:,}-byte limit")
        self.limit = limit


class BodyTimeout(Exception):
    """The client stopped sending the body it announced (408)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no part of the request body came for {seconds:g} s (was its Content-Length right?)")
