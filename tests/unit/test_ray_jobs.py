"""The other batch jobs on Ray (local mode, 2 CPUs): the LightPAL graph, the summary index, an evaluation
sweep and a budget estimate give on Ray what they give in one process."""

from __future__ import annotations

import json
import os
import pickle
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.demo.haystack import generate_haystack
from citesum.index.store import TASKS_DIR, Index, IndexSettings
from citesum.retrieve.lightpal import PassageGraph, build_passage_graph
from citesum.summary_rag import CentralSentences, build_summary_index
from citesum.types import Document

pytest.importorskip("ray")


class LengthScorer:
    """Prefers candidates of a length close to the context's (deterministic, instant)."""

    name = "length"

    def score(self, context: str, candidates: Sequence[str]) -> np.ndarray:
        return -np.abs(np.array([len(c) for c in candidates], dtype=np.float32) - len(context))


@pytest.fixture(scope="module")
def content(tmp_path_factory: pytest.TempPathFactory) -> Index:
    index = Index.create(tmp_path_factory.mktemp("content") / "ix")
    index.add(generate_haystack(documents=60, seed=11).documents)
    return index


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_graph_built_on_ray_is_the_graph_built_here(ray_cluster: Any, content: Index) -> None:
    import ray

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import a test module
    for scorer, neighbours in ((None, "bm25"), (None, "cosine"), (LengthScorer(), None)):
        here = build_passage_graph(content, scorer, candidates=12, edges=4, neighbours=neighbours, block=16)
        on_ray = build_passage_graph(content, scorer, candidates=12, edges=4, neighbours=neighbours, block=16,
                                     executor=ray_cluster)
        np.testing.assert_array_equal(on_ray.neighbors, here.neighbors)
        assert on_ray.scorer == here.scorer
    code, out, err = _run("graph", "--index", str(content.path), "--ray")
    assert code == 0, err
    np.testing.assert_array_equal(PassageGraph.load(content).neighbors, build_passage_graph(content).neighbors)
    assert not (content.path / TASKS_DIR).exists()


def test_the_language_model_scorer_travels_to_workers_by_its_arguments(
    ray_cluster: Any, packaged_smollm2: str, tmp_path: Path
) -> None:
    from citesum.retrieve.lightpal import LanguageModelContextScorer, _worker_scorer

    scorer = LanguageModelContextScorer(packaged_smollm2, max_tokens=32)
    copy = pickle.loads(pickle.dumps(scorer))
    assert len(pickle.dumps(scorer)) < 1000 and copy.name == scorer.name  # not the weights
    assert pickle.loads(pickle.dumps(scorer)) is copy  # loaded once per process
    index = Index.create(tmp_path / "ix", IndexSettings(unit="document"))
    index.add([Document(id=f"d{i}", title="", text=text) for i, text in enumerate(
        ["The reservoir is at 41 percent.", "Water rates rise in January.", "The tram line opens in May.",
         "Bus fares fall for students.", "Rents rose 9 percent this year.", "A desalination plant is planned."])])
    here = build_passage_graph(index, scorer, candidates=3, edges=2)
    on_ray = build_passage_graph(index, scorer, candidates=3, edges=2, executor=ray_cluster)
    np.testing.assert_array_equal(on_ray.neighbors, here.neighbors)
    assert here.scorer == "lm:" + Path(packaged_smollm2).name
    _worker_scorer.cache_clear()  # this process's copy goes now, not while the interpreter shuts down


def test_the_summary_index_built_on_ray_is_the_one_built_here(
    ray_cluster: Any, content: Index, tmp_path: Path
) -> None:
    here, _ = build_summary_index(content, tmp_path / "here", CentralSentences(max_tokens=60))
    on_ray, report = build_summary_index(content, tmp_path / "ray", CentralSentences(max_tokens=60),
                                         executor=ray_cluster)
    assert report.summarized == len(list(content.documents())) and not report.fallbacks
    assert [(d.id, d.text) for d in on_ray.documents()] == [(d.id, d.text) for d in here.documents()]
    code, out, err = _run("summary-index", "--index", str(content.path), "--out", str(tmp_path / "cli"),
                          "--summary-tokens", "60", "--ray")
    assert code == 0 and "60 summarized" in out, err
    assert [d.text for d in Index.open(tmp_path / "cli").documents()] == [d.text for d in here.documents()]


