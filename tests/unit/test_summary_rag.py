from __future__ import annotations

from pathlib import Path

import pytest

from citesum.errors import ConfigError, LLMError
from citesum.index.store import Index, IndexSettings
from citesum.llm.fake import FakeLLM
from citesum.summary_rag import (
    CentralSentences, LLMSummaries, build_summary_index, summaries_for, summary_rag_context)
from citesum.tokens import get_tokenizer
from citesum.types import Document

WATER = ("Water Report\n\nThe Lakemont reservoir fell to 41 percent of capacity in August. Engineers say leaking "
         "cast-iron pipes lose 18 percent of treated water. The council approved a desalination plant at Port "
         "Ardeen. Residents gathered at the community hall on Monday. A spokesperson declined to comment.")
TRANSIT = ("Transit Notes\n\nThe Eastline tram will connect the airport to the central station in 22 minutes. "
           "Bus fares for students were eliminated in March. Half of the city buses will be electric by 2027.")
HOUSING = ("Housing\n\nMedian rent for a two-bedroom flat reached $2,340 a month. Only 3,100 building permits were "
           "issued last year. The rental vacancy rate dropped to 1.8 percent.")


class Recording(CentralSentences):
    """The offline summarizer, counting the documents it is asked to summarize."""

    def __init__(self) -> None:
        super().__init__(max_tokens=30)
        self.seen: list[str] = []

    def summarize_document(self, document: Document) -> str:
        self.seen.append(document.id)
        return super().summarize_document(document)


@pytest.fixture
def content(tmp_path: Path) -> Index:
    index = Index.create(tmp_path / "content", IndexSettings())
    index.add([Document("water.txt", "Water Report", WATER), Document("transit.txt", "Transit Notes", TRANSIT),
               Document("housing.txt", "Housing", HOUSING)])
    return index


def test_central_sentences_keep_the_document_order_within_the_length(content: Index) -> None:
    summarizer = CentralSentences(max_tokens=30)
    summary = summarizer.summarize_document(next(d for d in content.documents() if d.id == "water.txt"))
    assert get_tokenizer().count(summary) <= 30 and "Water Report" not in summary  # a heading is not a sentence
    sentences = [s.strip() + "." for s in summary.rstrip(".").split(". ")]
    positions = [WATER.index(s) for s in sentences]
    assert len(sentences) >= 1 and positions == sorted(positions)
    assert CentralSentences().summarize_document(Document("t", "Title only", "Short heading")) == "Short heading"


def test_the_summary_index_is_incremental(tmp_path: Path, content: Index) -> None:
    recording = Recording()
    summaries, report = build_summary_index(content, tmp_path / "summaries", recording)
    assert (report.summarized, report.unchanged, report.deleted) == (3, 0, 0) and len(summaries) == 3
    assert summaries.document("water.txt").metadata["summarizer"] == "central-sentences"
    recording.seen.clear()
    _, report = build_summary_index(content, tmp_path / "summaries", recording)
    assert recording.seen == [] and report.unchanged == 3
    content.update(upsert=[Document("transit.txt", "Transit Notes", TRANSIT + " Night buses return in May.")],
                   delete=["housing.txt"])
    with pytest.raises(ConfigError, match="1 document\\(s\\) new or changed, 1 gone.*citesum summary-index"):
        summaries_for(content, tmp_path / "summaries")
    summaries, report = build_summary_index(content, tmp_path / "summaries", recording)
    assert recording.seen == ["transit.txt"] and (report.summarized, report.deleted) == (1, 1)
    assert summaries_for(content, tmp_path / "summaries").document("transit.txt").text


def test_a_summary_index_goes_into_an_empty_folder_but_never_over_documents(tmp_path: Path, content: Index) -> None:
    (tmp_path / "made-by-hand").mkdir()
    assert len(build_summary_index(content, tmp_path / "made-by-hand", CentralSentences())[0]) == 3
    with pytest.raises(ConfigError, match="a folder of its own"):
        build_summary_index(content, content.path, CentralSentences())
    other = Index.create(tmp_path / "other", IndexSettings(unit="document"))
    other.add([Document("notes.txt", "Notes", "Field notes that must survive.")])
    with pytest.raises(ConfigError, match="not a summary index .*'notes.txt'.*nothing was changed"):
        build_summary_index(content, tmp_path / "other", CentralSentences())
    assert [d.id for d in Index.open(tmp_path / "other").documents()] == ["notes.txt"]


