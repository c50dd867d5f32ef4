"""Scaling out (issue 18): the Milvus store (milvus-lite, in-process) against the local store, and a build on Ray
(local mode, 2 CPUs) against a build in one process.

Steps (each in its own subprocess, so each peak RSS is its own):
  * store local|milvus: the ODSum meeting corpus (../shared/data) indexed with default settings; build seconds,
    peak RSS, p50/p95 of bm25, dense and the hybrid each store fuses (local: hybrid:bm25+dense, citesum's RRF;
    milvus: hybrid, Milvus's RRF ranker in one round trip) over the corpus's queries, and their top-10 units.
    The two stores' top-10 are then compared: overlap@10 by id, and tie-aware (a Milvus unit whose local score
    equals the local 10th counts as in the local top 10).
  * ray meeting|generated: the same documents built in one process and on Ray (ingestion not included: the
    corpora are loaded, not parsed); wall seconds of each, the speed-up, and the identical-result check (same
    passages, largest vector difference, same top-10 for bm25, dense, hybrid).

Run: python benchmarks/scale_out.py [--generated 100000]      (--generated 0 skips the generated corpus)
Writes: benchmarks/results/scale_out.json
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
from _common import SHARED_DATA, peak_rss_mb, write_result  # noqa: E402

#: the meeting corpus's first queries, each asked once for the latency percentiles and the overlap (milvus-lite
#: answers in tens of milliseconds: all 296 queries, three retrievers, would take minutes for no more precision)
QUERIES_USED = 100
GENERATED_QUERIES = ["What is happening with the city's water supply?", "How is public transit changing?",
                     "What is the state of housing and rents?", "desalination plant cost",
                     "bus drivers strike in May", "median rent two-bedroom"]


def _corpus(name: str, size: int) -> tuple[list[Any], list[str]]:
    if name == "meeting":
        from citesum.datasets import load_dataset

        dataset = load_dataset("odsum-meeting", str(SHARED_DATA / "odsum" / "meeting"))
        return list(dataset.documents), [q.text for q in dataset.queries]
    from citesum.demo.haystack import generate_haystack

    return list(generate_haystack(documents=size, seed=size).documents), GENERATED_QUERIES


def _percentiles(seconds: list[float]) -> dict[str, float]:
    return {"p50_ms": round(float(np.percentile(seconds, 50)) * 1000, 3),
            "p95_ms": round(float(np.percentile(seconds, 95)) * 1000, 3)}


def _store_step(store: str, folder: Path) -> dict[str, Any]:
    from citesum.index.store import Index
    from citesum.retrieve import get_retriever

    documents, queries = _corpus("meeting", 0)
    queries = queries[:QUERIES_USED]
    started = time.perf_counter()
    index = Index.create(folder / store, store=store)
    index.add(documents)
    build = time.perf_counter() - started
    retrievers = ["bm25", "dense", "hybrid:bm25+dense" if store == "local" else "hybrid"]
    result: dict[str, Any] = {"store": store, "documents": len(documents), "units": len(index),
                              "build_s": round(build, 2), "latency": {}, "top10": {}}
    for name in retrievers:
        retriever = get_retriever(name, index)
        retriever.retrieve(queries[0], 10)  # the embedder and the first search's set-up
        seconds = []
        for query in queries:
            began = time.perf_counter()
            retriever.retrieve(query, 10)
            seconds.append(time.perf_counter() - began)
        key = "hybrid" if name.startswith("hybrid") else name
        result["latency"][key] = {"retriever": retriever.name, **_percentiles(seconds)}
        result["top10"][key] = [[h.passage.id for h in retriever.retrieve(q, 10)] for q in queries]
        if store == "local" and key != "hybrid":  # the local scores of every unit, for the tie-aware overlap
            result.setdefault("local_scores", {})[key] = [retriever.scores(q).tolist() for q in queries]
    result["unit_ids"] = [p.id for p in index.passages]
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return result


def _ray_step(corpus: str, size: int, folder: Path) -> dict[str, Any]:
    from citesum.index.store import Index
    from citesum.parallel import RayExecutor
    from citesum.retrieve import get_retriever

    documents, queries = _corpus(corpus, size)
    started = time.perf_counter()
    plain = Index.create(folder / "plain")
    plain.add(documents)
    plain_s = time.perf_counter() - started
    started = time.perf_counter()
    executor = RayExecutor(num_cpus=2)
    ready_s = time.perf_counter() - started
    spread = Index.create(folder / "ray")
    spread.add(documents, executor=executor)
    ray_s = time.perf_counter() - started
    executor.shutdown()
    same_units = [(p.id, p.text) for p in spread.passages] == [(p.id, p.text) for p in plain.passages]
    difference = float(np.max(np.abs(np.asarray(spread.vectors) - np.asarray(plain.vectors))))
    same_top10 = all([h.passage.id for h in get_retriever(name, spread).retrieve(q, 10)]
                     == [h.passage.id for h in get_retriever(name, plain).retrieve(q, 10)]
                     for name in ("bm25", "dense", "hybrid") for q in queries)
    return {"corpus": corpus, "documents": len(documents), "units": len(plain), "plain_s": round(plain_s, 2),
            "ray_s": round(ray_s, 2), "ray_start_s": round(ready_s, 2), "speedup": round(plain_s / ray_s, 3),
            "same_units": same_units, "max_vector_difference": difference, "same_top10": same_top10}


def _run_step(*args: str) -> dict[str, Any]:
    output = subprocess.run([sys.executable, __file__, "--step", *args], check=True, capture_output=True,
                            text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def _overlaps(local: dict[str, Any], milvus: dict[str, Any]) -> dict[str, Any]:
    position = {unit: i for i, unit in enumerate(local["unit_ids"])}
    found: dict[str, Any] = {}
    for key in ("bm25", "dense", "hybrid"):
        by_id = [len(set(a) & set(b)) / 10 for a, b in zip(local["top10"][key], milvus["top10"][key])]
        row = {"overlap_at_10_mean": round(float(np.mean(by_id)), 3), "overlap_at_10_min": min(by_id)}
        if key in local.get("local_scores", {}):
            tie_aware = []
            for scores, theirs in zip(local["local_scores"][key], milvus["top10"][key]):
                threshold = np.sort(scores)[-10]
                tie_aware.append(sum(scores[position[u]] >= threshold - 1e-6 for u in theirs) / 10)
            row.update(tie_aware_mean=round(float(np.mean(tie_aware)), 3), tie_aware_min=min(tie_aware))
        found[key] = row
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--generated", type=int, default=100_000, help="documents of the generated corpus (0: skip)")
    parser.add_argument("--step", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        with tempfile.TemporaryDirectory() as folder:
            if args.step[0] == "store":
                result = _store_step(args.step[1], Path(folder))
            else:
                result = _ray_step(args.step[1], int(args.step[2]), Path(folder))
        print(json.dumps(result))
        return
    local = _run_step("store", "local")
    milvus = _run_step("store", "milvus")
    stores = {name: {k: v for k, v in run.items() if k not in ("top10", "local_scores", "unit_ids")}
              for name, run in (("local", local), ("milvus-lite", milvus))}
    ray_runs = [_run_step("ray", "meeting", "0")]
    if args.generated:
        ray_runs.append(_run_step("ray", "generated", str(args.generated)))
    write_result("scale_out", {"stores": stores, "top10_agreement": _overlaps(local, milvus), "ray": ray_runs})


if __name__ == "__main__":
    main()
