"""What one running service holds: its settings, its collections (each an index with its writer's job queue and
uploads folder), who may use which (:mod:`citesum.service.access`), the summarizer's model, the two lanes of
read workers the collections share, and what it says to clients. Built once by
:func:`citesum.service.app.create_app` and kept in ``app.state``; the routes reach it through
:func:`citesum.service.routes.common.service_of`."""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from citesum.errors import BudgetError, ConfigError
from citesum.index.store import Index
from citesum.llm.base import LLM
from citesum.service.access import Access, Principal
from citesum.service.config import ServiceConfig
from citesum.service.errors import PathHider
from citesum.service.jobs import JobQueue
from citesum.service.pool import ReadPool
from citesum.service.reader import ModelPace, Reader, Readers

#: how much lower the summary workers' CPU priority is than the search workers' (Unix niceness)
SUMMARY_NICENESS = 10


class IntegrityCheck:
    """SQLite's quick_check of the index, re-run at most every ``every_s`` seconds (it reads every page), by one
    caller at a time; the others get the last result."""

    def __init__(self, index: Index, every_s: float) -> None:
        self.index = index
        self.every_s = every_s
        self._lock = threading.Lock()
        self._checked: float | None = None
        self._problems: list[str] = []

    def problems(self) -> list[str]:
        if self._lock.acquire(blocking=False):
            try:
                if self._checked is None or time.monotonic() - self._checked >= self.every_s:
                    self._problems = self.index.integrity_problems()
                    self._checked = time.monotonic()
            finally:
                self._lock.release()
        return list(self._problems)


log = logging.getLogger("citesum.service")
#: a collection's name: what a URL and a JSON field carry
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def collection_sources(indexes: str | Path | Mapping[str, str | Path]) -> dict[str, Path]:
    """The collections to serve, by name: one index folder (named by its folder's name) or several by name
    (``citesum serve --index NAME=DIR`` repeated). ConfigError for a name a URL could not carry."""
    if isinstance(indexes, (str, Path)):
        path = Path(indexes)
        name = path.resolve().name
        return {name if _NAME.match(name) else "index": path}
    if not indexes:
        raise ConfigError("no index to serve")
    for name in indexes:
        if not _NAME.match(name):
            raise ConfigError(f"collection name {name!r}: use letters, digits, '.', '_' and '-' (at most 64, "
                              "starting with a letter or digit)")
    named: dict[Path, str] = {}
    for name, path in indexes.items():  # two names of one folder: two writers, and a token of one reads both
        other = named.setdefault(Path(path).resolve(), name)
        if other != name:
            raise ConfigError(f"the collections '{other}' and '{name}' are one index folder: serve it once")
    return {name: Path(path) for name, path in indexes.items()}


@dataclass
class Collection:
    """One served index with its writer's job queue and uploads folder."""

    name: str
    index: Index
    jobs: JobQueue
    uploads_dir: Path
    integrity: IntegrityCheck


