"""The local store of two versions of citesum on the same machine, the same data: a build, a 1% update twice,
and search latency after the build and after the updates, each version's searches taken in turns with the
other's (``--rounds``, medians). The same machine is not the same from one hour to the next (benchmarks/scale.py's
exact dense query over 50,000 units: 1.0 ms in one run, 2.0 in another), so a change to the store is judged
here, side by side, not against an old run's JSON.

Each version runs in its own subprocess with its source tree first on the path: this checkout's ``src`` and a
``git worktree`` of ``--before`` (removed afterwards). The data is the generated haystack of benchmarks/scale.py
(seed 2026, ``--passages`` 100-token passages), wordllama; the queries are scale.py's 10 (asked 5 times each:
"repeated") and 60 first sentences of passages picked at random (seed 1, each asked once: "once").

Run: python benchmarks/store_ab.py [--before 2f87abe] [--passages 300000]
Writes: benchmarks/results/store_ab.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RETRIEVERS = ("bm25", "dense", "hybrid")


def measure(step: str, folder: Path, passages: int) -> dict[str, Any]:
    """One step for one version (runs in the subprocess, with that version imported): ``build``, ``search``
    (latency p50s) or ``update`` (two 1% updates)."""
    import dataclasses
    import time

    from scale import PASSAGES_PER_DOCUMENT, QUERIES, SEED, _fresh_queries, _timed

    from citesum.demo.haystack import generate_haystack
    from citesum.embed import get_embedder
    from citesum.index.store import Index
    from citesum.retrieve import get_retriever

    out: dict[str, Any] = {}
    if step == "search":
        index = Index.open(folder)
        started = time.perf_counter()
        index.passages  # noqa: B018 - load the generation
        out["open_seconds"] = round(time.perf_counter() - started, 2)
        once = _fresh_queries(index)
        for name in RETRIEVERS:
            retriever = get_retriever(name, index)
            for label, queries in (("repeated", QUERIES), ("once", once)):
                out[f"{name} {label} p50_ms"] = _timed(lambda q, r=retriever: r.retrieve(q, 10), queries,
                                                       warm_up="warm-up " + QUERIES[0])["p50_ms"]
        return out
    documents = generate_haystack(documents=int(passages / PASSAGES_PER_DOCUMENT), seed=SEED).documents
    embedder = get_embedder("wordllama")
    embedder.encode_documents(["warm-up"])
    if step == "build":
        started = time.perf_counter()
        Index.create(folder).add(documents, embedder=embedder)
        return {"build_seconds": round(time.perf_counter() - started, 1)}
    for run, note in (("first", " This report was revised."), ("again", " This report was revised twice.")):
        revised = [dataclasses.replace(d, text=d.text + note) for d in documents[::100]]
        started = time.perf_counter()
        Index.open(folder).update(revised, embedder=embedder)
        out[f"update {run} seconds"] = round(time.perf_counter() - started, 2)
    return out


def _medians(rounds: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(float(np.median([r[key] for r in rounds])), 2) for key in rounds[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="2f87abe", help="the git revision to compare with (default: the last "
                        "commit before segments)")
    parser.add_argument("--passages", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3, help="searches of each version, taken in turns")
    parser.add_argument("--step", nargs=3, help=argparse.SUPPRESS)  # internal: STEP FOLDER PASSAGES, prints JSON
    args = parser.parse_args()
    if args.step:
        print(json.dumps(measure(args.step[0], Path(args.step[1]), int(args.step[2]))))
        return
    revision = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.before], check=True,
                              capture_output=True, text=True).stdout.strip()
    current = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], check=True,
                             capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="citesum-store-ab-") as scratch:
        worktree = Path(scratch) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), revision], check=True,
                       capture_output=True)
        versions = {f"before ({revision})": (worktree / "src", Path(scratch) / "a" / "ix"),
                    f"this checkout ({current})": (ROOT / "src", Path(scratch) / "b" / "ix")}

        def run(step: str, label: str) -> dict[str, Any]:
            source, folder = versions[label]
            environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(ROOT / "benchmarks")])}
            output = subprocess.run([sys.executable, __file__, "--step", step, str(folder), str(args.passages)],
                                    check=True, capture_output=True, text=True, env=environment).stdout
            result = json.loads(output.strip().splitlines()[-1])
            print(label, step, json.dumps(result), flush=True)
            return result

        results: dict[str, dict[str, Any]] = {label: {} for label in versions}
        try:
            for label in versions:
                results[label].update(run("build", label))
            # in turns, each version's searches then the other's, so that a slow spell of the machine falls on both
            searched = {label: [] for label in versions}  # type: dict[str, list[dict[str, float]]]
            for _ in range(args.rounds):
                for label in versions:
                    searched[label].append(run("search", label))
            for label in versions:
                results[label]["after the build"] = _medians(searched[label])
                results[label].update(run("update", label))
                for run_name in ("first", "again"):
                    seconds = results[label][f"update {run_name} seconds"]
                    results[label][f"update {run_name} share_of_build"] = round(seconds / results[label]["build_seconds"], 3)
            searched = {label: [] for label in versions}
            for _ in range(args.rounds):
                for label in versions:
                    searched[label].append(run("search", label))
            for label in versions:
                results[label]["after the updates"] = _medians(searched[label])
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], check=False)
    write_result("store_ab", {"passages": args.passages, "embedder": "wordllama", "rounds": args.rounds,
                              "versions": results})


if __name__ == "__main__":
    main()
