"""Summary RAG's retrieval on the three SummHay news haystacks: ranking documents by their summaries.

For each haystack, a content index of whole documents (1,024-token units) and its summary index (one summary per
document: the offline central-sentences summarizer, ``--summary-tokens`` tokens); bm25 / dense / hybrid rank
the documents once over the documents and once over the summaries, scored as in ``retrieval_summhay.py``
(NDCG@10 with graded relevance, insight coverage and occurrence recall of a 15,000-token selection). Also the
size on disk of each index and the time to build the summaries. With ``--smollm2``, also summaries written by
the packaged SmolLM2-135M (the paper's LLM summaries with the only LM we can ship; about 10 s a document).

Run: python benchmarks/summary_rag_summhay.py [--cache DIR] [--summary-tokens 200] [--smollm2]
Writes: benchmarks/results/summary_rag_summhay.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, SHARED_DATA, retrieval_scores, write_result  # noqa: E402

from citesum.datasets.summhay import load_haystack  # noqa: E402
from citesum.index.store import Index, IndexSettings  # noqa: E402
from citesum.retrieve import get_retriever  # noqa: E402
from citesum.llm import get_llm  # noqa: E402
from citesum.summary_rag import CentralSentences, DocumentSummarizer, LLMSummaries, build_summary_index  # noqa: E402
from citesum.tokens import get_tokenizer  # noqa: E402

RETRIEVERS = ("bm25", "dense", "hybrid")


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=None, help="keep the content indexes here and reuse them")
    parser.add_argument("--summary-tokens", type=int, default=200)
    parser.add_argument("--smollm2", action="store_true", help="also LLM summaries by the packaged SmolLM2")
    args = parser.parse_args()
    summarizers: dict[str, DocumentSummarizer] = {"summaries": CentralSentences(args.summary_tokens)}
    if args.smollm2:
        summarizers["summaries-smollm2"] = LLMSummaries(get_llm("llamacpp"))
    tokenizer = get_tokenizer()
    rows: dict[str, list[dict[str, float]]] = {}
    sizes: dict[str, dict[str, int]] = {}
    summary_seconds: dict[str, float] = {}
    summary_tokens: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory() as temporary:
        for topic in HAYSTACKS:
            haystack = load_haystack(SHARED_DATA / "summhay" / topic)
            tokens = {d.id: tokenizer.count(d.text) for d in haystack.documents}
            content_path = Path(args.cache or temporary) / f"{topic}-summary-rag-content"
            content = Index.open(content_path) if content_path.exists() else Index.create(
                content_path, IndexSettings.for_unit("document"))
            if len(content) == 0:
                content.add(haystack.documents)
            indexes = {"documents": content}
            sizes[topic] = {"documents": folder_bytes(content_path)}
            for label, summarizer in summarizers.items():
                summaries_path = Path(temporary) / f"{topic}-{label}"  # always built anew: its time is measured
                started = time.perf_counter()
                indexes[label], _ = build_summary_index(content, summaries_path, summarizer)
                summary_seconds[f"{topic}:{label}"] = round(time.perf_counter() - started, 2)
                summary_tokens.setdefault(label, []).extend(
                    tokenizer.count(d.text) for d in indexes[label].documents())
                sizes[topic][label] = folder_bytes(summaries_path)
            for name in RETRIEVERS:
                for label, index in indexes.items():
                    retriever = get_retriever(name, index)
                    for subtopic in haystack.subtopics:
                        ranked = [d for d, _ in retriever.rank_documents(subtopic.query)]
                        rows.setdefault(f"{name}:{label}", []).append(
                            retrieval_scores(ranked, subtopic, tokens.__getitem__))
            print(topic, "done", flush=True)
    table = {label: {metric: round(float(np.mean([r[metric] for r in values])), 4) for metric in values[0]}
             | {"queries": len(values)} for label, values in rows.items()}
    for label, metrics in table.items():
        print(f"{label:<22} ndcg@10 {metrics['ndcg@10']:.3f}  coverage {metrics['insight_coverage@15k']:.3f}  "
              f"recall {metrics['insight_recall@15k']:.3f}")
    write_result("summary_rag_summhay", {
        "summarizers": {label: s.name for label, s in summarizers.items()},
        "central_summary_tokens_limit": args.summary_tokens,
        "summary_tokens_mean": {label: round(float(np.mean(v)), 1) for label, v in summary_tokens.items()},
        "results": table,
        "index_bytes": sizes, "summary_build_seconds": summary_seconds})


if __name__ == "__main__":
    main()