def test_an_evaluation_sweep_on_ray_gives_the_rows_of_one_run_here(
    ray_cluster: Any, shared_data: Path, tmp_path: Path
) -> None:
    haystack = str(shared_data / "summhay" / "topic_news1.json")
    sweep = ["eval", "summhay", "--haystack", haystack, "--retriever", "bm25", "--retriever", "oracle",
             "--budget", "2000", "--budget", "6000", "--judge", "lexical", "--json"]
    code, out, err = _run(*sweep, "--index-dir", str(tmp_path / "here"))
    assert code == 0, err
    here = json.loads(out)
    assert sorted((r["retriever"], r["budget"]) for r in here) == \
        [("bm25", 2000), ("bm25", 6000), ("oracle", 2000), ("oracle", 6000)]
    assert len({r["joint"] for r in here}) > 1  # the runs differ
    code, out, err = _run(*sweep, "--index-dir", str(tmp_path / "ray"), "--ray")
    assert code == 0, err
    assert json.loads(out) == here
    assert not (tmp_path / "ray" / TASKS_DIR).exists()
    # one run, as before the sweep: the same row as in the sweep
    code, out, err = _run("eval", "summhay", "--haystack", haystack, "--retriever", "oracle", "--budget", "6000",
                          "--judge", "lexical", "--index-dir", str(tmp_path / "here"), "--json")
    assert code == 0, err
    assert json.loads(out) == [r for r in here if (r["retriever"], r["budget"]) == ("oracle", 6000)]


