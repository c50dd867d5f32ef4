"""SummHay haystacks (Laban et al., 2024): documents, subtopics, insights and the stored retriever scores."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

from citesum.datasets import Dataset, Query
from citesum.errors import IngestError
from citesum.types import Document


@dataclass(frozen=True)
class Insight:
    id: str
    name: str
    text: str


@dataclass(frozen=True)
class Subtopic:
    id: str
    name: str
    description: str
    query: str
    insights: tuple[Insight, ...]
    # insight id -> ids of the documents that contain it
    insight_documents: Mapping[str, tuple[str, ...]]
    # retriever name (keywords, vector, dwzhu/e5-base-4k, rerank3, random, oracle) -> {document id: score}
    retriever_scores: Mapping[str, Mapping[str, float]]
    summaries: Mapping[str, list[str]]
    eval_summaries: Mapping[str, list[dict[str, Any]]]

    @property
    def relevance(self) -> dict[str, int]:
        """Graded relevance: how many of this subtopic's insights each document contains."""
        grades: dict[str, int] = {}
        for documents in self.insight_documents.values():
            for document_id in documents:
                grades[document_id] = grades.get(document_id, 0) + 1
        return grades


@dataclass(frozen=True)
class Haystack:
    topic: str
    documents: list[Document]
    subtopics: list[Subtopic]

    @cached_property
    def citation_numbers(self) -> dict[str, int]:
        """Document id -> its citation number in the paper's summaries (1-based position, ``idx + 1``)."""
        return {d.id: int(d.metadata["idx"]) + 1 for d in self.documents}

    def as_dataset(self) -> Dataset:
        queries = [
            Query(id=s.id, text=s.query, relevance=s.relevance, metadata={"subtopic": s.name, "insights": len(s.insights)})
            for s in self.subtopics
        ]
        return Dataset(name=f"summhay:{self.topic}", documents=self.documents, queries=queries)


def _literal(value: Any) -> Any:
    """Some SummHay files store lists and dicts as Python-literal strings; accept both forms."""
    if isinstance(value, str):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return json.loads(value)
    return value


def load_haystack(path: str | Path) -> Haystack:
    """Load one ``topic_*.json`` haystack; document order is ``idx`` (citation number = idx + 1)."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        rows = sorted(raw["documents"], key=lambda d: int(d["idx"]))
        documents = [
            Document(
                id=row["document_id"],
                title=f"Document {int(row['idx']) + 1}",
                text=row["document_text"],
                source=f"summhay:{Path(path).name}",
                format="summhay",
                metadata={"idx": int(row["idx"])},
            )
            for row in rows
        ]
        contained = {row["document_id"]: set(_literal(row["insights_included"])) for row in rows}
        subtopics = []
        for entry in raw["subtopics"]:
            insights = tuple(
                Insight(i["insight_id"], i.get("insight_name", ""), i["insight"]) for i in _literal(entry["insights"])
            )
            subtopics.append(
                Subtopic(
                    id=entry["subtopic_id"],
                    name=entry.get("subtopic_name", ""),
                    description=entry.get("subtopic", ""),
                    query=entry["query"],
                    insights=insights,
                    insight_documents={
                        insight.id: tuple(d.id for d in documents if insight.id in contained[d.id]) for insight in insights
                    },
                    retriever_scores=_literal(entry.get("retriever", {})),
                    summaries=_literal(entry.get("summaries", {})),
                    eval_summaries=_literal(entry.get("eval_summaries", {})),
                )
            )
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise IngestError(f"{path}: not a SummHay haystack file ({type(exc).__name__}: {exc})") from exc
    return Haystack(topic=raw.get("topic", Path(path).stem), documents=documents, subtopics=subtopics)
