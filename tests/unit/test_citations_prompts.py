from __future__ import annotations

from pathlib import Path

import pytest

from citesum.errors import ConfigError
from citesum.summarize.citations import citation_numbers, parse_output
from citesum.summarize.prompts import TEMPLATES, get_template

NUMBERS = {1: "doc-a", 2: "doc-b", 3: "doc-c", 7: "doc-g"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Fact [3].", [3]), ("Fact [3][7].", [3, 7]), ("Fact [3, 7].", [3, 7]), ("Fact [Doc 3].", [3]),
     ("Fact [Article 3] and [document 7].", [3, 7]), ("Fact [3; 7] [3].", [3, 7]), ("No citation (3).", [])],
)
def test_citation_forms(text: str, expected: list[int]) -> None:
    assert citation_numbers(text) == expected


def test_bullets_headings_and_unknown_numbers() -> None:
    output = """Here are the key insights:

## Water
- **Rates** rise by 7.5 percent [1][3].
* The reservoir is at 41 percent [Doc 2, Doc 9].
1. A plant is planned [12].
2) Nothing cited here
"""
    parsed = parse_output(output, NUMBERS)
    assert [b.text for b in parsed.bullets] == ["Rates rise by 7.5 percent.", "The reservoir is at 41 percent.",
                                                "A plant is planned.", "Nothing cited here"]
    assert [b.citations for b in parsed.bullets] == [("doc-a", "doc-c"), ("doc-b",), (), ()]
    assert parsed.dropped_numbers == (9, 12)  # never passed on


def test_prose_answer_becomes_sentence_bullets() -> None:
    parsed = parse_output("Rates rise [1]. The plant opens in 2029 [2][3].", NUMBERS)
    assert [(b.text, b.numbers) for b in parsed.bullets] == [("Rates rise.", (1,)), ("The plant opens in 2029.", (2, 3))]


def test_empty_output_has_no_bullets() -> None:
    assert parse_output("   \n", NUMBERS).bullets == ()


def test_templates_render_and_validate(tmp_path: Path) -> None:
    text = TEMPLATES["summhay"].render(context="Document [1] T\nx", query="What?", bullets=4)
    assert "exactly 4 bullet points" in text and "Query: What?" in text
    answer = TEMPLATES["answer"].render(context="C", query="Q", num_words=120)
    assert answer.endswith("Limit your response to a maximum of 120 words.")
    custom = tmp_path / "mine.txt"
    custom.write_text("Docs:\n{context}\nQ: {query}\nIn {num_words} words.")
    assert get_template(str(custom)).render(context="c", query="q", num_words=9) == "Docs:\nc\nQ: q\nIn 9 words."
    (tmp_path / "bad.txt").write_text("Only {context} and {answer}")
    with pytest.raises(ConfigError, match=r"lacks required field\(s\): \{query\}"):
        get_template(str(tmp_path / "bad.txt"))
    (tmp_path / "unknown.txt").write_text("{context} {query} {style}")
    with pytest.raises(ConfigError, match=r"unknown field\(s\) \{style\}"):
        get_template(str(tmp_path / "unknown.txt"))
    with pytest.raises(ConfigError, match="answer, cited, long, summhay"):
        get_template("nope")
