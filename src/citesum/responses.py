"""Answers as JSON-ready dicts, built once for every front end: ``citesum search|summarize --json`` and the
HTTP service return the same shapes from the same code.

Example:
    >>> with index.read() as view:  # doctest: +SKIP
    ...     payload = search_response(get_retriever("bm25", view), view, "water rates", k=5)
"""

from __future__ import annotations

import re
import time
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from citesum.ingest import FILE_KEY
from citesum.ingest.pdf import NOTE_PAGES, PAGE_LABELS, PAGE_STARTS, page_of

if TYPE_CHECKING:
    from citesum.index.store import IndexReader
    from citesum.retrieve.base import Retriever
    from citesum.summarize.verify import Evidence, VerifiedBullet
    from citesum.types import Bullet, Context, Document, Summary

#: how a front end names a document's origin (the CLI: the path as ingested; the service: a relative one)
SourceOf = Callable[["Document"], str]


def stored_source(document: Document) -> str:
    return document.source


def relative_source(document: Document) -> str:
    """The document's file relative to the folder that was indexed, never a server path. Ingestion records it
    (``file`` in the metadata); documents indexed before it did have ids that are that path (``path#record`` for
    the records of a file). Dataset documents keep their dataset label (``summhay:topic_news1.json``)."""
    recorded = document.metadata.get(FILE_KEY)
    if isinstance(recorded, str):
        return recorded
    source = document.source
    if ":" in source and "/" not in source.split(":", 1)[0] and not PurePosixPath(source).is_absolute():
        return source  # a dataset label, not a path
    return document.id.split("#", 1)[0]


def search_response(ranker: Retriever, view: IndexReader, query: str, k: int, *, documents: bool = False,
                    source_of: SourceOf = stored_source) -> dict[str, Any]:
    """The ``k`` best units (or documents, ranked by their best units) with their titles and sources. For a
    lexical retriever, what holds no term of the query is no result (not a hit of score 0)."""
    started = time.perf_counter()
    if documents:
        ranked = [(d, score) for d, score in ranker.rank_documents(query, k)
                  if score > 0 or not ranker.matches_only_positive]
        seconds = time.perf_counter() - started
        found = {d.id: d for d in view.documents_by_id([doc_id for doc_id, _ in ranked])}
        return {"query": query, "retriever": ranker.name, "seconds": round(seconds, 6), "documents": [
            {"rank": rank, "document_id": doc_id, "score": score, **_described(found.get(doc_id), source_of)}
            for rank, (doc_id, score) in enumerate(ranked, start=1)]}
    hits = [h for h in ranker.retrieve(query, k) if h.score > 0 or not ranker.matches_only_positive]
    seconds = time.perf_counter() - started
    found = {d.id: d for d in view.documents_by_id(list(dict.fromkeys(h.document_id for h in hits)))}
    return {"query": query, "retriever": ranker.name, "seconds": round(seconds, 6), "hits": [
        {"rank": h.rank, "score": h.score, "passage_id": h.passage.id, "document_id": h.document_id,
         **_described(found.get(h.document_id), source_of), "ordinal": h.passage.ordinal,
         "char_start": h.passage.char_start, "char_end": h.passage.char_end, "text": h.passage.text}
        for h in hits]}


def _described(document: Document | None, source_of: SourceOf) -> dict[str, str]:
    return {"title": document.title if document else "", "source": source_of(document) if document else ""}


def context_documents(context: Context, view: IndexReader) -> dict[str, Document]:
    """The documents of ``context`` by id, read from ``view`` (what :func:`summary_response` names)."""
    return {d.id: d for d in view.documents_by_id([b.document_id for b in context.blocks])}


