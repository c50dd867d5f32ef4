"""Context packing: choose retrieved units under a token budget and order them for the summarizer.

Orders (by name, as in the CLI's ``--order``):
  * ``score``    — Vanilla RAG: units in retrieval-score order.
  * ``original`` — DOS RAG: the same selection, put back in collection order, then position in the document.
  * ``full``     — the whole collection in collection order; over the budget, the longest documents are
                   truncated first (to a common length, so short documents stay whole).

By default a unit that does not fit is skipped and filling goes on (more of the budget is used); the
papers' reference code stops at the first unit that does not fit (``stop_at_first_overflow=True``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterable, Iterator, Literal, Mapping, Sequence, TypeVar

from citesum.defaults import DEFAULT_BUDGET
from citesum.errors import BudgetError, ConfigError
from citesum.index.store import IndexReader
from citesum.tokens import Tokenizer, get_tokenizer
from citesum.types import Context, ContextBlock, Document, Hit, Passage, Statement

Order = Literal["score", "original", "full"]
ORDERS: tuple[Order, ...] = ("score", "original", "full")
BLOCK_SEPARATOR = "\n\n"
#: what the separator between two blocks costs, in tokens (at most)
_SEPARATOR_TOKENS = 2
#: how a statement (a summary written from a document, not its text) is marked inside the document's block
STATEMENT_LABEL = "Summary:"
T = TypeVar("T")
#: what a mixed context is made of: units of the index, and statements written from documents (RAPTOR's summary
#: nodes, ReadAgent's gists), each with its score (None: not ranked)
Piece = tuple[Passage | Statement, float | None]


def within_budget(items: Iterable[T], cost: Callable[[T], int], budget: int, *,
                  stop_at_first_overflow: bool) -> Iterator[T]:
    """The items, in order, that fit in ``budget`` together: one that does not fit is skipped and filling goes
    on, or ends the selection with ``stop_at_first_overflow``. Packing and the retrieval metrics (recall within
    a budget) both select this way. The cost of an item is asked once the previous chosen item was consumed,
    so it may depend on what was chosen (a document's header is paid by its first unit)."""
    used = 0
    for item in items:
        item_cost = cost(item)
        if used + item_cost > budget:
            if stop_at_first_overflow:
                return
            continue
        used += item_cost
        yield item


def block_header(number: int, title: str) -> str:
    return f"Document [{number}] {title}\n"


@dataclass(frozen=True)
class PackOptions:
    budget: int = DEFAULT_BUDGET
    order: Order = "original"
    stop_at_first_overflow: bool = False
    #: keep at most this many retrieved units before packing (DOS RAG's code: about budget / 50)
    top_k: int | None = None

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise ConfigError(f"unknown order '{self.order}'; choose one of: {', '.join(ORDERS)}")
        if self.budget < 1:
            raise BudgetError(f"the context budget must be at least 1 token, got {self.budget}")


def pack(index: IndexReader, hits: Sequence[Hit], options: PackOptions, tokenizer: Tokenizer | None = None) -> Context:
    """Build the context from ranked ``hits`` (best first); ``full`` ignores the hits."""
    tokenizer = tokenizer or get_tokenizer(index.settings.tokenizer)
    if options.order == "full":
        return pack_full(list(index.documents()), options.budget, tokenizer)
    candidates = list(hits[: options.top_k] if options.top_k else hits)
    titles = {d.id: d.title for d in index.documents_by_id(list(dict.fromkeys(h.document_id for h in candidates)))}
    # The worst-case header (a 4-digit number) is charged once per document, so the exact count stays in budget.
    header_cost = {doc_id: tokenizer.count(block_header(9999, title) + BLOCK_SEPARATOR)
                   for doc_id, title in titles.items()}
    seen_documents: set[str] = set()

    def cost(hit: Hit) -> int:
        header = header_cost[hit.document_id] if hit.document_id not in seen_documents else 0
        return tokenizer.count(hit.passage.text + "\n") + header

    chosen: list[Hit] = []
    for hit in within_budget(candidates, cost, options.budget, stop_at_first_overflow=options.stop_at_first_overflow):
        chosen.append(hit)
        seen_documents.add(hit.document_id)
    if candidates and not chosen:
        # Nothing fits: an empty context would read as "nothing matched the query".
        first = candidates[0]
        smallest = tokenizer.count(first.passage.text + "\n") + header_cost[first.document_id]
        raise BudgetError(f"a budget of {options.budget} tokens cannot hold one retrieved passage with its document "
                          f"header (the best one needs {smallest})")
    if options.order == "original":
        chosen.sort(key=lambda h: (index.document_position(h.document_id), h.passage.ordinal))
    return _assemble(chosen, titles, options, tokenizer)


def _assemble(hits: list[Hit], titles: dict[str, str], options: PackOptions, tokenizer: Tokenizer) -> Context:
    """Number documents by first appearance; consecutive units of one document form one block."""
    numbers: dict[str, int] = {}
    groups: list[list[Hit]] = []
    for hit in hits:
        numbers.setdefault(hit.document_id, len(numbers) + 1)
        if groups and groups[-1][0].document_id == hit.document_id:
            groups[-1].append(hit)
        else:
            groups.append([hit])
    blocks = []
    for group in groups:
        document_id, title = group[0].document_id, titles[group[0].document_id]
        text = "\n".join(h.passage.text for h in group)
        number = numbers[document_id]
        blocks.append(ContextBlock(number, document_id, title, text,
                                   tokenizer.count(block_header(number, title) + text),
                                   tuple(h.passage for h in group), max(h.score for h in group)))
    return counted_context(blocks, options.order, options.budget, tokenizer)


def counted_context(blocks: list[ContextBlock], order: str, budget: int, tokenizer: Tokenizer) -> Context:
    """The context with its exact token count (of the text the summarizer will read)."""
    uncounted = Context(tuple(blocks), order, budget, 0)
    return Context(uncounted.blocks, order, budget, tokenizer.count(uncounted.render()))


def shrunk(context: Context, budget: int, tokenizer: Tokenizer | None = None) -> Context:
    """``context`` cut to ``budget`` tokens, keeping what ranked best: its blocks by retrieval score (in the order
    given when they have none), each whole while it fits; the best block is cut to its first passages (or its
    first tokens) when even it does not. Kept blocks stay in the context's order with their numbers, so a
    citation still names the document it named. For a model whose window cannot hold the context it was given."""
    tokenizer = tokenizer or get_tokenizer()
    ranked = sorted(range(len(context.blocks)), key=lambda i: (-(context.blocks[i].score or 0.0), i))
    kept: dict[int, ContextBlock] = {}
    used = 0
    for position in ranked:
        block = context.blocks[position]
        if used + block.token_count + _SEPARATOR_TOKENS <= budget:
            kept[position] = block
            used += block.token_count + _SEPARATOR_TOKENS
    if not kept and context.blocks:
        best = ranked[0]
        kept[best] = _cut_block(context.blocks[best], budget, tokenizer)
    blocks = [kept[position] for position in sorted(kept)]
    return replace(counted_context(blocks, context.order, budget, tokenizer), terms=context.terms)


def _cut_block(block: ContextBlock, budget: int, tokenizer: Tokenizer) -> ContextBlock:
    """``block`` cut to its first passages that fit ``budget`` tokens, or to its first tokens."""
    header = tokenizer.count(block_header(block.number, block.title))
    passages = list(block.passages)
    while len(passages) > 1 and header + tokenizer.count("\n".join(p.text for p in passages)) > budget:
        passages.pop()
    text = "\n".join(p.text for p in passages) if passages else block.text
    text = tokenizer.truncate(text, max(budget - header, 1))
    return replace(block, text=text, token_count=header + tokenizer.count(text), passages=tuple(passages))


def pack_full(documents: Sequence[Document], budget: int, tokenizer: Tokenizer,
              text_tokens: Mapping[str, int] | None = None) -> Context:
    """Every document in collection order; over budget, truncate the longest first to a common cap.

    ``text_tokens`` (document id -> token count of its text) spares the counting when the caller packs the
    same documents many times, as the position experiment does (4 placements x every subtopic)."""
    headers = [tokenizer.count(block_header(number, d.title) + BLOCK_SEPARATOR)
               for number, d in enumerate(documents, 1)]
    lengths = [text_tokens[d.id] if text_tokens is not None else tokenizer.count(d.text) for d in documents]
    room = budget - sum(headers)
    if room < len(documents):
        raise BudgetError(f"a budget of {budget} tokens cannot hold even the headers of {len(documents)} documents")
    cap = max(lengths, default=0)
    if sum(lengths) > room:
        # The largest cap L with sum(min(length, L)) <= room ("water filling"), found by bisection.
        low, high = 0, cap
        while low < high:
            middle = (low + high + 1) // 2
            if sum(min(n, middle) for n in lengths) <= room:
                low = middle
            else:
                high = middle - 1
        cap = low
    blocks = []
    for number, (document, length) in enumerate(zip(documents, lengths), start=1):
        text = document.text if length <= cap else tokenizer.truncate(document.text, cap)
        blocks.append(ContextBlock(number, document.id, document.title, text,
                                   tokenizer.count(block_header(number, document.title) + text)))
    return counted_context(blocks, "full", budget, tokenizer)


def document_passage(document: Document, tokenizer: Tokenizer) -> Passage:
    """The whole document as one passage: the evidence of a block whose text is not only the document's own (a
    summary of it), so that a claim taken from the summary is checked in the document, at its offsets."""
    return Passage(id=f"{document.id}#document", document_id=document.id, ordinal=0, char_start=0,
                   char_end=len(document.text), text=document.text, token_count=tokenizer.count(document.text))


def pack_pieces(index: IndexReader, pieces: Sequence[Piece], budget: int, order: str,
                tokenizer: Tokenizer | None = None, *, stop_at_first_overflow: bool = False) -> Context:
    """A context of units and statements, taken in the given order while they fit in ``budget``.

    A statement goes into the block of the first document it was written from, after that document's units
    (in document order), under a :data:`STATEMENT_LABEL` line of its own (so sentence splitting keeps the
    label out of the sentences), and the summarizer cites the document it came from. A statement already in
    the context (the same text, or inside a chosen unit of its document: an extractive summary repeats its
    sources) is left out. Blocks are numbered in the order their documents first appear. A block
    holding a statement has the whole document as its evidence passage; a block of units alone, those units."""
    tokenizer = tokenizer or get_tokenizer(index.settings.tokenizer)

    def owner(piece: Passage | Statement) -> str:
        return piece.document_id if isinstance(piece, Passage) else piece.documents[0]

    usable = [(piece, score) for piece, score in pieces if isinstance(piece, Passage) or piece.documents]
    titles = {d.id: d.title for d in index.documents_by_id(list(dict.fromkeys(owner(p) for p, _ in usable)))}
    usable = [(piece, score) for piece, score in usable if owner(piece) in titles]
    header_cost = {doc_id: tokenizer.count(block_header(9999, title) + BLOCK_SEPARATOR)
                   for doc_id, title in titles.items()}
    label_cost = tokenizer.count(STATEMENT_LABEL + "\n")
    groups: dict[str, list[Piece]] = {}
    said: dict[str, list[str]] = {}  # per document, the whitespace-normalised texts already in the context

    def repeated(piece: Passage | Statement) -> bool:
        text = " ".join(piece.text.split())
        return isinstance(piece, Statement) and any(text in earlier for earlier in said.get(owner(piece), ()))

    def cost(item: Piece) -> int:
        piece, document_id = item[0], owner(item[0])
        if repeated(piece):
            return 0
        first_statement = isinstance(piece, Statement) and not any(
            isinstance(p, Statement) for p, _ in groups.get(document_id, ()))
        return (tokenizer.count(piece.text + "\n") + (label_cost if first_statement else 0)
                + (0 if document_id in groups else header_cost[document_id]))

    for item in within_budget(usable, cost, budget, stop_at_first_overflow=stop_at_first_overflow):
        if repeated(item[0]):
            continue
        groups.setdefault(owner(item[0]), []).append(item)
        said.setdefault(owner(item[0]), []).append(" ".join(item[0].text.split()))
    if usable and not groups:
        raise BudgetError(f"a budget of {budget} tokens cannot hold the first piece of the context with its "
                          f"document header (it needs {cost(usable[0])})")
    documents = {d.id: d for d in index.documents_by_id(
        [doc_id for doc_id, items in groups.items() if any(isinstance(p, Statement) for p, _ in items)])}
    blocks = []
    for number, (document_id, items) in enumerate(groups.items(), start=1):
        units = sorted((p for p, _ in items if isinstance(p, Passage)), key=lambda p: p.ordinal)
        unit_texts = [" ".join(u.text.split()) for u in units]
        # a unit chosen after a statement it contains makes the statement a repetition too
        statements = [p.text for p, _ in items
                      if isinstance(p, Statement) and not any(" ".join(p.text.split()) in t for t in unit_texts)]
        text = "\n".join([u.text for u in units] + ([STATEMENT_LABEL.strip()] + statements if statements else []))
        # a statement is checked in the whole document; the units stay beside it, so that the summarizer knows
        # which of them opens with the rest of a sentence cut at its clauses (``Passage.continues``)
        evidence = (document_passage(documents[document_id], tokenizer), *units) if statements else tuple(units)
        scores = [score for _, score in items if score is not None]
        blocks.append(ContextBlock(number, document_id, titles[document_id], text,
                                   tokenizer.count(block_header(number, titles[document_id]) + text), evidence,
                                   max(scores) if scores else None))
    return counted_context(blocks, order, budget, tokenizer)
