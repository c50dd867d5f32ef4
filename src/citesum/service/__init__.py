"""The HTTP service and its web page (extra ``service``): search, cited summaries with evidence, uploads.

    citesum serve --index ./ix            # then open http://127.0.0.1:8000/

Python::

    from citesum.service import ServiceConfig, create_app
    app = create_app("ix", ServiceConfig(token="...", host="0.0.0.0"))   # any ASGI server runs it
"""

from __future__ import annotations

from typing import Any

from citesum.service.config import ServiceConfig

__all__ = ["ServiceConfig", "create_app"]


def __getattr__(name: str) -> Any:
    # create_app needs FastAPI (the 'service' extra); the configuration does not, so `citesum serve` can
    # refuse an unsafe start before the web stack is imported.
    if name == "create_app":
        from citesum.service.app import create_app

        return create_app
    raise AttributeError(f"module 'citesum.service' has no attribute '{name}'")
