"""Embarrassingly parallel batch work spread over a Ray cluster (extra ``ray``): parsing files, and chunking and
embedding documents, for ``citesum index --ray [ADDRESS]``.

``--ray`` alone starts a Ray instance on this machine with its cores; ``--ray-address auto`` joins the cluster
this machine belongs to (``ray start`` ran here); ``--ray-address ray://HOST:10001`` connects to a remote
cluster's client server. Every worker needs citesum (with the embedder's extra) installed: tasks import it by
name, and load the embedder once per worker process; the files to parse must be at the same absolute path on
every node (a shared folder), since workers open them. A task whose worker dies is run again (``max_retries``); results come back in
the order of the inputs, so what is committed is the same as a build in one process.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Protocol, Sequence, TypeVar

from citesum.errors import CitesumError, MissingExtraError

Item = TypeVar("Item")
Result = TypeVar("Result")
#: times a task is run again when its worker dies (a process killed, a node lost)
TASK_RETRIES = 3


class BatchExecutor(Protocol):
    """Runs ``function`` over ``items``, results in input order; ``progress(done, total)`` as tasks finish."""

    def map(self, function: Callable[[Item], Result], items: Sequence[Item],
            progress: Callable[[int, int], None] | None = None) -> list[Result]:
        ...


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingExtraError("--ray", "ray", "ray") from exc
    return ray


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
            try:
                ray.init(address=address, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise CitesumError(f"cannot start or join the Ray cluster at {address}: {exc}") from exc
        self._task = ray.remote(max_retries=TASK_RETRIES)(_call)

    @property
    def workers(self) -> int:
        return int(self._ray.cluster_resources().get("CPU", 1))

    def map(self, function: Callable[[Item], Result], items: Sequence[Item],
            progress: Callable[[int, int], None] | None = None) -> list[Result]:
        ray = self._ray
        pending = {self._task.remote(function, item): number for number, item in enumerate(items)}
        results: list[Any] = [None] * len(items)
        done = 0
        try:
            while pending:
                # every task finished within the second, in one call: waiting for one at a time asks about every
                # pending task each time, which grows with the square of their number
                ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=1.0)
                for reference in ready:
                    results[pending.pop(reference)] = ray.get(reference)
                    done += 1
                    if progress:
                        progress(done, len(items))
        except BaseException:
            for reference in pending:  # an error or Ctrl+C: the tasks not done yet are not left running
                ray.cancel(reference, force=True)
            raise
        return results

    def shutdown(self) -> None:
        """Stop the Ray instance this executor started (one it joined is left running)."""
        if self._started_here:
            self._ray.shutdown()


def _call(function: Callable[[Item], Result], item: Item) -> Result:
    return function(item)
