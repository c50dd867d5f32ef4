"""PromptRank beside BM25 and LightPAL on ODSum Story: precision, recall and the latency of a query, as
LightPAL's Table 3 compares them.

The protocol of benchmarks/lightpal_odsum.py, through its helpers: the pool is the dev + train sections (681
units, a section each), a question is asked as "<story title>: <question>", a question's relevant units are its
story's sections, P@K / R@K are averaged over the questions and then over K = 5, 10, 20. The questions are a
fixed sample of the 125 dev questions (the first ``--questions`` of a shuffle with seed 0, so a larger sample
extends a smaller one and reuses its stored rankings): held out, nothing here is tuned on them (PromptRank runs
with its defaults); BM25 and LightPAL are also scored on all 125 to show how the sample compares.

Compared: ``bm25``; LightPAL over BM25 with the BM25 graph lightpal_odsum.py builds (cached beside the index);
``promptrank:bm25`` with the packaged SmolLM2-135M in this process on one llama.cpp thread, its second hop
following the same graph. Latency: the wall time of ``retrieve(question, 20)``, one question at a time after
one warm-up question, with the number of LM calls PromptRank made for it. PromptRank's latency is of its first
``--timed`` questions ranked again in this run (which must give their stored rankings again): the stored
rankings may come from runs that shared the machine, and each keeps its own time and load average.

The PromptRank run is resumable: each question's ranking is appended to ``<cache>/promptrank-rankings.jsonl``
as it finishes, and a rerun ranks only the questions left (one to three minutes a question on one core).

Run: python benchmarks/promptrank_odsum.py --cache DIR [--questions 27] [--timed 3]
Writes: benchmarks/results/promptrank_odsum.json
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import peak_rss_mb, write_result  # noqa: E402
from lightpal_odsum import (  # noqa: E402
    STORY_DEV, STORY_KS, STORY_TRAIN, cached_graph, evaluate, open_index, titled, unit_relevance)

from citesum.datasets import Query, load_dataset  # noqa: E402
from citesum.index.store import Index, IndexSettings  # noqa: E402
from citesum.llm.likelihood import LlamaCppLikelihood  # noqa: E402
from citesum.retrieve import get_retriever  # noqa: E402
from citesum.retrieve.base import Retriever, rank_scores  # noqa: E402
from citesum.retrieve.lightpal import LightPALRetriever, PassageGraph, build_passage_graph  # noqa: E402
from citesum.retrieve.promptrank import PromptRankRetriever  # noqa: E402

SAMPLE_SEED = 0
#: lightpal_odsum.py's graph: edges to the 5 best of the 100 nearest units by BM25
GRAPH_CANDIDATES = 100
#: METHODS.md section 4, the LightPAL paper's Table 3 (its LM: Qwen2.5; a single CPU thread for LightPAL)
PAPER_TABLE_3 = {"lightpal_ms": {"story": 6, "meeting": 113}, "promptrank_s": "20-75",
                 "note": "LightPAL's context step on one CPU thread (Story 1,190 passages, Meeting 13,074); "
                         "PromptRank's iterative LLM re-ranking"}


def latency(retriever: Retriever, queries: list[Query], k: int) -> list[float]:
    """Milliseconds of ``retrieve(question, k)`` per question, after one untimed warm-up question."""
    retriever.retrieve(queries[0].text, k)
    times = []
    for query in queries:
        started = time.perf_counter()
        retriever.retrieve(query.text, k)
        times.append(1000 * (time.perf_counter() - started))
    return times


def timing(times: list[float]) -> dict[str, float]:
    return {"ms_mean": round(float(np.mean(times)), 2), "ms_median": round(float(np.median(times)), 2)}


class Replayed(Retriever):
    """The rankings a run stored, one per question text (so :func:`evaluate` scores them like any retriever)."""

    name = "replayed"

    def __init__(self, index: Index, orders: dict[str, list[int]]) -> None:
        super().__init__(index)
        self.orders = orders

    def scores(self, query: str) -> np.ndarray:
        return rank_scores(np.asarray(self.orders[query], dtype=np.int64))


def rank_resumably(promptrank: PromptRankRetriever, likelihood: LlamaCppLikelihood, queries: list[Query],
                   store: Path, settings: dict[str, object]) -> list[dict]:
    """One record per question: its ranking (every unit), milliseconds and LM calls; read from ``store`` when an
    earlier run with the same settings ranked it, else ranked now and appended."""
    done: dict[str, dict] = {}
    position = {passage.id: i for i, passage in enumerate(promptrank.index.passages)}
    if store.exists():
        for line in store.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["settings"] == settings:
                done[record["id"]] = record
    with open(store, "a", encoding="utf-8") as out:
        for number, query in enumerate(queries, start=1):
            if query.id not in done:
                calls, started = likelihood.calls, time.perf_counter()
                hits = promptrank.retrieve(query.text, len(position))  # every unit: the order is stored whole
                done[query.id] = {"id": query.id, "settings": settings,
                                  "order": [position[hit.passage.id] for hit in hits],
                                  "ms": round(1000 * (time.perf_counter() - started), 1),
                                  "lm_calls": likelihood.calls - calls,
                                  "load_average_1min": round(os.getloadavg()[0], 2)}
                out.write(json.dumps(done[query.id]) + "\n")
                out.flush()
            record = done[query.id]
            print(f"promptrank {number}/{len(queries)} {query.id}: {record['ms'] / 1000:.1f} s, "
                  f"{record['lm_calls']} LM calls", flush=True)
    return [done[query.id] for query in queries]


def paired_difference(first: Retriever, second: Retriever, index: Index, sample: list[Query]) -> dict[str, object]:
    """``first`` minus ``second`` in P and R (each averaged over K), per question, with 95% bootstrap intervals
    that resample the questions (scipy's BCa, seed 0)."""
    from scipy.stats import bootstrap

    out: dict[str, object] = {}
    per_question = {name: [evaluate(retriever, [query], unit_relevance(index, [query]), STORY_KS)
                           for query in sample] for name, retriever in (("first", first), ("second", second))}
    for measure in ("P_mean", "R_mean"):
        differences = np.array([a[measure] - b[measure] for a, b in zip(per_question["first"],
                                                                          per_question["second"])])
        if np.ptp(differences) == 0:  # one value: no interval to estimate (BCa would give NaN)
            low = high = float(differences[0])
        else:
            interval = bootstrap((differences,), np.mean, n_resamples=10_000,
                                 rng=np.random.default_rng(0)).confidence_interval
            low, high = float(interval.low), float(interval.high)
        out[measure] = {"difference": round(float(differences.mean()), 2), "ci95": [round(low, 2), round(high, 2)]}
    return out


def baselines(index: Index, graph: PassageGraph, sample: list[Query],
              every: list[Query]) -> tuple[dict[str, dict], dict[str, dict]]:
    """BM25's and LightPAL's rows on the sample (P / R, and the latency of retrieve(question, 20)), and their
    P / R on every dev question."""
    rows: dict[str, dict] = {}
    all_dev: dict[str, dict] = {}
    for name, make in (("bm25", lambda: get_retriever("bm25", index)),
                       ("lightpal (bm25, BM25 graph)", lambda: LightPALRetriever(index, get_retriever("bm25", index),
                                                                                  graph))):
        rows[name] = evaluate(make(), sample, unit_relevance(index, sample), STORY_KS)
        del rows[name]["ms_per_query_median"]  # timed as PromptRank is: one retrieve(question, 20) each
        rows[name] |= timing(latency(make(), sample, max(STORY_KS))) | {"lm_calls_per_query": 0}
        all_dev[name] = {k: v for k, v in evaluate(make(), every, unit_relevance(index, every), STORY_KS).items()
                         if k in ("P_mean", "R_mean")}
        print(name, rows[name], flush=True)
    return rows, all_dev


def promptrank_row(index: Index, graph: PassageGraph, sample: list[Query], root: Path,
                   timed: int) -> tuple[dict, dict[str, object], list[dict]]:
    """PromptRank's row on the sample, its settings, and its record of each question. Its latency is of the first
    ``timed`` questions ranked again now, after a warm-up, as BM25 and LightPAL are timed (a question stored by a
    run that shared the machine took longer; the records keep their own times and load averages), and each of
    them must give the stored ranking again with as many LM calls."""
    likelihood = LlamaCppLikelihood(n_threads=1)
    promptrank = PromptRankRetriever(index, get_retriever("bm25", index), likelihood, graph)
    settings: dict[str, object] = {
        "model": likelihood.name, "generation": index.generation, "seeds": promptrank.seeds, "beam": promptrank.beam,
        "pool": promptrank.pool, "hops": promptrank.hops, "passage_tokens": promptrank.passage_tokens}
    records = rank_resumably(promptrank, likelihood, sample, root / "promptrank-rankings.jsonl", settings)
    replayed = Replayed(index, {q.text: r["order"] for q, r in zip(sample, records)})
    row = evaluate(replayed, sample, unit_relevance(index, sample), STORY_KS)
    del row["ms_per_query_median"]  # the replay's, not PromptRank's
    row["minus_lightpal"] = paired_difference(replayed, LightPALRetriever(index, get_retriever("bm25", index), graph),
                                              index, sample)
    row["minus_bm25"] = paired_difference(replayed, get_retriever("bm25", index), index, sample)
    position = {passage.id: i for i, passage in enumerate(index.passages)}
    likelihood.log_likelihoods(["Document: warm-up"], " Question?")  # the first evaluation pages the model in
    timed_records = []
    for query, record in zip(sample[:timed], records):
        calls, started = likelihood.calls, time.perf_counter()
        hits = promptrank.retrieve(query.text, len(position))  # as the stored run: its LM calls do not depend on k
        timed_records.append({"id": query.id, "ms": round(1000 * (time.perf_counter() - started), 1),
                              "lm_calls": likelihood.calls - calls})
        if [position[hit.passage.id] for hit in hits] != record["order"] or \
                timed_records[-1]["lm_calls"] != record["lm_calls"]:
            raise SystemExit(f"PromptRank ranked {query.id} differently from the stored run")
    row |= timing([r["ms"] for r in timed_records]) | {
        "timed": timed_records, "timed_reproduced_stored_rankings": True,
        "lm_calls_per_query": round(float(np.mean([r["lm_calls"] for r in records])), 1)}
    print("promptrank", row, flush=True)
    return row, settings, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", required=True, help="keep the index, the graph and PromptRank's rankings here")
    parser.add_argument("--questions", type=int, default=27, help="dev questions in the sample")
    parser.add_argument("--timed", type=int, default=3,
                        help="questions PromptRank ranks again for its latency (about 1.5 minutes each)")
    args = parser.parse_args()
    root = Path(args.cache)
    root.mkdir(parents=True, exist_ok=True)
    dev = load_dataset("odsum-story", str(STORY_DEV))
    train = load_dataset("odsum-story", str(STORY_TRAIN))
    index = open_index(root / "odsum-story-dev-train-sections", IndexSettings.for_unit("document"),
                       dev.documents + train.documents)
    graph, _ = cached_graph(index, "bm25", functools.partial(
        build_passage_graph, index, None, candidates=GRAPH_CANDIDATES, neighbours="bm25"), GRAPH_CANDIDATES)
    every = titled(dev)
    # the seeded shuffle's first N: a run of any N is a random sample, and a larger N extends a smaller one's
    shuffled = random.Random(SAMPLE_SEED).sample(range(len(every)), len(every))
    sample = [every[i] for i in shuffled[: args.questions]]
    load_before = os.getloadavg()
    rows, all_dev = baselines(index, graph, sample, every)
    rows["promptrank:bm25 (SmolLM2-135M, BM25 graph)"], settings, records = promptrank_row(index, graph, sample, root,
                                                                                      args.timed)
    write_result("promptrank_odsum", {
        "questions": {"split": "dev (held out; nothing tuned on them)", "sample": len(sample), "of": len(every),
                      "seed": SAMPLE_SEED, "ids": [q.id for q in sample]},
        "units": len(index.passages), "ks": list(STORY_KS), "latency_k": max(STORY_KS),
        "promptrank": {**settings, "n_threads": 1, "graph": "bm25 (lightpal_odsum.py's)"},
        "results": rows, "all_dev_questions": all_dev, "paper_table_3": PAPER_TABLE_3,
        # the machine is shared: a question ranked while other jobs ran took longer (its load average says so)
        "promptrank_per_question": [{k: r.get(k) for k in ("id", "ms", "lm_calls", "load_average_1min")}
                                    for r in records],
        # of this run: the BM25 and LightPAL times (a resumed run ranks only the questions left with PromptRank)
        "load_average_1_5_15_of_this_run": {"before": [round(x, 2) for x in load_before],
                                            "after": [round(x, 2) for x in os.getloadavg()]},
        "peak_rss_mb": round(peak_rss_mb())})


if __name__ == "__main__":
    main()