def summary_response(summary: Summary, documents: Mapping[str, Document], *, query: str,
                     checks: Sequence[VerifiedBullet] = (), source_of: SourceOf = stored_source,
                     include_context: bool = True) -> dict[str, Any]:
    """A cited summary: bullets with their citations (document ids and context numbers) and, when ``checks``
    are given, the evidence span of each citation in its document; the numbered sources (``documents``: those
    of the context, by id, see :func:`context_documents`); what was dropped.

    ``include_context`` adds the context text, the prompt and the raw model output (for research use; a
    service leaves them out)."""
    found = dict(documents)
    bullets = [bullet_response(bullet, summary.context, found, checks[position] if checks else None)
               for position, bullet in enumerate(summary.bullets)]
    context = context_response(summary.context)
    payload: dict[str, Any] = {
        "query": query, "summarizer": summary.summarizer, "bullets": bullets, "abstained": summary.abstained,
        "leads": [lead_response(lead, found) for lead in summary.leads],
        "dropped_citations": list(summary.dropped_citations), "notes": list(summary.notes),
        "sources": sources_response(summary.context, found, source_of),
        "context": context, "usage": dict(summary.usage), "timings": dict(summary.timings),
    }
    if include_context:
        context["text"] = summary.context.render()
        payload.update(prompt=summary.prompt, raw_output=summary.raw_output)
        if checks:
            payload["verification"] = [verification_json(v) for v in checks]
    return payload


def bullet_response(bullet: Bullet, context: Context, documents: Mapping[str, Document],
                    checked: VerifiedBullet | None = None) -> dict[str, Any]:
    """One bullet: its text and citations (document ids and context numbers) and, when ``checked``, the evidence
    span of each citation in its document."""
    entry = _cited(bullet)
    if checked is not None:
        number_of = {document_id: number for number, document_id in context.numbers.items()}
        entry["evidence"] = _citation_evidence(bullet.citations, checked, number_of, documents)
    return entry


def lead_response(lead: Bullet, documents: Mapping[str, Document]) -> dict[str, Any]:
    """A lead (the closest sentence, when nothing answers): its text and citations, and where its sentence is in
    each cited document (``places``: its character offsets, and its page in a PDF), which the page opens, as it
    opens a bullet's evidence. A lead is a sentence of its document (with the one before it that it refers
    back to, as the document writes them), its whitespace collapsed."""
    entry = _cited(lead)
    pattern = _written(lead.text)
    places = []
    for number, document_id in zip(lead.numbers, lead.citations):
        document = documents.get(document_id)
        found = pattern.search(document.text) if document is not None and lead.text.split() else None
        if found is not None:
            places.append({"number": number, "document_id": document_id, "char_start": found.start(),
                           "char_end": found.end(), **_page(document, found.start())})
    entry["places"] = places
    return entry


def _cited(bullet: Bullet) -> dict[str, Any]:
    """A bullet's (or a lead's) text, citations and context numbers, and the code its sentence introduces when
    there is some (``code``: the lines the document shows right after it)."""
    entry: dict[str, Any] = {"text": bullet.text, "citations": list(bullet.citations), "numbers": list(bullet.numbers)}
    if bullet.code:
        entry["code"] = bullet.code
    return entry


def context_response(context: Context) -> dict[str, Any]:
    """How the context was packed: its order, its budget and the tokens it holds."""
    return {"order": context.order, "budget": context.budget, "tokens": context.token_count}


def sources_response(context: Context, documents: Mapping[str, Document],
                     source_of: SourceOf = stored_source) -> dict[str, dict[str, str]]:
    """The context's documents by their numbers, with their titles and sources."""
    return {str(b.number): {"document_id": b.document_id, **_described(documents.get(b.document_id), source_of)}
            for b in context.blocks}


def _citation_evidence(citations: Sequence[str], checked: VerifiedBullet, number_of: dict[str, int],
                       documents: Mapping[str, Document]) -> list[dict[str, Any]]:
    """For each citation of a bullet: the sentence of that document that best supports the bullet, and the
    page it is on (for a document with pages)."""
    best: dict[str, Evidence] = {c.document_id: c.evidence for c in checked.checks if c.evidence is not None}
    best.update((e.document_id, e) for e in checked.evidence)
    out = []
    for document_id in citations:
        evidence = best.get(document_id)
        out.append({"number": number_of.get(document_id), "document_id": document_id,
                    "supported": document_id in checked.citations,
                    **({"support": round(evidence.support, 4), "char_start": evidence.char_start,
                        "char_end": evidence.char_end, "text": evidence.text,
                        **_page(documents.get(document_id), evidence.char_start)} if evidence else {})})
    return out


