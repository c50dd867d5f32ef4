"""Turn files and folders into documents, reporting every file: ingested, or skipped with the reason.

Bad input never stops a run: each failure becomes a ``skipped`` line in the :class:`IngestReport`.

Example:
    >>> from citesum.ingest import ingest_paths
    >>> documents, report = ingest_paths(["docs/"], include=["*.md"])  # doctest: +SKIP
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import os
from dataclasses import replace
from pathlib import Path, PurePath
from typing import Iterable, Iterator, Sequence

from citesum.errors import IngestError, UnreadableError
from citesum.ingest.base import (GZIP_SUFFIX, FileReport, IngestOptions, IngestReport, file_bytes, gzipped_name,
                                  path_text, shown)
from citesum.ingest.formats import READERS, Reader, plain_text_name, read_plain
from citesum.parallel import BatchExecutor, InProcess
from citesum.types import Document

__all__ = ["FILE_KEY", "UPLOAD_KEY", "FileReport", "IngestOptions", "IngestReport", "SUPPORTED_EXTENSIONS", "ingest_paths",
           "reader_for",
           "ingest_file", "unread_format", "is_missing", "iter_documents", "path_text", "shown"]

#: (a gzip file of any of them is read too)
SUPPORTED_EXTENSIONS = tuple(sorted([*READERS, GZIP_SUFFIX]))
#: the metadata field holding the path, relative to the folder given, of the file a document came from
FILE_KEY = "file"
#: the metadata field of a document uploaded through the service: the name its file is kept under
UPLOAD_KEY = "upload"


def reader_for(name: str) -> Reader | None:
    """The reader of a file of this name: by its extension, or as plain text for a name without one (README,
    NEWS.Debian), a gzip file's by the name of the file it holds ("FAQ.gz", "manual.pdf.gz"); None for a format
    not read."""
    inner = gzipped_name(name)
    if inner is not None:
        return reader_for(inner)
    suffix = PurePath(name).suffix.lower()
    return READERS.get(suffix) or (read_plain if plain_text_name(name) else None)


def unread_format(name: str) -> str:
    """How to name the format of a file of this name that is not read: its extension (".png"; ".tar.gz" for a
    gzip file), or its name when it has none."""
    suffix = "".join(PurePath(name).suffixes[-2:]) if gzipped_name(name) else PurePath(name).suffix
    return suffix or name


def ingest_file(path: Path, doc_id: str, options: IngestOptions) -> tuple[list[Document], FileReport]:
    """Read one file; never raises for bad content, the report says what went wrong."""
    shown_path = path_text(path)
    reader = reader_for(path.name)
    held = PurePath(gzipped_name(path.name) or path.name)  # the name of the file a gzip file holds
    if reader is None:
        return [], FileReport(shown_path, "skipped", reason=f"unsupported format '{unread_format(path.name)}'",
                              document_id=doc_id)
    fmt = "txt" if reader is read_plain else held.suffix.lower().lstrip(".")

    def skipped(reason: str, unreadable: bool) -> tuple[list[Document], FileReport]:
        return [], FileReport(shown_path, "skipped", reason=reason, format=fmt, document_id=doc_id,
                              unreadable=unreadable)

    try:
        size = path.stat().st_size
        if size == 0:
            return skipped("empty file (0 bytes)", unreadable=False)
        if size > options.max_bytes:
            return skipped(f"file is {size:,} bytes, over the {options.max_bytes:,}-byte limit (--max-bytes)",
                           unreadable=True)
        data = file_bytes(path, options.max_bytes)
        # a reader knows a format by its file's name: a gzip file's is the one of the file it holds
        documents, problems = reader(data, doc_id, path.with_name(held.name), options)
    except UnreadableError as exc:
        return skipped(str(exc), unreadable=True)
    except IngestError as exc:
        return skipped(str(exc), unreadable=False)
    except PermissionError:
        return skipped("permission denied", unreadable=True)
    except OSError as exc:
        return skipped(f"cannot read ({exc.strerror or exc})", unreadable=True)
    except RecursionError:
        return skipped("content nested too deeply to parse", unreadable=False)
    except Exception as exc:  # a reader's own fault on an odd file: that file is reported, the run goes on (the
        # error's name only: its message may name a path of the machine that read it)
        return skipped(f"citesum's {fmt} reader failed on it ({type(exc).__name__}); please report it with the file",
                       unreadable=True)
    reason = f"{len(problems)} part(s) left out: " + "; ".join(problems[:5]) if problems else ""
    # Each document knows its file: a record's id ("path#record") cannot say where the path ends.
    # (and its source is the file it came from: a gzip file's, not the name of the file it holds)
    documents = [replace(d, source=shown_path, metadata={**d.metadata, FILE_KEY: doc_id}) for d in documents]
    return documents, FileReport(shown_path, "ingested", documents=len(documents), reason=reason, format=fmt,
                                 document_id=doc_id)


def _matches(relative: str, patterns: Sequence[str]) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(name, p) for p in patterns)


def _walk(root: Path, report: IngestReport) -> Iterator[Path]:
    """Files under ``root`` in sorted order, following symlinks but never into a loop."""
    seen: set[tuple[int, int]] = set()

    def visit(directory: Path) -> Iterator[Path]:
        try:
            stat = directory.stat()
        except OSError as exc:
            reason = "symlink loop" if exc.errno == errno.ELOOP else f"cannot open folder ({exc.strerror})"
            report.files.append(FileReport(path_text(directory), "skipped", reason=reason, unreadable=True))
            return
        key = (stat.st_dev, stat.st_ino)
        if key in seen:
            report.files.append(FileReport(path_text(directory), "skipped", reason="symlink loop (folder already visited)"))
            return
        seen.add(key)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            reason = "permission denied" if isinstance(exc, PermissionError) else f"cannot list ({exc.strerror})"
            report.files.append(FileReport(path_text(directory), "skipped", reason=reason, unreadable=True))
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue  # hidden files and folders (.git, .DS_Store) are not documents
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
                is_file = entry.is_file(follow_symlinks=True)
            except OSError as exc:
                reason = "symlink loop" if exc.errno == errno.ELOOP else f"cannot stat ({exc.strerror})"
                report.files.append(FileReport(path_text(path), "skipped", reason=reason, unreadable=True))
                continue
            if is_dir:
                yield from visit(path)
            elif is_file:
                yield path
            elif entry.is_symlink():
                reason = "symlink loop" if _is_loop(path) else "broken symlink"
                report.files.append(FileReport(path_text(path), "skipped", reason=reason, unreadable=True))

    yield from visit(root)


def _is_loop(path: Path) -> bool:
    try:
        path.stat()
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def is_missing(path: str | Path) -> bool:
    """Nothing at ``path`` (a broken symlink is something: ingestion reports it as a broken symlink)."""
    return not (Path(path).exists() or Path(path).is_symlink())


#: files a worker parses in one task of a parallel ingestion
FILES_PER_TASK = 16


def _ingest_batch(options: IngestOptions, files: list[tuple[Path, str]]) -> list[tuple[list[Document], FileReport]]:
    """One task of a parallel ingestion: :func:`ingest_file` of each of ``files``."""
    return [ingest_file(path, relative, options) for path, relative in files]


def ingest_paths(
    paths: Iterable[str | Path],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    options: IngestOptions | None = None,
    executor: BatchExecutor | None = None,
) -> tuple[list[Document], IngestReport]:
    """Ingest files and folders (recursively). Globs match the path relative to the folder, or the file name.

    Document ids are paths relative to the folder given (the file name for a single file), so re-ingesting
    the same folder updates documents in place. With an ``executor`` (citesum.parallel), its workers parse the
    files, a batch at a time; the documents and the report are the same, in the same order.
    """
    report = IngestReport()
    documents = list(iter_documents(paths, report, include=include, exclude=exclude, options=options,
                                    executor=executor))
    return documents, report


#: tasks of FILES_PER_TASK files parsed at a time by an executor's workers: enough to keep a cluster busy, few
#: enough that the documents waiting to be indexed stay a small, fixed amount whatever the number of files
TASKS_PER_ROUND = 64


def iter_documents(
    paths: Iterable[str | Path],
    report: IngestReport,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    options: IngestOptions | None = None,
    executor: BatchExecutor | None = None,
) -> Iterator[Document]:
    """:func:`ingest_paths` as a stream: the documents as their files are parsed, each file's line added to
    ``report`` once its documents are yielded (the report is complete when the stream ends). A caller that
    indexes them as they come holds a round of files at a time, not the collection."""
    options = options or IngestOptions()
    # per path given: what walking it reported, then its files (the report keeps that order)
    given_paths: list[tuple[IngestReport, list[tuple[Path, str]]]] = []
    for given in paths:
        root = Path(given)
        walked = IngestReport()
        if root.is_dir():
            candidates = [(p, path_text(p.relative_to(root).as_posix())) for p in _walk(root, walked)]
        elif is_missing(root):
            walked.files.append(FileReport(path_text(root), "skipped", reason="no such file or folder"))
            candidates = []
        else:
            candidates = [(root, path_text(root.name))]
        given_paths.append((walked, [(path, relative) for path, relative in candidates
                                     if not (include and not _matches(relative, include))
                                     and not (exclude and _matches(relative, exclude))]))
    files = [file for _, files_of_path in given_paths for file in files_of_path]
    batches = [files[start : start + FILES_PER_TASK] for start in range(0, len(files), FILES_PER_TASK)]
    round_size = 1 if executor is None else TASKS_PER_ROUND
    parse = functools.partial(_ingest_batch, options)
    parsed = (one for start in range(0, len(batches), round_size)
              for batch in (executor or InProcess()).map(parse, batches[start : start + round_size])
              for one in batch)
    ids: dict[str, str] = {}
    for walked, files_of_path in given_paths:
        report.files.extend(walked.files)
        for path, relative in files_of_path:
            found, file_report = next(parsed)
            clashes = [d.id for d in found if d.id in ids]
            if clashes:
                file_report = FileReport(
                    path_text(path), "skipped",
                    reason=f"document id '{clashes[0]}' already taken by {ids[clashes[0]]}", document_id=relative,
                )
                found = []
            for document in found:
                ids[document.id] = path_text(path)
            yield from found
            report.files.append(file_report)
