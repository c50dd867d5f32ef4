"""The web page and its files, served from the wheel (no CDN: the page works without internet)."""

from __future__ import annotations

from importlib import resources

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

#: the page's own files and their types
STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' blob:; "
               "form-action 'none'; frame-ancestors 'none'; base-uri 'none'")

router = APIRouter(include_in_schema=False)
_FILES = resources.files("citesum.service") / "static"


@router.get("/")
def page() -> Response:
    return Response((_FILES / "index.html").read_bytes(), media_type="text/html; charset=utf-8",
                    headers={"Content-Security-Policy": PAGE_POLICY, "Cache-Control": "no-cache"})


@router.get("/static/{name}")
def asset(name: str) -> Response:
    if name not in STATIC:
        raise HTTPException(404, f"no file '{name}'")
    return Response((_FILES / name).read_bytes(), media_type=STATIC[name], headers={"Cache-Control": "no-cache"})


@router.get("/favicon.ico")
def favicon() -> Response:
    return Response(status_code=204)  # no icon, and no 404 in the browser's console
