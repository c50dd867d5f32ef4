"""ODSum (Zhou et al., 2023) in its open-domain setting, as LightPAL evaluates it."""

from __future__ import annotations

import json
from pathlib import Path

from citesum.datasets import Dataset, Query
from citesum.errors import IngestError
from citesum.ingest.base import decode_text
from citesum.types import Document


def load_story(path: str | Path) -> Dataset:
    """ODSum Story: every section of every story is a document; a question's relevant documents are the
    sections of its own story; the 4 human summaries are the references."""
    documents: list[Document] = []
    queries: list[Query] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        for line_number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            story = json.loads(line)
            story_id = story["metadata"].get("uid") or f"story{line_number}"
            section_ids = []
            for number, section in enumerate(story["divided_document"]):
                section_id = f"{story_id}#{number}"
                section_ids.append(section_id)
                documents.append(
                    Document(id=section_id, title=f"{story['title']} ({number + 1})", text=section,
                             source=f"odsum-story:{Path(path).name}", format="odsum-story",
                             metadata={"story": story_id})
                )
            for question in story["questions"]:
                queries.append(
                    Query(
                        id=f"{story_id}/q{question['question_number']}",
                        text=question["question_text"],
                        relevance={section_id: 1 for section_id in section_ids},
                        references=tuple(r["response_text"] for r in question.get("responses", [])),
                    )
                )
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise IngestError(f"{path}: not an ODSum story file ({type(exc).__name__}: {exc})") from exc
    return Dataset(name="odsum-story", documents=documents, queries=queries)


def load_meeting(folder: str | Path, split: str = "dev") -> Dataset:
    """ODSum Meeting: one document per transcript in ``transcripts/``; queries from ``queries_<split>.json``."""
    folder = Path(folder)
    try:
        documents = [
            Document(id=file.stem, title=file.stem, text=decode_text(file.read_bytes()), source=str(file),
                     format="odsum-meeting")
            for file in sorted((folder / "transcripts").glob("*.txt"))
        ]
        raw = json.loads((folder / f"queries_{split}.json").read_text(encoding="utf-8"))
        entries = raw.items() if isinstance(raw, dict) else enumerate(raw)
        queries = [
            Query(id=str(key), text=entry["query"], relevance={m: 1 for m in entry["meetings_list"]},
                  references=(entry["answer"],) if entry.get("answer") else ())
            for key, entry in entries
        ]
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise IngestError(f"{folder}: not an ODSum meeting folder ({type(exc).__name__}: {exc})") from exc
    return Dataset(name="odsum-meeting", documents=documents, queries=queries)
