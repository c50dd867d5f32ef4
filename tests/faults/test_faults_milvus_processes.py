"""A Milvus index (milvus-lite, as a user runs it offline) built by one process is searched, summarized, checked
and served by others, and updated by yet another: each command is a process of its own, as a user runs them.

milvus-lite keeps a collection's load state in the memory of the process that opened it: the building process
has it loaded, every new one finds it released. The unit tests build and search in one process and never see
that; these do."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fixtures import CITY_NOTES, write_files
from live import citesum_serve, free_port, run_citesum

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")
pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

UPDATE = ("parade.txt", "A flamingo parade crossed Zanzibar square on Sunday, led by the harbour brass band.")


def _citesum(*arguments: str) -> subprocess.CompletedProcess[str]:
    """``citesum ARGUMENTS`` in a process of its own; it must succeed."""
    done = run_citesum(*arguments)
    assert done.returncode == 0, f"citesum {' '.join(arguments)} failed:\n{done.stderr[-3000:]}"
    return done


def _searched(index: Path, query: str, retriever: str) -> list[str]:
    """The files of the hits of ``citesum search`` in a new process."""
    done = _citesum("search", query, "--index", str(index), "--retriever", retriever, "--json", "-k", "3")
    return [Path(hit["source"]).name for hit in json.loads(done.stdout)["hits"]]


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path]:
    """(the corpus folder, the index) built by ``citesum index`` into a milvus-lite file beside the index."""
    corpus = write_files(tmp_path / "docs", CITY_NOTES)
    index = tmp_path / "ix"
    _citesum("index", str(corpus), "--index", str(index), "--store", f"milvus:{tmp_path / 'vectors.db'}")
    return corpus, index


def test_a_milvus_index_is_searched_served_and_updated_from_other_processes(
        built: tuple[Path, Path], tmp_path: Path) -> None:
    corpus, index = built
    for retriever in ("bm25", "dense", "hybrid"):
        assert _searched(index, "reservoir water", retriever)[0] == "water.txt", retriever
    summary = json.loads(_citesum("summarize", "What happened to the water supply?", "--index", str(index),
                                  "--json").stdout)
    assert summary["bullets"] and "water.txt" in {Path(source["source"]).name for source in summary["sources"].values()}
    assert "ok" in _citesum("check", "--index", str(index)).stdout

    server = citesum_serve(index, tmp_path / "serve.log", "--worker-kind", "thread")
    try:
        health = httpx.get(f"{server.url}/health", timeout=30)
        assert health.status_code == 200 and health.json()["status"] == "ok", health.text
        found = httpx.post(f"{server.url}/search", json={"query": "bus strike", "k": 3}, timeout=30)
        assert found.status_code == 200, found.text
        assert found.json()["hits"][0]["source"] == "transit.txt"
    finally:
        server.close()  # SIGTERM: the file is free for the next process

    (corpus / UPDATE[0]).write_text(UPDATE[1])
    _citesum("index", str(corpus), "--index", str(index))
    assert _searched(index, "flamingo parade", "bm25")[0] == UPDATE[0]
    assert _searched(index, "flamingo parade", "hybrid")[0] == UPDATE[0]
    assert "ok" in _citesum("check", "--index", str(index)).stdout


def test_a_milvus_lite_index_is_served_by_threads(built: tuple[Path, Path], tmp_path: Path) -> None:
    """milvus-lite serves one process at a time: a service of it reads with threads by default, and refuses
    worker processes before it starts, with the reason."""
    _, index = built
    server = citesum_serve(index, tmp_path / "serve.log", "--workers", "1", "--search-workers", "1")
    try:
        health = httpx.get(f"{server.url}/health", timeout=30)
        assert health.status_code == 200, health.text  # before: 503, worker processes could not open the file
        assert health.json()["workers"]["search"]["kind"] == "thread"
        assert httpx.post(f"{server.url}/search", json={"query": "reservoir", "k": 1}).status_code == 200
    finally:
        server.close()
    refused = run_citesum("serve", "--index", str(index), "--port", str(free_port()), "--worker-kind", "process")
    assert refused.returncode == 1 and "serves one process at a time" in refused.stderr, refused.stderr
    assert "--worker-kind thread" in refused.stderr
