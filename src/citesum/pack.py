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

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Literal, Mapping, Sequence, TypeVar

from citesum.errors import BudgetError, ConfigError
from citesum.index.store import IndexReader
from citesum.tokens import Tokenizer, get_tokenizer
from citesum.types import Context, ContextBlock, Document, Hit

Order = Literal["score", "original", "full"]
ORDERS: tuple[Order, ...] = ("score", "original", "full")
BLOCK_SEPARATOR = "\n\n"
T = TypeVar("T")


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
    budget: int = 15_000
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