def test_a_budget_estimate_on_ray_is_the_estimate_made_here(  # type: ignore[no-untyped-def]
    ray_cluster: Any, serve, tmp_path: Path, haystack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fixtures import fact_stating_panel, write_demo_queries

    from citesum.demo.haystack import SUBTOPICS

    index = str(tmp_path / "ix")
    assert _run("index", str(haystack.write(tmp_path / "corpus")), "--index", index, "--exclude", "gold.json")[0] == 0
    queries = write_demo_queries(tmp_path / "queries.txt")
    asked: list[dict] = []
    server = serve(fact_stating_panel(asked))
    estimate = ["estimate-budget", str(queries), "--index", index, "--panel-model", "a", "--base-url", server.url,
                "--budgets", "150,1000,3000", "--fraction", "1", "--samples", "2", "--words", "60", "--json"]
    monkeypatch.setenv("CITESUM_CACHE_DIR", str(tmp_path / "cache-here"))
    code, out, err = _run(*estimate)
    assert code == 0, err
    here = json.loads(out)
    asked_here = len(asked)
    monkeypatch.setenv("CITESUM_CACHE_DIR", str(tmp_path / "cache-ray"))  # a cache of its own: nothing reused
    code, out, err = _run(*estimate, "--ray")
    assert code == 0, err
    assert json.loads(out) == here and len(asked) == 2 * asked_here == 2 * len(SUBTOPICS) * 2
    # run again: every panel answer comes from the response cache
    code, out, err = _run(*estimate, "--ray")
    assert code == 0 and json.loads(out) == here and len(asked) == 2 * asked_here, err


def _fails_as_citesum(item: int) -> int:
    from citesum.errors import ConfigError

    raise ConfigError(f"item {item} is not acceptable")


def _shared_identity(shared_and_item: tuple[Any, int]) -> tuple[int, int, bool]:
    shared, _ = shared_and_item
    return os.getpid(), id(shared.get()), shared.get() is shared.get()


def test_a_task_error_is_said_as_without_ray_and_shared_values_are_read_once_per_worker(ray_cluster: Any) -> None:
    import ray

    from citesum.errors import ConfigError

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with pytest.raises(ConfigError) as raised:
        ray_cluster.map(_fails_as_citesum, [1])
    assert str(raised.value) == "item 1 is not acceptable"  # not Ray's wrapper with the remote traceback
    shared = ray_cluster.share(list(range(100_000)))
    seen = ray_cluster.map(_shared_identity, [(shared, n) for n in range(12)])
    assert all(same for _, _, same in seen)  # read from the object store once, not at each get()
    copies: dict[int, set[int]] = {pid: set() for pid, _, _ in seen}
    for pid, identity, _ in seen:
        copies[pid].add(identity)
    assert all(len(identities) == 1 for identities in copies.values())  # one copy per worker, whatever its tasks


def test_the_sweep_refuses_what_ray_cannot_do(shared_data: Path) -> None:
    haystack = str(shared_data / "summhay" / "topic_news1.json")
    code, _, err = _run("eval", "summhay", "--haystack", haystack, "--ray")
    assert code == 1 and "--ray spreads the runs of our pipeline (--retriever)" in err
    code, _, err = _run("eval", "summhay", "--haystack", haystack, "--retriever", "bm25", "--ray",
                        "--ray-address", "ray://head:10001")
    assert code == 1 and "give --index-dir, a folder every node shares" in err


class FailingLengthScorer(LengthScorer):
    """LengthScorer that notes each context it scores in ``log`` and, while ``marker`` exists, fails once more than
    ``after`` contexts were scored (its model server gone mid-job); workers share the files."""

    def __init__(self, log: str, marker: str, after: int) -> None:
        self.log, self.marker, self.after = log, marker, after

    def score(self, context: str, candidates: Sequence[str]) -> np.ndarray:
        with open(self.log, "a") as handle:
            handle.write("scored\n")
        if os.path.exists(self.marker) and len(Path(self.log).read_text().splitlines()) > self.after:
            raise RuntimeError("the scoring server went away")
        return super().score(context, candidates)


def test_a_graph_build_on_ray_that_fails_half_way_resumes_from_the_blocks_it_kept(
    ray_cluster: Any, tmp_path: Path
) -> None:
    """A task failing on a worker stops the job (its error said); run again, the build does only the blocks no
    worker finished before, and links the graph of a build never interrupted."""
    import ray

    from citesum.index.check import check_index

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import a test module
    index = Index.create(tmp_path / "ix")
    index.add(generate_haystack(documents=40, seed=5).documents)
    units, block = len(index.passages), 8
    whole = build_passage_graph(index, LengthScorer(), candidates=10, edges=3, block=block)
    log, marker = tmp_path / "scored.log", tmp_path / "server-down"
    marker.write_text("")
    scorer = FailingLengthScorer(str(log), str(marker), after=3 * block)
    with pytest.raises(Exception, match="the scoring server went away"):
        build_passage_graph(index, scorer, candidates=10, edges=3, block=block, executor=ray_cluster,
                            resumable=True)
    kept = [int(f.stem) for f in (index.path / TASKS_DIR).glob("*/*.pickle")]
    assert kept and len(kept) < -(-units // block), kept  # some blocks, not all
    assert check_index(index.path).ok
    marker.unlink()
    # its own log: a task of the failed run may still be finishing
    resumed_log = tmp_path / "scored-again.log"
    scorer = FailingLengthScorer(str(resumed_log), str(marker), after=3 * block)
    resumed = build_passage_graph(index, scorer, candidates=10, edges=3, block=block, executor=ray_cluster,
                                  resumable=True)
    np.testing.assert_array_equal(resumed.neighbors, whole.neighbors)
    done_before = sum(min(block, units - number * block) for number in kept)
    assert len(resumed_log.read_text().splitlines()) == units - done_before


def _started_then_maybe_failing(folder: str, number: int) -> int:
    import time

    Path(folder, f"started-{number}").write_text("")
    if number == 0:
        raise RuntimeError("task 0 failed")
    time.sleep(0.3)
    return number


def test_a_failed_task_starts_no_more_tasks_and_cancels_none(  # type: ignore[no-untyped-def]
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a task fails, no more tasks are submitted, and none is cancelled: cancelling raced a task that was
    finishing and aborted the driver (a Ray check failure, seen in CI); the few running finish on their own."""
    import functools
    import time

    import ray

    from citesum.parallel import TASKS_PER_CPU

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(ray, "cancel", lambda *args, **kwargs: pytest.fail("a task was cancelled"))
    with pytest.raises(Exception, match="task 0 failed"):
        ray_cluster.map(functools.partial(_started_then_maybe_failing, str(tmp_path)), list(range(40)))
    time.sleep(1.0)  # what was submitted has run by now
    started = len(list(tmp_path.glob("started-*")))
    assert 1 <= started <= TASKS_PER_CPU * 2  # the window of a 2-CPU cluster, not the 40
    # the executor still serves the next job
    assert ray_cluster.map(functools.partial(_started_then_maybe_failing, str(tmp_path)), [1, 2]) == [1, 2]
