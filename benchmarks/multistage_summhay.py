"""DOS RAG against Vanilla RAG, RAPTOR, ReadAgent and the full context at equal budgets, on the SummHay news
haystacks (the Stronger-Baselines paper's comparison, offline).

Every system packs at most the same number of tokens and the same offline summarizer (extractive, one bullet
per insight) writes the bullets; the offline judge scores them (coverage, citation, joint). Units are the
papers' passages of at most 100 tokens; Vanilla and DOS RAG rank them by embedding cosine (wordllama), as the
paper's retriever does. RAPTOR's tree and ReadAgent's memory are written offline (central sentences, the
extractive way), since no capable LLM runs here: the comparison measures the methods' selection and
compression structure, not LLM summaries. Nothing is tuned: every setting is the papers' or citesum's default.
DOS RAG, Vanilla RAG and the full context are answered by citesum's pipeline itself (``citesum summarize
--retriever dense --order original|score|full``); RAPTOR's and ReadAgent's contexts come from the tree and
the memory built here (the pipeline reads only those stored in the index), and are summarized alone.

Run: python benchmarks/multistage_summhay.py [--budgets 4000,8000,15000] [--cache DIR]
Writes: benchmarks/results/multistage_summhay.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import news_haystacks, write_result  # noqa: E402

from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.runner import PipelineConfig, haystack_index, judge_summaries, summary_lines  # noqa: E402
from citesum.pack import PackOptions  # noqa: E402
from citesum.pipeline import Pipeline, PipelineOptions  # noqa: E402
from citesum.raptor import build_tree, raptor_context, tree_summary  # noqa: E402
from citesum.readagent import ReadAgent, ReadReport  # noqa: E402
from citesum.summarize import build_context, summarize_context  # noqa: E402
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer  # noqa: E402
from citesum.summarize.statements import CentralStatements, StatementWriter, WriteReport  # noqa: E402
from citesum.types import Summary  # noqa: E402

SYSTEMS = ["dos-rag", "vanilla-rag", "raptor", "readagent", "full-context"]
#: the systems that are the pipeline's own packing orders, over dense retrieval
PIPELINE_ORDERS = {"dos-rag": "original", "vanilla-rag": "score", "full-context": "full"}
#: the paper: DOS RAG beats Vanilla RAG, RAPTOR and ReadAgent at every budget >= 5K tokens (e.g. InfiniteBench
#: En.MC with GPT-4o at 30K: DOS RAG 93.1%, Vanilla 87.8%); METHODS.md section 2
PAPER = {"claim": "DOS RAG >= Vanilla RAG, RAPTOR, ReadAgent at every budget >= 5K tokens",
         "example": {"dataset": "InfiniteBench En.MC", "reader": "GPT-4o", "budget": 30_000,
                     "dos-rag": 93.1, "vanilla-rag": 87.8}}


def context_of(system: str, query: str, index, budget: int, tree, agent, memory):  # type: ignore[no-untyped-def]
    """``system``'s context for ``query`` alone (multistage_llm.py answers each with two readers)."""
    if system in PIPELINE_ORDERS:
        return build_context(query, index, retriever="dense",
                             options=PackOptions(budget=budget, order=PIPELINE_ORDERS[system]))  # type: ignore[arg-type]
    if system == "raptor":
        return raptor_context(query, index, tree, budget=budget)
    return agent.context(query, index, memory, budget=budget)[0]


def answer_of(system: str, query: str, index, budget: int, tree, agent, memory,  # type: ignore[no-untyped-def]
              summarizer) -> tuple[Summary, float]:
    """``summarizer``'s answer to ``query`` from ``system``'s context, and the seconds the context took: DOS RAG,
    Vanilla RAG and the full context through the pipeline (its retrieval and packing time); RAPTOR and ReadAgent
    from this script's tree and memory, then summarized."""
    if system in PIPELINE_ORDERS:
        options = PipelineOptions(retriever="dense", budget=budget, order=PIPELINE_ORDERS[system])  # type: ignore[arg-type]
        summary = Pipeline(index, options, summarizer=summarizer).summarize(query).summary
        return summary, summary.timings["retrieve_pack_s"]
    started = time.perf_counter()
    context = context_of(system, query, index, budget, tree, agent, memory)
    seconds = time.perf_counter() - started
    return summarize_context(query, context, summarizer), seconds


def offline_structures(index, agent: ReadAgent,  # type: ignore[no-untyped-def]
                       writer: StatementWriter | None = None, tree_report: WriteReport | None = None,
                       read_report: ReadReport | None = None):
    """RAPTOR's tree of ``index`` (node summaries by ``writer``: offline by default) and ``agent``'s memory of
    it, and what they hold with the seconds each took to build."""
    started = time.perf_counter()
    tree = build_tree(index, writer or CentralStatements(), report=tree_report)
    tree_s = time.perf_counter() - started
    started = time.perf_counter()
    memory = agent.read(index, report=read_report)
    memory_s = time.perf_counter() - started
    return tree, memory, {"units": len(index.passages), "tree": tree_summary(tree), "tree_s": round(tree_s, 1),
                          "pages": len(memory.pages), "memory_s": round(memory_s, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", default="4000,8000,15000")
    parser.add_argument("--cache", default=None)
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    judge = get_judge("offline")
    haystacks = news_haystacks()
    agent = ReadAgent(CentralStatements())
    rows, structures = [], []
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(args.cache or temporary)
        prepared = []
        for haystack in haystacks:
            index = haystack_index(haystack, root / f"passages-{haystack.topic}", PipelineConfig(unit="passage"))
            tree, memory, structure = offline_structures(index, agent)
            structures.append({"topic": haystack.topic, **structure})
            print(structures[-1], flush=True)
            prepared.append((haystack, index, tree, memory))
        for budget in budgets:
            for system in SYSTEMS:
                summaries, seconds = [], 0.0
                for haystack, index, tree, memory in prepared:
                    by_subtopic = {}
                    for subtopic in haystack.subtopics:
                        summary, context_s = answer_of(system, subtopic.query, index, budget, tree, agent, memory,
                                                       ExtractiveSummarizer(ExtractiveOptions(
                                                           bullets=len(subtopic.insights))))
                        seconds += context_s
                        by_subtopic[subtopic.id] = summary_lines(haystack, summary)
                    summaries.append(by_subtopic)
                scores, _ = judge_summaries(haystacks, summaries, judge)
                queries = sum(len(h.subtopics) for h in haystacks)
                rows.append({"budget": budget, "system": system, "judge": judge.name, **scores.as_dict(),
                             "context_ms_per_query": round(1000 * seconds / queries, 1)})
                print(rows[-1], flush=True)
    write_result("multistage_summhay", {
        "data": "SummHay news haystacks (3 topics, 26 subtopics); held out: nothing here was tuned on them",
        "units": "passages of at most 100 tokens (cl100k)", "retriever": "dense (wordllama cosine)",
        "summarizer": "extractive, one bullet per insight", "tree_and_gists": "offline central sentences",
        "paper": PAPER, "structures": structures, "rows": rows})


if __name__ == "__main__":
    main()
