"""Speed and memory on this machine (2 cores): index builds, search latency, growth to 100,000 documents.

Each scenario runs in its own subprocess so its peak RSS is its own.
  * build one SummHay haystack (100 documents, 100-token passages, wordllama)
  * build the 232 ODSum meeting transcripts (~1.4M words); then p50/p95 search latency of bm25, dense,
    the classic hybrid (bm25+dense) and the default hybrid (bm25-rm3+dense-prf) over its 296 dev queries,
    for the top 10 units and for the top 10 documents (index opened once, as a server would)
  * build + query a generated corpus of 10,000 / 30,000 / 100,000 documents, to show how cost grows
  * in every scenario, bare bm25s over the index's units (indexed in memory by bm25s itself with our analyser,
    then its tokenizer and ``retrieve``), and two ratios from the same run: our BM25 over bare bm25s, and the default hybrid (with
    query feedback) over hybrid:bm25+dense; and the build time over the time the embedder alone takes to
    embed the same units, and a 1% update (every 100th document revised) over the build time
  * on the meeting index: a one-shot ``citesum search`` (bm25, hybrid) start to exit, on the index and through
    a running ``citesum serve`` (--server), against 2x ``python -c "import citesum"`` plus the query's p50

Run: python benchmarks/speed.py [--sizes 10000,30000,100000]
Writes: benchmarks/results/speed.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, peak_rss_mb, write_result  # noqa: E402

RETRIEVERS = ["bm25", "dense", "hybrid:bm25+dense", "hybrid"]  # "hybrid" = bm25-rm3 + dense-prf


def _latencies(index, queries: list[str]) -> dict[str, dict[str, float]]:  # type: ignore[no-untyped-def]
    from citesum.retrieve import get_retriever

    out = {}
    for name in RETRIEVERS:
        retriever = get_retriever(name, index)
        retriever.retrieve(queries[0], 10)  # warm-up: loads the model and the artifacts
        times = []
        for query in queries:
            started = time.perf_counter()
            retriever.retrieve(query, 10)
            times.append((time.perf_counter() - started) * 1000)
        document_times = []
        for query in queries:
            started = time.perf_counter()
            retriever.rank_documents(query, 10)
            document_times.append((time.perf_counter() - started) * 1000)
        out[name] = {"p50_ms": round(float(np.percentile(times, 50)), 2),
                     "p95_ms": round(float(np.percentile(times, 95)), 2), "queries": len(times),
                     "documents_p50_ms": round(float(np.percentile(document_times, 50)), 2),
                     "documents_p95_ms": round(float(np.percentile(document_times, 95)), 2)}
    return out


def _bare_bm25s_p50(folder: Path, queries: list[str]) -> float:
    """p50 ms of bm25s itself over the index's units: indexed in memory by bm25s with its tokenizer and our
    analyser's settings (its score matrix precomputed, where ours applies the length norms at query time), then
    its tokenizer and ``retrieve`` (top 10), the floor under our BM25 query."""
    import bm25s
    import Stemmer

    from citesum.index.store import Index

    stemmer = Stemmer.Stemmer("english")
    model = bm25s.BM25()
    model.index(bm25s.tokenize([p.text for p in Index.open(folder).passages], stopwords="en", stemmer=stemmer,
                               show_progress=False), show_progress=False)

    def search(query: str) -> object:
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False)
        return model.retrieve(tokens, k=10, show_progress=False, n_threads=1)

    search(queries[0])
    times = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - started) * 1000)
    return round(float(np.percentile(times, 50)), 3)


def _ratios(search: dict[str, dict[str, float]], bare_bm25s_p50: float) -> dict[str, float]:
    """The issue's ratio goals, from one run so that machine noise cancels: BM25 against bare bm25s (goal
    <= 1.1), and the default hybrid (with RM3 and Rocchio feedback) against hybrid:bm25+dense (goal <= 1.5)."""
    return {"bm25_over_bare_bm25s": round(search["bm25"]["p50_ms"] / bare_bm25s_p50, 2),
            "hybrid_over_hybrid_bm25_dense": round(search["hybrid"]["p50_ms"] / search["hybrid:bm25+dense"]["p50_ms"], 2)}


def _build(documents, folder: Path) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Build the index (model loaded first, as the CLI does before its progress bar), then embed its units
    again with the embedder alone: issue 19's goal is a build within 1.3x of that."""
    from citesum.embed import get_embedder
    from citesum.index.store import Index

    embedder = get_embedder("wordllama")
    embedder.encode_documents(["warm-up"])
    started = time.perf_counter()
    index = Index.create(folder)
    stats = index.add(documents, embedder=embedder)
    seconds = time.perf_counter() - started
    info = index.info()
    texts = [p.text for p in index.passages]
    started = time.perf_counter()
    for start in range(0, len(texts), 512):  # the batches the build embeds
        embedder.encode_documents(texts[start : start + 512])
    embed_seconds = time.perf_counter() - started
    return {"documents": len(documents), "units": int(info["units"]), "unit_tokens": int(info["unit_tokens"]),
            "build_seconds": round(seconds, 2), "units_per_second": round(stats.passages_embedded / seconds, 1),
            "embed_alone_seconds": round(embed_seconds, 2), "build_over_embed_alone": round(seconds / embed_seconds, 2),
            "bytes_on_disk": int(info["bytes_on_disk"])}


