"""citesum: retrieval-augmented, query-focused summarization with precise citations.

A folder and a question in, a cited answer out::

    from citesum import Index, Pipeline, ingest_paths

    documents, report = ingest_paths(["reports/"])       # every file, read or refused with its reason
    index = Index.create("ix"); index.add(documents)      # Index.open("ix") later
    answer = Pipeline(index).summarize("What changed in the water rates?")
    for bullet in answer.bullets:
        print(bullet.text, [answer.documents[d].title for d in bullet.citations])

The names below are loaded when first used, so ``import citesum`` (and every ``citesum`` command's start) does
not load the index, the embedders or numpy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from citesum.types import Bullet, Context, Document, Hit, Passage, Summary

if TYPE_CHECKING:
    from citesum.index.store import Index, IndexSettings
    from citesum.ingest import IngestReport, ingest_paths
    from citesum.llm.options import LLMOptions
    from citesum.pipeline import Answer, Pipeline, PipelineOptions

__version__ = "0.1.0"

#: name -> the module that defines it
_LAZY = {
    "Index": "citesum.index.store",
    "IndexSettings": "citesum.index.store",
    "ingest_paths": "citesum.ingest",
    "IngestReport": "citesum.ingest",
    "Pipeline": "citesum.pipeline",
    "PipelineOptions": "citesum.pipeline",
    "Answer": "citesum.pipeline",
    "LLMOptions": "citesum.llm.options",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'citesum' has no attribute '{name}'")


__all__ = ["Answer", "Bullet", "Context", "Document", "Hit", "Index", "IndexSettings", "IngestReport", "LLMOptions",
           "Passage", "Pipeline", "PipelineOptions", "Summary", "__version__", "ingest_paths"]