def _page(document: Document | None, offset: int) -> dict[str, int | str]:
    """``{"page": n}`` for a character of a document that has pages (a PDF), else nothing; with
    ``"page_label"``, the number printed on that page, when print numbers the pages otherwise (n is the page's
    place in the file, which the printed page's endpoints take)."""
    starts = document.metadata.get(PAGE_STARTS) if document is not None else None
    if document is None or not isinstance(starts, list) or not starts:
        return {}
    page = page_of(starts, offset, document.metadata.get(NOTE_PAGES) or ())
    labels = document.metadata.get(PAGE_LABELS)
    label = labels[page - 1] if isinstance(labels, list) and page <= len(labels) else ""
    return {"page": page, **({"page_label": label} if label else {})}


def verification_json(checked: VerifiedBullet) -> dict[str, Any]:
    """Everything the citation verifier found for one bullet (``summarize --verify-citations``, ``repair``)."""
    return {
        "text": checked.text,
        "checks": [{"document_id": c.document_id, "supported": c.supported,
                    "evidence": c.evidence.__dict__ if c.evidence else None} for c in checked.checks],
        "repaired_citations": list(checked.citations),
        "evidence": [e.__dict__ for e in checked.evidence],
        "removed": list(checked.removed), "added": list(checked.added),
    }


def document_response(document: Document, *, source_of: SourceOf = stored_source, evidence: str | None = None,
                      pieces: Sequence[tuple[int, str]] | None = None) -> dict[str, Any]:
    """One document whole; with ``evidence`` (a statement), the sentence of it that best states it, with its
    character offsets in ``text`` (the scoring of citation verification), looked for in ``pieces`` ((offset,
    text) parts of the document) when given, else in the whole text; or the sentences the statement quotes
    around it, when it quotes several as the document writes them (:func:`_quoted_around`)."""
    payload: dict[str, Any] = {"id": document.id, "title": document.title, "source": source_of(document),
                               "format": document.format, "metadata": dict(document.metadata), "text": document.text}
    if evidence is not None:
        from citesum.summarize.verify import CitationVerifier
        from citesum.types import Document as Piece

        parts = list(pieces) if pieces is not None else [(0, document.text)]
        verifier = CitationVerifier([Piece(document.id, document.title, text) for _, text in parts],
                                    offsets=[offset for offset, _ in parts])
        payload["evidence"] = []
        for e in verifier.evidence(evidence)[:1]:
            start, end, text = (_quoted_around(document.text, evidence, e.char_start, e.char_end)
                                or (e.char_start, e.char_end, e.text))
            payload["evidence"].append({"char_start": start, "char_end": end, "text": text,
                                        "support": round(e.support, 4), **_page(document, start)})
    return payload


def _written(text: str) -> re.Pattern[str]:
    """A pattern finding ``text`` as a document writes it: its words, whatever whitespace between them, and
    whole (a whole sentence: "Set the cache." is not found in "Set the cachesize option.")."""
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(word) for word in text.split()) + r"(?!\w)")


def _quoted_around(text: str, statement: str, start: int, end: int) -> tuple[int, int, str] | None:
    """Where ``text`` (a document's) writes ``statement`` as it is, whitespace aside, around the span from
    ``start`` to ``end`` (its best sentence): a bullet that quotes two sentences ("Run mytool with two paths. It
    will report each file it copies.") is shown whole. None otherwise. Only the text near the span is looked at,
    as far as the statement could reach, with twice its length for the line breaks and indents of a wrapped
    paragraph."""
    from citesum.summarize.citations import strip_citations

    quoted = strip_citations(statement)
    if not quoted.split():
        return None
    reach = 2 * len(statement)
    first = max(0, start - reach)
    pattern = _written(quoted)
    for match in pattern.finditer(text, first, min(len(text), end + reach)):
        if match.start() <= start and end <= match.end():
            return match.start(), match.end(), match.group()
    return None
