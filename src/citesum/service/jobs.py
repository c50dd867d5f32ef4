"""Index updates from the service: one writer thread takes upload and delete jobs in order.

An upload answers at once with a job id; the files (already saved under the uploads folder's ``.staging``)
are read, chunked and embedded here, and committed as one new generation of the index: readers see the new
documents from the next request after the commit, and never half of them. A job that finds the index locked
by another writer (``citesum index`` in another process) waits for it, up to a limit.
"""

from __future__ import annotations

import logging
import os
import queue
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

from citesum.errors import CitesumError, IndexLockedError
from citesum.index.store import Index
from citesum.ingest import UPLOAD_KEY, IngestOptions, ingest_file
from citesum.service.errors import Overloaded, storage_fault
from citesum.types import Document

log = logging.getLogger(__name__)

#: uploaded documents get ids under this prefix, the name of the folder their files are kept in
UPLOAD_PREFIX = "uploads/"

STAGING = ".staging"
State = Literal["queued", "running", "committed", "failed"]


@dataclass
class Job:
    id: str
    kind: Literal["upload", "delete"]
    state: State = "queued"
    stage: str = "queued"
    done: int = 0
    total: int = 0
    created: float = field(default_factory=time.time)
    finished: float | None = None
    #: per file: the ingestion report (name, status, documents, reason, format)
    files: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, int] | None = None
    generation: int | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "state": self.state,
                "progress": {"stage": self.stage, "done": self.done, "total": self.total},
                "created": self.created, "finished": self.finished, "files": [dict(f) for f in self.files],
                "stats": self.stats, "generation": self.generation, "error": self.error}

    def progress(self, stage: str, done: int, total: int) -> None:
        self.stage, self.done, self.total = stage, done, total


Work = Callable[[Job], None]


