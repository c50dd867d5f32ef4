"""Writing: uploads and deletions, each a job of the one writer; and the jobs' reports."""

from __future__ import annotations

import shutil
import unicodedata
import uuid
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from citesum.errors import IndexStoreError
from citesum.ingest import SUPPORTED_EXTENSIONS, IngestOptions, reader_for, shown, unread_format
from citesum.service import reader as read_work
from citesum.service.jobs import STAGING
from citesum.service.routes.common import CollectionName, Running, SafeJSONResponse, collection_for, principal_of

router = APIRouter()


def upload_name(filename: str | None) -> str:
    """The name an uploaded file is kept under: its last path component, NFC-normalised; refused when it is
    empty, hidden, holds control or bidi-format characters, or is too long. Raises ValueError."""
    name = unicodedata.normalize("NFC", filename or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or name in (".", ".."):
        raise ValueError("a file without a name")
    if name.startswith("."):
        raise ValueError(f"'{name}': hidden files are not accepted")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn") for c in name):
        raise ValueError(f"{name!r}: control or invisible formatting characters in the name")
    if len(name.encode("utf-8")) > 200:
        raise ValueError(f"'{name[:40]}...': a name of over 200 bytes")
    return name


def _checked_names(files: list[Any]) -> tuple[list[tuple[str, Any]], list[dict[str, str]]]:
    """Each file accepted or refused on its own: ((name it is kept under, file) of those accepted, {name,
    reason} of those refused: a name refused, a format not read, a name twice). 400 without any file."""
    if not files:
        raise HTTPException(400, "no file in the upload (send them in the multipart field 'files')")
    accepted: list[tuple[str, Any]] = []
    refused: list[dict[str, str]] = []
    for file in files:
        try:
            name = upload_name(file.filename)
        except ValueError as exc:
            refused.append({"path": shown(file.filename or ""), "reason": f"file name refused: {exc}"})
            continue
        if reader_for(name) is None:
            refused.append({"path": name, "reason": f"not a supported format ('{unread_format(name)}')"})
        elif any(name == kept for kept, _ in accepted):
            refused.append({"path": name, "reason": "the same file name twice in one upload"})
        else:
            accepted.append((name, file))
    return accepted, refused


def _saved(staging: Path, accepted: list[tuple[str, Any]]) -> list[tuple[str, Path]]:
    """The files written into ``staging`` under their names: (name, path)."""
    staging.mkdir(parents=True)
    saved = []
    for name, file in accepted:
        file.file.seek(0)
        with open(staging / name, "wb") as out:
            shutil.copyfileobj(file.file, out, 1 << 20)
        saved.append((name, staging / name))
    return saved


@router.post("/documents", status_code=202, summary="Upload files; they are indexed by a background job")
async def upload(request: Request, service: Running, collection: str | None = CollectionName) -> Response:
    target = collection_for(service, request, collection, write=True)
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise HTTPException(415, "upload files as multipart/form-data (field 'files')")
    config, jobs = service.config, target.jobs
    form = await request.form(max_files=config.max_upload_files, max_fields=10)
    staging = target.uploads_dir / STAGING / uuid.uuid4().hex
    try:
        files = [f for f in form.getlist("files") if not isinstance(f, str)]
        accepted, refused = _checked_names(files)
        if not accepted:  # nothing to index: every file's reason, and no job
            unsupported = all(r["reason"].startswith("not a supported format") for r in refused)
            raise HTTPException(415 if unsupported else 400, {
                "message": "no file of this upload can be indexed; supported: " + ", ".join(SUPPORTED_EXTENSIONS),
                "refused": refused})
        staged = await run_in_threadpool(_saved, staging, accepted)
        job = jobs.submit("upload", jobs.upload(staged, IngestOptions(max_bytes=config.max_upload_bytes),
                                                refused=refused))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # refused, failed to save, or no room in the queue
        raise
    finally:
        await form.close()
    return SafeJSONResponse({"job": job.id, "status": f"/jobs/{job.id}", "collection": target.name,
                             "files": [n for n, _ in accepted], "refused": refused}, status_code=202,
                            headers={"Location": f"/jobs/{job.id}"})


@router.get("/jobs/{job_id}", summary="Progress and per-file report of an upload or delete job")
async def job_status(job_id: str, request: Request, service: Running) -> Response:
    # a job of a collection the token does not hold is as unknown as one that never was
    for collection in service.held(principal_of(request)):
        job = collection.jobs.get(job_id)
        if job is not None:
            return SafeJSONResponse(service.hide.json({**job.to_json(), "collection": collection.name}))
    raise HTTPException(404, f"no job '{job_id}' (jobs are kept while the service runs)")


@router.delete("/documents/{document_id:path}", summary="Delete a document (waits for the commit)")
async def delete(document_id: str, request: Request, service: Running,
                 collection: str | None = CollectionName) -> Response:
    target = collection_for(service, request, collection, write=True)
    if not await service.searches.run(target.name, read_work.exists, document_id):
        raise HTTPException(404, f"no document '{document_id}' in the index")
    jobs = target.jobs
    job = jobs.submit("delete", jobs.delete(document_id))
    if not await run_in_threadpool(jobs.wait, job, service.config.timeout_s):
        return SafeJSONResponse({"job": job.id, "status": f"/jobs/{job.id}", "state": job.state}, status_code=202)
    if job.state == "failed":
        raise IndexStoreError(job.error or "the deletion failed")
    return SafeJSONResponse({"deleted": document_id, "generation": job.generation, "job": job.id})
