"""Files (or a dataset) into an index, as ``citesum index`` does: the one call the CLI and a script make.

Example:
    >>> from citesum.indexing import IndexingOptions, index_paths  # doctest: +SKIP
    >>> run = index_paths(["reports/"], "ix", IndexingOptions(sync=True))  # doctest: +SKIP
    >>> run.stats.added, [f.reason for f in run.report.skipped]  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from citesum.errors import CitesumError
from citesum.index.store import DB_NAME, Index, IndexSettings, ProgressFn, UpdateStats, discard_unwritten
from citesum.ingest import FILE_KEY, UPLOAD_KEY, IngestOptions, IngestReport, is_missing, iter_documents
from citesum.parallel import BatchExecutor
from citesum.types import Document


@dataclass(frozen=True)
class IndexingOptions:
    """How files are read and cut, and the index's settings when it is created (``unit``, ``chunk_tokens``,
    ``embedder``, ``store``, ``milvus_index`` are fixed then; an existing index refuses others)."""

    #: ``passage`` (sentence-aware passages) or ``document``; None: the index's, or passages for a new one
    unit: str | None = None
    chunk_tokens: int | None = None
    embedder: str | None = None
    #: read the paths as this dataset (see :data:`citesum.datasets.DATASETS`) instead of files
    dataset: str | None = None
    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    max_bytes: int | None = None
    json_id_field: str = "id"
    json_title_field: str = "title"
    json_text_field: str = "text"
    #: also delete the indexed documents no longer among the paths (never those uploaded through the service)
    sync: bool = False
    ann_min_units: int | None = None
    segment_units: int | None = None
    store: str | None = None
    milvus_index: str | None = None


@dataclass
class IndexingRun:
    """What one run did: the update's counts, every file read or skipped (with the reason), the documents kept
    as indexed because their file could not be read this time (with ``sync``), and how long it took."""

    stats: UpdateStats
    report: IngestReport
    kept_unread: list[str] = field(default_factory=list)
    seconds: float = 0.0


class NothingToIndex(CitesumError):
    """No file gave a document and there is no index yet: none is created (an empty one would hide that every
    file was skipped). ``report`` says why each was."""

    def __init__(self, message: str, report: IngestReport) -> None:
        super().__init__(message)
        self.report = report


def index_paths(paths: Sequence[str], index_dir: str | Path, options: IndexingOptions | None = None, *,
                executor: BatchExecutor | None = None, progress: ProgressFn | None = None) -> IndexingRun:
    """Read ``paths`` (files, folders, or a dataset) into the index at ``index_dir``, creating it when there is
    none. Unchanged documents are not read into the index again. A first build that fails leaves no index."""
    options = options or IndexingOptions()
    report = IngestReport()
    documents = _documents(paths, options, report, executor)
    index_dir = Path(index_dir)
    exists = (index_dir / DB_NAME).exists()
    index = _existing(index_dir, options) if exists else None
    first = next(documents, None)  # is there anything to index? (the first round of files is read)
    if first is None and index is None:
        raise NothingToIndex(f"nothing to index: {len(report.skipped)} file(s) skipped, none read; no index was "
                             f"created at {index_dir}", report)
    folder_made = not index_dir.exists()
    if index is None:
        settings = IndexSettings.for_unit(options.unit or "passage", options.chunk_tokens,  # type: ignore[arg-type]
                                          **({"embedder": options.embedder} if options.embedder else {}))
        index = Index.create(index_dir, settings, store=options.store,
                             store_options={"dense_index": options.milvus_index} if options.milvus_index else None)
    if options.ann_min_units is not None:  # the update writes the next generation with it
        index.set_ann_min_units(options.ann_min_units, rewrite=False)
    if options.segment_units is not None:
        index.set_segment_units(options.segment_units)
    run = IndexingRun(UpdateStats(), report)
    started = time.perf_counter()
    try:
        run.stats = index.update_from(itertools.chain([] if first is None else [first], documents),
                                      stale=_stale(index, report, run.kept_unread) if options.sync else None,
                                      progress=progress, executor=executor)
    except Exception as failed:
        if not exists and discard_unwritten(index_dir, folder_made=folder_made):
            failed.add_note(f"no index was created at {index_dir}")
        raise
    if options.ann_min_units is not None and not (run.stats.added or run.stats.updated or run.stats.deleted):
        index.set_ann_min_units(options.ann_min_units)  # nothing changed: the current generation gets its graph
    run.seconds = time.perf_counter() - started
    return run


def _documents(paths: Sequence[str], options: IndexingOptions, report: IngestReport,
               executor: BatchExecutor | None) -> Iterator[Document]:
    if options.dataset:
        from citesum.datasets import load_dataset

        # a list (a dataset is read whole): checked for repeated ids before anything is written
        return iter([d for path in paths for d in load_dataset(options.dataset, path).documents])
    missing = [path for path in paths if is_missing(path)]
    # A mistyped path must not cost the index its documents: with sync they would all count as deleted.
    if options.sync and missing:
        raise CitesumError(f"--sync with a path that does not exist ({', '.join(missing)}): its documents would be "
                           "deleted from the index; nothing was changed")
    if len(missing) == len(paths):
        raise CitesumError(f"no such file or folder: {', '.join(missing)}")
    ingest = IngestOptions(json_id_field=options.json_id_field, json_title_field=options.json_title_field,
                           json_text_field=options.json_text_field,
                           **({"max_bytes": options.max_bytes} if options.max_bytes else {}))
    # read as the index takes them (Index.update_from): a run holds a batch of documents, not every file's
    return iter_documents(paths, report, include=options.include, exclude=options.exclude, options=ingest,
                          executor=executor)


def _existing(index_dir: Path, options: IndexingOptions) -> Index:
    """The index at ``index_dir``, refused before any file is read when the options ask for other settings."""
    index = Index.open(index_dir, embedder=options.embedder)
    settings = index.settings
    if options.store:
        Index.create(index_dir, store=options.store)  # refuses another store than the index's
    if options.milvus_index:
        raise CitesumError(f"index at {index_dir} exists: --milvus-index is chosen when an index is created")
    if (options.unit and options.unit != settings.unit) or (options.chunk_tokens
                                                             and options.chunk_tokens != settings.max_tokens):
        raise CitesumError(f"index at {index_dir} uses unit={settings.unit}, chunk_tokens={settings.max_tokens}; "
                           "build a new index to change them")
    return index


def _stale(index: Index, report: IngestReport, kept: list[str]) -> Any:
    """With sync: the indexed documents no longer among the paths (asked once every file is read). A file that
    is still there but could not be read this time keeps what it gave before (its id goes to ``kept``);
    documents uploaded through the service are not under the paths and are kept (``citesum delete`` removes
    them)."""

    def stale(wanted: set[str]) -> list[str]:
        unread = {f.document_id for f in report.skipped if f.unreadable and f.document_id}
        gone = []
        for document_id, metadata in index.document_metadata():  # not their texts: every one would be read
            if document_id in wanted or UPLOAD_KEY in metadata:
                continue
            if from_file(document_id, metadata, unread):
                kept.append(document_id)
            else:
                gone.append(document_id)
        return gone

    return stale


def from_file(document_id: str, metadata: dict[str, Any], files: set[str]) -> bool:
    """Whether the document of ``document_id`` and ``metadata`` came from one of ``files`` (ids given to files by
    ingestion)."""
    recorded = metadata.get(FILE_KEY)
    if isinstance(recorded, str):
        return recorded in files
    return any(document_id == f or document_id.startswith(f + "#") for f in files)  # indexed before "file"
