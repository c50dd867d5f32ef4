"""The local store of two versions of citesum on the same machine, the same data, one after the other: a build, a
1% update twice, and search latency after the build and after the updates. Machine noise between runs of
benchmarks/scale.py on this shared machine reached 30-100% (the same exact dense query: 1.0 ms one day, 2.4 ms
another), so a change to the store is judged here, side by side, not against an old run's JSON.

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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RETRIEVERS = ("bm25", "dense", "hybrid")


def measure(folder: Path, passages: int) -> dict[str, Any]:
    """One version's build, searches and updates (runs in the subprocess, with that version imported)."""
    import dataclasses
    import time

    import numpy as np

    from scale import PASSAGES_PER_DOCUMENT, QUERIES, SEED

    from citesum.demo.haystack import generate_haystack
    from citesum.embed import get_embedder
    from citesum.index.store import Index
    from citesum.retrieve import get_retriever

    documents = generate_haystack(documents=int(passages / PASSAGES_PER_DOCUMENT), seed=SEED).documents
    embedder = get_embedder("wordllama")
    embedder.encode_documents(["warm-up"])
    out: dict[str, Any] = {}
    started = time.perf_counter()
    Index.create(folder).add(documents, embedder=embedder)
    out["build_seconds"] = round(time.perf_counter() - started, 1)

    def search() -> dict[str, Any]:
        index = Index.open(folder)
        started = time.perf_counter()
        index.passages  # noqa: B018 - load the generation
        result: dict[str, Any] = {"open_seconds": round(time.perf_counter() - started, 2)}
        passages = index.passages
        picked = np.random.default_rng(1).choice(len(passages), 60, replace=False)
        once = [passages[i].text.split(". ")[0] for i in picked.tolist()]
        for name in RETRIEVERS:
            retriever = get_retriever(name, index)
            retriever.retrieve("warm-up " + QUERIES[0], 10)
            for label, queries in (("repeated", QUERIES), ("once", once)):
                times = []
                for query in queries:
                    started = time.perf_counter()
                    retriever.retrieve(query, 10)
                    times.append((time.perf_counter() - started) * 1000)
                result[f"{name} {label} p50_ms"] = round(float(np.percentile(times, 50)), 2)
        return result

    out["after the build"] = search()
    for run, note in (("first", " This report was revised."), ("again", " This report was revised twice.")):
        revised = [dataclasses.replace(d, text=d.text + note) for d in documents[::100]]
        started = time.perf_counter()
        Index.open(folder).update(revised, embedder=embedder)
        seconds = time.perf_counter() - started
        out[f"update {run}"] = {"seconds": round(seconds, 2), "share_of_build": round(seconds / out["build_seconds"], 3)}
    out["after the updates"] = search()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="2f87abe", help="the git revision to compare with (default: the last "
                        "commit before segments)")
    parser.add_argument("--passages", type=int, default=300_000)
    parser.add_argument("--step", nargs=2, help=argparse.SUPPRESS)  # internal: FOLDER PASSAGES, prints JSON
    args = parser.parse_args()
    if args.step:
        print(json.dumps(measure(Path(args.step[0]), int(args.step[1]))))
        return
    revision = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.before], check=True,
                              capture_output=True, text=True).stdout.strip()
    current = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], check=True,
                             capture_output=True, text=True).stdout.strip()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="citesum-store-ab-") as scratch:
        worktree = Path(scratch) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), revision], check=True,
                       capture_output=True)
        try:
            for name, label, source in (("before", f"before ({revision})", worktree / "src"),
                                        ("after", f"this checkout ({current})", ROOT / "src")):
                environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(ROOT / "benchmarks")])}
                output = subprocess.run([sys.executable, __file__, "--step", str(Path(scratch) / name / "ix"),
                                         str(args.passages)], check=True, capture_output=True, text=True,
                                        env=environment).stdout
                results[label] = json.loads(output.strip().splitlines()[-1])
                print(label, json.dumps(results[label]), flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], check=False)
    write_result("store_ab", {"passages": args.passages, "embedder": "wordllama", "versions": results})


if __name__ == "__main__":
    main()
