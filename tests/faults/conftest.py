"""Fixtures of the fault suite: the service under a real uvicorn server on loopback, and what a careless operator
or a flaky disk does to its folders (read-only and full file systems; mounting them needs root)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from citesum.index.store import Index, IndexSettings

pytest.importorskip("fastapi")

from citesum.service.app import create_app  # noqa: E402
from citesum.service.config import ServiceConfig  # noqa: E402
from live import LiveServer  # noqa: E402


@pytest.fixture
def index_path(tmp_path: Path, haystack) -> Path:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents[:6])
    return index.path


@pytest.fixture
def live(index_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """``live(**config)``: the service of ``index_path`` with ``config`` (threads), served like ``citesum
    serve`` serves it; ``live(path, **config)`` for another index."""
    servers: list[LiveServer] = []

    def start(path: Path | None = None, llm: Any = None, **config: Any) -> LiveServer:
        config = {"worker_kind": "thread", "workers": 1, "search_workers": 1, **config}
        servers.append(LiveServer(create_app(path or index_path, ServiceConfig(**config), llm=llm)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _mount(*arguments: str) -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a file system needs root")
    try:
        subprocess.run(["mount", *arguments], check=True, capture_output=True)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot mount here: {exc.stderr.decode(errors='replace').strip()}")


@pytest.fixture
def mount_points(tmp_path: Path) -> Iterator[Callable[[], Path]]:
    """``mount_point()``: a new empty folder to mount on; whatever was mounted on them is unmounted after the
    test (lazily: a process of the test may still hold a file there)."""
    made: list[Path] = []

    def make() -> Path:
        made.append(tmp_path / f"mount{len(made)}")
        made[-1].mkdir()
        return made[-1]

    yield make
    for target in made:
        subprocess.run(["umount", "--lazy", str(target)], check=False, capture_output=True)


@pytest.fixture
def small_disk(mount_points: Callable[[], Path]) -> Callable[[int], Path]:
    """``small_disk(kib)``: an empty file system of that size (tmpfs)."""
    def make(kib: int) -> Path:
        target = mount_points()
        _mount("-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(target))
        return target

    return make


@pytest.fixture
def read_only_view(mount_points: Callable[[], Path]) -> Callable[[Path], Path]:
    """``read_only_view(folder)``: the folder as read-only media shows it (a read-only bind mount)."""
    def make(folder: Path) -> Path:
        target = mount_points()
        _mount("--bind", str(folder), str(target))
        _mount("-o", "remount,ro,bind", str(target))
        return target

    return make
