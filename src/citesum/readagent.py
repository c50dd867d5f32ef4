"""ReadAgent (Lee et al., 2024): read the collection page by page into a gist memory, look pages up, answer.

1. **Pagination.** Each document is cut into pages of whole units (each unit ends at a sentence), of at most
   ``page_words`` words (ReadAgent: about 600). With an LLM the model picks the pause point among the unit
   boundaries past the page's first ``min_page_words`` words (ReadAgent's prompt, labels between units); a
   document boundary always ends a page. Offline, a page ends at the last boundary that fits.
2. **Gisting.** Each page is compressed into a gist of about ``gist_share`` of its tokens
   (:mod:`citesum.summarize.statements`: an LLM's cited bullets, or offline the page's most central sentences).
   Pages and gists are the *memory*, stored beside the index (``DIR/readagent-memory.npz``, with the index
   generation it describes) and built on first use.
3. **Look-up** (per question). The gists take at most ``memory_share`` of the budget (all of them when they
   fit, else the ones closest to the question); the rest of the budget goes to pages read again in full, which
   replace their gists. An LLM names the pages to re-read from the question and the numbered gists
   (ReadAgent's look-up prompt, all pages at once); offline, pages are ranked by the cosine of the question
   with their gists.
4. **Answer.** The gists and re-read pages, in reading order, are the context of any summarizer.
"""

from __future__ import annotations

import contextvars
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from citesum.embed import Embedder, get_embedder
from citesum.errors import CitesumError, ConfigError
from citesum.index.artifacts import save_arrays
from citesum.index.store import IndexReader
from citesum.llm.base import LLM, ChatRequest
from citesum.pack import Piece, pack_pieces, within_budget
from citesum.summarize.statements import DEFAULT_WORKERS, StatementWriter, WriteReport, statement_rows, statements_of
from citesum.tokens import Tokenizer, get_tokenizer
from citesum.types import Context, Passage, Statement

MEMORY_FILE = "readagent-memory.npz"
#: ReadAgent's pages: at most about 600 words, a pause point chosen past the first 280
DEFAULT_PAGE_WORDS = 600
DEFAULT_MIN_PAGE_WORDS = 280
#: a gist keeps about a fifth of its page (ReadAgent's gists compress 3-8 times)
DEFAULT_GIST_SHARE = 0.2
#: the gists may take at most half of the budget; the pages read again take the rest
DEFAULT_MEMORY_SHARE = 0.5

PAGINATION_PROMPT = """You are given a passage taken from a longer text. Some parts of the passage are marked \
with numbered labels <1>, <2>, ... placed between paragraphs. Please choose one label where it is natural to \
break reading: a scene transition, the end of a dialogue or of an argument, or a change of topic.

Passage:

{passage}

Answer with one label only, in the form: Break point: <number>"""

LOOKUP_PROMPT = """The following text is what you remember from reading a collection of documents, page by \
page, and a question about it. You may read up to {pages} page(s) of it again to refresh your memory before \
answering. Which page(s) would you like to read again?

{gists}

Question: {query}

Answer with the page numbers only, most useful first, in the form: Pages: 3, 7"""

_BREAK = re.compile(r"<?\s*(\d+)\s*>?")


@dataclass(frozen=True)
class Page:
    """Units ``[start, end)`` of the index (consecutive units of one document) and their gist."""

    start: int
    end: int
    gist: tuple[Statement, ...]


@dataclass(frozen=True)
class Memory:
    pages: tuple[Page, ...]
    #: one L2-normalised vector per page, of its gist (by the index's embedder)
    vectors: np.ndarray
    generation: int
    writer: str

    def save(self, index_path: str | Path) -> Path:
        """Into the index folder, replacing the old memory atomically."""
        pages = [{"start": p.start, "end": p.end, "gist": statement_rows(p.gist)} for p in self.pages]
        return save_arrays(Path(index_path) / MEMORY_FILE, vectors=self.vectors.astype(np.float32),
                           generation=self.generation, writer=self.writer, pages=json.dumps(pages))

    @classmethod
    def load(cls, index: IndexReader) -> "Memory | None":
        """The memory stored with ``index`` for its current generation; None when there is none or it is stale
        (it is then built again); a ConfigError when the file is damaged."""
        path = Path(index.path) / MEMORY_FILE
        if not path.exists():
            return None
        try:
            with np.load(path) as stored:
                pages = tuple(Page(int(p["start"]), int(p["end"]), statements_of(p["gist"]))
                              for p in json.loads(str(stored["pages"])))
                memory = cls(pages, stored["vectors"], int(stored["generation"]), str(stored["writer"]))
        except (OSError, KeyError, ValueError, TypeError) as exc:
            raise ConfigError(f"{path}: unreadable ReadAgent memory ({type(exc).__name__}: {exc}); delete the file "
                              "and it is built again") from exc
        return memory if memory.generation == index.generation else None


