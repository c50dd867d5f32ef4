"""LightPAL on ODSum in the protocol of the papers' code (Enomoto et al.; ODSum's retrieval code).

Story: the pool is the sections of every split we have (dev + train: 681 non-empty sections; ODSum's code pools
all three splits, 1,190 sections, and the test split is kept aside here), each section one unit (cut to 1,024
tokens). A question is asked as "<story title>: <question>": ODSum's retrieval reads rewritten queries that name
their story (data/modified_queries, not in the shared data; "What is the plot of the story?" cannot find a story
on its own), and the title stands in for that rewrite. A question's relevant units are its story's sections.
K = 5 / 10 / 20. The edge source was chosen on the train questions; the dev questions are held out.
Meeting: ~1,000-character chunks of the 232 transcripts, a chunk is relevant when its meeting is, 296 dev
queries, K = 100 / 200 / 300.

Precision@K and Recall@K of the base retriever (bm25, dense) alone and with LightPAL (60% of K from the base,
Personalized PageRank with walk-on probability 0.2 teleporting to the top 20 of those, 5 edges per unit),
averaged over the questions and then over K, as the paper reports them. Graphs: edges to the nearest units by
embedding cosine; by BM25 with the unit as the query (its 32 heaviest terms); with ``--lm``, the nearest by
cosine ranked by the context score P_LM(d_j | d_i) of the packaged SmolLM2-135M (Story only, about 2 hours).

Run: python benchmarks/lightpal_odsum.py [--cache DIR] [--candidates 10] [--lm] [--lm-tokens 256]
Writes: benchmarks/results/lightpal_odsum.json
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, peak_rss_mb, write_result  # noqa: E402

from citesum.datasets import Dataset, Query, load_dataset  # noqa: E402
from citesum.evaluate.retrieval import precision_at_k, recall_at_k  # noqa: E402
from citesum.index.store import Index, IndexSettings  # noqa: E402
from citesum.retrieve import get_retriever  # noqa: E402
from citesum.retrieve.base import Retriever  # noqa: E402
from citesum.retrieve.lightpal import (  # noqa: E402
    NEIGHBOURS, LanguageModelContextScorer, LightPALRetriever, PassageGraph, build_passage_graph)

STORY_KS = (5, 10, 20)
MEETING_KS = (100, 200, 300)
STORY_DEV = SHARED_DATA / "odsum" / "story" / "documents_dev.jsonl"
STORY_TRAIN = SHARED_DATA / "odsum" / "story" / "documents_train.jsonl"
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
            return (PassageGraph(stored["neighbors"], index.generation, name, int(stored["candidates"])),
                    float(stored["seconds"]))
    started = time.perf_counter()
    graph = build()
    seconds = round(time.perf_counter() - started, 1)
    np.savez(path, neighbors=graph.neighbors, seconds=seconds, candidates=graph.candidates)
    return graph, seconds


def titled(dataset: Dataset) -> list[Query]:
    """The dataset's questions as "<story title>: <question>" (see the module docstring)."""
    titles = {d.metadata["story"]: d.title.rsplit(" (", 1)[0] for d in dataset.documents}
    return [dataclasses.replace(q, text=f"{titles[q.id.split('/')[0]]}: {q.text}") for q in dataset.queries]


