"""The realdocs metrics on tiny hand-made inputs: each one scoring 1 (or true) and 0 (or false).

Run: python -m pytest benchmarks/realdocs/test_metrics.py
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parents[1] / "realdocs.py"
_SPEC = importlib.util.spec_from_file_location("realdocs_benchmark", _SCRIPT)
rd = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
_SPEC.loader.exec_module(rd)  # type: ignore[union-attr]

WRAPPED = """libffi notes
============

Some programs may not know at the time of compilation what arguments
are to be passed to a function.  libffi can be used in such programs.

 * ffi_prep_cif may modify the ffi_type objects passed to it.
"""
NAVIGATION = "Next: Using libffi, Previous: libffi, Up: libffi [Index]\nlibffi is not completely thread-safe.\n"


def test_token_f1_both_ways() -> None:
    assert rd.token_f1("Is zlib thread-safe?", "is ZLIB thread safe") == 1.0
    assert rd.token_f1("zlib is thread safe", "SQLite uses dynamic typing") == 0.0
    assert rd.token_f1("", "anything") == 0.0


def test_contained_both_ways() -> None:
    assert rd.contained("the zlib format", "Data in the zlib format is not gzip.")
    assert not rd.contained("zlib format", "Data in the zlib format is not gzip.")  # too short to count
    assert not rd.contained("the gzip format", "Data in the zlib format is not gzip.")


def test_matches_both_ways() -> None:
    gold = "SQLite is in the public domain."
    assert rd.matches("Yes. SQLite is in the public domain.", gold)  # the gold is held in the bullet
    assert rd.matches("SQLite is in the public domain", gold)
    assert not rd.matches("SQLite uses dynamic typing.", gold)


def test_whole_sentence_both_ways() -> None:
    texts = [WRAPPED, NAVIGATION]
    assert rd.is_whole_sentence("Some programs may not know at the time of compilation what arguments are to be "
                                "passed to a function.", texts)
    assert rd.is_whole_sentence("libffi can be used in such programs.", texts)  # after ".  "
    assert rd.is_whole_sentence("ffi_prep_cif may modify the ffi_type objects passed to it.", texts)  # list item
    assert rd.is_whole_sentence("libffi is not completely thread-safe.", texts)  # after a navigation bar's line
    assert rd.whole_sentence_problem("are to be passed to a function.", texts) == "starts mid-sentence"
    assert rd.whole_sentence_problem("Some programs may not know", texts) == "no sentence end"
    assert rd.whole_sentence_problem("Next: Using libffi, Previous: libffi.", texts) == "navigation"
    assert rd.whole_sentence_problem("* ffi_prep_cif may modify the ffi_type objects passed to it.", texts) \
        == "list marker"
    assert rd.whole_sentence_problem("libffi is thread-safe.", texts) == "not in the documents"


def test_starts_sentence_both_ways() -> None:
    text = "First one.  Second one\ncontinues here.\n\nThird."
    assert rd.starts_sentence(text, 0)
    assert rd.starts_sentence(text, text.index("Second"))
    assert rd.starts_sentence(text, text.index("Third"))
    assert not rd.starts_sentence(text, text.index("continues"))
    assert not rd.starts_sentence(text, text.index("one\n"))
    faq = "Q: I have forgotten some URLs.. Should I redo all? A: No, if you have kept the cache, nothing is lost."
    assert rd.starts_sentence(faq, faq.index("No, if")) and not rd.starts_sentence(faq, faq.index("if you"))
    assert not rd.starts_sentence("Set the value of A: No, it", len("Set the value of A: "))
    # an answer's label opening its line, under a question or a problem that ends without a full stop
    labelled = "(FAQ 16d) I set LOGFILE but the log still goes elsewhere\nAnswer: First of all, it is simple."
    assert rd.starts_sentence(labelled, labelled.index("First of all"))
    awstats = "PROBLEM: I have no image shown.\nSOLUTION: With Apache web server, you might have troubles."
    assert rd.starts_sentence(awstats, awstats.index("With Apache"))
    assert not rd.starts_sentence("It needs the SOLUTION: With care", len("It needs the SOLUTION: "))


def test_fragment_rate_both_ways() -> None:
    assert rd.fragment_rate(["libffi can be used in such programs."], [WRAPPED]) == 0.0
    assert rd.fragment_rate(["are to be passed to a function."], [WRAPPED]) == 1.0
    assert rd.fragment_rate([], [WRAPPED]) is None


def test_answer_precision_both_ways() -> None:
    acceptable = ["SQLite is in the public domain.", "You can do anything you want with it."]
    assert rd.answer_precision(["SQLite is in the public domain."], acceptable) == 1.0
    assert rd.answer_precision(["SQLite uses dynamic typing."], acceptable) == 0.0
    assert rd.answer_precision([], acceptable) is None


def test_states_gold_both_ways() -> None:
    gold = ["libffi is not completely thread-safe."]
    assert rd.states_gold(["Note: libffi is not completely thread-safe."], gold)
    assert not rd.states_gold(["zlib uses no global variables."], gold)
    bullets = ["zlib uses no global variables.", "libffi is not completely thread-safe."]
    assert rd.gold_stated(bullets, gold + ["x y z w"]) == [True, False]


def test_citation_correctness_both_ways() -> None:
    document = "SQLite is in the public\ndomain.  It uses dynamic typing."
    assert rd.citation_correctness([("SQLite is in the public domain.", document)]) == 1.0
    assert rd.citation_correctness([("SQLite uses dynamic typing everywhere.", document)]) == 1.0  # F1 >= 0.6
    assert rd.citation_correctness([("zlib is thread safe.", document)]) == 0.0
    assert rd.citation_correctness([("SQLite is in the public domain.", None)]) == 0.0  # not in the index
    assert rd.citation_correctness([]) is None


def test_abstained_both_ways() -> None:
    assert rd.abstained({"bullets": [], "abstained": True, "leads": [{"text": "x"}]})
    assert rd.abstained({"bullets": []})  # no flag: no bullet is an abstention
    assert not rd.abstained({"bullets": [{"text": "x"}]})
    assert not rd.abstained({"bullets": [{"text": "x"}], "abstained": False})


def _row(kind: str, bullets: list[dict], stated: list[bool], abstained: bool) -> dict:
    return {"kind": kind, "bullets": bullets, "gold_stated": stated, "abstained": abstained, "seconds": 1.0}


def _bullet(fragment: bool, answers: bool, correct: bool) -> dict:
    return {"fragment": fragment, "fragment_reason": "starts mid-sentence" if fragment else "", "answers": answers,
            "citations": [{"correct": correct}]}


@pytest.mark.parametrize("good", [True, False])
def test_aggregate_both_ways(good: bool) -> None:
    rows = [_row("specific", [_bullet(not good, good, good)], [good], False),
            _row("unanswerable", [] if good else [_bullet(True, False, True)], [], good)]
    metrics = rd.aggregate(rows)
    expected = 100.0 if good else 0.0
    assert metrics["answer_precision"] == expected
    assert metrics["answer_coverage"] == expected
    assert metrics["specific_gold_rate"] == expected
    assert metrics["abstention"] == expected
    assert metrics["fragment_rate"] == 100.0 - expected
    assert metrics["false_abstention"] == 0.0


def test_heading_merged_both_ways() -> None:
    text = "  * Security and code quality\n\n    Security matters because man can be setuid.\n"
    assert rd.merges_heading("Security and code quality\n\n    Security matters because man can be setuid.")
    assert rd.whole_sentence_problem("Security and code quality Security matters because man can be setuid.",
                                     [text]) == "heading merged"
    assert rd.is_whole_sentence("Security matters because man can be setuid.", [text])
    assert not rd.merges_heading("dpkg will run the postinst script as:\n\n   postinst triggered")
    sphinx = "Can I delete Python?¶\nThat depends on where Python came from.\n"
    assert rd.whole_sentence_problem("Can I delete Python?¶ That depends on where Python came from.", [sphinx]) \
        == "heading merged"
    assert rd.is_whole_sentence("That depends on where Python came from.", [sphinx])


def test_leads_stating_gold_both_ways() -> None:
    question = {"id": "x-s01", "kind": "specific", "question": "Is libffi thread-safe?",
                "gold": [{"sentence": "libffi is not completely thread-safe."}]}
    leads = [{"text": "Some programs may not know what arguments are to be passed."},
             {"text": "libffi is not completely thread-safe."}]
    turned_away = rd.score_question(question, {"bullets": [], "abstained": True, "leads": leads}, 1.0, {}, [])
    assert turned_away["leads_stating_gold"] == [2] and turned_away["gold_stated"] == [False]
    off_topic = rd.score_question(question, {"bullets": [], "abstained": True, "leads": leads[:1]}, 1.0, {}, [])
    assert off_topic["leads_stating_gold"] == []
