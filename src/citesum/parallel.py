"""Embarrassingly parallel batch work, in this process or spread over a Ray cluster (extra ``ray``): parsing
files and chunking and embedding documents (``citesum index --ray``), summarizing documents (``summary-index``),
linking units (``graph``), the runs of an evaluation sweep (``eval summhay``) and of a budget estimate
(``estimate-budget``).

``--ray`` alone starts a Ray instance on this machine with its cores; ``--ray-address auto`` joins the cluster
this machine belongs to (``ray start`` ran here); ``--ray-address ray://HOST:10001`` connects to a remote
cluster's client server. Every worker needs citesum (with the embedder's extra) installed: tasks import it by
name, and load models once per worker process; files and indexes a task opens must be at the same absolute path
on every node (a shared folder). A task whose worker dies is run again (``max_retries``); results come back in
the order of the inputs, so what a job produces is the same as in one process.

A job given a :class:`TaskResults` folder keeps each finished task's result there as it arrives: run again
after an interruption (Ctrl+C, a lost driver), it does only the tasks it had not finished. On Ray, a job keeps
:data:`TASKS_PER_CPU` tasks per CPU submitted at a time, so that after a failure or an interruption it starts no
more and leaves the few running to finish, uncancelled.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import pickle
import re
import shutil
from pathlib import Path
from typing import Any, Callable, Generic, Protocol, Sequence, TypeVar

from citesum.errors import CitesumError, MissingExtraError

Item = TypeVar("Item")
Result = TypeVar("Result")
Value = TypeVar("Value")
Shared_co = TypeVar("Shared_co", covariant=True)
log = logging.getLogger(__name__)
#: times a task is run again when its worker dies (a process killed, a node lost)
TASK_RETRIES = 3
#: tasks submitted and not done at a time, per CPU of the cluster: enough that no worker waits for the next
TASKS_PER_CPU = 2
#: progress(tasks done, tasks in all)
TaskProgress = Callable[[int, int], None]
#: on_result(input number, result), as each task finishes (in any order)
ResultSink = Callable[[int, Any], None]


class Shared(Protocol[Shared_co]):
    """A value every task of a job reads (vectors, texts), sent to each worker once rather than with each
    task: :meth:`BatchExecutor.share` makes one; a task calls ``get()``."""

    def get(self) -> Shared_co:
        ...


class BatchExecutor(Protocol):
    """Runs ``function`` over ``items``, results in input order; ``progress(done, total)`` and
    ``on_result(number, result)`` as tasks finish."""

    def map(self, function: Callable[[Item], Result], items: Sequence[Item], progress: TaskProgress | None = None,
            on_result: ResultSink | None = None) -> list[Result]:
        ...

    def share(self, value: Value) -> Shared[Value]:
        ...


class _Held(Generic[Value]):
    def __init__(self, value: Value) -> None:
        self._value = value

    def get(self) -> Value:
        return self._value


class InProcess:
    """The tasks one after the other in this process: what a job runs on without ``--ray``."""

    def map(self, function: Callable[[Item], Result], items: Sequence[Item], progress: TaskProgress | None = None,
            on_result: ResultSink | None = None) -> list[Result]:
        results = []
        for number, item in enumerate(items):
            results.append(function(item))
            if on_result:
                on_result(number, results[-1])
            if progress:
                progress(number + 1, len(items))
        return results

    def share(self, value: Value) -> Shared[Value]:
        return _Held(value)


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingExtraError("--ray", "ray", "ray") from exc
    return ray


class _InObjectStore(Generic[Value]):
    """A value put once in Ray's object store, read once per worker process: the tasks a worker runs share its
    copy (NumPy arrays are mapped from the store without a copy; other values are unpickled)."""

    def __init__(self, reference: Any) -> None:
        self._reference = reference

    def get(self) -> Value:
        key = self._reference.hex()  # each task unpickles a new reference object: its id is what stays
        if key not in _fetched:
            while len(_fetched) >= _FETCHED_VALUES:
                _fetched.pop(next(iter(_fetched)))  # the oldest: a worker outlives its jobs
            _fetched[key] = _ray().get(self._reference)
        return _fetched[key]  # type: ignore[no-any-return]


#: the shared values this worker process read, by object id (at most _FETCHED_VALUES, oldest dropped first)
_fetched: dict[str, Any] = {}
_FETCHED_VALUES = 4


#: Ray waits a fixed 30 s for a node it starts to register, and on a busy machine (two cores running a test suite)
#: it sometimes does not: "The current node timed out during startup". A second start is given the same wait.
_RAY_STARTUP_TIMEOUT = "timed out during startup"
_RAY_STARTS = 2


class RayExecutor:
    """Tasks on a Ray cluster (see the module docstring). ``address`` None: a Ray instance on this machine with
    ``num_cpus`` cores (default: all of them)."""

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None) -> None:
        ray = _ray()
        self._ray = ray
        self._started_here = not ray.is_initialized()
        if self._started_here:
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                       "configure_logging": False}
            if address is None:  # a new instance here, even when a cluster runs on this machine (ray start)
                address = "local"
                options["num_cpus"] = num_cpus or os.cpu_count() or 1
            for attempt in range(1, _RAY_STARTS + 1):
                try:
                    ray.init(address=address, **options)
                    break
                except (ConnectionError, RuntimeError, ValueError) as exc:
                    raise CitesumError(f"cannot start or join the Ray cluster at {address}: {exc}") from exc
                except Exception as exc:  # Ray's own wait for its node to start raises a bare Exception
                    if _RAY_STARTUP_TIMEOUT not in str(exc) or attempt == _RAY_STARTS:
                        raise CitesumError(f"cannot start or join the Ray cluster at {address}: {exc}") from exc
                    log.warning("Ray's node did not start in time (a busy machine?); starting it again")
                    ray.shutdown()
        self._task = ray.remote(max_retries=TASK_RETRIES)(_call)

    def share(self, value: Value) -> Shared[Value]:
        return _InObjectStore(self._ray.put(value))

    def map(self, function: Callable[[Item], Result], items: Sequence[Item], progress: TaskProgress | None = None,
            on_result: ResultSink | None = None) -> list[Result]:
        ray = self._ray
        # At most this many tasks submitted and not done: after an error or Ctrl+C no more are started, and the
        # few running are left to finish, uncancelled (their results dropped). Cancelling them raced a task that
        # was finishing and aborted this process: "Check failed: ... Tried to complete task that was not pending"
        # (Ray 2.60, in CI; ray-project/ray#54846).
        window = max(2, TASKS_PER_CPU * int(ray.cluster_resources().get("CPU", 1)))
        upcoming = iter(enumerate(items))
        pending: dict[Any, int] = {}
        results: list[Any] = [None] * len(items)
        done = 0
        try:
            while True:
                for number, item in itertools.islice(upcoming, window - len(pending)):
                    pending[self._task.remote(function, item)] = number
                if not pending:
                    break
                # the first task to finish (a second at most, so Ctrl+C is seen), then any others already done
                ready, others = ray.wait(list(pending), num_returns=1, timeout=1.0)
                if others:
                    ready += ray.wait(others, num_returns=len(others), timeout=0)[0]
                for reference in ready:
                    number = pending.pop(reference)
                    results[number] = ray.get(reference)
                    done += 1
                    if on_result:
                        on_result(number, results[number])
                    if progress:
                        progress(done, len(items))
        except BaseException as exc:
            cause = getattr(exc, "cause", None)  # a task's own error, which Ray wraps with the remote traceback
            if isinstance(exc, ray.exceptions.RayTaskError) and isinstance(cause, CitesumError):
                raise cause from None  # said as without Ray: one line naming what is wrong
            raise
        return results

    def shutdown(self) -> None:
        """Stop the Ray instance this executor started (one it joined is left running)."""
        if self._started_here:
            self._ray.shutdown()


def _call(function: Callable[[Item], Result], item: Item) -> Result:
    return function(item)


def settings_of(part: object) -> object:
    """What decides a part's output, for a job's key: its ``settings`` when it has them (summarizers, scorers,
    LLM backends: model, endpoints, prompt, lengths), else its name, else its type."""
    return getattr(part, "settings", None) or getattr(part, "name", None) or type(part).__qualname__


def job_key(kind: str, *parts: object) -> str:
    """A stable folder name for a job of ``kind`` from what determines its results (settings, inputs' hashes):
    ``<kind>-<digest>``."""
    digest = hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=10).hexdigest()
    return f"{_slug(kind)}-{digest}"


def _slug(kind: str) -> str:
    """``kind`` as the first part of its jobs' folder names."""
    return re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")


class TaskResults:
    """The results of one job's finished tasks, a file per task in ``folder/<job key>/``, so that the job run
    again after an interruption does only what is left (:func:`resumable_map`). ``job`` (:func:`job_key`) must
    name everything the results depend on: a job with other inputs finds none of them. Keeping a result is best
    effort: a folder that cannot be written costs the resumption, never the job. Results are pickled: the
    folder is the user's own, like the index beside it."""

    def __init__(self, folder: Path, job: str) -> None:
        self.root = Path(folder)
        self.folder = self.root / job
        self.kind = job.rsplit("-", 1)[0]

    def _file(self, task: str) -> Path:
        return self.folder / f"{task}.pickle"

    def load(self, task: str) -> tuple[bool, Any]:
        """(True, result) for a task finished by an earlier run; (False, None) otherwise, or when its file is
        unreadable (a run killed while writing it: the task is done again)."""
        try:
            with open(self._file(task), "rb") as handle:
                return True, pickle.load(handle)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError):
            return False, None

    def store(self, task: str, result: Any) -> None:
        staging = self._file(task).with_suffix(".tmp")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(staging, "wb") as handle:
                pickle.dump(result, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(staging, self._file(task))
        except OSError as exc:  # a full disk, or the folder removed meanwhile (a commit clears it)
            log.warning("could not keep the result of task %s in %s (%s): a rerun after an interruption will do it "
                        "again", task, self.folder, exc)

    def clear(self) -> None:
        """Forget this job's results and those of every earlier job of its kind (:func:`forget_jobs`)."""
        forget_jobs(self.root, self.kind)


def forget_jobs(folder: Path, kind: str) -> None:
    """Remove the results kept in ``folder`` by every job of ``kind`` (what they made is committed, or was made
    on other inputs: no rerun would take them), and ``folder`` when nothing else is left in it."""
    slug = _slug(kind)
    for results in Path(folder).glob(f"{slug}-*"):
        if results.name.rsplit("-", 1)[0] == slug:
            shutil.rmtree(results, ignore_errors=True)
    try:
        Path(folder).rmdir()
    except OSError:
        pass


def resumable_map(executor: BatchExecutor, function: Callable[[Item], Result], items: Sequence[Item],
                  results: TaskResults | None, progress: TaskProgress | None = None,
                  keys: Sequence[str] | None = None) -> tuple[list[Result], int]:
    """``executor.map(function, items)``, keeping each result in ``results`` as it arrives and taking the ones an
    earlier, interrupted run kept instead of running their tasks again; also returns how many were taken. A
    task's result is kept under its key (default: its position among ``items``)."""
    if results is None:
        return executor.map(function, items, progress), 0
    keys = list(keys) if keys is not None else [str(number) for number in range(len(items))]
    out: list[Any] = [None] * len(items)
    todo = []
    for number, key in enumerate(keys):
        found, result = results.load(key)
        if found:
            out[number] = result
        else:
            todo.append(number)
    resumed = len(items) - len(todo)

    def keep(position: int, result: Any) -> None:
        out[todo[position]] = result
        results.store(keys[todo[position]], result)

    executor.map(function, [items[number] for number in todo],
                 (lambda done, _: progress(resumed + done, len(items))) if progress else None, keep)
    return out, resumed
