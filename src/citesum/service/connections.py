"""What a client can hold before the service knows who it is, bounded at the socket.

The request guard (:mod:`citesum.service.guard`) runs once a request's head has come whole; before that, the
HTTP server alone holds the connection, and uvicorn puts no limit there: a client sending part of its headers
and then nothing was never timed out (uvicorn's keep-alive timer stops at the first byte), and enough of them
used up the process's file handles, after which no one was answered and each refused connection logged a
traceback. So uvicorn's HTTP/1.1 protocol runs here with three limits, and its log is rate limited:

- a request head (request line and headers) must come whole within ``header_timeout_s`` of the connection's
  opening, or of its first byte after the previous response: past it, ``408`` and the connection is closed;
- at most ``max_connections_per_client`` connections from one address and ``max_connections`` in all. Past
  either, the oldest connection of that address (or of all) that is waiting for a request head is closed to
  make room: a client whose request is being served is never cut for another. When none is waiting, the new
  connection is closed at once;
- the open-file limit is raised to the hard limit, and ``max_connections`` kept below it with room for the
  index's files and the workers' pipes.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from citesum.service.config import ServiceConfig
from citesum.service.errors import error_body

#: file handles kept for what is not a client connection (the database, segment files, worker pipes, logs)
RESERVED_FILES = 512
#: the loggers whose handlers write a served process's log: the root's (ours and asyncio's records reach it) and
#: uvicorn's own
LOG_WRITERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access")


def raw_response(status: int, phrase: str, error: str, detail: str) -> bytes:
    """A whole HTTP/1.1 response closing the connection, with the service's JSON error body: for the answers
    given below the HTTP machinery (no request was parsed, so none can go through it)."""
    body = error_body(error, detail)
    head = (f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "cache-control: no-store\r\nconnection: close\r\n\r\n")
    return head.encode("ascii") + body


def client_key(address: str) -> str:
    """Whose connection it is, for the per-client limit: an IPv4 address (also when written as IPv6,
    ``::ffff:a.b.c.d``), or an IPv6 address's /64 network (one host is given a whole /64, and could otherwise
    open each connection from another address of it)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address  # a Unix socket's path, or nothing
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class ConnectionLimits:
    """The open connections of one server, by client address, oldest first."""

    def __init__(self, total: int, per_client: int, header_timeout_s: float) -> None:
        self.total = total
        self.per_client = per_client
        self.header_timeout_s = header_timeout_s
        # dicts as ordered sets: the first key is the oldest connection
        self._open: dict[GuardedH11Protocol, None] = {}
        self._by_client: dict[str, dict[GuardedH11Protocol, None]] = {}
        self.refused = 0
        self.evicted = 0
        self.timed_out = 0

    def __len__(self) -> int:
        return len(self._open)

    def admit(self, connection: "GuardedH11Protocol") -> bool:
        """Whether ``connection`` may stay open, after closing the oldest waiting one of its client, or of all,
        to make room for it when needed."""
        mine = self._by_client.get(connection.client_host, {})
        if len(mine) >= self.per_client and not self._evict(mine):
            self.refused += 1
            return False
        if len(self._open) >= self.total and not self._evict(self._open):
            self.refused += 1
            return False
        self._open[connection] = None
        self._by_client.setdefault(connection.client_host, {})[connection] = None
        return True

    def release(self, connection: "GuardedH11Protocol") -> None:
        if connection in self._open:
            del self._open[connection]
            mine = self._by_client[connection.client_host]
            del mine[connection]
            if not mine:
                del self._by_client[connection.client_host]

    def _evict(self, group: dict["GuardedH11Protocol", None]) -> bool:
        for connection in group:
            if connection.idle:
                self.evicted += 1
                connection.drop()  # releases it: the loop ends here, before the dict changes under it
                return True
        return False


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol under :class:`ConnectionLimits` (set on a subclass by :func:`protocol_for`),
    answering a malformed request with the service's JSON error instead of uvicorn's plain text."""

    limits: ConnectionLimits

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.client_host = client_key(self.client[0] if self.client else "")
        self._head_timer: asyncio.TimerHandle | None = None
        self._admitted = self.limits.admit(self)
        if not self._admitted:
            transport.abort()
            return
        self._wait_for_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._leave_the_count()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._mind_idleness()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # a request answered before its body came (a 401, a 413) leaves the client sending a body nobody reads,
        # and a pipelined request's head may already be here in part: both are held to the same limit
        self._mind_idleness()

    @property
    def idle(self) -> bool:
        """No request of this connection is being answered: it waits for (the rest of) a request head, or sends
        the rest of a body whose request was answered already."""
        return (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing()

    def _mind_idleness(self) -> None:
        if self.idle:
            self._wait_for_head()
        else:
            self._stop_waiting()

    def drop(self) -> None:
        """Closes the connection now (made room for another)."""
        self._leave_the_count()
        self.transport.abort()

    def _leave_the_count(self) -> None:
        """No timer runs for this connection, and the limits count it no more (once, however it ends)."""
        self._stop_waiting()
        if self._admitted:
            self.limits.release(self)
            self._admitted = False

    def send_400_response(self, msg: str) -> None:
        self.transport.write(raw_response(400, "Bad Request", "bad request", msg))
        self.transport.close()

    def _wait_for_head(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_too_slow)

    def _stop_waiting(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if not self.idle:
            return
        self.limits.timed_out += 1
        if self.conn.their_state is h11.IDLE:  # (part of) a head: it is told why; a body after an answer is not
            self.transport.write(raw_response(
                408, "Request Timeout", "request timeout",
                f"the request's headers did not come whole within {self.limits.header_timeout_s:g} s"))
        self.transport.close()


def protocol_for(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """The protocol class for one server: its connections share ``limits``."""
    return type("ServedH11Protocol", (GuardedH11Protocol,), {"limits": limits})


class RateLimitedLog(logging.Filter):
    """Lets through at most ``burst`` records of the same message in ``window_s`` seconds, then one line saying
    how many were held back: a flood (thousands of refused connections, each with a traceback) would fill the
    disk (benchmarks/faults.py measures the log's growth)."""

    def __init__(self, burst: int = 5, window_s: float = 60.0) -> None:
        super().__init__()
        self.burst = burst
        self.window_s = window_s
        self._seen: dict[tuple[str, Any], list[float]] = {}  # message -> [window start, count]

    def filter(self, record: logging.LogRecord) -> bool:
        # by the first line: asyncio's accept error names the socket in the lines after it
        key = (record.name, str(record.msg).split("\n", 1)[0])
        now = time.monotonic()
        window = self._seen.get(key)
        if window is None or now - window[0] >= self.window_s:
            held_back = 0 if window is None else int(window[1]) - self.burst
            self._seen[key] = [now, 1]
            if len(self._seen) > 1000:  # a message of ever new text: forget the oldest windows
                for old in list(self._seen)[:500]:
                    del self._seen[old]
            if held_back > 0:
                record.msg = f"{record.msg} [{held_back} more like it in the last {self.window_s:g} s not logged]"
            return True
        window[1] += 1
        return window[1] <= self.burst


def limit_repeated_logs() -> None:
    """Rate-limit what this process's log handlers write (:class:`RateLimitedLog`, one per handler): a filter on
    a handler sees every record it writes, those of child loggers included, where one on a logger sees only the
    records logged on that very logger. For ``citesum serve``, once its logging is configured."""
    for name in LOG_WRITERS:
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, RateLimitedLog) for f in handler.filters):
                handler.addFilter(RateLimitedLog())


