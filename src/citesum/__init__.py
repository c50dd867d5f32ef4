"""citesum: retrieval-augmented, query-focused summarization with precise citations."""

from __future__ import annotations

from citesum.types import Document, Hit, Passage

__version__ = "0.1.0"
__all__ = ["Document", "Hit", "Passage", "__version__"]