def _update(folder: Path, documents, build_seconds: float) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Issue 19's update goal: 1% of the documents revised (every 100th, a sentence appended), as one update of
    the built index, in at most 5% of the build time. The old units are left out of the new generation, the new
    ones chunked, embedded and written as a segment; the others' files are linked (citesum.index.local). The
    embedder is the one the build loaded (get_embedder keeps it), as in a service that updates its index."""
    import dataclasses

    from citesum.embed import get_embedder
    from citesum.index.store import Index

    revised = [dataclasses.replace(d, text=d.text + " This report was revised.") for d in documents[::100]]
    started = time.perf_counter()
    stats = Index.open(folder).update(revised, embedder=get_embedder("wordllama"))
    seconds = time.perf_counter() - started
    return {"documents": stats.updated, "units_embedded": stats.passages_embedded, "seconds": round(seconds, 3),
            "share_of_build": round(seconds / build_seconds, 3)}


def _cli_seconds(arguments: list[str], runs: int) -> float:
    """Median wall time of a one-shot command of this interpreter, start to exit."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, *arguments], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return round(float(np.median(times)), 3)


def _cli(folder: Path, query: str, library_p50_ms: dict[str, float]) -> dict[str, object]:
    """Issue 19's CLI goal: a one-shot ``citesum search`` within 2x ``python -c "import citesum"`` plus the
    library's query time, on the index itself and through a running ``citesum serve`` (--server)."""
    import socket

    import httpx

    import_seconds = _cli_seconds(["-c", "import citesum"], 10)
    out: dict[str, object] = {"import_citesum_s": import_seconds}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "citesum.cli", "serve", "--index", str(folder), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("citesum serve did not start")
            time.sleep(0.2)
        for retriever in ("bm25", "hybrid"):
            search = ["-m", "citesum.cli", "search", query, "--retriever", retriever]
            goal = 2 * (import_seconds + library_p50_ms[retriever] / 1000)
            local = _cli_seconds([*search, "--index", str(folder)], 5)
            remote = _cli_seconds([*search, "--server", url], 10)
            out[retriever] = {"index_s": local, "server_s": remote, "goal_s": round(goal, 3),
                              "index_over_goal": round(local / goal, 2), "server_over_goal": round(remote / goal, 2)}
    finally:
        server.terminate()
        server.wait(timeout=30)
    return out


def scenario(name: str, argument: str) -> dict[str, object]:
    from citesum.index.store import Index

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "ix"
        if name == "summhay":
            from citesum.datasets.summhay import load_haystack

            haystack = load_haystack(SHARED_DATA / "summhay" / "topic_news1.json")
            documents = haystack.documents
            result = _build(documents, folder)
            result["queries_used"] = [s.query for s in haystack.subtopics]
            result["search"] = _latencies(Index.open(folder), result["queries_used"])
        elif name == "meeting":
            from citesum.datasets import load_dataset

            dataset = load_dataset("odsum-meeting", str(SHARED_DATA / "odsum" / "meeting"))
            documents = dataset.documents
            result = _build(documents, folder)
            result["words"] = sum(len(d.text.split()) for d in dataset.documents)
            opened = time.perf_counter()
            index = Index.open(folder)
            index.passages  # noqa: B018 - load passages, vectors and BM25
            result["open_seconds"] = round(time.perf_counter() - opened, 2)
            result["queries_used"] = [q.text for q in dataset.queries]
            result["search"] = _latencies(index, result["queries_used"])
            result["cli"] = _cli(folder, result["queries_used"][0],  # type: ignore[index]
                                 {name: result["search"][name]["p50_ms"] for name in ("bm25", "hybrid")})  # type: ignore[index]
        else:
            from citesum.demo.haystack import generate_haystack

            size = int(argument)
            documents = generate_haystack(documents=size, seed=size).documents
            result = _build(documents, folder)
            opened = time.perf_counter()
            index = Index.open(folder)
            index.passages  # noqa: B018
            result["open_seconds"] = round(time.perf_counter() - opened, 2)
            result["queries_used"] = [
                "What is happening with the city's water supply?", "How is public transit changing?",
                "What is the state of housing and rents?", "Lakemont reservoir capacity in August",
                "desalination plant cost", "bus drivers strike in May", "zoning reform near tram stops",
                "student bus fares", "median rent two-bedroom", "battery-electric buses Voltaro"] * 5
            result["search"] = _latencies(index, result["queries_used"])
        result["update_1_percent"] = _update(folder, documents, result["build_seconds"])  # type: ignore[arg-type]
        queries_used = result.pop("queries_used")
        result["bare_bm25s_p50_ms"] = _bare_bm25s_p50(folder, queries_used)  # type: ignore[arg-type]
        result["ratios"] = _ratios(result["search"], result["bare_bm25s_p50_ms"])  # type: ignore[arg-type]
    result["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,30000,100000")
    parser.add_argument("--scenario", nargs=2, help=argparse.SUPPRESS)  # internal: run one scenario, print JSON
    args = parser.parse_args()
    if args.scenario:
        print(json.dumps(scenario(*args.scenario)))
        return
    results = {}
    plan = [("summhay", "-"), ("meeting", "-")] + [("generated", size) for size in args.sizes.split(",")]
    for name, argument in plan:
        label = name if argument == "-" else f"generated_{argument}"
        output = subprocess.run([sys.executable, __file__, "--scenario", name, argument], check=True,
                                capture_output=True, text=True).stdout
        results[label] = json.loads(output.strip().splitlines()[-1])
        print(label, json.dumps(results[label]), flush=True)
    write_result("speed", {"embedder": "wordllama", "unit": "passage (100 tokens)", "results": results})


if __name__ == "__main__":
    main()