def test_llm_summaries_fall_back_to_central_sentences_and_are_reported(tmp_path: Path, content: Index) -> None:
    llm = FakeLLM(["Transit: a 22-minute Eastline tram, free student fares, electric buses by 2027.",
                   LLMError("HTTP 503 after 4 attempts"), ""])
    summaries, report = build_summary_index(content, tmp_path / "s", LLMSummaries(llm), fallback=CentralSentences())
    # documents come in the content index's order: water, transit, housing
    ids = [d.id for d in content.documents()]
    assert all(d.text in prompt for d, prompt in zip(content.documents(), llm.prompts))
    assert summaries.document(ids[0]).text.startswith("Transit: a 22-minute")
    assert [doc_id for doc_id, _ in report.fallbacks] == ids[1:]
    assert "503" in report.fallbacks[0][1] and "empty summary" in report.fallbacks[1][1]
    assert summaries.document(ids[1]).metadata["summarizer"] == "central-sentences"
    with pytest.raises(LLMError):  # without a fallback the error reaches the caller; nothing is written
        build_summary_index(content, tmp_path / "t", LLMSummaries(FakeLLM([LLMError("down")])))
    assert len(Index.open(tmp_path / "t")) == 0


def test_context_gives_summary_and_content_until_the_character_limit(tmp_path: Path, content: Index) -> None:
    summaries, _ = build_summary_index(content, tmp_path / "s", CentralSentences(max_tokens=20))
    query = "reservoir capacity and leaking pipes"
    whole = summary_rag_context(query, summaries, content, retriever="bm25", documents=2)
    assert whole.blocks[0].document_id == "water.txt" and len(whole.blocks) == 2
    assert all("Content:\n" in b.text for b in whole.blocks) and whole.order == "summary-rag"
    first = len(whole.blocks[0].text)
    tight = summary_rag_context(query, summaries, content, retriever="bm25", documents=3, char_limit=first + 1)
    assert "Content:\n" in tight.blocks[0].text
    assert all(b.text.startswith("Summary:\n") and "Content:" not in b.text for b in tight.blocks[1:])
    assert len(tight.blocks) == 3 and tight.token_count > 0
    with pytest.raises(ConfigError):
        summary_rag_context(query, summaries, content, documents=0)


def test_after_the_limit_a_shorter_later_document_gets_its_summary_only(tmp_path: Path) -> None:
    content = Index.create(tmp_path / "content", IndexSettings(unit="document"))
    long_text = " ".join(f"Section {k} of the report covers reservoir pipes, staffing and budgets." for k in range(40))
    content.add([Document("a.txt", "A", "The reservoir is low, pipes leak and a desalination plant is planned."),
                 Document("b.txt", "B", long_text),
                 Document("c.txt", "C", "A reservoir walk opens in May.")])
    summaries, _ = build_summary_index(content, tmp_path / "s", CentralSentences(max_tokens=12))
    query = "reservoir pipes desalination"
    roomy = summary_rag_context(query, summaries, content, retriever="bm25", documents=3, char_limit=10**6)
    assert [b.document_id for b in roomy.blocks] == ["a.txt", "b.txt", "c.txt"]  # the premise: b ranks above c
    full_a, full_b, full_c = (len(b.text) for b in roomy.blocks)
    summary_b = len(f"Summary:\n{summaries.document('b.txt').text}")
    # room for a in full, b's summary and c in full, but not for b in full: c must not get its content either
    limit = full_a + summary_b + full_c + 100
    assert limit < full_a + full_b
    tight = summary_rag_context(query, summaries, content, retriever="bm25", documents=3, char_limit=limit)
    assert ["Content:" in b.text for b in tight.blocks] == [True, False, False]


def test_evidence_of_a_summary_rag_context_is_in_the_documents_at_their_offsets(tmp_path: Path,
                                                                                content: Index) -> None:
    """The blocks read "Summary: ... Content: <document>": evidence spans are offsets into the document, never
    into the labels or the summary (they were shifted by the summary's length before)."""
    from citesum.summarize import summarize_context
    from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer
    from citesum.summarize.verify import check_summary

    summaries, _ = build_summary_index(content, tmp_path / "s", CentralSentences(max_tokens=20))
    query = "reservoir capacity, leaking pipes and the tram to the airport"
    for char_limit in (10**6, 400):  # content for all; then summaries only after the first
        context = summary_rag_context(query, summaries, content, retriever="bm25", documents=3, char_limit=char_limit)
        summary = summarize_context(query, context, ExtractiveSummarizer(ExtractiveOptions(bullets=3)))
        _, checked = check_summary(summary, repair=True)
        spans = [e for bullet in checked for e in bullet.evidence] + [
            c.evidence for bullet in checked for c in bullet.checks if c.evidence is not None]
        assert spans
        for evidence in spans:
            document = content.document(evidence.document_id).text
            assert document[evidence.char_start:evidence.char_end] == evidence.text
            assert "Summary:" not in evidence.text and "Content:" not in evidence.text
