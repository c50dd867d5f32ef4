"""The local index at a million passages (issue 18): build, memory, disk, search latency with the approximate
nearest-neighbour graph, its recall against exact search, a 1% update, and where the graph starts to pay.

Steps (each in its own subprocess, so each peak RSS is its own):
  * build: our generated haystack (citesum.demo.haystack) with enough documents for ``--passages`` 100-token
    passages, wordllama, default settings (the graph is built from DEFAULT_ANN_MIN_UNITS units); seconds per
    stage (chunking + embedding, BM25, graph, writing), peak RSS, bytes on disk
  * search: p50/p95 of bm25, dense (graph), dense read exactly, hybrid:bm25+dense and the default hybrid over 50
    queries (10 distinct, top 10), and of bm25 and hybrid over 60 queries asked once each (a passage's first
    sentence) and over 60 short ones asked once each (a passage's first six words); the default hybrid's again
    with BLAS on one thread, as the service's workers run it (other passages' for the queries asked once); the
    dense recall@10 of the graph against exact search, on the queries the defaults were chosen on and on those
    120; Rocchio (one graph search, its candidates ranked again by the expanded query) against Rocchio computed
    over every vector, and against searching the graph again for the expanded query (what it did before);
    peak RSS of a reader
  * update: every 100th document revised (a sentence appended), one update, as a share of the build time; then
    the same documents revised again (``again``): the first update reads a generation and database partly out of
    the page cache, the second one just written
  * search after the updates: the same measures on the generation the updates left (the build's segment, from
    which the revised documents' units are left out, and the updates' segments, read exactly beside its graph)
  * threshold: on the first n vectors of the index (n in ``--threshold-sizes``), the time of an exact dense
    query against one through a graph of those n as a write makes it (a node a distinct vector; search + exact
    scoring of its candidates), the graph's build time and its recall@10: where the graph overtakes exact search
    is where DEFAULT_ANN_MIN_UNITS belongs

Run: python benchmarks/scale.py [--passages 1000000] [--threshold-sizes 50000,100000,200000,400000]
(with the extras ``ann`` and ``service``: the one-BLAS-thread measures use threadpoolctl)
Writes: benchmarks/results/scale.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import peak_rss_mb, write_result  # noqa: E402

#: passages per generated document, measured on 100,000 documents (153,120 passages, benchmarks/peers.py)
PASSAGES_PER_DOCUMENT = 1.531
SEED = 2026
QUERIES = ["What is happening with the city's water supply?", "How is public transit changing?",
           "What is the state of housing and rents?", "Lakemont reservoir capacity in August",
           "desalination plant cost", "bus drivers strike in May", "zoning reform near tram stops",
           "student bus fares", "median rent two-bedroom", "battery-electric buses Voltaro"] * 5
RETRIEVERS = ["bm25", "dense", "hybrid:bm25+dense", "hybrid"]
#: the units Rocchio's first pass asked the graph for before it searched once (up to fb97165), measured
#: beside the way it ranks now
FEEDBACK_CANDIDATES_BEFORE = 64


def _documents(passages: int):  # type: ignore[no-untyped-def]
    from citesum.demo.haystack import generate_haystack

    return generate_haystack(documents=int(passages / PASSAGES_PER_DOCUMENT), seed=SEED).documents


def _recall_texts(index, sampled: int = 200) -> list[str]:  # type: ignore[no-untyped-def]
    """The benchmark's distinct queries and the first sentence of ``sampled`` passages picked at random (seed 0):
    ten queries alone make a noisy recall. Rocchio's one graph search was chosen on these."""
    passages = index.passages
    picked = np.random.default_rng(0).choice(len(passages), min(sampled, len(passages)), replace=False)
    return sorted(set(QUERIES)) + [passages[i].text.split(". ")[0] for i in picked.tolist()]


def _recall_queries(index, embedder, sampled: int = 200) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    return [embedder.encode_query(text) for text in _recall_texts(index, sampled)]


def _held_out_texts(index) -> list[str]:  # type: ignore[no-untyped-def]
    """Queries nothing was chosen on: the 60 first sentences and 60 short queries the latencies are measured on."""
    return _fresh_queries(index) + _short_queries(index)


