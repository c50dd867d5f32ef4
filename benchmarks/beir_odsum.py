"""ODSum written as BEIR folders, then BEIR's evaluation (NDCG@10, NDCG@100, Recall@100) of the retrievers and of
Summary RAG's summary index, through the same library calls as ``citesum eval retrieval``.

- odsum-story: corpus = every section of the dev and train stories (681 non-empty), queries = the questions as
  "<story title>: <question>" (the protocol of benchmarks/lightpal_odsum.py), qrels/dev.tsv and qrels/train.tsv
  (a question's relevant documents are its story's sections). Indexed one unit a section.
- odsum-meeting: corpus = the 232 transcripts, queries = the 296 dev queries, qrels/dev.tsv. Indexed in
  passages of 230 tokens (~1,000 characters); a transcript ranks by its best passages.

The summary index holds one offline summary per document (the central sentences, 200 tokens); the Summary RAG
paper's LLM summaries need a capable LLM. Nothing here was tuned on these queries.

Run: python benchmarks/beir_odsum.py [--cache DIR]
Writes: benchmarks/results/beir_odsum.json (and the BEIR folders under the cache directory)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import peak_rss_mb, write_result  # noqa: E402
from lightpal_odsum import MEETING, MEETING_CHUNK_TOKENS, STORY_DEV, STORY_TRAIN, titled  # noqa: E402

from citesum.datasets import Dataset, load_dataset  # noqa: E402
from citesum.datasets.beir import load_beir, write_beir  # noqa: E402
from citesum.evaluate.retrieval import evaluate_retrievers  # noqa: E402
from citesum.index.store import Index, IndexSettings  # noqa: E402
from citesum.retrieve.lightpal import build_passage_graph  # noqa: E402
from citesum.summary_rag import CentralSentences, build_summary_index  # noqa: E402

RETRIEVERS = ("bm25", "dense", "hybrid", "lightpal")
#: the Summary RAG paper's NDCG@100 change from indexing LLM summaries instead of chunks (its BEIR sets)
PAPER_SUMMARY_RAG = {"nfcorpus": "+16.5%", "trec-covid": "+12.2%", "scifact": "-7.9%"}


def write_folders(root: Path) -> dict[str, Path]:
    dev, train = load_dataset("odsum-story", str(STORY_DEV)), load_dataset("odsum-story", str(STORY_TRAIN))
    story = write_beir(Dataset("odsum-story", dev.documents + train.documents, titled(dev)), root / "odsum-story",
                       split="dev", other_splits={"train": titled(train)})
    meeting = load_dataset("odsum-meeting", str(MEETING))
    return {"odsum-story": story, "odsum-meeting": write_beir(meeting, root / "odsum-meeting", split="dev")}


def evaluate(name: str, folder: Path, settings: IndexSettings, root: Path) -> dict:
    corpus = load_beir(folder, "dev")
    content_path = root / f"{name}-index"
    started = time.perf_counter()
    content = Index.open(content_path) if (content_path / "index.sqlite").exists() else Index.create(content_path,
                                                                                                     settings)
    if len(content) == 0:
        content.add(corpus.documents)
        build_passage_graph(content).save(content.path)
    index_seconds = time.perf_counter() - started
    started = time.perf_counter()
    summaries, _ = build_summary_index(content, root / f"{name}-summaries", CentralSentences())
    build_passage_graph(summaries).save(summaries.path)  # lightpal over the summaries walks their own graph
    summary_seconds = time.perf_counter() - started
    out: dict[str, object] = {"documents": len(corpus.documents), "units": len(content),
                              "index_seconds": round(index_seconds, 1), "summary_seconds": round(summary_seconds, 1)}
    for split in ("dev", "train") if (folder / "qrels" / "train.tsv").exists() else ("dev",):
        queries = load_beir(folder, split).queries
        reports = evaluate_retrievers(queries, content, RETRIEVERS, summaries)
        for report in reports:
            print(name, split, report.ranker, {k: round(v, 4) for k, v in report.means.items()}, flush=True)
        out[split] = [{k: v for k, v in dataclasses.asdict(r).items() if k != "per_query"} for r in reports]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None, help="keep the BEIR folders and indexes here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(args.cache or temporary)
        folders = write_folders(root)
        payload = {
            "odsum-story": evaluate("odsum-story", folders["odsum-story"], IndexSettings.for_unit("document"), root),
            "odsum-meeting": evaluate("odsum-meeting", folders["odsum-meeting"],
                                      IndexSettings.for_unit("passage", max_tokens=MEETING_CHUNK_TOKENS), root),
            "paper_summary_rag_ndcg100_change": PAPER_SUMMARY_RAG,
        }
    write_result("beir_odsum", {**payload, "peak_rss_mb": round(peak_rss_mb())})


if __name__ == "__main__":
    main()
