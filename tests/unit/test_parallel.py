"""Batch jobs in one process and their resumption: a job interrupted half-way and run again does only the tasks
it had not finished, and gives what an uninterrupted run gives (the graph, the summary index, the build)."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pytest

from citesum.demo.haystack import generate_haystack
from citesum.index.check import check_index
from citesum.index.store import TASKS_DIR, Index
from citesum.parallel import InProcess, TaskResults, job_key, resumable_map
from citesum.retrieve.lightpal import build_passage_graph
from citesum.summary_rag import CentralSentences, build_summary_index
from citesum.types import Document


class Interrupted(Exception):
    """Ctrl+C, as far as the job can tell (KeyboardInterrupt would stop pytest itself)."""


class InterruptedAfter(InProcess):
    """Runs ``tasks`` tasks of the next job, then is interrupted: the driver of a job killed half-way."""

    def __init__(self, tasks: int) -> None:
        self.tasks = tasks

    def map(self, function: Callable[[Any], Any], items: Sequence[Any], progress: Any = None,
            on_result: Any = None) -> list[Any]:
        def counted(item: Any) -> Any:
            if self.tasks == 0:
                raise Interrupted
            self.tasks -= 1
            return function(item)

        return super().map(counted, items, progress, on_result)


def test_in_process_map_keeps_the_order_and_reports_each_result() -> None:
    seen: list[tuple[int, int]] = []
    progress: list[tuple[int, int]] = []
    assert InProcess().map(lambda x: x * x, [3, 1, 2], lambda d, t: progress.append((d, t)),
                           lambda n, r: seen.append((n, r))) == [9, 1, 4]
    assert seen == [(0, 9), (1, 1), (2, 4)] and progress == [(1, 3), (2, 3), (3, 3)]
    assert InProcess().share([1, 2]).get() == [1, 2]


def test_an_interrupted_job_run_again_does_only_the_tasks_left(tmp_path: Path) -> None:
    ran: list[int] = []

    def square(x: int) -> int:
        ran.append(x)
        return x * x

    items = list(range(10))
    results = TaskResults(tmp_path / TASKS_DIR, job_key("squares", items))
    with pytest.raises(Interrupted):
        resumable_map(InterruptedAfter(4), square, items, results)
    assert ran == [0, 1, 2, 3]
    ran.clear()
    progress: list[int] = []
    out, resumed = resumable_map(InProcess(), square, items, results, lambda done, total: progress.append(done))
    assert out == [x * x for x in items] and resumed == 4 and ran == [4, 5, 6, 7, 8, 9]
    assert progress == [5, 6, 7, 8, 9, 10]  # counted from what was resumed
    # a result file cut short (the run was killed while writing it) is done again, not read as garbage
    (results.folder / "7.pickle").write_bytes(pickle.dumps(list(range(100)))[:20])
    ran.clear()
    assert resumable_map(InProcess(), square, items, results)[0] == out and ran == [7]
    # a job with other inputs finds none of these results
    other = TaskResults(tmp_path / TASKS_DIR, job_key("squares", items[:9]))
    assert resumable_map(InProcess(), square, items[:9], other)[1] == 0
    cubes = TaskResults(tmp_path / TASKS_DIR, job_key("cubes", items))
    resumable_map(InProcess(), lambda x: x ** 3, items, cubes)
    # clearing a job forgets every job of its kind (no rerun would take an earlier one's), not jobs of others
    other.clear()
    assert not results.folder.exists() and not other.folder.exists() and cubes.folder.exists()
    cubes.clear()
    assert not (tmp_path / TASKS_DIR).exists()


class LengthScorer:
    """A context scorer that prefers candidates of a length close to the context's (deterministic, instant);
    counts the units it scores."""

    name = "length"

    def __init__(self, settings: tuple[str, ...] = ("length",)) -> None:
        self.contexts = 0
        self.settings = settings  # what a resumable build's key holds (an LM scorer: its model and length)

    def score(self, context: str, candidates: Sequence[str]) -> np.ndarray:
        self.contexts += 1
        return -np.abs(np.array([len(c) for c in candidates], dtype=np.float32) - len(context))


@pytest.fixture
def small_index(tmp_path: Path) -> Index:
    index = Index.create(tmp_path / "ix")
    index.add(generate_haystack(documents=40, seed=5).documents)
    return index


def test_an_interrupted_graph_build_links_only_the_blocks_left(small_index: Index) -> None:
    units = len(small_index.passages)
    assert units > 40
    whole = build_passage_graph(small_index, LengthScorer(), candidates=10, edges=3, block=8)
    with pytest.raises(Interrupted):
        build_passage_graph(small_index, LengthScorer(), candidates=10, edges=3, block=8,
                            executor=InterruptedAfter(3), resumable=True)
    assert check_index(small_index.path).ok and any(TASKS_DIR in n for n in check_index(small_index.path).notes)
    scorer = LengthScorer()
    resumed = build_passage_graph(small_index, scorer, candidates=10, edges=3, block=8, resumable=True)
    assert scorer.contexts == units - 3 * 8  # the three blocks done before the interruption were not redone
    np.testing.assert_array_equal(resumed.neighbors, whole.neighbors)
    # no blocks are kept once the graph is saved; those of other settings are not taken, and go with the save
    resumed.save(small_index.path)
    assert not (small_index.path / TASKS_DIR).exists()
    with pytest.raises(Interrupted):
        build_passage_graph(small_index, LengthScorer(), candidates=10, edges=3, block=8,
                            executor=InterruptedAfter(3), resumable=True)
    for other, candidates in ((LengthScorer(), 11), (LengthScorer(settings=("length", "another model")), 10)):
        build_passage_graph(small_index, other, candidates=candidates, edges=3, block=8,
                            resumable=True).save(small_index.path)
        assert other.contexts == units and not (small_index.path / TASKS_DIR).exists()
        with pytest.raises(Interrupted):
            build_passage_graph(small_index, LengthScorer(), candidates=10, edges=3, block=8,
                                executor=InterruptedAfter(3), resumable=True)
    # an update of the index makes the blocks of its last generation useless: its commit removes them
    small_index.delete([small_index.document_ids()[0]])
    assert not (small_index.path / TASKS_DIR).exists()


class CountingSummaries(CentralSentences):
    name = "counting"

    def __init__(self) -> None:
        super().__init__(max_tokens=40)
        self.documents: list[str] = []

    def summarize_document(self, document: Document) -> str:
        self.documents.append(document.id)
        return " ".join(document.text.split()[:30])


def test_an_interrupted_summary_index_summarizes_only_the_documents_left(small_index: Index, tmp_path: Path) -> None:
    documents = len(list(small_index.documents()))
    whole, _ = build_summary_index(small_index, tmp_path / "whole", CountingSummaries())
    with pytest.raises(Interrupted):
        build_summary_index(small_index, tmp_path / "summaries", CountingSummaries(), executor=InterruptedAfter(2))
    assert len(Index.open(tmp_path / "summaries").passages) == 0  # nothing committed
    summarizer = CountingSummaries()
    summaries, report = build_summary_index(small_index, tmp_path / "summaries", summarizer)
    assert len(summarizer.documents) == documents - 2 * 16 and report.summarized == documents
    assert [(d.id, d.text) for d in summaries.documents()] == [(d.id, d.text) for d in whole.documents()]
    assert not (tmp_path / "summaries" / TASKS_DIR).exists()
    # summaries made with other settings are not taken: here the same summarizer, with a fallback
    with pytest.raises(Interrupted):
        build_summary_index(small_index, tmp_path / "other", CountingSummaries(), executor=InterruptedAfter(2))
    summarizer = CountingSummaries()
    build_summary_index(small_index, tmp_path / "other", summarizer, fallback=CentralSentences(max_tokens=41))
    assert len(summarizer.documents) == documents


def test_an_interrupted_build_with_an_executor_embeds_only_the_batches_left(tmp_path: Path) -> None:
    from citesum.index import store

    documents = generate_haystack(documents=3 * store.DOCUMENTS_PER_TASK + 5, seed=9).documents
    plain = Index.create(tmp_path / "plain")
    plain.add(documents)
    index = Index.create(tmp_path / "ix")
    with pytest.raises(Interrupted):
        index.add(documents, executor=InterruptedAfter(2))
    assert index.generation == 0 and len(list((tmp_path / "ix" / TASKS_DIR).rglob("*.pickle"))) == 2
    executor = InterruptedAfter(2)  # the two batches left: one more task would be interrupted
    index.add(documents, executor=executor)
    assert executor.tasks == 0 and not (tmp_path / "ix" / TASKS_DIR).exists()
    assert [(p.id, p.text) for p in index.passages] == [(p.id, p.text) for p in plain.passages]
    np.testing.assert_allclose(np.asarray(index.vectors), np.asarray(plain.vectors), atol=1e-6)


def test_an_interrupted_sweep_run_again_with_another_budget_does_only_the_runs_left(
    shared_data: Path, tmp_path: Path
) -> None:
    from citesum.datasets.summhay import load_haystack
    from citesum.evaluate.runner import PipelineConfig, sweep_haystacks

    haystack = load_haystack(shared_data / "summhay" / "topic_news1.json")
    configs = [PipelineConfig(retriever="bm25", budget=budget) for budget in (2000, 4000)]
    results = TaskResults(tmp_path / TASKS_DIR, job_key("sweep", "news1"))
    bases = [tmp_path / "news1"]
    with pytest.raises(Interrupted):
        sweep_haystacks([haystack], bases, configs, judge_name="lexical", executor=InterruptedAfter(1),
                        results=results)
    more = [*configs, PipelineConfig(retriever="bm25", budget=8000)]
    executor = InterruptedAfter(2)  # the 4,000 run left and the new 8,000 one: a third run would be interrupted
    points = sweep_haystacks([haystack], bases, more, judge_name="lexical", executor=executor, results=results)
    assert executor.tasks == 0 and [p.config.budget for p in points] == [2000, 4000, 8000]
    fresh = sweep_haystacks([haystack], bases, more[1:2], judge_name="lexical")
    assert points[1].scores == fresh[0].scores and points[1].judge == "lexical" and points[1].unparsed is None
    # a judge that cannot be had is said before any index is built or any run made
    with pytest.raises(Exception, match="judge"):
        sweep_haystacks([haystack], [tmp_path / "other"], configs, judge_name="nonsense")
    assert not list(tmp_path.glob("other*"))


def test_a_ray_node_too_slow_to_start_is_started_again(monkeypatch: pytest.MonkeyPatch) -> None:
    ray = pytest.importorskip("ray")
    from citesum.errors import CitesumError
    from citesum.parallel import RayExecutor

    # Ray waits a fixed 30 s for the node it starts; on a busy machine the wait ran out (CI's Ray tests errored)
    calls: list[str] = []
    too_slow = "The current node timed out during startup. This could happen because some of the raylet failed"

    def init(address: str, **options: object) -> None:
        calls.append(f"init {address} {options['num_cpus']}")
        if calls.count(calls[-1]) == 1:
            raise Exception(too_slow)

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "shutdown", lambda: calls.append("shutdown"))
    monkeypatch.setattr(ray, "init", init)
    RayExecutor(num_cpus=1)
    assert calls == ["init local 1", "shutdown", "init local 1"]
    # too slow twice: a clear error, not Ray's bare exception
    monkeypatch.setattr(ray, "init", lambda address, **options: (_ for _ in ()).throw(Exception(too_slow)))
    with pytest.raises(CitesumError, match="cannot start or join the Ray cluster at local: The current node timed"):
        RayExecutor(num_cpus=1)
    # any other failure is not tried again
    calls.clear()

    def refused(address: str, **options: object) -> None:
        calls.append("init")
        raise Exception("the object store cannot map its memory")

    monkeypatch.setattr(ray, "init", refused)
    with pytest.raises(CitesumError, match="object store cannot map"):
        RayExecutor(num_cpus=1)
    assert calls == ["init"]