def _fresh_queries(index, count: int = 60, seed: int = 1) -> list[str]:  # type: ignore[no-untyped-def]
    """The first sentence of ``count`` passages picked at random (``seed``), each a query asked once."""
    passages = index.passages
    picked = np.random.default_rng(seed).choice(len(passages), count, replace=False)
    return [passages[i].text.split(". ")[0] for i in picked.tolist()]


def _short_queries(index, count: int = 60, seed: int = 2) -> list[str]:  # type: ignore[no-untyped-def]
    """The first six words of ``count`` passages picked at random (``seed``), each a query asked once: about as
    short as the benchmark's queries, none of them asked twice."""
    passages = index.passages
    picked = np.random.default_rng(seed).choice(len(passages), count, replace=False)
    return [" ".join(passages[i].text.split()[:6]) for i in picked.tolist()]


def _tie_aware_share(scores: np.ndarray, exact: np.ndarray, found: np.ndarray) -> float:
    """The share of the exact best units (``exact``, best first) that ``found`` matches, counting a found unit
    that scores at least the last of them (within float32 noise) as a match: among copies of a passage which one
    is "the" neighbour is arbitrary."""
    return float(np.sum(scores[found[: len(exact)]] >= scores[exact[-1]] - 1e-6)) / len(exact)


