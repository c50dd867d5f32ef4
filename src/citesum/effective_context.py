"""Published *effective* context lengths of LMs: the fixed retrieval budgets the budget estimate is compared with.

A long-context benchmark can say up to which length a model still works well. Used as a RAG budget, that length
is the baseline of the hybrid-RAG paper (Pratapa & Mitamura) that the silver-reference estimate
(:mod:`citesum.budget`) must beat. The table below holds only values read in a source, each row naming it:

* **RULER** publishes an "Effective Length" per model: the longest tested length at which the model still
  scores above Llama-2-7B's score at 4K (85.6). Rows marked ``RULER`` are read from the main results table of the
  RULER repository's README (NVIDIA/RULER, README.md at commit ebe802cd, columns "Claimed Length" and
  "Effective Length"); ``>128K`` there means the model passed at every tested length, so 128K is a lower bound.
* **HELMET** publishes no effective length per model: its README and its results give scores per task and
  input length (8K to 128K). The hybrid-RAG paper derived one per model from HELMET's summarization and LongQA
  task averages; the budgets it ran are in its code (adithya7/hybrid-rag, bash_scripts/optimal_baselines.sh at
  commit ac8465d, blocks "HELMET estimates (based on summarization task avg.)" and "(based on LongQA task
  avg.)"). Those rows are marked ``HELMET-Summ`` and ``HELMET-LongQA`` and cite that script. The same script's
  "RULER estimates" block gives the paper's RULER budget for the Qwen2.5 and Llama-3.3 models that the RULER
  README does not list; those rows cite the script too. Where the script runs a model on its "full 128k
  context" as the estimate, the row says 128K.

Lengths are in tokens with K = 1,024 (RULER and HELMET test at 4,096 ... 131,072 tokens). Anything else a user
knows (a newer leaderboard, an in-house measurement) comes in as ``NAME=TOKENS`` pairs or a JSON/CSV file and
overrides the table for that model.
"""

from __future__ import annotations

import csv
import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from citesum.errors import ConfigError

RULER_SOURCE = "NVIDIA/RULER README.md @ebe802cd, main results table (Effective Length column)"
PAPER_SCRIPT = "adithya7/hybrid-rag bash_scripts/optimal_baselines.sh @ac8465d"
HELMET_SUMM_SOURCE = f"{PAPER_SCRIPT}, 'HELMET estimates (based on summarization task avg.)'"
HELMET_LONGQA_SOURCE = f"{PAPER_SCRIPT}, 'HELMET estimates (based on LongQA task avg.)'"
PAPER_RULER_SOURCE = f"{PAPER_SCRIPT}, 'RULER estimates' (model not in the RULER README's table)"
USER_SOURCE = "user-supplied"

#: words that do not tell models apart ("Llama-3.1-8B-Instruct" is "Llama 3.1 8B")
_NOISE_WORDS = frozenset({"instruct", "chat", "hf", "it", "meta"})
_LENGTH = re.compile(r"(\d+)([km]?)", re.IGNORECASE)


@dataclass(frozen=True)
class EffectiveLength:
    """One model's effective context length under one benchmark."""

    model: str
    benchmark: str
    tokens: int
    #: the value as the source writes it ("32K", ">128K"), or the user's text
    published: str
    source: str
    #: the model's claimed context window, when the source states it
    window: int | None = None


def model_key(name: str) -> str:
    """The spelling-independent form of a model name: no organisation prefix, case, separators, dots or
    words like "Instruct" ("meta-llama/Llama-3.1-8B-Instruct", "llama3.1 8b" and "Llama31_8B" agree)."""
    words = re.split(r"[^a-z0-9]+", name.strip().lower().rsplit("/", 1)[-1].replace(".", ""))
    return "".join(w for w in words if w and w not in _NOISE_WORDS)


