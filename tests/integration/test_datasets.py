"""Dataset loaders on the real evaluation data in ../shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest

from citesum.datasets import load_dataset
from citesum.datasets.summhay import load_haystack
from citesum.errors import IngestError

pytestmark = pytest.mark.shared_data


@pytest.mark.parametrize("topic", ["topic_news1.json", "topic_news2.json", "topic_news4.json"])
def test_summhay_haystacks(shared_data: Path, topic: str) -> None:
    haystack = load_haystack(shared_data / "summhay" / topic)
    assert len(haystack.documents) == 100
    assert [d.metadata["idx"] for d in haystack.documents] == list(range(100))
    assert all(d.title == f"Document {d.metadata['idx'] + 1}" for d in haystack.documents)
    for subtopic in haystack.subtopics:
        assert subtopic.query and subtopic.insights
        assert set(subtopic.retriever_scores) >= {"keywords", "vector", "dwzhu/e5-base-4k", "rerank3", "oracle"}
        # every insight occurs in several documents (SummHay's construction: 5+ in most cases)
        assert all(len(docs) >= 2 for docs in subtopic.insight_documents.values())
        # the stored oracle score is the number of the subtopic's insights a document contains
        oracle = subtopic.retriever_scores["oracle"]
        assert all(oracle.get(doc_id) == grade for doc_id, grade in subtopic.relevance.items())
        assert len(subtopic.summaries) > 50 and subtopic.eval_summaries


def test_odsum_story_and_meeting(shared_data: Path) -> None:
    story = load_dataset("odsum-story", str(shared_data / "odsum" / "story" / "documents_dev.jsonl"))
    assert len(story.documents) == 238 and len(story.queries) == 125
    ids = {d.id for d in story.documents}
    assert all(set(q.relevance) <= ids and len(q.references) == 4 for q in story.queries)

    meeting = load_dataset("odsum-meeting", str(shared_data / "odsum" / "meeting"))
    assert len(meeting.documents) == 232 and len(meeting.queries) == 296
    names = {d.id for d in meeting.documents}
    assert all(set(q.relevance) <= names and q.references for q in meeting.queries)


def test_wrong_files_give_clear_errors(tmp_path: Path, shared_data: Path) -> None:
    (tmp_path / "x.json").write_text('{"topic": "no documents"}')
    with pytest.raises(IngestError, match="not a SummHay haystack"):
        load_haystack(tmp_path / "x.json")
    with pytest.raises(IngestError, match="not an ODSum story file"):
        load_dataset("odsum-story", str(shared_data / "summhay" / "topic_news1.json"))
