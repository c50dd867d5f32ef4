"""Request bodies of the service: strict types (``"5"`` and ``true`` are not integers), no unknown fields, and
queries that are real text. Limits that depend on the running service (``k``, ``budget``...) are checked by
:func:`check_limits`, which names the limit in its message."""

from __future__ import annotations

import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from citesum.defaults import DEFAULT_BULLETS, DEFAULT_WORDS
from citesum.errors import ConfigError
from citesum.service.config import ServiceConfig
from citesum.tokens import get_tokenizer, holds_words


class StrictModel(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


def checked_text(value: str, what: str = "the query") -> str:
    """``value`` if it is a real text: something to read in it (not blank, not only control or formatting
    characters such as NUL), no lone surrogate (which no UTF-8 text can hold)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} holds an invalid character (a lone UTF-16 surrogate) at position {exc.start}")
    if not value.strip():
        raise ValueError(f"{what} is empty or only whitespace")
    if all(c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in value):
        raise ValueError(f"{what} holds only control or invisible characters")
    if not holds_words(value):
        raise ValueError(f"{what} has no words to look for (only punctuation or symbols)")
    return value


class QueryRequest(StrictModel):
    query: str = Field(description="The question, or what to look for.")
    retriever: str = Field("hybrid", max_length=200, description="Retriever name, as in `citesum search`.")
    collection: str | None = Field(None, max_length=64, description="The collection to read (default: the first "
                                                                    "one the token holds).")

    @field_validator("query")
    @classmethod
    def _real_text(cls, value: str) -> str:
        return checked_text(value)


class SearchRequest(QueryRequest):
    k: int = Field(10, ge=1, description="How many units (or documents) to return.")
    documents: bool = Field(False, description="Rank documents (by their best units) instead of units.")
    collections: list[str] | None = Field(None, min_length=1, max_length=64, description=(
        "Search several collections at once (instead of `collection`): their rankings are merged by reciprocal "
        "rank, each hit naming its collection."))


class SummarizeRequest(QueryRequest):
    budget: int | None = Field(None, ge=1, description="Context budget in tokens (default: the service's).")
    order: Literal["original", "score", "full"] = Field("original", description="DOS RAG, Vanilla RAG, or all.")
    bullets: int = Field(DEFAULT_BULLETS, ge=1,
                         description="At most this many bullets: fewer when fewer facts answer, none when nothing does.")
    words: int = Field(DEFAULT_WORDS, ge=1, description="Word limit of the whole summary.")
    summarizer: Literal["extractive", "llm", "readagent"] | None = Field(
        None, description="Who writes the answer: sentences of the documents, the service's LLM, or ReadAgent "
                          "(its reading of the whole index; written by the LLM when the service has one). "
                          "Default: the LLM when the service has one, else extractive.")
    summary_index: bool = Field(False, description="Summary RAG: retrieve over the service's summary index "
                                                   "(`citesum serve --summary-index`); budget and order do not apply.")
    collections: list[str] | None = Field(None, min_length=1, max_length=64, description=(
        "Answer from several collections at once (instead of `collection`): each gets an equal share of the "
        "budget, and a cited document's id is `COLLECTION/ID`."))


def check_limits(config: ServiceConfig, request: SearchRequest | SummarizeRequest) -> None:
    """Raises ConfigError (answered 422) for a request over one of this service's limits."""
    query = request.query
    if len(query) > config.max_query_chars:
        raise ConfigError(f"the query has {len(query):,} characters; this service takes at most "
                          f"{config.max_query_chars:,}")
    tokens = get_tokenizer("cl100k").count(query)
    if tokens > config.max_query_tokens:
        raise ConfigError(f"the query has {tokens:,} tokens; this service takes at most {config.max_query_tokens:,}")
    if isinstance(request, SearchRequest):
        if request.k > config.max_k:
            raise ConfigError(f"k is {request.k:,}; this service returns at most {config.max_k:,}")
        return
    if request.budget is not None and request.budget > config.max_budget:
        raise ConfigError(f"budget is {request.budget:,} tokens; this service's summarizer uses at most "
                          f"{config.max_budget:,}")
    if not config.min_words <= request.words <= config.max_words:
        raise ConfigError(f"words is {request.words:,}; this service takes {config.min_words} to "
                          f"{config.max_words:,} (one bullet can have up to 60 words)")
    if request.bullets > config.max_bullets:
        raise ConfigError(f"bullets is {request.bullets:,}; this service writes at most {config.max_bullets}")
