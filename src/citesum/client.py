"""A thin client of a running ``citesum serve``: what ``citesum search --server URL`` uses.

A one-shot ``citesum search`` spends most of its time importing the numerical stack and loading the index,
far more than the query itself takes. A service keeps both loaded, so
asking it costs an HTTP round trip. Standard library only: importing an HTTP client would cost more than the
query.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any

from citesum.errors import CitesumError

#: the environment variable ``citesum search`` reads the service's address from when ``--server`` is not given
SERVER_ENV = "CITESUM_SERVER"


class ServiceError(CitesumError):
    """The service could not be reached, refused the request, or answered something that is not its JSON."""


def post_json(server: str, path: str, payload: dict[str, Any], *, token: str | None = None,
              timeout: float = 60.0) -> dict[str, Any]:
    """POST ``payload`` as JSON to ``server`` + ``path``; the JSON answer.

    Raises:
        ServiceError: unreachable, an HTTP error (with the service's own ``error: detail``), or a body that is
            not a JSON object.
    """
    url = server.rstrip("/") + path
    if not url.startswith(("http://", "https://")):
        raise ServiceError(f"--server {server!r}: give the service's URL, e.g. http://127.0.0.1:8000")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - the user's own URL
            body = response.read()
    except urllib.error.HTTPError as exc:
        raise ServiceError(f"the citesum service at {server} answered {exc.code}: {_error_detail(exc.read())}") from exc
    except http.client.HTTPException as exc:  # something that is not HTTP (a database, an SSH server) on that port
        raise ServiceError(f"{server} does not speak HTTP ({type(exc).__name__}): is it a citesum service?") from exc
    except (urllib.error.URLError, OSError) as exc:
        # a timeout while connecting comes wrapped in a URLError, one while reading comes bare
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise ServiceError(f"the citesum service at {server} did not answer within {timeout:g} s") from exc
        raise ServiceError(f"cannot reach the citesum service at {server} ({reason}); start one with "
                           "`citesum serve --index DIR`, or search the index directly with --index") from exc
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ServiceError(f"{url} did not answer with a JSON object: is it a citesum service?")
    return answer


def _error_detail(body: bytes) -> str:
    """The service's ``{"error", "detail"}`` as one line; the start of the body when it is something else."""
    try:
        answer = json.loads(body)
        return f"{answer['error']}: {answer['detail']}"
    except (ValueError, KeyError, TypeError):
        return body[:200].decode("utf-8", "replace").strip() or "(no body)"
