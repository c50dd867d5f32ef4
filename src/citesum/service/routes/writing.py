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
from citesum.ingest import SUPPORTED_EXTENSIONS, IngestOptions
from citesum.service import reader as read_work
from citesum.service.jobs import STAGING
from citesum.service.routes.common import Running, SafeJSONResponse

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


def _checked_names(files: list[Any]) -> list[str]:
    """The names the files are kept under; 400 or 415 for a name refused, a format not read, a name twice."""
    if not files:
        raise HTTPException(400, "no file in the upload (send them in the multipart field 'files')")
    names = []
    for file in files:
        try:
            name = upload_name(file.filename)
        except ValueError as exc:
            raise HTTPException(400, f"file name refused: {exc}") from None
        if Path(name).suffix.lower() not in SUPPORTED_EXTENSIONS:
            raise HTTPException(415, f"'{name}': not a supported format; send one of "
                                     f"{', '.join(SUPPORTED_EXTENSIONS)}")
        names.append(name)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise HTTPException(400, f"the same file name twice in one upload: {', '.join(repeated)}")
    return names


def _saved(staging: Path, names: list[str], files: list[Any]) -> list[tuple[str, Path]]:
    """The files written into ``staging`` under their names: (name, path)."""
    staging.mkdir(parents=True)
    saved = []
    for name, file in zip(names, files):
        file.file.seek(0)
        with open(staging / name, "wb") as out:
            shutil.copyfileobj(file.file, out, 1 << 20)
        saved.append((name, staging / name))
    return saved


@router.post("/documents", status_code=202, summary="Upload files; they are indexed by a background job")
async def upload(request: Request, service: Running) -> Response:
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise HTTPException(415, "upload files as multipart/form-data (field 'files')")
    config, jobs = service.config, service.jobs
    form = await request.form(max_files=config.max_upload_files, max_fields=10)
    staging = service.uploads_dir / STAGING / uuid.uuid4().hex
    try:
        files = [f for f in form.getlist("files") if not isinstance(f, str)]
        names = _checked_names(files)
        staged = await run_in_threadpool(_saved, staging, names, files)
        job = jobs.submit("upload", jobs.upload(staged, IngestOptions(max_bytes=config.max_upload_bytes)))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # refused, failed to save, or no room in the queue
        raise
    finally:
        await form.close()
    return SafeJSONResponse({"job": job.id, "status": f"/jobs/{job.id}", "files": names}, status_code=202,
                            headers={"Location": f"/jobs/{job.id}"})


@router.get("/jobs/{job_id}", summary="Progress and per-file report of an upload or delete job")
async def job_status(job_id: str, service: Running) -> Response:
    job = service.jobs.get(job_id)
    if job is None:
        raise HTTPException(404, f"no job '{job_id}' (jobs are kept while the service runs)")
    return SafeJSONResponse(service.hide.json(job.to_json()))


@router.delete("/documents/{document_id:path}", summary="Delete a document (waits for the commit)")
async def delete(document_id: str, service: Running) -> Response:
    if not await service.searches.run(read_work.exists, document_id):
        raise HTTPException(404, f"no document '{document_id}' in the index")
    jobs = service.jobs
    job = jobs.submit("delete", jobs.delete(document_id))
    if not await run_in_threadpool(jobs.wait, job, service.config.timeout_s):
        return SafeJSONResponse({"job": job.id, "status": f"/jobs/{job.id}", "state": job.state}, status_code=202)
    if job.state == "failed":
        raise IndexStoreError(job.error or "the deletion failed")
    return SafeJSONResponse({"deleted": document_id, "generation": job.generation, "job": job.id})
