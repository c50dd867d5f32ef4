"""Parse LLM output into bullets and citations, and map citation numbers back to documents.

Bullets are lines starting with -, *, • or a number ("1." / "1)"); headings and preambles are dropped.
Citations: [3], [3][7], [3, 7], [Doc 3], [Document 3], [Article 3], [Source 3]. Numbers that were not in the
context are removed and reported, never passed on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citesum.types import Bullet

_BULLET = re.compile(r"^\s*(?:[-*•‣▪–]|\d{1,3}[.)])\s+(.*\S)\s*$")
_LABEL = r"(?:(?:doc(?:ument)?|article|source|ref)\.?\s*)?"
CITATION = re.compile(r"\[\s*" + _LABEL + r"(\d{1,4}(?:\s*[,;]\s*" + _LABEL + r"\d{1,4})*)\s*\]", re.IGNORECASE)
_NUMBER = re.compile(r"\d{1,4}")


@dataclass(frozen=True)
class ParsedOutput:
    bullets: tuple[Bullet, ...]
    dropped_numbers: tuple[int, ...]


def citation_numbers(text: str) -> list[int]:
    """Citation numbers in order of appearance, without repeats."""
    numbers: list[int] = []
    for match in CITATION.finditer(text):
        for number in map(int, _NUMBER.findall(match.group(1))):
            if number not in numbers:
                numbers.append(number)
    return numbers


def strip_citations(text: str) -> str:
    text = CITATION.sub("", text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def _strip_markup(text: str) -> str:
    return re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: m.group(1) or m.group(2), text).strip()


def has_bullet_lines(output: str) -> bool:
    """Whether ``output`` has a line with a bullet marker (else :func:`bullet_lines` splits it into sentences,
    which a half-written answer would cut wrongly)."""
    return any(_BULLET.match(line) for line in output.splitlines())


def bullet_lines(output: str) -> list[str]:
    """The bullet lines of an answer; an answer without any bullet marker is split into its sentences."""
    lines = [m.group(1) for line in output.splitlines() if (m := _BULLET.match(line))]
    if lines:
        return [_strip_markup(line) for line in lines]
    from citesum.chunking import sentence_spans

    prose = "\n".join(line for line in output.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    return [prose[s.start : s.end] for s in sentence_spans(prose)]


def parse_output(output: str, numbers: dict[int, str]) -> ParsedOutput:
    """Bullets with citations mapped through ``numbers`` (context number -> document id)."""
    bullets = []
    dropped: list[int] = []
    for line in bullet_lines(output):
        cited = citation_numbers(line)
        kept = [n for n in cited if n in numbers]
        dropped.extend(n for n in cited if n not in numbers and n not in dropped)
        text = strip_citations(line)
        if text:
            bullets.append(Bullet(text=text, citations=tuple(numbers[n] for n in kept), numbers=tuple(kept)))
    return ParsedOutput(tuple(bullets), tuple(dropped))
