"""The HTTP service (FastAPI, extra ``service``): search and cited summaries over one index.

    citesum serve --index ./ix [--model M --base-url URL]     # then: POST /summarize {"query": "..."}

Endpoints: ``GET /health``, ``POST /search``, ``POST /summarize``. The summarizer is fixed when the service
starts (the offline extractive one, or an LLM given on the command line): a request can choose retriever,
budget, order and length, never a model URL, so the service cannot be pointed at another host by a request.
A citesum error (unknown retriever, budget too small...) is a 400 with ``{"detail": message}``; malformed
requests are 422. Requests are served one at a time against the index (two cores; the index object is not
shared across threads), and an update of the index by ``citesum index`` is seen by the next request.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from citesum.errors import CitesumError, MissingExtraError
from citesum.index.store import Index
from citesum.llm.base import LLM
from citesum.pack import PackOptions
from citesum.retrieve import get_retriever
from citesum.summarize import summarize_query

try:
    from fastapi import FastAPI, HTTPException
    from pydantic import BaseModel, Field
except ImportError as exc:  # the module is imported only by `citesum serve` and by users of the service
    raise MissingExtraError("the HTTP service", "service", "fastapi") from exc


class SearchRequest(BaseModel):
    query: str = Field(min_length=1, description="What to look for.")
    retriever: str = "hybrid"
    k: int = Field(10, ge=1, le=1000)
    documents: bool = Field(False, description="Rank documents instead of units.")


class SummarizeRequest(BaseModel):
    query: str = Field(min_length=1)
    retriever: str = "hybrid"
    budget: int = Field(15_000, ge=1, description="Context budget in tokens.")
    order: Literal["original", "score", "full"] = "original"
    bullets: int = Field(5, ge=1, le=50)
    words: int = Field(250, ge=1)


def create_app(index_path: str, *, llm: LLM | None = None) -> FastAPI:
    """The service over the index at ``index_path``; with ``llm``, summaries are written by it (citations
    repaired against the context), else by the offline extractive summarizer."""
    index = Index.open(index_path)
    lock = threading.Lock()
    app = FastAPI(title="citesum", summary="Query-focused summaries with citations")

    def guarded(work: Any) -> Any:
        with lock:
            try:
                return work()
            except CitesumError as exc:
                raise HTTPException(status_code=400, detail=str(exc)) from exc

    @app.get("/health")
    def health() -> dict[str, Any]:
        def work() -> dict[str, Any]:
            details = index.info()
            return {"status": "ok", "documents": details["documents"], "units": details["units"],
                    "summarizer": "extractive" if llm is None else f"llm:{llm.name}"}

        return guarded(work)

    @app.post("/search")
    def search(request: SearchRequest) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            ranker = get_retriever(request.retriever, index)
            if request.documents:
                return {"retriever": ranker.name, "documents": [
                    {"rank": rank, "document_id": doc_id, "score": score}
                    for rank, (doc_id, score) in enumerate(ranker.rank_documents(request.query, request.k), 1)]}
            return {"retriever": ranker.name, "hits": [
                {"rank": h.rank, "score": h.score, "document_id": h.document_id, "passage_id": h.passage.id,
                 "text": h.passage.text} for h in ranker.retrieve(request.query, request.k)]}

        return guarded(work)

    @app.post("/summarize")
    def summarize(request: SummarizeRequest) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            options = PackOptions(budget=request.budget, order=request.order)
            if llm is None:
                from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer

                engine: Any = ExtractiveSummarizer(ExtractiveOptions(bullets=request.bullets, max_words=request.words))
            else:
                from citesum.summarize.llm import LLMSummarizer

                engine = LLMSummarizer(llm, bullets=request.bullets, num_words=request.words)
            summary = summarize_query(request.query, index, engine, retriever=request.retriever, options=options)
            if llm is not None:  # as the CLI does for LLM answers: each bullet cites what supports it
                from citesum.summarize.verify import check_summary

                summary, _ = check_summary(summary, repair=True)
            sources = {d.id: d.source for d in index.documents_by_id([b.document_id for b in summary.context.blocks])}
            return {
                "summarizer": summary.summarizer,
                "bullets": [{"text": b.text, "citations": list(b.citations), "numbers": list(b.numbers)}
                            for b in summary.bullets],
                "sources": {str(b.number): {"document_id": b.document_id, "title": b.title,
                                            "source": sources.get(b.document_id, "")} for b in summary.context.blocks},
                "dropped_citations": list(summary.dropped_citations),
                "context_tokens": summary.context.token_count, "timings": dict(summary.timings),
            }

        return guarded(work)

    return app