class JobQueue:
    """Runs jobs one at a time on a writer thread; keeps the latest ``keep`` jobs for ``GET /jobs/{id}``."""

    def __init__(self, index: Index, uploads_dir: Path, *, max_pending: int, lock_wait_s: float,
                 keep: int = 256) -> None:
        self.index = index
        self.uploads_dir = uploads_dir
        self.lock_wait_s = lock_wait_s
        self._keep = keep
        self._pending: queue.Queue[tuple[Job, Work]] = queue.Queue(maxsize=max_pending)
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._done: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._sweep_staging()
        self._thread = threading.Thread(target=self._run, name="citesum-writer", daemon=True)
        self._thread.start()

    def _sweep_staging(self) -> None:
        """Remove what uploads of an earlier run left staged: their jobs ended with that run."""
        staging = self.uploads_dir / STAGING
        if staging.is_dir():
            for leftover in staging.iterdir():
                log.warning("removing %s, staged by an upload whose job did not run", leftover)
                shutil.rmtree(leftover, ignore_errors=True)

    def close(self, timeout: float) -> None:
        """Let the job being run finish (up to ``timeout`` seconds); the queued ones do not run, and their
        staged files are removed (by this call or, if it is cut short, by the next start)."""
        with self._lock:
            while True:
                try:
                    job, _ = self._pending.get_nowait()
                except queue.Empty:
                    break
                job.state, job.error, job.finished = "failed", "the service stopped before this job ran", time.time()
                self._done[job.id].set()
        self._pending.put((None, None))  # type: ignore[arg-type]  # ends the writer thread
        self._thread.join(timeout)
        self._sweep_staging()

    @property
    def pending(self) -> int:
        return self._pending.qsize()

    def submit(self, kind: Literal["upload", "delete"], work: Work) -> Job:
        job = Job(uuid.uuid4().hex, kind)
        with self._lock:
            try:
                self._pending.put_nowait((job, work))
            except queue.Full:
                raise Overloaded(5, "index updates") from None
            self._jobs[job.id] = job
            self._done[job.id] = threading.Event()
            while len(self._jobs) > self._keep:  # forget the oldest finished job
                oldest = next((j for j in self._jobs.values() if j.finished is not None), None)
                if oldest is None:
                    break
                del self._jobs[oldest.id], self._done[oldest.id]
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def wait(self, job: Job, timeout: float) -> bool:
        event = self._done.get(job.id)
        return event is None or event.wait(timeout)

    def _run(self) -> None:
        while True:
            job, work = self._pending.get()
            if job is None:
                return
            job.state = "running"
            try:
                work(job)
                job.state = "committed"
            except CitesumError as exc:
                job.state, job.error = "failed", str(exc)
            except Exception as exc:  # a storage fault, or a bug: it fails its job, never the writer thread
                fault = storage_fault(exc)  # the uploads folder cannot be written: full, read-only
                if fault is not None:
                    log.warning("job %s failed: %s", job.id, exc)
                    job.state, job.error = "failed", fault
                else:
                    log.exception("job %s failed", job.id)
                    job.state, job.error = "failed", f"internal error ({type(exc).__name__}: {exc})"
            job.finished = time.time()
            job.stage = job.state
            self._done[job.id].set()

    def _locked_retry(self, job: Job, write: Callable[[], Any]) -> Any:
        """``write()``, retried while another process holds the index's write lock (up to ``lock_wait_s``)."""
        deadline = time.monotonic() + self.lock_wait_s
        while True:
            try:
                return write()
            except IndexLockedError:
                if time.monotonic() >= deadline:
                    raise
                job.progress("waiting for another writer to finish", 0, 0)
                time.sleep(0.5)

    # ---- the two kinds of work -------------------------------------------------------------------------
    def upload(self, staged: list[tuple[str, Path]], options: IngestOptions,
               refused: Sequence[dict[str, str]] = ()) -> Callable[[Job], None]:
        """The work of an upload job: ``staged`` holds (sanitised name, file in the staging folder); the files of
        the upload ``refused`` before it (their names and reasons) head its report."""

        def work(job: Job) -> None:
            job.files.extend({**r, "status": "refused", "documents": 0} for r in refused)
            documents: list[Document] = []
            try:
                for number, (name, path) in enumerate(staged, start=1):
                    job.progress("reading files", number - 1, len(staged))
                    found, report = ingest_file(path, UPLOAD_PREFIX + name, options)
                    kept = self.uploads_dir / name
                    documents += [replace(d, source=str(kept), metadata={**d.metadata, UPLOAD_KEY: name})
                                  for d in found]
                    job.files.append({**asdict(report), "path": name})
                job.progress("reading files", len(staged), len(staged))
                if not documents:
                    raise CitesumError("no file of this upload gave any text (see the report of each file)")
                self._refuse_replacing_indexed_files(documents)
                stats = self._locked_retry(job, lambda: self.index.update(upsert=documents, progress=job.progress))
                job.stats = {k: v for k, v in stats.__dict__.items() if k != "generation"}
                job.generation = stats.generation
                ingested = {f["path"] for f in job.files if f["status"] == "ingested"}
                for name, path in staged:  # keep the originals beside the index, where their ids say
                    if name in ingested:
                        os.replace(path, self.uploads_dir / name)
            finally:
                if staged:
                    shutil.rmtree(staged[0][1].parent, ignore_errors=True)

        return work

    def _refuse_replacing_indexed_files(self, documents: list[Document]) -> None:
        """An upload replaces an earlier upload of the same name, never a document indexed from a folder that
        happens to have the same id (``uploads/x.txt`` of a folder with an ``uploads`` subfolder)."""
        existing = self.index.documents_by_id([d.id for d in documents])
        taken = [d.id for d in existing if UPLOAD_KEY not in d.metadata]
        if taken:
            raise CitesumError(f"the index already holds '{taken[0]}', which was not uploaded: an upload does not "
                               "replace it; rename the file")

    def delete(self, document_id: str) -> Callable[[Job], None]:
        def work(job: Job) -> None:
            job.progress("deleting", 0, 1)
            found = self.index.documents_by_id([document_id])
            name = found[0].metadata.get(UPLOAD_KEY) if found else None
            stats = self._locked_retry(job, lambda: self.index.delete([document_id]))
            job.stats = {"deleted": stats.deleted}
            job.generation = stats.generation
            if isinstance(name, str) and not self._documents_of_upload(name):
                (self.uploads_dir / name).unlink(missing_ok=True)  # the upload's last document is gone
            job.progress("deleting", 1, 1)

        return work

    def _documents_of_upload(self, name: str) -> list[str]:
        """The ids of the documents the uploaded file ``name`` gave (a JSON Lines file or a workbook gives
        several: ``uploads/NAME#record``)."""
        base = UPLOAD_PREFIX + name
        return [i for i in self.index.document_ids(prefix=base) if i == base or i.startswith(base + "#")]