@dataclass
class Service:
    config: ServiceConfig
    #: the served indexes by name, in the order given (a request's default: the first its token holds)
    collections: dict[str, Collection]
    access: Access
    #: the model writing summaries; None: the offline extractive summarizer
    llm: LLM | None
    readers: Readers
    #: the two lanes, shared by the collections: summaries take far longer than searches, which never wait
    #: behind them
    searches: ReadPool
    summaries: ReadPool
    #: what clients are told has no server path in it
    hide: PathHider

    @classmethod
    def open(cls, indexes: str | Path | Mapping[str, str | Path], config: ServiceConfig,
             llm: LLM | None) -> "Service":
        sources = collection_sources(indexes)
        if config.summary_index is not None and len(sources) > 1:
            raise ConfigError("--summary-index is the summary index of one index: serve it with one --index")
        access = Access(config.token, config.tokens_file, list(sources))
        collections = {}
        for name, path in sources.items():
            index = Index.open(path)
            uploads = Path(config.uploads_dir) / name if config.uploads_dir and len(sources) > 1 else \
                Path(config.uploads_dir or index.path / "uploads")
            jobs = JobQueue(index, uploads, max_pending=config.max_pending_jobs, lock_wait_s=config.lock_wait_s)
            collections[name] = Collection(name, index, jobs, uploads, IntegrityCheck(index, config.integrity_every_s))
        first = next(iter(collections))
        readers = Readers({name: c.index for name, c in collections.items()}, llm, config.default_budget,
                          ModelPace(config.llm_timeout_s) if llm else None,
                          {first: str(config.summary_index)} if config.summary_index else None,
                          config.relevance_embedder)
        searches = ReadPool(readers, config.search_workers, config.queue, config.timeout_s, config.worker_kind)
        # the summary workers also yield the CPU to the search workers (a higher niceness)
        summaries = ReadPool(readers, config.workers, config.queue,
                             config.llm_timeout_s if llm else config.timeout_s, config.worker_kind,
                             niceness=SUMMARY_NICENESS)
        hide = PathHider(*[(c.index.path, c.uploads_dir) for c in collections.values()])
        return cls(config, collections, access, llm, readers, searches, summaries, hide)

    @property
    def default(self) -> Collection:
        return next(iter(self.collections.values()))

    @property
    def reader(self) -> Reader:
        """The first collection's reader (its budget is every collection's: the model's)."""
        return self.readers.reader(self.default.name)

    def held(self, principal: Principal) -> list[Collection]:
        """The collections ``principal`` may see, in the service's order."""
        return [c for name, c in self.collections.items() if principal.holds(name)]

    def close(self, stop_s: float) -> None:
        """Stop the writers (letting the jobs in hand finish, within ``stop_s`` in all) and merge each index's
        log, so that a copy of a folder (to read-only media, say) opens as it is. One collection's failure does
        not keep the others from closing."""
        deadline = time.monotonic() + stop_s
        for collection in self.collections.values():
            collection.jobs.close(max(0.0, deadline - time.monotonic()))
        for collection in self.collections.values():
            try:
                collection.index.merge_log()
            except Exception:  # noqa: BLE001 (the next start merges it; the others still close)
                log.exception("could not merge the log of the collection '%s'", collection.name)

    @property
    def summarizer_name(self) -> str:
        return "extractive" if self.llm is None else self.hide(f"llm:{self.llm.name}")  # a model's file: its name

    def budgets(self) -> tuple[int, int]:
        """(the budget of a request that asks none, the largest a request can use): the service's, or less where
        the model's window holds less beside a short question's prompt and the answer (a request's own budget
        is fitted to its own prompt, and its answer says so)."""
        default, largest = self.reader.budget(), self.config.max_budget
        if self.llm is None:
            return default, largest
        from citesum.pipeline import Pipeline, PipelineOptions

        pipeline = Pipeline(self.default.index, PipelineOptions(summarizer="llm"), llm=self.llm)
        try:
            return pipeline.budget_for("", default), pipeline.budget_for("", largest)
        except BudgetError:  # the window cannot hold the prompt and the answer: each summary says so
            return default, largest

    def offers(self, collection: Collection) -> dict[str, Any]:
        """What a request on ``collection`` may ask for: the retrievers (``lightpal`` once ``citesum graph`` has
        built the index's passage graph, ``raptor`` once ``citesum tree`` has built its tree, ``promptrank`` with
        the ``llamacpp`` extra installed), the summarizers
        (``llm`` with a model), Summary RAG (with a summary index), and the embedder that extractive summaries
        score their first candidates with again (None: wordllama alone)."""
        from citesum.pipeline import RAPTOR
        from citesum.raptor import TREE_FILE
        from citesum.retrieve import RETRIEVER_NAMES
        from citesum.retrieve.lightpal import GRAPH_FILE

        from citesum.llm.llamacpp import in_process_model_installed

        built = {"lightpal": GRAPH_FILE, RAPTOR: TREE_FILE}  # the retrievers that read a file of their own
        # oracle ranks by a request's relevance judgments, which the API does not take; promptrank reads with the
        # packaged model in this process, which the llamacpp extra installs
        unable = {"oracle", *(() if in_process_model_installed() else ("promptrank",))}
        retrievers = [name for name in [*RETRIEVER_NAMES, RAPTOR]
                      if name not in unable and (name not in built or (collection.index.path / built[name]).exists())]
        return {"retrievers": retrievers,
                "summarizers": ["extractive", "readagent"] if self.llm is None else ["llm", "extractive", "readagent"],
                "summary_index": self.config.summary_index is not None,
                # a model given by its path ("st:/srv/models/e5") is named, its folder hidden
                "relevance_embedder": None if self.config.relevance_embedder is None
                else self.hide(self.config.relevance_embedder)}

    def model_status(self) -> dict[str, Any]:
        """The model's window and where it came from, its pace, and the budget that pace allows."""
        assert self.llm is not None and self.reader.pace is not None
        config, pace, budget = self.config, self.reader.pace.tokens_per_s, self.reader.budget()
        status: dict[str, Any] = {
            "window": self.llm.context_window, "window_source": self.hide(self.llm.context_window_source or ""),
            "time_limit_s": config.llm_timeout_s,
            # prompt tokens per second of its whole calls (their answers' writing included)
            "pace_tokens_per_s": None if pace is None else round(pace, 1),
            "tokens_per_citesum_token": self.llm.prompt_token_ratio}
        if budget < config.default_budget:
            status["budget_note"] = (f"the default budget is lowered from {config.default_budget:,} to {budget:,} "
                                     f"tokens: the model reads about {pace:,.0f} tokens a second, and a summary "
                                     f"must come within {config.llm_timeout_s:g} s")
        return status
