"""A persistent on-disk cache of LLM responses, keyed by the full request (so a rerun costs no call)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path

from citesum.llm.base import Completion


def default_cache_path() -> Path:
    base = os.environ.get("CITESUM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "citesum")
    return Path(base) / "llm-responses.sqlite"


def request_key(**parts: object) -> str:
    """A digest of the request (endpoint, model and every sampling parameter; never the API key)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class ResponseCache:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._conn.execute("PRAGMA journal_mode=WAL")
        # A cache may lose its last entries on power loss, never its consistency; NORMAL skips an fsync per
        # write, which would otherwise serialise concurrent requests on the event loop.
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def __reduce__(self) -> tuple[type, tuple[Path]]:
        """A copy in another process opens the same file (SQLite in WAL mode serves several processes)."""
        return (type(self), (self.path,))

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        stored = json.loads(row[0])
        return Completion(texts=tuple(stored["texts"]), usage=stored.get("usage", {}), cached=True)

    def put(self, key: str, completion: Completion) -> None:
        value = json.dumps({"texts": list(completion.texts), "usage": dict(completion.usage)})
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, value))

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
