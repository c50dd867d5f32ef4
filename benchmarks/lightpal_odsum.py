"""LightPAL on ODSum (open-domain: the whole dev split is the pool), the protocol of Enomoto et al.

Story: every section of every dev story is a retrieval unit (cut to 1,024 tokens), a question's relevant units
are its story's sections, K = 5 / 10 / 20. Meeting: ~1,000-character chunks of the 232 transcripts, a chunk is
relevant when its meeting is, K = 100 / 200 / 300. Precision@K and Recall@K of the base retriever (bm25, dense)
alone and with LightPAL (60% of K from the base, Personalized PageRank with walk-on probability 0.2
teleporting to the top 20 of those, 5 edges per unit), averaged over the questions and then over K, as the
paper reports them. Graphs: edges by embedding cosine alone, and (Story) by the context score P_LM(d_j | d_i)
of the packaged SmolLM2-135M (each text cut to ``--lm-tokens`` tokens) among the ``--candidates`` nearest.

Run: python benchmarks/lightpal_odsum.py [--cache DIR] [--candidates 10] [--lm-tokens 256] [--no-lm]
Writes: benchmarks/results/lightpal_odsum.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, peak_rss_mb, write_result  # noqa: E402

from citesum.datasets import Query, load_dataset  # noqa: E402
from citesum.evaluate.retrieval import precision_at_k, recall_at_k  # noqa: E402
from citesum.index.store import Index, IndexSettings  # noqa: E402
from citesum.retrieve import get_retriever  # noqa: E402
from citesum.retrieve.base import Retriever  # noqa: E402
from citesum.retrieve.lightpal import (  # noqa: E402
    LanguageModelContextScorer, LightPALRetriever, PassageGraph, build_passage_graph)

STORY_KS = (5, 10, 20)
MEETING_KS = (100, 200, 300)
STORY = SHARED_DATA / "odsum" / "story" / "documents_dev.jsonl"
MEETING = SHARED_DATA / "odsum" / "meeting"
#: LightPAL's Meeting passages are ~1,000-character chunks: about 230 cl100k tokens of transcript
MEETING_CHUNK_TOKENS = 230


def unit_relevance(index: Index, queries: list[Query]) -> list[dict[str, int]]:
    """Per query, its relevant units: the units of its relevant documents that the index holds (ingestion skips
    the 16 empty sections of the Story split: a unit that cannot be retrieved is not counted)."""
    units_of: dict[str, list[str]] = {}
    for passage in index.passages:
        units_of.setdefault(passage.document_id, []).append(passage.id)
    return [{u: 1 for d in q.relevance for u in units_of.get(d, [])} for q in queries]


def evaluate(retriever: Retriever, queries: list[Query], relevance: list[dict[str, int]],
             ks: tuple[int, ...]) -> dict[str, float]:
    precision, recall, latency = {k: [] for k in ks}, {k: [] for k in ks}, []
    for query, relevant in zip(queries, relevance):
        for k in ks:
            started = time.perf_counter()
            ranking = [hit.passage.id for hit in retriever.retrieve(query.text, k)]
            latency.append(time.perf_counter() - started)
            precision[k].append(precision_at_k(ranking, relevant, k))
            recall[k].append(recall_at_k(ranking, relevant, k))
    out = {f"P@{k}": round(100 * float(np.mean(precision[k])), 2) for k in ks}
    out |= {f"R@{k}": round(100 * float(np.mean(recall[k])), 2) for k in ks}
    out["P_mean"] = round(float(np.mean([out[f"P@{k}"] for k in ks])), 2)
    out["R_mean"] = round(float(np.mean([out[f"R@{k}"] for k in ks])), 2)
    out["ms_per_query_median"] = round(1000 * float(np.median(latency)), 2)
    return out


def open_index(folder: Path, settings: IndexSettings, documents: list) -> Index:
    index = Index.open(folder) if (folder / "index.sqlite").exists() else Index.create(folder, settings)
    if len(index) == 0:
        index.add(documents)
    return index


def cached_graph(index: Index, name: str, build: Callable[[], PassageGraph],
                 candidates: int) -> tuple[PassageGraph, float]:
    """(graph, seconds it took to build) from beside the index when an earlier run built it for this generation
    (an LM graph takes most of an hour), else built now."""
    path = Path(index.path) / f"graph-{name}-c{candidates}-g{index.generation}.npz"
    if path.exists():
        with np.load(path) as stored:
            return PassageGraph(stored["neighbors"], index.generation, name, candidates), float(stored["seconds"])
    started = time.perf_counter()
    graph = build()
    seconds = round(time.perf_counter() - started, 1)
    np.savez(path, neighbors=graph.neighbors, seconds=seconds)
    return graph, seconds


def run(name: str, index: Index, queries: list[Query], ks: tuple[int, ...],
        graph_builders: dict[str, Callable[[], PassageGraph]], candidates: int) -> dict:
    relevance = unit_relevance(index, queries)
    owner = [p.document_id for p in index.passages]
    results: dict[str, dict] = {}
    graphs: dict[str, dict] = {}
    for base_name in ("bm25", "dense"):
        results[base_name] = evaluate(get_retriever(base_name, index), queries, relevance, ks)
        print(name, base_name, results[base_name], flush=True)
    for graph_name, build in graph_builders.items():
        graph, seconds = cached_graph(index, graph_name, build, candidates)
        edges = [(i, j) for i, row in enumerate(graph.neighbors) for j in row if j >= 0]
        graphs[graph_name] = {"build_seconds": seconds, "candidates": candidates,
                              "edges_per_unit": int(graph.neighbors.shape[1]),
                              # share of edges between units of the same story (sections "story#n") or meeting
                              "same_document_edges": round(float(np.mean(
                                  [owner[i].split("#")[0] == owner[j].split("#")[0] for i, j in edges])), 3)}
        print(name, graph_name, graphs[graph_name], flush=True)
        for base_name in ("bm25", "dense"):
            key = f"{base_name}+lightpal[{graph_name}]"
            results[key] = evaluate(LightPALRetriever(index, get_retriever(base_name, index), graph), queries,
                                    relevance, ks)
            print(name, key, results[key], flush=True)
    return {"queries": len(queries), "units": len(owner), "ks": list(ks), "graphs": graphs, "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None, help="keep the indexes (and graphs) here")
    parser.add_argument("--candidates", type=int, default=10, help="nearest units the LM scores per unit")
    parser.add_argument("--lm-tokens", type=int, default=256, help="tokens of each text the LM sees")
    parser.add_argument("--no-lm", action="store_true", help="only the cosine graph")
    args = parser.parse_args()
    payload: dict[str, object] = {"candidates": args.candidates, "lm_tokens": args.lm_tokens}
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(args.cache or temporary)
        story = load_dataset("odsum-story", str(STORY))
        index = open_index(root / "odsum-story-sections", IndexSettings.for_unit("document"), story.documents)
        builders: dict[str, Callable[[], PassageGraph]] = {
            "cosine": lambda: build_passage_graph(index, None, candidates=args.candidates)}
        if not args.no_lm:
            builders["smollm2"] = lambda: build_passage_graph(
                index, LanguageModelContextScorer(max_tokens=args.lm_tokens), candidates=args.candidates)
        payload["story"] = run("story", index, list(story.queries), STORY_KS, builders, args.candidates)
        # Meeting: ~7,000 units; an LM graph would take the LM about a day here, so the cosine graph only.
        meeting = load_dataset("odsum-meeting", str(MEETING))
        index_m = open_index(root / "odsum-meeting-chunks",
                             IndexSettings.for_unit("passage", max_tokens=MEETING_CHUNK_TOKENS), meeting.documents)
        payload["meeting"] = run("meeting", index_m, list(meeting.queries), MEETING_KS,
                                 {"cosine": lambda: build_passage_graph(index_m, None, candidates=args.candidates)},
                                 args.candidates)
    write_result("lightpal_odsum", {**payload, "peak_rss_mb": round(peak_rss_mb())})


if __name__ == "__main__":
    main()
