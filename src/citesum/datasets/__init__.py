"""Loaders for evaluation datasets: SummHay haystacks, ODSum Story / Meeting and BEIR folders."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from citesum.types import Document


@dataclass(frozen=True)
class Query:
    """A query with graded relevance of document ids (and reference summaries when the dataset has them)."""

    id: str
    text: str
    relevance: Mapping[str, int]
    references: tuple[str, ...] = ()
    metadata: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Dataset:
    name: str
    documents: list[Document]
    queries: list[Query]


DATASETS = ("summhay", "odsum-story", "odsum-meeting", "beir")


def load_dataset(name: str, path: str) -> Dataset:
    """Dataset by name: ``summhay`` (a topic_*.json file), ``odsum-story`` (a documents_*.jsonl file),
    ``odsum-meeting`` (the meeting folder holding transcripts/ and queries_*.json), ``beir`` (a BEIR folder's
    corpus.jsonl alone: its queries and qrels, by split, come from citesum.datasets.beir.load_beir)."""
    from citesum.errors import unknown_name_error

    if name == "summhay":
        from citesum.datasets.summhay import load_haystack

        return load_haystack(path).as_dataset()
    if name == "odsum-story":
        from citesum.datasets.odsum import load_story

        return load_story(path)
    if name == "odsum-meeting":
        from citesum.datasets.odsum import load_meeting

        return load_meeting(path)
    if name == "beir":
        from citesum.datasets.beir import load_beir

        return load_beir(path, queries=False)
    raise unknown_name_error("dataset", name, list(DATASETS))
