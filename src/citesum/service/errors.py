"""What the service answers when something goes wrong, and how it writes JSON (one writer for every answer,
errors included: ``{"error": ..., "detail": ...}``)."""

from __future__ import annotations

import errno
import json
import re
from pathlib import Path
from typing import Any

from citesum.errors import CitesumError


def json_bytes(content: Any) -> bytes:
    """The JSON of an answer. An unpaired surrogate in stored text becomes U+FFFD instead of failing the
    response half-way (a dropped connection)."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8", "replace")


def event_bytes(kind: str, data: Any) -> bytes:
    """One server-sent event: its name and its data, JSON on one line."""
    return b"event: " + kind.encode("ascii") + b"\ndata: " + json_bytes(data) + b"\n\n"


def error_body(error: str, detail: Any) -> bytes:
    return json_bytes({"error": error, "detail": detail})


#: an absolute path of two parts or more where a message would put one: at the start, after a space, a quote, a
#: bracket, a separator or a scheme's colon (``milvus:/srv/m.db``; not inside a URL, whose path follows its host)
_ABSOLUTE_PATH = re.compile(r"(?:(?<=^)|(?<=[\s'\"`(\[<=:,;]))/(?:[^\s/'\"`,;]+/)+([^\s/'\"`),;>]*)")


class PathHider:
    """Messages for the service's clients without the server's paths: the uploads folder's files by their
    names, the index folder's by their paths inside it, the folder itself by its name, any other absolute path
    (a Milvus database, a model file, a temporary file) by its last part. The CLI's messages name the paths
    whole; over HTTP they tell a stranger how the server is laid out. A path as the operator gave it, relative
    (``--index ix``), says nothing of the server and stays."""

    def __init__(self, *served: tuple[Path, Path]) -> None:
        """``served``: each served collection's (index folder, uploads folder)."""
        roots: list[tuple[str, str]] = []
        for folder, shown in [pair for index_dir, uploads_dir in served
                              for pair in ((uploads_dir, ""), (index_dir, None))]:
            for absolute in dict.fromkeys((str(folder.absolute()), str(folder.resolve()))):
                roots.append((absolute + "/", ""))
                roots.append((absolute, folder.resolve().name if shown is None else shown))
        self._roots = roots

    def __call__(self, text: str) -> str:
        for root, shown in self._roots:
            text = re.sub(rf"{re.escape(root)}(?![\w.-])" if not root.endswith("/") else re.escape(root), shown,
                          text)
        return _ABSOLUTE_PATH.sub(lambda match: match.group(1), text)

    def json(self, content: Any) -> Any:
        """``content`` with every string in it passed through :meth:`__call__`."""
        if isinstance(content, str):
            return self(content)
        if isinstance(content, dict):
            return {key: self.json(value) for key, value in content.items()}
        if isinstance(content, list):
            return [self.json(value) for value in content]
        return content


#: what a storage fault says (errno): the disk or a quota is full, a file too large, the folder read-only or not
#: ours to write, the device failing. Answered 503 with Retry-After: the operator's to fix, not the client's
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM,
                            errno.EIO})


def storage_fault(exc: BaseException) -> str | None:
    """What to tell a client of ``exc`` if it is a storage fault (:data:`STORAGE_ERRNOS`), else None."""
    if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:
        return f"the server cannot store this now ({exc.strerror or type(exc).__name__}); retry later"
    return None


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


class ClientLeft(Exception):
    """The client closed its connection before its answer was ready: the work was given up (answered 499 to
    nobody, for the log)."""


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
