"""Servers for tests on loopback: an ASGI app under a real uvicorn server in a thread of the test process (so
tests can send concurrent requests over real sockets; the test client serialises them), and servers in
subprocesses (``citesum serve``, llama.cpp's server)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator


#: ``citesum`` as a user runs it, in a process of its own
CITESUM = [sys.executable, "-m", "citesum.cli"]


def run_citesum(*arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``citesum ARGUMENTS`` in a process of its own (its start-up loads the embedder)."""
    return subprocess.run([*CITESUM, *arguments], capture_output=True, text=True, timeout=timeout)


class LiveServer:
    """``app`` (the service's: the guard holds its config) served as ``citesum serve`` serves it, connection
    limits included."""

    def __init__(self, app: Any) -> None:
        from citesum.service.config import ServiceConfig
        from citesum.service.connections import uvicorn_server

        self.server = uvicorn_server(app, getattr(app, "config", ServiceConfig()), host="127.0.0.1", port=0)
        self.server.config.timeout_graceful_shutdown = 2
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServerProcess:
    """A server in a subprocess, ready when ``GET ready_path`` answers 200. Its output goes to ``log`` (a file,
    not a pipe nobody reads, so it never blocks on a full pipe); a server that dies or never answers is an
    error with the end of that log."""

    def __init__(self, command: list[str], port: int, log: Path, ready_path: str = "/health",
                 timeout: float = 120, env: dict[str, str] | None = None) -> None:
        import httpx

        self.url = f"http://127.0.0.1:{port}"
        self._log = open(log, "w")
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                        env=None if env is None else {**os.environ, **env})
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(self.url + ready_path, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"{command[0]} did not start: " + log.read_text(errors="replace")[-2000:])
            time.sleep(0.2)

    @property
    def pid(self) -> int:
        return self.process.pid

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self._log.close()


def citesum_serve(index: Path, log: Path, *options: str, token: str | None = None) -> ServerProcess:
    """``citesum serve`` as a user starts it (the console script of this environment); with ``token``, the
    service requires it (``$CITESUM_TOKEN``) and is ready when its page answers."""
    port = free_port()
    command = [str(Path(sys.executable).parent / "citesum"), "serve", "--index", str(index), "--port", str(port),
               *options]
    if token is None:
        return ServerProcess(command, port, log)
    return ServerProcess(command, port, log, ready_path="/", env={"CITESUM_TOKEN": token})


def llama_cpp_server(model: str, log: Path, *, n_ctx: int, n_threads: int | None = None) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server running ``model`` on a free loopback port, its model named
    ``smollm2``: its base URL once it lists its models, then stopped (a fixture's ``yield from``)."""
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", str(n_ctx), "--model_alias", "smollm2",
               *(["--n_threads", str(n_threads)] if n_threads else [])]
    server = ServerProcess(command, port, log, ready_path="/v1/models")
    try:
        yield f"{server.url}/v1"
    finally:
        server.close()