def length_tokens(text: str) -> int:
    """A length as benchmarks write it: ``32768``, ``32K`` (x 1,024) or ``1M`` (x 1,048,576); a leading ``>``
    (a lower bound, as in RULER's ``>128K``) reads as the bound."""
    match = _LENGTH.fullmatch(text.strip().lstrip(">").strip().replace(",", "").replace("_", ""))
    if match is None:
        raise ConfigError(f"'{text}' is not a token count: give a positive whole number such as 32768, or 32K "
                          "(= 32,768 tokens)")
    tokens = int(match.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[match.group(2).lower()]
    if tokens < 1:
        raise ConfigError(f"'{text}' is not a usable context length: it must be at least 1 token")
    return tokens


def _row(model: str, benchmark: str, published: str, source: str, window: str | None = None) -> EffectiveLength:
    """A table row with its lengths written as the source writes them, so each can be checked by eye."""
    return EffectiveLength(model, benchmark, length_tokens(published), published, source,
                           None if window is None else length_tokens(window))


def _ruler(model: str, window: str, published: str) -> EffectiveLength:
    return _row(model, "RULER", published, RULER_SOURCE, window)


def _paper(benchmark: str, source: str, published: dict[str, str]) -> tuple[EffectiveLength, ...]:
    return tuple(_row(model, benchmark, length, source) for model, length in published.items())


# Models named by the SummHay data (its stored systems), the hybrid-RAG paper's panel and summarizers, and a few
# common open models.
TABLE: tuple[EffectiveLength, ...] = (
    _ruler("GPT-4-1106-preview", "128K", "64K"),
    _ruler("Gemini-1.5-pro", "1M", ">128K"),
    _ruler("Command-R", "128K", "32K"),
    _ruler("Command-R-0824", "128K", "64K"),
    _ruler("Command-R-plus", "128K", "32K"),
    _ruler("Llama-3.1-8B-Instruct", "128K", "32K"),
    _ruler("Llama-3.1-70B-Instruct", "128K", "64K"),
    _ruler("Jamba-1.5-Mini", "256K", ">128K"),
    _ruler("ProLong-512K", "512K", "32K"),
    _ruler("Qwen2.5-7B-Instruct-1M", "1M", ">128K"),
    _ruler("Qwen2.5-14B-Instruct-1M", "1M", ">128K"),
    _ruler("Phi-3-mini-128K-instruct", "128K", "32K"),
    _ruler("Phi-3-medium-128K-instruct", "128K", "32K"),
    _ruler("Qwen3-8B", "128K", "64K"),
    _ruler("Mistral-7B-Instruct-v0.2", "32K", "16K"),
    _ruler("Mistral-Nemo-Instruct-2407", "128K", "16K"),
    _ruler("Mixtral-8x7B-Instruct-v0.1", "32K", "32K"),
    *_paper("RULER", PAPER_RULER_SOURCE, {
        "Qwen2.5-7B-Instruct": "32K", "Qwen2.5-14B-Instruct": "64K", "Qwen2.5-32B-Instruct": "64K",
        "Qwen2.5-72B-Instruct": "128K", "Llama-3.3-70B-Instruct": "64K"}),
    *_paper("HELMET-Summ", HELMET_SUMM_SOURCE, {
        "Qwen2.5-1.5B-Instruct": "32K", "Qwen2.5-3B-Instruct": "32K", "Qwen2.5-7B-Instruct": "64K",
        "Qwen2.5-72B-Instruct": "32K", "Qwen2.5-7B-Instruct-1M": "128K", "Qwen2.5-14B-Instruct-1M": "128K",
        "Llama-3.2-1B-Instruct": "32K", "Llama-3.2-3B-Instruct": "128K", "Llama-3.1-8B-Instruct": "32K",
        "Llama-3.3-70B-Instruct": "32K", "Phi-3-mini-128K-instruct": "64K", "Phi-3-small-128K-instruct": "32K",
        "Phi-3-medium-128K-instruct": "64K", "Jamba-1.5-Mini": "128K", "ProLong-512K": "128K"}),
    *_paper("HELMET-LongQA", HELMET_LONGQA_SOURCE, {
        "Qwen2.5-1.5B-Instruct": "16K", "Qwen2.5-3B-Instruct": "32K", "Qwen2.5-7B-Instruct": "16K",
        "Qwen2.5-72B-Instruct": "32K", "Qwen2.5-7B-Instruct-1M": "128K", "Qwen2.5-14B-Instruct-1M": "128K",
        "Llama-3.2-1B-Instruct": "32K", "Llama-3.2-3B-Instruct": "64K", "Llama-3.1-8B-Instruct": "64K",
        "Llama-3.3-70B-Instruct": "64K", "Phi-3-mini-128K-instruct": "64K", "Phi-3-small-128K-instruct": "64K",
        "Phi-3-medium-128K-instruct": "128K", "ProLong-512K": "128K"}),
)

#: other spellings of the table's models (the SummHay data's, Hugging Face's, the hybrid-RAG code's) beyond what
#: :func:`model_key` already forgives
ALIASES: dict[str, tuple[str, ...]] = {
    "GPT-4-1106-preview": ("gpt-4-turbo", "gpt4-turbo"),
    "Command-R": ("c4ai-command-r-v01",),
    "Command-R-0824": ("c4ai-command-r-08-2024", "command-r-08-2024"),
    "Command-R-plus": ("c4ai-command-r-plus",),
    "Jamba-1.5-Mini": ("AI21-Jamba-1.5-Mini",),
    "ProLong-512K": ("Llama-3-8B-ProLong-512k-Instruct", "ProLong"),
    "Phi-3-mini-128K-instruct": ("Phi-3-mini",),
    "Phi-3-small-128K-instruct": ("Phi-3-small",),
    "Phi-3-medium-128K-instruct": ("Phi-3-medium",),
    "Mistral-7B-Instruct-v0.2": ("Mistral-7B",),
    "Mistral-Nemo-Instruct-2407": ("Mistral-Nemo",),
    "Mixtral-8x7B-Instruct-v0.1": ("Mixtral-8x7B",),
}

#: spelling key -> the model's name as the table writes it
_NAMES = {model_key(spelling): row.model for row in TABLE for spelling in (row.model, *ALIASES.get(row.model, ()))}


def _identity(name: str) -> str:
    """The key of the table's model ``name`` stands for, or of ``name`` itself when the table has no such
    model: a user's value for "gpt-4-turbo" replaces the table's "GPT-4-1106-preview"."""
    key = model_key(name)
    return model_key(_NAMES[key]) if key in _NAMES else key


def known_models(user: Sequence[EffectiveLength] = ()) -> list[str]:
    """The models the table (and the user's values) know, by the name the table writes."""
    return sorted({row.model for row in (*TABLE, *user)}, key=str.lower)


def lookup(name: str, user: Sequence[EffectiveLength] = ()) -> list[EffectiveLength]:
    """Every effective length known for the model ``name`` (any common spelling): the user's values when
    there are some for it (they replace the table's), else the table's rows, one per benchmark."""
    if mine := [row for row in user if _identity(row.model) == _identity(name)]:
        return mine
    model = _NAMES.get(model_key(name))
    if model is None:
        known = known_models(user)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ConfigError(f"no published effective context length for model '{name}'{hint}; known models: "
                          f"{', '.join(known)}. Give its length yourself as NAME=TOKENS "
                          f"(e.g. --effective-length '{name}=32K')")
    return [row for row in TABLE if row.model == model]


def parse_user_length(pair: str) -> EffectiveLength:
    """A user's ``NAME=TOKENS`` (tokens as :func:`length_tokens` reads them)."""
    name, separator, tokens = pair.rpartition("=")
    if not separator or not name.strip():
        raise ConfigError(f"--effective-length takes NAME=TOKENS (e.g. 'my-model=32768' or 'my-model=32K'), "
                          f"got '{pair}'")
    return EffectiveLength(name.strip(), "user", length_tokens(tokens), tokens.strip(), USER_SOURCE)


def read_user_lengths(path: str | Path) -> list[EffectiveLength]:
    """Users' effective lengths from a file: a JSON object ``{"model": tokens}`` or CSV rows ``model,tokens``
    (a header row whose second cell is not a number is skipped)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read effective lengths from {path}: {exc.strerror or exc}") from exc
    if path.suffix.lower() == ".json":
        try:
            content = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{path}: not JSON ({exc}); expected {{\"model\": tokens, ...}}") from exc
        if not isinstance(content, dict):
            raise ConfigError(f"{path}: expected a JSON object {{\"model\": tokens, ...}}")
        pairs = [(str(name), str(tokens)) for name, tokens in content.items()]
    else:
        rows = [row for row in csv.reader(text.splitlines()) if any(cell.strip() for cell in row)]
        if rows and len(rows[0]) == 2 and not any(c.isdigit() for c in rows[0][1]):
            rows = rows[1:]  # a header such as "model,tokens"
        if bad := next((row for row in rows if len(row) != 2), None):
            raise ConfigError(f"{path}: expected rows 'model,tokens', found {','.join(bad)!r}")
        pairs = [(name, tokens) for name, tokens in rows]
    try:
        return [parse_user_length(f"{name}={tokens}") for name, tokens in pairs]
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


@dataclass(frozen=True)
class FixedBudget:
    """A retrieval budget taken from a model's effective length, capped by the window when one is given."""

    length: EffectiveLength
    budget: int

    @property
    def capped(self) -> bool:
        return self.budget < self.length.tokens

    @property
    def label(self) -> str:
        return f"{self.length.benchmark}: {self.length.model} ({self.length.published})"


def fixed_budgets(models: Sequence[str], user: Sequence[EffectiveLength] = (),
                  window: int | None = None) -> list[FixedBudget]:
    """Each named model's effective lengths as budgets, in the order named (a model named twice counts once);
    over ``window`` a budget is cut to it, since the context cannot exceed what the summarizer reads."""
    rows = dict.fromkeys(row for name in models for row in lookup(name, user))
    return [FixedBudget(row, row.tokens if window is None else min(row.tokens, window)) for row in rows]


__all__ = ["ALIASES", "TABLE", "EffectiveLength", "FixedBudget", "fixed_budgets", "known_models", "length_tokens",
           "lookup", "model_key", "parse_user_length", "read_user_lengths"]