@dataclass
class ReadReport:
    """What building a memory did: pages, and what fell back to the offline way (with why)."""

    pages: int = 0
    pagination_fallbacks: list[tuple[str, str]] = field(default_factory=list)
    gists: WriteReport = field(default_factory=WriteReport)


@dataclass(frozen=True)
class ReadAgent:
    """The settings of one reader: ``llm`` None is offline (pages by length, gists by ``writer``, look-up by
    cosine)."""

    writer: StatementWriter
    llm: LLM | None = None
    page_words: int = DEFAULT_PAGE_WORDS
    min_page_words: int = DEFAULT_MIN_PAGE_WORDS
    gist_share: float = DEFAULT_GIST_SHARE
    memory_share: float = DEFAULT_MEMORY_SHARE
    workers: int = DEFAULT_WORKERS

    def __post_init__(self) -> None:
        if not 0 < self.min_page_words <= self.page_words or not 0 < self.gist_share <= 1 \
                or not 0 < self.memory_share <= 1:
            raise ConfigError("ReadAgent needs 0 < min_page_words <= page_words, 0 < gist_share <= 1 and "
                              "0 < memory_share <= 1")

    # -- building the memory -------------------------------------------------------------------------------
    def memory(self, index: IndexReader, *, embedder: Embedder | None = None, tokenizer: Tokenizer | None = None,
               report: ReadReport | None = None, save: bool = True) -> Memory:
        """The index's memory: the stored one when it is of this generation and this writer, else built (and
        stored, with ``save``)."""
        with index.pinned() as view:
            stored = Memory.load(view)
            if stored is not None and stored.writer == self.writer.name:
                return stored
            memory = self.read(view, embedder=embedder, tokenizer=tokenizer, report=report)
        if save:
            memory.save(index.path)
        return memory

    def read(self, index: IndexReader, *, embedder: Embedder | None = None, tokenizer: Tokenizer | None = None,
             report: ReadReport | None = None) -> Memory:
        """Paginate and gist every document of ``index``."""
        report = report if report is not None else ReadReport()
        tokenizer = tokenizer or get_tokenizer(index.settings.tokenizer)
        embedder = embedder or get_embedder(index.settings.embedder)
        with index.pinned() as view:  # every unit, read once: pages are cut and gisted from all of them
            passages = list(view.passages)
            generation = view.generation
        spans = _documents(passages)
        if self.llm is None:
            cuts = [self._pages_by_length(passages, start, end) for start, end in spans]
        else:
            with ThreadPoolExecutor(max_workers=max(1, self.workers)) as pool:
                # in the caller's context: a service request's time limit reaches the model calls
                futures = [pool.submit(contextvars.copy_context().run, self._pages_by_model, passages, start, end,
                                       report) for start, end in spans]
                cuts = [future.result() for future in futures]
        bounds = [page for pages in cuts for page in pages]
        groups = [[Statement(p.text, (p.document_id,)) for p in passages[start:end]] for start, end in bounds]
        budgets = [max(16, round(self.gist_share * sum(p.token_count for p in passages[start:end])))
                   for start, end in bounds]
        gists = self.writer.write(groups, budgets, report.gists)
        pages = tuple(Page(start, end, gist) for (start, end), gist in zip(bounds, gists))
        report.pages = len(pages)
        texts = [" ".join(s.text for s in page.gist) or " " for page in pages]
        vectors = np.asarray(embedder.encode_documents(texts), dtype=np.float32) if texts else \
            np.zeros((0, 0), dtype=np.float32)
        return Memory(pages, vectors, generation, self.writer.name)

    def _pages_by_length(self, passages: Sequence[Passage], start: int, end: int) -> list[tuple[int, int]]:
        pages, first, words = [], start, 0
        for i in range(start, end):
            count = len(passages[i].text.split())
            if i > first and words + count > self.page_words:
                pages.append((first, i))
                first, words = i, 0
            words += count
        return pages + [(first, end)] if end > first else pages

    def _pages_by_model(self, passages: Sequence[Passage], start: int, end: int,
                        report: ReadReport) -> list[tuple[int, int]]:
        assert self.llm is not None
        pages, first = [], start
        while first < end:
            labels, words, last = [], 0, first
            for i in range(first, end):  # the unit boundaries a page of this start may end at
                words += len(passages[i].text.split())
                if i > first and words > self.page_words:
                    break
                last = i + 1
                if words >= self.min_page_words and last < end:
                    labels.append(last)
            if not labels:  # the rest is one page (short, or one long unit)
                pages.append((first, last))
                first = last
                continue
            text = ""
            for i in range(first, last):
                text += passages[i].text + "\n"
                if i + 1 in labels:
                    text += f"<{labels.index(i + 1) + 1}>\n"
            cut = labels[-1]
            try:
                answer = self.llm.complete(ChatRequest.from_prompt(PAGINATION_PROMPT.format(passage=text),
                                                                   max_tokens=16)).text
                numbers = [int(m) for m in _BREAK.findall(answer.split("Break point:")[-1])]
                if not numbers or not 1 <= numbers[0] <= len(labels):
                    raise ValueError(f"no label between 1 and {len(labels)} in {answer[:60]!r}")
                cut = labels[numbers[0] - 1]
            except (CitesumError, ValueError) as exc:
                report.pagination_fallbacks.append((passages[first].document_id, str(exc)))
            pages.append((first, cut))
            first = cut
        return pages

    # -- reading for a question ----------------------------------------------------------------------------
    def context(self, query: str, index: IndexReader, memory: Memory, *, budget: int,
                embedder: Embedder | None = None, tokenizer: Tokenizer | None = None) -> tuple[Context, list[str]]:
        """The question's context (order ``readagent``) and notes for the reader (gists left out, a look-up
        answer that could not be used)."""
        tokenizer = tokenizer or get_tokenizer(index.settings.tokenizer)
        embedder = embedder or get_embedder(index.settings.embedder)
        notes: list[str] = []
        with index.pinned() as view:
            if memory.generation != view.generation:
                raise ConfigError(f"the ReadAgent memory was built for index generation {memory.generation}, the "
                                  f"index is at {view.generation}")
            pages = memory.pages
            # every unit the pages hold, read at once (a read per page was a statement per page)
            passages = view.passages[: pages[-1].end] if pages else []
            closeness = (memory.vectors @ embedder.encode_query(query)) if len(pages) else np.zeros(0)
            gist_cost = [sum(tokenizer.count(s.text + "\n") for s in page.gist) for page in pages]
            page_cost = [sum(p.token_count + 1 for p in passages[page.start : page.end]) for page in pages]
            kept = list(within_budget([int(i) for i in np.argsort(-closeness, kind="stable")],
                                      gist_cost.__getitem__, int(self.memory_share * budget),
                                      stop_at_first_overflow=False))
            if len(kept) < len(pages):
                notes.append(f"{len(pages) - len(kept)} of {len(pages)} gists did not fit in "
                             f"{self.memory_share:.0%} of the budget; the closest to the question were kept")
            wanted = self._lookup(query, pages, kept, closeness, notes)
            room = budget - sum(gist_cost[i] for i in kept)
            expanded: set[int] = set()
            for i in wanted:  # a page read again replaces its gist
                extra = page_cost[i] - (gist_cost[i] if i in kept else 0)
                if extra <= room:
                    expanded.add(i)
                    room -= extra
            pieces: list[Piece] = []
            for i, page in enumerate(pages):  # reading order
                score = float(closeness[i])
                if i in expanded:
                    pieces += [(p, score) for p in passages[page.start : page.end]]
                elif i in kept:
                    pieces += [(s, score) for s in page.gist]
            return pack_pieces(view, pieces, budget, "readagent", tokenizer), notes

    def _lookup(self, query: str, pages: Sequence[Page], kept: Sequence[int], closeness: np.ndarray,
                notes: list[str]) -> list[int]:
        """The pages to read again, most useful first: the model's choice among the gists it saw (then the
        closest of the rest), or by closeness alone."""
        by_closeness = [int(i) for i in np.argsort(-closeness, kind="stable")]
        if self.llm is None or not kept:
            return by_closeness
        shown = sorted(kept)
        gists = "\n\n".join(f"<Page {n}>\n" + " ".join(s.text for s in pages[i].gist)
                            for n, i in enumerate(shown, start=1))
        try:
            answer = self.llm.complete(ChatRequest.from_prompt(
                LOOKUP_PROMPT.format(pages=min(len(shown), 6), gists=gists, query=query), max_tokens=32)).text
        except CitesumError as exc:
            notes.append(f"the look-up failed ({exc}); pages were chosen by closeness to the question")
            return by_closeness
        named = [int(m) for m in re.findall(r"\d+", answer.split("Pages:")[-1])]
        chosen = list(dict.fromkeys(shown[n - 1] for n in named if 1 <= n <= len(shown)))
        if not chosen:
            notes.append(f"the look-up answer named no page shown ({answer[:60]!r}); pages were chosen by "
                         "closeness to the question")
        return chosen + [i for i in by_closeness if i not in chosen]


def _documents(passages: Sequence[Passage]) -> list[tuple[int, int]]:
    """``[start, end)`` of each document's run of units (units of a document are consecutive in an index)."""
    spans: list[tuple[int, int]] = []
    for i, passage in enumerate(passages):
        if i == 0 or passage.document_id != passages[i - 1].document_id:
            spans.append((i, i + 1))
        else:
            spans[-1] = (spans[-1][0], i + 1)
    return spans


__all__ = ["Memory", "Page", "ReadAgent", "ReadReport"]
