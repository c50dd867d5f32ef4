"""What ``--help`` says: the choices of an option are listed where it is given."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.retrieve import RETRIEVER_NAMES


def _option_help(command: str, option: str) -> str:
    """The help of ``option`` in ``citesum COMMAND --help`` as one line (the terminal's wrapping undone)."""
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0, result.output
    block = re.search(rf"^  {option} .*?(?=^  -)", result.output, flags=re.MULTILINE | re.DOTALL)
    assert block, result.output
    unwrapped = re.sub(r"-\n\s*", "-", block.group(0))  # a name wrapped at its hyphen (bm25-\n rm3)
    return " ".join(unwrapped.split())


def _names_missing(text: str, names: list[str]) -> list[str]:
    """The names not in ``text`` as names of their own (bm25 in bm25-rm3 does not count)."""
    return [name for name in names if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)]


def test_summarize_help_lists_every_retriever() -> None:
    help_text = _option_help("summarize", "--retriever")
    assert _names_missing(help_text, RETRIEVER_NAMES) == [], help_text
    # summarize reads RAPTOR's tree too (citesum tree), which search does not
    assert _names_missing(help_text, ["raptor"]) == [], help_text


@pytest.mark.parametrize("name", ["hybrid:<a>+<b>", "lightpal[:<base>]", "promptrank[:<base>]"])
def test_summarize_help_shows_how_a_retriever_picks_its_parts(name: str) -> None:
    assert name in _option_help("summarize", "--retriever")


def test_search_help_lists_the_same_retrievers() -> None:
    help_text = _option_help("search", "--retriever")
    assert _names_missing(help_text, RETRIEVER_NAMES) == [], help_text
