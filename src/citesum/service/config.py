"""What a running service allows: who may call it, from which host names, and how much a request may ask.

Kept free of FastAPI so that ``citesum serve`` can refuse an unsafe start before importing the web stack.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from citesum.defaults import DEFAULT_BUDGET
from citesum.errors import ConfigError

WorkerKind = Literal["process", "thread"]
TOKEN_ENV = "CITESUM_TOKEN"
#: shorter than this, a token is guessable, not a secret
MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
#: the extractive summarizer gains nothing from a context past this (the SummHay budget sweep of
#: ``benchmarks/summhay_budget.py``, docs/measurements.md), so a larger budget only costs time
EXTRACTIVE_MAX_BUDGET = 32_000


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(token_file: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The bearer token: the first line of ``token_file``, else ``$CITESUM_TOKEN``, else none."""
    environ = dict(os.environ) if environ is None else environ
    if token_file is not None:
        try:
            lines = Path(token_file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the token file {token_file}: {exc}") from exc
        token, where = (lines[0].strip() if lines else ""), f"the token file {token_file}"
    elif environ.get(TOKEN_ENV) is not None:
        token, where = environ[TOKEN_ENV].strip(), f"${TOKEN_ENV}"
    else:
        return None
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"{where} holds a token of {len(token)} characters; use at least {MIN_TOKEN_CHARS} "
                          "random ones (e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')")
    if not token.isascii() or not token.isprintable() or " " in token:
        raise ConfigError(f"{where}: the token must be printable ASCII without spaces (it travels in a header)")
    return token


def default_allowed_hosts(host: str) -> tuple[str, ...]:
    """Host names a browser may use to reach the service: the loopback names, and for a non-loopback bind,
    the bound address, this machine's name and its addresses. Any other Host header is refused, which stops
    DNS rebinding (a web page whose own host name resolves to 127.0.0.1)."""
    names = list(LOOPBACK_NAMES)
    if not is_loopback(host):
        if host not in WILDCARD_HOSTS:
            names.append(host.strip("[]"))
        machine = socket.gethostname()
        names += [machine, socket.getfqdn()]
        try:
            names += socket.gethostbyname_ex(machine)[2]
        except OSError:
            pass  # a machine name that does not resolve: its addresses are given with --allowed-host
    return tuple(dict.fromkeys(n.lower() for n in names if n))


@dataclass(frozen=True)
class ServiceConfig:
    """Limits and safety settings of one service (``citesum serve`` options, same names)."""

    host: str = "127.0.0.1"
    token: str | None = None
    #: a tokens file (:mod:`citesum.service.access`): each token's role and collections (``citesum serve`` reads
    #: it again on SIGHUP)
    tokens_file: Path | None = None
    #: Host header names accepted (default: :func:`default_allowed_hosts` of ``host``); ``("*",)`` accepts any
    allowed_hosts: tuple[str, ...] | None = None
    docs: bool = False
    #: workers writing summaries (the heavy requests)
    workers: int = field(default_factory=lambda: os.cpu_count() or 2)
    #: processes use every core for the CPU-bound offline pipeline; threads suit an LLM-bound summarizer
    #: (requests wait on the model) and tests (no process start-up)
    worker_kind: WorkerKind = "process"
    #: workers for the light reads (search, documents), apart from the summaries so that a search never waits
    #: behind them; of the same kind as the summary workers
    search_workers: int = field(default_factory=lambda: os.cpu_count() or 2)
    #: requests waiting for a worker beyond those being served; past it: 503 with Retry-After
    queue: int = 64
    timeout_s: float = 60.0
    #: a summary written by an LLM gets this long instead (a local model reads a long prompt for a minute or
    #: more); past it the model call is cancelled and the request answered 504
    llm_timeout_s: float = 180.0
    #: a client that stops sending the body it announced is answered 408 after this many seconds of silence
    body_timeout_s: float = 30.0
    max_json_bytes: int = 64 * 1024
    max_upload_bytes: int = 25 * 1024 * 1024
    max_upload_files: int = 50
    max_query_chars: int = 2_000
    max_query_tokens: int = 256
    max_k: int = 100
    max_budget: int = EXTRACTIVE_MAX_BUDGET
    default_budget: int = DEFAULT_BUDGET
    #: an extractive bullet has up to 60 words, so a smaller limit could give no bullet at all
    min_words: int = 20
    max_words: int = 2_000
    max_bullets: int = 20
    #: upload and delete jobs waiting for the writer; past it: 503 with Retry-After
    max_pending_jobs: int = 16
    #: how long a job waits for another process's write lock on the index before failing
    lock_wait_s: float = 300.0
    #: /health re-runs SQLite's quick_check of the database (it reads every page) at most this often
    integrity_every_s: float = 60.0
    #: where uploaded files are kept (default: ``uploads`` inside the index folder); with several collections,
    #: a folder of each collection's name in it
    uploads_dir: Path | None = None
    #: Summary RAG's summary index of the served index (``citesum summary-index``): requests may retrieve over it
    summary_index: Path | None = None
    #: the extractive summarizer scores its first candidate sentences again with this embedder (``minilm``, extra
    #: minilm); None: wordllama alone
    relevance_embedder: str | None = None
    #: a request's head (request line and headers) must come whole within this many seconds, or 408 and the
    #: connection is closed (:mod:`citesum.service.connections`)
    header_timeout_s: float = 10.0
    #: open connections in all, and from one client address; past them the oldest connection waiting for a
    #: request head is closed to make room (one being served never is)
    max_connections: int = 4096
    max_connections_per_client: int = 256

    def __post_init__(self) -> None:
        if self.token is None and self.tokens_file is None and not is_loopback(self.host):
            raise ConfigError(
                f"refusing to serve on {self.host or '*'} without a token: anyone who can reach that address "
                f"could read and change the index; give --token-file FILE or --tokens FILE, or set ${TOKEN_ENV} "
                "(or serve on 127.0.0.1)")
        for name in ("workers", "search_workers", "max_json_bytes", "max_upload_bytes", "max_upload_files",
                     "max_query_chars", "max_query_tokens", "max_k", "max_budget", "min_words", "max_words",
                     "max_bullets", "max_pending_jobs", "max_connections", "max_connections_per_client"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.worker_kind not in ("process", "thread"):
            raise ConfigError(f"worker_kind must be 'process' or 'thread', got '{self.worker_kind}'")
        if self.queue < 0 or self.lock_wait_s < 0 or min(self.timeout_s, self.llm_timeout_s, self.body_timeout_s,
                                                         self.header_timeout_s) <= 0:
            raise ConfigError("queue and lock_wait_s must be >= 0; timeout_s, llm_timeout_s, body_timeout_s and "
                              "header_timeout_s > 0")
        if self.min_words > self.max_words:
            raise ConfigError(f"min_words ({self.min_words}) is above max_words ({self.max_words})")
        if self.default_budget > self.max_budget:
            object.__setattr__(self, "default_budget", self.max_budget)
        if self.allowed_hosts is None:
            object.__setattr__(self, "allowed_hosts", default_allowed_hosts(self.host))
        else:
            object.__setattr__(self, "allowed_hosts", tuple(h.lower() for h in self.allowed_hosts))

    def host_allowed(self, host: str) -> bool:
        hosts = self.allowed_hosts or ()
        return "*" in hosts or host.lower() in hosts
