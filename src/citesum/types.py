"""The data model shared by every stage: documents, passages and retrieval hits."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Document:
    """One source document.

    Attributes:
        id: Stable identifier (a path relative to the ingested root, ``path#record`` for
            multi-record files, or a dataset's own id). Re-ingesting the same source yields the same id.
        title: Human-readable title (file stem, HTML ``<title>``, first Markdown heading...).
        text: Plain text; passages keep character offsets into it.
        source: Where it came from (file path or ``dataset:name``).
        format: Format name (``txt``, ``pdf``, ``summhay``...).
        metadata: Free-form extra fields (JSON-serialisable).
    """

    id: str
    title: str
    text: str
    source: str = ""
    format: str = "txt"
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """Digest of everything that changes what gets indexed (used for incremental updates)."""
        digest = hashlib.sha256()
        for part in (self.title, self.text):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
        return digest.hexdigest()


@dataclass(frozen=True)
class Passage:
    """A retrieval unit: a span ``[char_start, char_end)`` of one document's text.

    ``ordinal`` is the passage's position within its document, so the original document order can be
    restored after retrieval (DOS RAG).
    """

    id: str
    document_id: str
    ordinal: int
    char_start: int
    char_end: int
    text: str
    token_count: int
    #: whether the passage begins inside a sentence (or another unit) that the document's previous passage began:
    #: the chunker cut a unit longer than a passage at its clauses, and this is a later piece of it
    continues: bool = False


@dataclass(frozen=True)
class Statement:
    """A sentence written about some documents (a summary node of RAPTOR's tree, a gist of ReadAgent's memory),
    with the documents it was written from, so a context that holds it can still be cited."""

    text: str
    documents: tuple[str, ...]


@dataclass(frozen=True)
class Hit:
    """One ranked retrieval result."""

    passage: Passage
    score: float
    rank: int
    retriever: str = ""

    @property
    def document_id(self) -> str:
        return self.passage.document_id


@dataclass(frozen=True)
class ContextBlock:
    """One numbered block of a context: a document (or some of its passages) as the summarizer sees it."""

    number: int
    document_id: str
    title: str
    text: str
    token_count: int
    #: the document text the block stands for, at its offsets in the document (what citation evidence points
    #: at): its packed passages; empty when ``text`` is the document itself (full context)
    passages: tuple[Passage, ...] = ()
    #: best retrieval score of its passages (None when the block was not retrieved, e.g. full context)
    score: float | None = None


@dataclass(frozen=True)
class TermFrequencies:
    """How many units of a retrieved context, and of the whole collection it was retrieved from, hold each
    analysed term (BM25's analyser) of the context: what tells a fact that the retrieval gathered (its terms
    are held by a larger share of the context than of the collection) from one the whole collection repeats
    whatever the query (boilerplate such as "declined to comment", a topic's standard background)."""

    context_units: int
    collection_units: int
    #: term -> (units of the context holding it, units of the collection holding it)
    holding: Mapping[str, tuple[int, int]]

    def enrichment(self, term: str) -> float:
        """The share of context units holding ``term`` over the share of collection units holding it (each with
        half a unit added, so that a rare term's ratio stays finite); 1 means retrieval did not gather it, as
        for a term the context does not hold."""
        if term not in self.holding:
            return 1.0
        in_context, in_collection = self.holding[term]
        in_collection = max(in_collection, in_context)  # the context is part of the collection
        return ((in_context + 0.5) / (self.context_units + 1)) / ((in_collection + 0.5) / (self.collection_units + 1))


@dataclass(frozen=True)
class Context:
    """The packed context: numbered blocks in the order given to the summarizer.

    ``numbers`` maps each citation number to its document id, so ``[3]`` in an answer maps back exactly.
    ``terms``, when the index keeps term statistics, compares the context's terms with the collection's.
    """

    blocks: tuple[ContextBlock, ...]
    order: str
    budget: int
    token_count: int
    terms: TermFrequencies | None = None
    #: the query's words the search read as the collection writes them ("colour" as "color", the slip
    #: "confirmaton" as "confirmation"); None when no search over an index gathered the context
    respellings: Mapping[str, str] | None = None

    @property
    def numbers(self) -> dict[int, str]:
        return {block.number: block.document_id for block in self.blocks}

    def render(self) -> str:
        return "\n\n".join(f"Document [{b.number}] {b.title}\n{b.text}" for b in self.blocks)


@dataclass(frozen=True)
class Bullet:
    """One summary bullet and the documents it cites (ids, and the numbers used in the context)."""

    text: str
    citations: tuple[str, ...] = ()
    numbers: tuple[int, ...] = ()
    #: the lines the bullet's sentence introduces, as the document shows them right after it: code or
    #: configuration ("... you can use this in your .mc file:"), a table's rows ("Here is a summary of ...") or a
    #: list's items, each after its marker ("... will detect and use the following libs:"); "" when it introduces
    #: none.
    #: Every front end shows them set apart under the sentence, as lines
    code: str = ""


@dataclass(frozen=True)
class Summary:
    bullets: tuple[Bullet, ...]
    context: Context
    prompt: str = ""
    raw_output: str = ""
    #: citation numbers the model wrote that were not in the context (removed from the bullets)
    dropped_citations: tuple[int, ...] = ()
    usage: Mapping[str, int] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    summarizer: str = ""
    #: why the summary is shorter than asked, or empty (for the reader, not the model)
    notes: tuple[str, ...] = ()
    #: True when nothing in the context answers the question: no bullet is stated, and ``leads`` lists the
    #: closest sentences (with the documents they come from) for the reader to follow up
    abstained: bool = False
    leads: tuple[Bullet, ...] = ()
