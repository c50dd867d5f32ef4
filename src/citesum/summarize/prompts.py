"""Prompt templates by name, and user templates from a file, validated for their fields.

``cited`` is the default: at most N bullets that answer, or NO ANSWER; ``summhay`` is the Summary of a Haystack
protocol's (exactly N bullets), which the evaluation uses.

Fields a template may use: ``{context}`` and ``{query}`` (required), ``{bullets}`` (number of bullets) and
``{num_words}`` (word limit). ``answer`` is the hybrid-RAG paper's prompt (its ``{document}``/``{question}``
are our ``{context}``/``{query}``).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

from citesum.errors import ConfigError, unknown_name_error

REQUIRED_FIELDS = frozenset({"context", "query"})
KNOWN_FIELDS = REQUIRED_FIELDS | {"bullets", "num_words"}

SUMMHAY = """Below are documents, each introduced by its number in brackets, e.g. "Document [3]".

{context}

Query: {query}

Write exactly {bullets} bullet points that answer the query, using only facts stated in the documents above.
Each bullet is one sentence stating one specific insight, starts with "- ", and ends with the numbers of every
document that supports it, each in its own brackets, e.g. [2][5]. Cite a document only if it states that
insight. Write nothing but the bullets."""

#: what a person asking gets by default (``citesum summarize --summarizer llm``, the service): at most
#: ``bullets`` bullets, only facts that answer, and a way to say that nothing does
CITED = """Below are documents, each introduced by its number in brackets, e.g. "Document [3]".

{context}

Question: {query}

Answer the question in at most {bullets} bullet points, using only facts stated in the documents above. Write a
bullet only for a fact that answers the question: a question that one fact answers gets one bullet. Each bullet
is one sentence, starts with "- ", and ends with the numbers of every document that states it, each in its own
brackets, e.g. [2][5]. Cite a document only if it states that fact. If no document answers the question, write
only: NO ANSWER"""

#: what the model writes when no document answers (the CITED template asks for it)
NO_ANSWER = "NO ANSWER"

ANSWER = """{context}

Question: {query}

Answer the question based on the provided document. Be concise and directly address only the specific \
question asked. Limit your response to a maximum of {num_words} words."""

LONG = """Below are documents, each introduced by its number in brackets, e.g. "Document [3]".

{context}

Question: {query}

Write a thorough answer of at most {num_words} words as a list of bullet points ("- "). Every bullet states
facts from the documents and ends with the numbers of all documents that support it, e.g. [1][4]."""


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    text: str

    def __post_init__(self) -> None:
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(self.text) if f is not None}
        except ValueError as exc:
            raise ConfigError(f"prompt template '{self.name}' is malformed: {exc}") from exc
        missing = REQUIRED_FIELDS - fields
        unknown = fields - KNOWN_FIELDS
        if missing:
            raise ConfigError(f"prompt template '{self.name}' lacks required field(s): "
                              + ", ".join("{" + f + "}" for f in sorted(missing)))
        if unknown:
            raise ConfigError(f"prompt template '{self.name}' uses unknown field(s) "
                              + ", ".join("{" + f + "}" for f in sorted(unknown))
                              + "; known: " + ", ".join("{" + f + "}" for f in sorted(KNOWN_FIELDS)))

    @property
    def fields(self) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(self.text) if f}

    def render(self, *, context: str, query: str, bullets: int = 5, num_words: int = 250) -> str:
        return self.text.format(context=context, query=query, bullets=bullets, num_words=num_words)


TEMPLATES = {"cited": PromptTemplate("cited", CITED), "summhay": PromptTemplate("summhay", SUMMHAY),
             "answer": PromptTemplate("answer", ANSWER),
             "long": PromptTemplate("long", LONG)}


def get_template(name_or_path: str) -> PromptTemplate:
    """A built-in template by name, or a template file (any path that exists)."""
    if name_or_path in TEMPLATES:
        return TEMPLATES[name_or_path]
    path = Path(name_or_path)
    if path.is_file():
        try:
            return PromptTemplate(path.name, path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise ConfigError(f"prompt template file {path} is not UTF-8 text") from exc
    raise unknown_name_error("prompt template (or file)", name_or_path, list(TEMPLATES))
