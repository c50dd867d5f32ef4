"""BEIR's folder format (Thakur et al., 2021): ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

corpus.jsonl: one ``{"_id", "title", "text"}`` a line (other keys kept as metadata); queries.jsonl: one
``{"_id", "text"}`` a line; qrels/<split>.tsv: a ``query-id<TAB>corpus-id<TAB>score`` header, then one graded
judgment a line. A dataset's queries are those of the split with at least one judgment.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from citesum.datasets import Dataset, Query
from citesum.errors import IngestError
from citesum.types import Document

DEFAULT_SPLIT = "test"


def splits(folder: str | Path) -> list[str]:
    """The splits a BEIR folder judges (the stems of ``qrels/*.tsv``), sorted."""
    return sorted(p.stem for p in (Path(folder) / "qrels").glob("*.tsv"))


def load_beir(folder: str | Path, split: str | None = None, *, queries: bool = True) -> Dataset:
    """A BEIR folder as a dataset. ``split`` None: ``test`` when the folder has it, else its only split; a
    folder without qrels gives no queries. ``queries`` False: the corpus alone (what indexing reads; the
    queries and qrels are not opened).

    Every malformed line is an IngestError naming the file and the line, and so is a judgment of a query
    queries.jsonl does not have. A judged document the corpus does not have stays relevant, as in BEIR's own
    evaluation: no retriever finds it, and the recall says so."""
    folder = Path(folder)
    if not (folder / "corpus.jsonl").is_file():
        raise IngestError(f"{folder}: not a BEIR folder (it needs corpus.jsonl, and queries.jsonl and "
                          "qrels/<split>.tsv to be evaluated on)")
    documents = [
        Document(id=str(row["_id"]), title=str(row.get("title") or ""), text=str(row.get("text") or ""),
                 source=f"beir:{folder.name}", format="beir",
                 metadata={k: v for k, v in row.items() if k not in ("_id", "title", "text")})
        for row in _json_lines(folder / "corpus.jsonl", ("_id",))
    ]
    if not queries or (split is None and not splits(folder)):
        return Dataset(name=f"beir:{folder.name}", documents=documents, queries=[])
    split = _chosen_split(folder, split)
    texts = {str(row["_id"]): str(row["text"]) for row in _json_lines(folder / "queries.jsonl", ("_id", "text"))}
    judged = _qrels(folder / "qrels" / f"{split}.tsv")
    for query_id in judged:
        if query_id not in texts:
            raise IngestError(f"{folder / 'qrels' / f'{split}.tsv'}: query {query_id!r} is not in queries.jsonl")
    judged_queries = [Query(id=query_id, text=texts[query_id], relevance=relevance)
                      for query_id, relevance in judged.items()]
    return Dataset(name=f"beir:{folder.name}:{split}", documents=documents, queries=judged_queries)


def write_beir(dataset: Dataset, folder: str | Path, split: str = DEFAULT_SPLIT,
               other_splits: Mapping[str, Sequence[Query]] | None = None) -> Path:
    """Write ``dataset`` as a BEIR folder: its queries' relevance as ``qrels/<split>.tsv``, and the queries of
    ``other_splits`` (split name -> queries) as theirs; returns the folder."""
    folder = Path(folder)
    by_split = {split: dataset.queries, **(other_splits or {})}
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as corpus:
        for document in dataset.documents:
            corpus.write(json.dumps({"_id": document.id, "title": document.title, "text": document.text,
                                     **dict(document.metadata)}, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as queries:
        texts = {q.id: q.text for split_queries in by_split.values() for q in split_queries}
        for query_id, text in texts.items():
            queries.write(json.dumps({"_id": query_id, "text": text}, ensure_ascii=False) + "\n")
    for name, split_queries in by_split.items():
        with open(folder / "qrels" / f"{name}.tsv", "w", encoding="utf-8", newline="") as qrels:
            writer = csv.writer(qrels, delimiter="\t", lineterminator="\n")
            writer.writerow(["query-id", "corpus-id", "score"])
            for query in split_queries:
                writer.writerows([query.id, document_id, grade] for document_id, grade in query.relevance.items())
    return folder


def _chosen_split(folder: Path, split: str | None) -> str:
    available = splits(folder)
    if split is None:
        split = DEFAULT_SPLIT if DEFAULT_SPLIT in available or len(available) != 1 else available[0]
    if split not in available:
        raise IngestError(f"{folder}: no qrels/{split}.tsv; it has "
                          f"{', '.join(f'qrels/{s}.tsv' for s in available) or 'no qrels'}")
    return split


def _json_lines(path: Path, required: tuple[str, ...]) -> Iterator[dict]:
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise IngestError(f"{path}:{number}: not JSON ({exc})") from exc
                if not isinstance(row, dict) or any(key not in row for key in required):
                    raise IngestError(f"{path}:{number}: a line needs the keys {', '.join(required)}")
                yield row
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from exc


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    judged: dict[str, dict[str, int]] = {}
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            for number, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
                if not row or (number == 1 and row[0] == "query-id"):
                    continue
                try:
                    if len(row) not in (3, 4):
                        raise ValueError(f"{len(row)} columns")
                    # BEIR's three columns, or TREC's four (query, iteration, document, grade)
                    query_id, document_id, grade = row if len(row) == 3 else (row[0], row[2], row[3])
                    score = int(grade)
                except ValueError as exc:
                    raise IngestError(f"{path}:{number}: expected query-id, corpus-id and an integer score "
                                      f"separated by tabs, got {row!r}") from exc
                judged.setdefault(query_id, {})[document_id] = score
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from exc
    return judged