def open_file_limit() -> int:
    """The process's open-file limit, raised to its hard limit first (many systems start at 1,024)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return soft if soft != resource.RLIM_INFINITY else wanted
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        return wanted
    except (ValueError, OSError):
        return soft


def connection_limits(config: ServiceConfig) -> ConnectionLimits:
    """The limits of ``config``, ``max_connections`` kept within what the open-file limit allows."""
    room = max(open_file_limit() - RESERVED_FILES, 16)
    return ConnectionLimits(min(config.max_connections, room), config.max_connections_per_client,
                            config.header_timeout_s)


def uvicorn_server(app: Any, config: ServiceConfig, **options: Any) -> Any:
    """A uvicorn server of ``app`` whose connections are bounded by ``config``'s limits (``options`` go to
    ``uvicorn.Config``: host and port, or nothing when sockets are given to ``run``). Its ``limits`` attribute
    counts what was refused, made room for and timed out."""
    import uvicorn

    limits = connection_limits(config)
    # ws="none": no WebSocket is served (the guard refuses them), and an upgrade would hand the connection to a
    # protocol that never gives its place back
    server = uvicorn.Server(uvicorn.Config(app, http=protocol_for(limits), ws="none", log_level="warning",
                                           timeout_graceful_shutdown=5, **options))
    server.limits = limits  # type: ignore[attr-defined]
    return server
