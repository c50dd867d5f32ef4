"""Sentence-aware passages capped at N tokens, and whole-document units truncated at a sentence boundary.

Passage texts are exact slices of the document text, so character offsets and original order survive
retrieval (DOS RAG packing and citations rely on both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Literal

from citesum.errors import ConfigError
from citesum.segment import ANSWER_LINE_LABEL, ENTRY_LINE_LABEL, STATABLE, segments, trimmed
from citesum.tokens import Tokenizer
from citesum.types import Document, Passage

Unit = Literal["passage", "document"]
UNITS: tuple[Unit, ...] = ("passage", "document")

DEFAULT_PASSAGE_TOKENS = 100  # DOS RAG (Laitenberger et al.)
DEFAULT_DOCUMENT_TOKENS = 1024  # hybrid RAG (Pratapa & Mitamura)

_CLAUSE_BREAK = re.compile(r"(?<=[,;:])\s+")
_WORD_BREAK = re.compile(r"\s+")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    #: the span begins inside a unit that an earlier span began: a piece of a unit longer than the cap
    continues: bool = False
    #: the span does not end a passage where it can go on into the next with what follows it: it ends with a
    #: colon above the code, list or table it introduces, or it is part of an FAQ's entry that "Q:" opens, which
    #: goes on, or whose answer follows
    holds_on: bool = False


#: the units a sentence ending with a colon shows: "It is filled by two important files:" above its listing
_SHOWN = ("code", "item", "table")
_BLANK_LINE = re.compile(r"\r?\n[ \t\r]*\n")


def sentence_spans(text: str) -> list[Span]:
    """The units of ``text`` (sentences, list items, headings, table rows, code blocks: :func:`citesum.segment.
    segments`), as spans without their kinds: a hard-wrapped paragraph's line breaks do not cut its sentences.
    A unit after which a passage should not end says so (``holds_on``): a sentence that introduces the code,
    list or table after it, and the units of an FAQ's entry that "Q:" opens (its question and the answer's
    first unit go in one passage, or its answer's sentences are read as the asker's, and the other way round)."""
    units = segments(text)
    spans = []
    entry = False  # whether the unit is in a paragraph that an entry's label opens
    for number, unit in enumerate(units):
        if number and _BLANK_LINE.search(text, units[number - 1].end, unit.start):
            entry = False  # (a blank line ends the entry's paragraph: the unit after it is its answer's first)
        line_start = text.rfind("\n", 0, unit.start) + 1
        label = ENTRY_LINE_LABEL.match(text, line_start)
        opens_line = not number or units[number - 1].end <= line_start
        if label and unit.start <= label.end() and opens_line:
            entry = True  # the unit opens the label's line, with the label or just after it
        elif opens_line and ANSWER_LINE_LABEL.match(text, line_start):
            entry = False  # an answer's label on the line after its question: the answer's first unit
        after = units[number + 1].kind if number + 1 < len(units) else None
        introduces = (unit.kind in ("sentence", "item") and after in _SHOWN
                      and text[unit.start:unit.end].rstrip().endswith(":"))
        spans.append(Span(unit.start, unit.end, holds_on=introduces or (entry and unit.kind in STATABLE)))
    return spans


def _append_trimmed(text: str, start: int, end: int, spans: list[Span]) -> None:
    start, end = trimmed(text, start, end)
    if end > start:
        spans.append(Span(start, end))


_SPLIT_LEVELS = (_CLAUSE_BREAK, _WORD_BREAK)


def _split_long(
    text: str, span: Span, max_tokens: int, tokenizer: Tokenizer, levels: tuple[re.Pattern[str], ...]
) -> Iterator[tuple[Span, int]]:
    """Split a span longer than the cap: at , ; : first, then by words, then by tokens."""
    for depth, pattern in enumerate(levels):
        pieces = _pieces(text, span, pattern)
        if len(pieces) > 1:
            yield from _pack(text, pieces, max_tokens, tokenizer, levels[depth + 1 :])
            return
    # A single "word" longer than the cap (e.g. a base64 blob): cut by tokens.
    start = span.start
    while start < span.end:
        end = start + len(tokenizer.truncate(text[start : span.end], max_tokens) or text[start])
        yield Span(start, end), tokenizer.count(text[start:end])
        start = end
        while start < span.end and text[start].isspace():
            start += 1


def _pieces(text: str, span: Span, pattern: re.Pattern[str]) -> list[Span]:
    pieces: list[Span] = []
    start = span.start
    for match in pattern.finditer(text, span.start, span.end):
        _append_trimmed(text, start, match.start(), pieces)
        start = match.end()
    _append_trimmed(text, start, span.end, pieces)
    return pieces


def _pack(
    text: str,
    spans: list[Span],
    max_tokens: int,
    tokenizer: Tokenizer,
    levels: tuple[re.Pattern[str], ...] = _SPLIT_LEVELS,
) -> Iterator[tuple[Span, int]]:
    """Greedily join consecutive spans while the joined slice stays within ``max_tokens``; each joined span
    comes with its token count (counted once: counting took half of an index build)."""
    members: list[Span] = []  # the spans of the passage being filled
    current_tokens = 0
    for span in spans:
        span_tokens = tokenizer.count(text[span.start : span.end])
        if span_tokens > max_tokens:
            if members:
                yield Span(members[0].start, members[-1].end), current_tokens
                members = []
            # a piece after the first goes on with a sentence it does not hold the start of: the summarizer must
            # not quote it as one ("this way you won't loose the logs ...", the rest of a 389-character sentence)
            for piece, piece_tokens in _split_long(text, span, max_tokens, tokenizer, levels):
                yield Span(piece.start, piece.end, piece.start > span.start), piece_tokens
            continue
        if not members:
            members, current_tokens = [span], span_tokens
            continue
        joined_tokens = tokenizer.count(text[members[0].start : span.end])
        if joined_tokens <= max_tokens:
            members.append(span)
            current_tokens = joined_tokens
            continue
        # the passage would end with spans that hold on to what follows (a sentence introducing the code the
        # next passage begins with, an FAQ's entry cut from its answer): they go with it, when all of them fit
        # (cut from its sentence, code lost the indentation that made it code once the passages were joined in
        # a context; an answer cut from its entry was read as the asker's words)
        held = len(members)
        while held and members[held - 1].holds_on:
            held -= 1
        if 0 < held < len(members):
            moved_tokens = tokenizer.count(text[members[held].start : span.end])
            if moved_tokens <= max_tokens:
                kept = Span(members[0].start, members[held - 1].end)
                yield kept, tokenizer.count(text[kept.start : kept.end])
                members, current_tokens = [*members[held:], span], moved_tokens
                continue
        yield Span(members[0].start, members[-1].end), current_tokens
        members, current_tokens = [span], span_tokens
    if members:
        yield Span(members[0].start, members[-1].end), current_tokens


def _make_passage(document: Document, ordinal: int, span: Span, token_count: int) -> Passage:
    return Passage(
        id=f"{document.id}::{ordinal}",
        document_id=document.id,
        ordinal=ordinal,
        char_start=span.start,
        char_end=span.end,
        text=document.text[span.start : span.end],
        token_count=token_count,
        continues=span.continues,
    )


def chunk_passages(document: Document, tokenizer: Tokenizer, max_tokens: int = DEFAULT_PASSAGE_TOKENS) -> list[Passage]:
    """Sentence-aware passages of at most ``max_tokens`` tokens (DOS RAG's retrieval unit).

    Example:
        >>> from citesum.tokens import get_tokenizer
        >>> doc = Document(id="d", title="d", text="One sentence. Another one.")
        >>> [p.text for p in chunk_passages(doc, get_tokenizer(), max_tokens=100)]
        ['One sentence. Another one.']
    """
    if max_tokens < 1:
        raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")
    spans = _pack(document.text, sentence_spans(document.text), max_tokens, tokenizer)
    return [_make_passage(document, ordinal, span, tokens) for ordinal, (span, tokens) in enumerate(spans)]


def document_unit(document: Document, tokenizer: Tokenizer, max_tokens: int = DEFAULT_DOCUMENT_TOKENS) -> list[Passage]:
    """The whole document as one unit, truncated to ``max_tokens`` at a sentence boundary (hybrid RAG).

    When even the first sentence is longer than the cap, it is cut at the token limit.
    """
    if max_tokens < 1:
        raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")
    text = document.text
    spans = sentence_spans(text)
    if not spans:
        return []
    end, end_tokens = spans[0].start, 0
    whole_tokens = tokenizer.count(text[spans[0].start : spans[-1].end])
    if whole_tokens <= max_tokens:
        end, end_tokens = spans[-1].end, whole_tokens
    else:
        for span in spans:
            tokens = tokenizer.count(text[spans[0].start : span.end])
            if tokens > max_tokens:
                break
            end, end_tokens = span.end, tokens
        if end == spans[0].start:
            end = spans[0].start + len(tokenizer.truncate(text[spans[0].start : spans[0].end], max_tokens))
            end_tokens = tokenizer.count(text[spans[0].start : end])
    return [_make_passage(document, 0, Span(spans[0].start, end), end_tokens)]


def make_units(document: Document, tokenizer: Tokenizer, unit: Unit, max_tokens: int) -> list[Passage]:
    """Retrieval units of one document: ``passage`` chunks or one ``document`` unit."""
    if unit == "passage":
        return chunk_passages(document, tokenizer, max_tokens)
    if unit == "document":
        return document_unit(document, tokenizer, max_tokens)
    raise ConfigError(f"unknown unit '{unit}'; choose one of: {', '.join(UNITS)}")