def run(name: str, index: Index, query_sets: dict[str, list[Query]], ks: tuple[int, ...],
        graph_builders: dict[str, Callable[[], PassageGraph]], candidates: int) -> dict:
    owner = [p.document_id for p in index.passages]
    graphs: dict[str, PassageGraph] = {}
    about: dict[str, dict] = {}
    for graph_name, build in graph_builders.items():
        graph, seconds = cached_graph(index, graph_name, build, candidates)
        graphs[graph_name] = graph
        edges = [(i, j) for i, row in enumerate(graph.neighbors) for j in row if j >= 0]
        about[graph_name] = {"build_seconds": seconds, "candidates": graph.candidates,
                             "edges_per_unit": int(graph.neighbors.shape[1]),
                             "units_without_edges": int((graph.neighbors[:, 0] < 0).sum()),
                             # share of edges between units of the same story (sections "story#n") or meeting
                             "same_document_edges": round(float(np.mean(
                                 [owner[i].split("#")[0] == owner[j].split("#")[0] for i, j in edges])), 3)}
        print(name, graph_name, about[graph_name], flush=True)
    results: dict[str, dict] = {}
    for set_name, queries in query_sets.items():
        relevance = unit_relevance(index, queries)
        rows: dict[str, dict] = {}
        for base_name in ("bm25", "dense"):
            rows[base_name] = evaluate(get_retriever(base_name, index), queries, relevance, ks)
            for graph_name, graph in graphs.items():
                walked = evaluate(LightPALRetriever(index, get_retriever(base_name, index), graph), queries,
                                  relevance, ks)
                walked["gain_P"] = round(walked["P_mean"] - rows[base_name]["P_mean"], 2)
                walked["gain_R"] = round(walked["R_mean"] - rows[base_name]["R_mean"], 2)
                rows[f"{base_name}+lightpal[{graph_name}]"] = walked
        for key, row in rows.items():
            print(name, set_name, key, row["P_mean"], row["R_mean"], flush=True)
        results[set_name] = {"queries": len(queries), "results": rows}
    return {"units": len(owner), "ks": list(ks), "graphs": about, "question_sets": results}


#: the paper's Table (ODSum Story, its test split, P / R averaged over K = 5, 10, 20)
PAPER_STORY = {"bm25": [43.85, 49.76], "bm25+lightpal[qwen2.5-3b]": [50.22, 56.47],
               "dense (bge-large)": [31.15, 36.27], "dense+lightpal[qwen2.5-3b]": [39.55, 45.30],
               "pool": "1,190 sections of all splits, 260 test questions, 9.2 relevant sections a question"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None, help="keep the indexes (and graphs) here")
    parser.add_argument("--candidates", type=int, default=100, help="nearest units a unit may link to")
    parser.add_argument("--lm", action="store_true", help="also the SmolLM2 graph on Story (about 2 hours)")
    parser.add_argument("--lm-candidates", type=int, default=10, help="nearest units the LM scores per unit")
    parser.add_argument("--lm-tokens", type=int, default=256, help="tokens of each text the LM sees")
    args = parser.parse_args()
    payload: dict[str, object] = {"candidates": args.candidates, "paper_story": PAPER_STORY}
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(args.cache or temporary)
        dev = load_dataset("odsum-story", str(STORY_DEV))
        train = load_dataset("odsum-story", str(STORY_TRAIN))
        index = open_index(root / "odsum-story-dev-train-sections", IndexSettings.for_unit("document"),
                           dev.documents + train.documents)

        def builders(index_: Index) -> dict[str, Callable[[], PassageGraph]]:
            return {neighbours: functools.partial(build_passage_graph, index_, None, candidates=args.candidates,
                                                  neighbours=neighbours) for neighbours in NEIGHBOURS}

        story_graphs = builders(index)
        if args.lm:
            story_graphs["smollm2"] = lambda: build_passage_graph(
                index, LanguageModelContextScorer(max_tokens=args.lm_tokens), candidates=args.lm_candidates)
        payload["story"] = run("story", index, {
            "train (edge source chosen here)": titled(train), "dev (held out)": titled(dev),
            "dev, the questions alone": list(dev.queries)}, STORY_KS, story_graphs, args.candidates)
        meeting = load_dataset("odsum-meeting", str(MEETING))
        index_m = open_index(root / "odsum-meeting-chunks",
                             IndexSettings.for_unit("passage", max_tokens=MEETING_CHUNK_TOKENS), meeting.documents)
        payload["meeting"] = run("meeting", index_m, {"dev": list(meeting.queries)}, MEETING_KS, builders(index_m),
                                 args.candidates)
    write_result("lightpal_odsum", {**payload, "peak_rss_mb": round(peak_rss_mb())})


if __name__ == "__main__":
    main()
