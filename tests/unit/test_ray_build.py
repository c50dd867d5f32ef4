"""Parsing, chunking and embedding on Ray (local mode, 2 CPUs): the generation committed is the one a build in
one process commits, and a task whose worker dies is run again."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from citesum.demo.haystack import generate_haystack
from citesum.index.store import Index
from citesum.ingest import ingest_paths
from citesum.retrieve import get_retriever

pytest.importorskip("ray")

from citesum.parallel import RayExecutor  # noqa: E402

QUERIES = ["What is happening with the city's water supply?", "median rent two-bedroom", "bus drivers strike"]


@pytest.fixture
def executor(ray_cluster: RayExecutor) -> RayExecutor:
    return ray_cluster


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    for document in generate_haystack(documents=120, seed=3).documents:
        (folder / document.id).write_text(f"{document.title}\n\n{document.text}\n")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")  # reported, as without Ray
    return folder


def test_a_build_on_ray_commits_what_a_build_in_one_process_does(
    corpus: Path, executor: RayExecutor, tmp_path: Path
) -> None:
    documents, report = ingest_paths([corpus])
    on_ray, ray_report = ingest_paths([corpus], executor=executor)
    assert on_ray == documents and ray_report.to_json() == report.to_json()
    assert any(f.path.endswith("broken.pdf") and f.status == "skipped" for f in ray_report.files)
    plain = Index.create(tmp_path / "plain")
    plain.add(documents)
    spread = Index.create(tmp_path / "ray")
    spread.add(on_ray, executor=executor)
    assert [(p.id, p.text, p.char_start) for p in spread.passages] == [(p.id, p.text, p.char_start) for p in plain.passages]
    np.testing.assert_allclose(np.asarray(spread.vectors), np.asarray(plain.vectors), atol=1e-6)
    for name in ("bm25", "dense", "hybrid"):
        for query in QUERIES:
            assert [h.passage.id for h in get_retriever(name, spread).retrieve(query, 10)] == \
                [h.passage.id for h in get_retriever(name, plain).retrieve(query, 10)]


def _dies_once(marker: str) -> int:
    """Kills its worker process the first time it runs (a node lost, an out-of-memory kill)."""
    if not os.path.exists(marker):
        Path(marker).write_text("died")
        os._exit(1)
    return os.getpid()


def test_a_task_whose_worker_dies_is_run_again(executor: RayExecutor, tmp_path: Path) -> None:
    import ray

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import a test module
    marker = str(tmp_path / "died-once")
    assert executor.map(_dies_once, [marker])[0] != os.getpid()
    assert Path(marker).read_text() == "died"


def test_the_cli_builds_on_ray(corpus: Path, tmp_path: Path) -> None:
    from citesum.cli import main

    # --ray is a flag: the path after it stays a path
    result = CliRunner().invoke(main, ["index", "--ray", str(corpus), "--index", str(tmp_path / "ix")])
    assert result.exit_code == 0, result.output
    assert "120 added" in result.output and "1 file(s) skipped" in result.output
    assert len(Index.open(tmp_path / "ix").documents_by_id(["doc001.txt"])) == 1