def _recall_at_10(vectors: np.ndarray, queries: list[np.ndarray], approximate) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Recall@10 of ``approximate(query) -> top-10 positions`` against exact search. ``by_id`` counts the exact
    top 10's units found; ``tie_aware`` counts the found units that score at least the exact 10th: our
    generator repeats passages (35% of them are copies of another), and among identical vectors which copy is
    "the" neighbour is arbitrary."""
    from citesum.retrieve.base import top_k

    by_id, tie_aware = [], []
    for query in queries:
        scores = np.asarray(vectors @ query, dtype=np.float32)
        exact = top_k(scores, 10)
        found = np.asarray(approximate(query), dtype=np.int64)
        by_id.append(len(set(exact.tolist()) & set(found.tolist())) / 10)
        tie_aware.append(_tie_aware_share(scores, exact, found))
    return {"by_id": round(float(np.mean(by_id)), 3), "tie_aware": round(float(np.mean(tie_aware)), 3),
            "queries": len(queries)}


def build(folder: Path, passages: int) -> dict[str, Any]:
    from citesum.embed import get_embedder
    from citesum.index.store import Index

    documents = _documents(passages)
    embedder = get_embedder("wordllama")
    embedder.encode_documents(["warm-up"])
    stages: dict[str, float] = {}
    last = [time.perf_counter()]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if stage in ("chunking", "embedding"):  # they overlap (embedding runs on a second thread)
            stage = "chunking and embedding"
        stages[stage] = stages.get(stage, 0.0) + now - last[0]
        last[0] = now

    started = time.perf_counter()
    index = Index.create(folder)
    stats = index.add(documents, embedder=embedder, progress=progress)
    seconds = time.perf_counter() - started
    stages["writing (after the last stage)"] = time.perf_counter() - last[0]
    info = index.info()
    return {"documents": len(documents), "units": int(info["units"]), "build_seconds": round(seconds, 1),
            "units_per_second": round(stats.passages_embedded / seconds, 1),
            "seconds_by_stage": {k: round(v, 1) for k, v in stages.items()},
            "has_graph": index.ann is not None, "bytes_on_disk": int(info["bytes_on_disk"]),
            "peak_rss_mb": round(peak_rss_mb(), 1)}


def _timed(function, queries: list[Any], warm_up: Any = None) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """p50 and p95 in ms of ``function`` over ``queries`` (texts or query vectors), after a warm-up call (on
    ``warm_up``, default the first query)."""
    function(queries[0] if warm_up is None else warm_up)
    times = []
    for query in queries:
        started = time.perf_counter()
        function(query)
        times.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": round(float(np.percentile(times, 50)), 2), "p95_ms": round(float(np.percentile(times, 95)), 2)}


def search(folder: Path) -> dict[str, Any]:
    from citesum.index.store import Index
    from citesum.retrieve import get_retriever
    from citesum.retrieve.base import top_k
    from citesum.retrieve.dense import unit_scores

    opened = time.perf_counter()
    index = Index.open(folder)
    index.passages  # noqa: B018 - load the generation
    open_seconds = time.perf_counter() - opened
    out: dict[str, Any] = {"open_seconds": round(open_seconds, 2), "has_graph": index.ann is not None,
                           "segments": len(json.loads((folder / f"gen-{index.generation}" / "segments.json").read_text()))}
    latencies = {name: _timed(lambda q, r=get_retriever(name, index): r.retrieve(q, 10), QUERIES)
                 for name in RETRIEVERS}
    # each asked once, after the above: a query asked again finds its postings and vectors in the caches
    for label, fresh in (("queries asked once", _fresh_queries(index)),
                         ("short queries asked once", _short_queries(index))):
        for name in ("bm25", "hybrid"):
            latencies[f"{name}, {label}"] = _timed(
                lambda q, r=get_retriever(name, index): r.retrieve(q, 10), fresh, warm_up=QUERIES[0])
    dense = get_retriever("dense", index)
    vectors = index.vectors

    def exact(query: str) -> np.ndarray:
        return top_k(np.asarray(vectors @ dense.embedder.encode_query(query), dtype=np.float32), 10)  # type: ignore[attr-defined]

    latencies["dense, every vector read"] = _timed(exact, QUERIES)
    # as the service's workers run it (citesum.service.reader.one_thread_each): OpenBLAS's own threads spin after
    # each product and take the core the hybrid's other member ranks on. Queries asked once are other passages'
    # (seeds 3 and 4): those above are now in the caches.
    from threadpoolctl import threadpool_limits

    hybrid = get_retriever("hybrid", index)
    with threadpool_limits(limits=1, user_api="blas"):
        latencies["hybrid, one BLAS thread"] = _timed(lambda q: hybrid.retrieve(q, 10), QUERIES)
        for label, fresh in (("queries asked once", _fresh_queries(index, seed=3)),
                             ("short queries asked once", _short_queries(index, seed=4))):
            latencies[f"hybrid, one BLAS thread, {label}"] = _timed(lambda q: hybrid.retrieve(q, 10), fresh,
                                                                    warm_up=QUERIES[0])
    out["search"] = latencies
    # what dense retrieval ranks: the graph's candidates scored exactly (citesum.retrieve.dense.unit_scores)
    with index.read() as view:
        encode = dense.embedder.encode_query  # type: ignore[attr-defined]
        out["dense_recall_at_10_vs_exact"] = _recall_at_10(
            vectors, _recall_queries(view, dense.embedder),  # type: ignore[attr-defined]
            lambda q: top_k(unit_scores(view, q), 10))
        out["dense_recall_at_10_vs_exact_held_out"] = _recall_at_10(
            vectors, [encode(text) for text in _held_out_texts(view)], lambda q: top_k(unit_scores(view, q), 10))
        out["rocchio"] = {"chosen on": _rocchio(view, _recall_texts(view)),
                          "held out": _rocchio(view, _held_out_texts(view))}
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return out


def _rocchio(view, texts: list[str]) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Rocchio as the default hybrid ranks with it (the fusion's depth) against Rocchio over every vector: its
    time, the tie-aware share of the exact 10 feedback units it took, and of the exact top 10 and top 1,000 it
    ranks; beside it, the way it ranked before (a first search for FEEDBACK_CANDIDATES_BEFORE units, a second
    for the expanded query), measured the same way."""
    from citesum.index.cosine import cosine_scores
    from citesum.retrieve.base import top_k, top_scores
    from citesum.retrieve.dense import best_units
    from citesum.retrieve.feedback import DensePRFRetriever

    retriever = DensePRFRetriever(view)
    vectors, depth = view.vectors, 1000

    def searching_again(query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found, scores = view.ann.nearest(query, FEEDBACK_CANDIDATES_BEFORE)
        positions, known = view.row_positions(found)
        kept = np.argsort(positions[known], kind="stable")
        order, _ = top_scores(np.asarray(scores)[known][kept], retriever.feedback_units)
        feedback = positions[known][kept][order]
        expanded = query + retriever.beta * np.asarray(vectors[feedback]).mean(axis=0)
        return feedback, best_units(view, expanded / max(float(np.linalg.norm(expanded)), 1e-12), depth)[0]

    measured: dict[str, dict[str, list[float]]] = {"one search": {}, "searching again (before)": {}}
    for number, text in enumerate(texts):
        query = retriever.embedder.encode_query(text)
        scores = cosine_scores(vectors, query)
        exact_feedback = top_k(scores, retriever.feedback_units)
        expanded = query + retriever.beta * np.asarray(vectors[exact_feedback]).mean(axis=0)
        expanded_scores = cosine_scores(vectors, expanded / np.linalg.norm(expanded))
        exact_10, exact_depth = top_k(expanded_scores, 10), top_k(expanded_scores, depth)
        timed: dict[str, float] = {}
        # each way first on every other query: the second finds the query's neighbourhood in the caches
        for way in (("one", "before") if number % 2 == 0 else ("before", "one")):
            started = time.perf_counter()
            if way == "one":
                ranked, _ = retriever._top(text, depth)
            else:
                feedback_before, ranked_before = searching_again(retriever.embedder.encode_query(text))
            timed[way] = (time.perf_counter() - started) * 1000
        one_search_ms, before_ms = timed["one"], timed["before"]
        candidates = top_k(cosine_scores(vectors[np.sort(ranked)], query), retriever.feedback_units)
        feedback_now = np.sort(ranked)[candidates]  # the one search's feedback units: its best for the query
        for way, ms, feedback, found in (("one search", one_search_ms, feedback_now, ranked),
                                         ("searching again (before)", before_ms, feedback_before, ranked_before)):
            for name, value in (("ms", ms), ("feedback", _tie_aware_share(scores, exact_feedback, feedback)),
                                ("at_10", _tie_aware_share(expanded_scores, exact_10, found)),
                                (f"at_{depth}", _tie_aware_share(expanded_scores, exact_depth, found))):
                measured[way].setdefault(name, []).append(value)
    out: dict[str, Any] = {"queries": len(texts)}
    for way, values in measured.items():
        out[way] = {"p50_ms": round(float(np.percentile(values["ms"], 50)), 2),
                    "p95_ms": round(float(np.percentile(values["ms"], 95)), 2),
                    "feedback_recall": round(float(np.mean(values["feedback"])), 3),
                    "recall_at_10_vs_exact_rocchio": round(float(np.mean(values["at_10"])), 3),
                    f"recall_at_{depth}_vs_exact_rocchio": round(float(np.mean(values[f"at_{depth}"])), 3)}
    return out


def update(folder: Path, passages: int, build_seconds: float) -> dict[str, Any]:
    """Every 100th document revised, one update; then the same documents revised again, a second update. Each
    links the segments of the generation before it (their files' records name them, so they are not read again)
    and writes a segment of its new units; the first reads what it needs of the generation the build wrote and
    of the database after the searches and the threshold step, which leave them partly out of the page cache."""
    import dataclasses

    from citesum.embed import get_embedder
    from citesum.index.store import Index

    documents = _documents(passages)[::100]
    embedder = get_embedder("wordllama")
    embedder.encode_documents(["warm-up"])
    out: dict[str, Any] = {}
    for run, note in (("first", " This report was revised."), ("again", " This report was revised twice.")):
        revised = [dataclasses.replace(d, text=d.text + note) for d in documents]
        started = time.perf_counter()
        stats = Index.open(folder).update(revised, embedder=embedder)
        seconds = time.perf_counter() - started
        out[run] = {"documents": stats.updated, "units_embedded": stats.passages_embedded,
                    "seconds": round(seconds, 2), "share_of_build": round(seconds / build_seconds, 3)}
    return {**out["first"], "again": out["again"], "peak_rss_mb": round(peak_rss_mb(), 1)}


def threshold(folder: Path, sizes: list[int]) -> dict[str, Any]:
    import scipy.sparse

    from citesum.embed import get_embedder
    from citesum.index.ann import AnnIndex, copy_keys
    from citesum.index.lexical import TermCounts
    from citesum.index.segments import Segment, SegmentNearest
    from citesum.index.store import Index
    from citesum.retrieve.base import top_k

    index = Index.open(folder)
    embedder = get_embedder("wordllama")
    out = {}
    for size in sizes:
        vectors = np.ascontiguousarray(index.vectors[:size])
        with index.read() as view:
            queries = _recall_queries(view, embedder)
            held_out = [embedder.encode_query(text) for text in _held_out_texts(view)]
        rows = np.arange(size, dtype=np.int64)
        started = time.perf_counter()  # as a write makes a segment's graph: a node a distinct vector
        keys = copy_keys(vectors, rows)
        nodes = np.flatnonzero(keys == rows)
        graph = AnnIndex.build(vectors, rows[nodes], nodes)
        build_seconds = time.perf_counter() - started
        # a segment of the first ``size`` units (their term counts are not read by a dense search)
        segment = Segment("threshold", rows, vectors, TermCounts.from_matrix(scipy.sparse.csr_matrix((size, 1))),
                          graph, graph_keys=keys)
        nearest = SegmentNearest([(segment, None)])

        def exact(q: np.ndarray, vectors: np.ndarray = vectors) -> np.ndarray:
            return top_k(np.asarray(vectors @ q, dtype=np.float32), 10)

        def approximate(q: np.ndarray, nearest: SegmentNearest = nearest) -> np.ndarray:
            return nearest.nearest(q)[0][:10]  # the rows are the positions

        timings = {f"{name}_p50_ms": _timed(function, queries[:60])["p50_ms"]
                   for name, function in (("exact", exact), ("graph", approximate))}
        out[str(size)] = {**timings, "graph_build_seconds": round(build_seconds, 1), "graph_nodes": int(len(graph)),
                          "recall_at_10": _recall_at_10(vectors, queries, approximate),
                          "recall_at_10_held_out": _recall_at_10(vectors, held_out, approximate)}
        print(size, json.dumps(out[str(size)]), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--threshold-sizes", default="50000,100000,200000,400000")
    parser.add_argument("--step", nargs="+", help=argparse.SUPPRESS)  # internal: one step, prints JSON
    args = parser.parse_args()
    if args.step:
        step, folder = args.step[0], Path(args.step[1])
        if step == "build":
            result = build(folder, args.passages)
        elif step == "search":
            result = search(folder)
        elif step == "update":
            result = update(folder, args.passages, float(args.step[2]))
        else:
            result = threshold(folder, [int(s) for s in args.threshold_sizes.split(",") if s])
        print(json.dumps(result))
        return

    def run(*step: str) -> dict[str, Any]:
        output = subprocess.run([sys.executable, __file__, "--passages", str(args.passages), "--threshold-sizes",
                                 args.threshold_sizes, "--step", *step], check=True, capture_output=True,
                                text=True).stdout
        result = json.loads(output.strip().splitlines()[-1])
        print(step[0], json.dumps(result), flush=True)
        return result

    from citesum.index.ann import DEFAULT_ANN_MIN_UNITS

    with tempfile.TemporaryDirectory(prefix="citesum-scale-") as scratch:
        folder = str(Path(scratch) / "ix")
        built = run("build", folder)
        searched = run("search", folder)
        threshold_result = run("threshold", folder)
        updated = run("update", folder, str(built["build_seconds"]))
        searched_after = run("search", folder)
    write_result("scale", {
        "embedder": "wordllama", "unit": "passage (100 tokens)", "ann_min_units": DEFAULT_ANN_MIN_UNITS,
        "goals": {"peak_rss_mb": 4096, "hybrid_p50_ms": 20, "dense_recall_at_10": 0.95, "update_share": 0.05},
        "build": built, "search": searched, "update_1_percent": updated, "search_after_updates": searched_after,
        "threshold": threshold_result})


if __name__ == "__main__":
    main()
