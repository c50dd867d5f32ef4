"""Who may do what, on which collections: the tokens file of ``citesum serve --tokens FILE``.

The file is JSON::

    {"tokens": [
      {"name": "alice", "token": "…32 random characters…", "role": "read", "collections": ["handbook"]},
      {"name": "ci", "token": "…", "role": "write", "collections": "*"}
    ]}

A token grants its ``role`` on its ``collections`` (``"*"``: all of the service's). ``read`` searches, summarizes
and reads documents; ``write`` also uploads and deletes. A collection a token does not hold answers 404, as one
that does not exist does, so a token cannot learn what else the service holds. Tokens are kept and compared as
their SHA-256 digests, in constant time (digests are all as long: the time says nothing of a token's length),
and every token of the file is compared (no early exit). ``citesum serve`` reads the file again on SIGHUP: a
revoked token is refused from then on; a file that no longer reads well is reported and the tokens in force
stay.

Kept free of FastAPI, like :mod:`citesum.service.config`, so that ``citesum serve`` checks the file before it
starts anything.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Literal

from citesum.errors import ConfigError
from citesum.service.config import MIN_TOKEN_CHARS

log = logging.getLogger("citesum.service")
Role = Literal["read", "write"]
ROLES: tuple[Role, ...] = ("read", "write")
#: every collection of the service
EVERY = "*"


@dataclass(frozen=True)
class Principal:
    """Who a request comes from: a name (the operator's label of the token, which is never shown), a role, and
    the collections it holds (None: every collection)."""

    name: str
    role: Role
    collections: frozenset[str] | None

    def holds(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    @property
    def writes(self) -> bool:
        return self.role == "write"


#: a service without tokens (on loopback) or with one token (``--token-file``): whoever may call it may do all
EVERYONE = Principal("", "write", None)


def _entry(raw: Any, number: int, known: Collection[str]) -> tuple[bytes, Principal]:
    where = f"token {number}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} is not an object with name, token, role and collections")
    unknown = set(raw) - {"name", "token", "role", "collections"}
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where} has no name (a label for the operator, e.g. the person's)")
    where = f"token {number} ('{name}')"
    token = raw.get("token")
    if not isinstance(token, str) or len(token) < MIN_TOKEN_CHARS or not token.isascii() \
            or not token.isprintable() or " " in token:
        raise ConfigError(f"{where}: the token must be at least {MIN_TOKEN_CHARS} printable ASCII characters "
                          "without spaces (e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')")
    role = raw.get("role")
    if role not in ROLES:  # what it holds is not repeated: a token pasted in the wrong place would be shown
        raise ConfigError(f"{where}: role must be 'read' or 'write'")
    collections = raw.get("collections")
    if collections == EVERY:
        held = None
    elif isinstance(collections, list) and collections and all(isinstance(c, str) for c in collections):
        missing = sorted(set(collections) - set(known))
        if missing:
            raise ConfigError(f"{where} names collections this service does not serve: {', '.join(missing)} "
                              f"(it serves {', '.join(known)})")
        held = frozenset(collections)
    else:
        raise ConfigError(f"{where}: collections must be a list of collection names, or \"*\" for all")
    return _digest(token), Principal(name.strip(), role, held)


def _digest(token: str | bytes) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "replace") if isinstance(token, str) else token).digest()


def read_tokens(path: Path, collections: Collection[str]) -> list[tuple[bytes, Principal]]:
    """The tokens of the file at ``path``, checked against the service's ``collections``; ConfigError naming
    what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the tokens file {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"the tokens file {path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tokens"), list):
        raise ConfigError(f"the tokens file {path} must be an object with a list 'tokens'")
    entries = [_entry(raw, number, collections) for number, raw in enumerate(data["tokens"], start=1)]
    digests = [digest for digest, _ in entries]
    if len(set(digests)) != len(digests):
        raise ConfigError(f"the tokens file {path} gives one token twice")
    return entries


class Access:
    """The principal of a bearer token: one token for every collection (``--token-file``), a tokens file, or no
    token at all (a loopback service: everyone may do everything)."""

    def __init__(self, token: str | None = None, tokens_file: Path | None = None,
                 collections: Collection[str] = ()) -> None:
        if token is not None and tokens_file is not None:
            raise ConfigError("give either one token (--token-file, $CITESUM_TOKEN) or a tokens file (--tokens)")
        self.tokens_file = tokens_file
        self.collections = tuple(collections)
        self._lock = threading.Lock()
        self._entries: list[tuple[bytes, Principal]] = (
            [(_digest(token), EVERYONE)] if token is not None else
            read_tokens(tokens_file, self.collections) if tokens_file is not None else [])

    @property
    def required(self) -> bool:
        """Whether a request must bring a token."""
        return self.tokens_file is not None or bool(self._entries)

    def principal(self, given: str) -> Principal | None:
        """Who ``given`` (a bearer token) is, or None. Every token is compared, each in constant time."""
        candidate = _digest(given)
        found = None
        for digest, principal in self._entries:
            if hmac.compare_digest(candidate, digest):
                found = principal
        return found

    def reload(self) -> bool:
        """Read the tokens file again (on SIGHUP). False, with the reason logged, when it does not read well: the
        tokens in force stay."""
        if self.tokens_file is None:
            return False
        try:
            entries = read_tokens(self.tokens_file, self.collections)
        except Exception as exc:  # noqa: BLE001 (a signal handler: nothing may escape into the code it interrupted)
            reason = str(exc) if isinstance(exc, ConfigError) else f"{type(exc).__name__} while reading it"
            log.error("the tokens file was not reloaded, the tokens in force stay: %s", reason)
            return False
        with self._lock:
            self._entries = entries
        log.warning("tokens reloaded: %d token(s)", len(entries))
        return True
