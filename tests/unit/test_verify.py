from __future__ import annotations

import pytest

from citesum.errors import ConfigError
from citesum.summarize.verify import CitationVerifier


@pytest.fixture(scope="module")
def verifier(haystack) -> CitationVerifier:  # type: ignore[no-untyped-def]
    return CitationVerifier(haystack.documents)


def test_repair_keeps_supporting_documents_and_drops_the_rest(verifier: CitationVerifier, haystack) -> None:  # type: ignore[no-untyped-def]
    gold = set(haystack.gold["water-reservoir"])
    wrong = next(d.id for d in haystack.documents if d.id not in gold)
    right = sorted(gold)[0]
    result = verifier.verify("The Lakemont reservoir dropped to 41 percent of capacity in August. [1][2]",
                             [right, wrong])
    assert set(result.citations) <= gold and len(result.citations) >= 0.8 * len(gold)
    assert result.removed == (wrong,) and set(result.added) == set(result.citations) - {right}
    checks = {c.document_id: c for c in result.checks}
    assert checks[right].supported and not checks[wrong].supported
    # the evidence is an exact span of the cited document
    documents = {d.id: d for d in haystack.documents}
    for evidence in result.evidence:
        assert documents[evidence.document_id].text[evidence.char_start : evidence.char_end] == evidence.text
        assert "41 percent" in evidence.text
    assert result.text == "The Lakemont reservoir dropped to 41 percent of capacity in August."


def test_unknown_documents_and_odd_bullets(verifier: CitationVerifier) -> None:
    result = verifier.verify("Half of the 420 buses will be battery-electric by 2027.", ["no-such-document"])
    [check] = result.checks
    assert not check.supported and check.evidence is None and not verifier.is_known("no-such-document")
    assert result.citations  # the supporting documents are found anyway
    blank = verifier.verify("[3][4]", ["x"])  # only brackets, no statement
    assert blank.text == "" and blank.checks[0].supported is False


def test_empty_collection_and_bad_parameters() -> None:
    empty = CitationVerifier([])
    result = empty.verify("Anything at all.", ["a"])
    assert result.citations == () and result.evidence == () and not result.checks[0].supported
    with pytest.raises(ConfigError):
        CitationVerifier([], relative_threshold=0.0)
    with pytest.raises(ConfigError):
        CitationVerifier([], mix=1.5)


def test_threshold_trades_recall_for_precision(haystack) -> None:  # type: ignore[no-untyped-def]
    text = "Household water rates will rise by 7.5 percent on January 1."
    loose = CitationVerifier(haystack.documents, relative_threshold=0.3).verify(text, []).citations
    strict = CitationVerifier(haystack.documents, relative_threshold=0.95).verify(text, []).citations
    assert set(strict) <= set(loose) and len(strict) < len(loose)


def test_cli_summarize_with_repair_and_the_repair_command(tmp_path, haystack) -> None:  # type: ignore[no-untyped-def]
    import json

    from click.testing import CliRunner

    from citesum.cli import main

    runner = CliRunner()
    corpus = haystack.write(tmp_path / "corpus")
    index = str(tmp_path / "ix")
    assert runner.invoke(main, ["index", str(corpus), "--index", index, "--exclude", "gold.json"]).exit_code == 0
    result = runner.invoke(main, ["summarize", "What happened to the Lakemont reservoir?", "--index", index,
                                  "--bullets", "2", "--repair-citations", "--json"])
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    context_ids = {s["document_id"] for s in payload["sources"].values()}
    for bullet, verified in zip(payload["bullets"], payload["verification"]):
        assert set(bullet["citations"]) == set(verified["repaired_citations"]) <= context_ids
        for evidence in verified["evidence"]:
            text = (corpus / evidence["document_id"]).read_text()
            assert evidence["text"] in text

    lines = tmp_path / "summary.txt"
    lines.write_text("Intro line without a bullet.\n- The Lakemont reservoir fell to 41 percent of capacity [1][999]\n"
                     "- [see notes] nothing to verify here [abc]\n")
    result = runner.invoke(main, ["repair", str(lines), "--index", index, "--json"])
    assert result.exit_code == 0, result.stderr
    bullets = json.loads(result.stdout)["bullets"]
    assert len(bullets) == 2
    first = bullets[0]
    assert [c["document_id"] for c in first["checks"]] == ["doc001.txt", "#999"]  # [1] = first in collection order
    assert first["checks"][1]["supported"] is False and first["checks"][1]["evidence"] is None
    assert set(first["repaired_citations"]) <= set(haystack.gold["water-reservoir"])
    assert bullets[1]["repaired_citations"] == []  # nothing stated, nothing cited

    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps({"bullets": [{"text": "Household water rates rise 7.5 percent.", "citations": ["nope"]}]}))
    result = runner.invoke(main, ["repair", str(ours), "--index", index])
    assert result.exit_code == 0 and "unsupported: nope (not in the index)" in result.stderr
    # the code a bullet's sentence introduces (summarize --json's "code") is kept, under its line and in the JSON
    ours.write_text(json.dumps({"bullets": [{"text": "Set the reservoir alarm with:", "citations": [],
                                             "code": "alarm --level 40\nalarm --on"}]}))
    result = runner.invoke(main, ["repair", str(ours), "--index", index])
    assert result.stdout.splitlines() == ["Set the reservoir alarm with:", "      alarm --level 40", "      alarm --on"]
    result = runner.invoke(main, ["repair", str(ours), "--index", index, "--json"])
    assert json.loads(result.stdout)["bullets"][0]["code"] == "alarm --level 40\nalarm --on"

    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = runner.invoke(main, ["repair", str(empty), "--index", index])
    assert result.exit_code == 1 and "no bullets found" in result.stderr
    from citesum.index.store import Index, IndexSettings

    Index.create(tmp_path / "empty-ix", IndexSettings())
    result = runner.invoke(main, ["repair", str(lines), "--index", str(tmp_path / "empty-ix")])
    assert result.exit_code == 1 and "holds no documents" in result.stderr


def test_borderline_citations_are_confirmed_by_an_llm(haystack) -> None:  # type: ignore[no-untyped-def]
    from citesum.llm.fake import FakeLLM

    text = "Household water rates will rise by 7.5 percent on January 1."
    offline = CitationVerifier(haystack.documents, borderline=1.0)  # every document counts as borderline
    evidence = offline.evidence(text)
    llm = FakeLLM(["no"] * len(evidence))  # the LLM rejects everything it is asked about
    confirmed = CitationVerifier(haystack.documents, confirm=llm, borderline=1.0).verify(text, [])
    assert confirmed.citations == () and len(llm.requests) == len(evidence)
    assert "Statement: Household water rates" in llm.prompts[0] and "Passage: " in llm.prompts[0]
    # unreadable replies keep the offline decision
    garbled = CitationVerifier(haystack.documents, confirm=FakeLLM(["maybe?"] * len(evidence)), borderline=1.0)
    assert garbled.verify(text, []).citations == offline.verify(text, []).citations
