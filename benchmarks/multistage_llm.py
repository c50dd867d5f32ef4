"""DOS RAG against Vanilla RAG, RAPTOR, ReadAgent and the full context at an equal budget, with an LLM writing
RAPTOR's node summaries, ReadAgent's pages, gists and look-ups, and every answer (the Stronger-Baselines paper's
comparison, with an LLM where benchmarks/multistage_summhay.py and multistage_odsum.py run offline).

Two data sets, cut down so that a 135M model on two cores writes every tree node, page break, gist, look-up
and answer in about an hour and a half (about 11 s a call here):
- a seeded sample of one SummHay news haystack's documents (default 30 of topic_news1.json's 100; its 9
  subtopics, each keeping the insights a sampled document states, with only those documents as their gold),
  one bullet per insight (the paper's prompt), scored by the offline judge (coverage, citation, joint);
- ODSum Story dev, a seeded sample of its stories (default 2: their sections are the collection, their
  questions asked with the story's title), answers of at most 250 words (the LLM: citesum's ``long`` prompt),
  ROUGE-1/2/L F1 against the best reference.
Each context is also answered by the offline extractive summarizer, so the table separates what the LLM's
structures (tree, memory) change from what its answers change. Nothing is tuned here: the methods run with
the papers' or citesum's defaults, except the caps that fit SmolLM2's window (3,000 tokens of context, answers
of at most 400 tokens, node summaries and gists of at most 256). The LLM's answers are kept in a response cache
under --cache, so a run interrupted half-way and started again asks only what it had not; the seconds it
reports are then of the replay (``usage`` counts the cache hits).

Offline, the packaged SmolLM2-135M behind llama-cpp-python's server is the only model at hand; its window
(8,192 tokens) bounds the budget to about 3,000 tokens of context with a 400-token answer.

Run:  python -m llama_cpp.server --model <SmolLM2 GGUF> --n_ctx 8192 --n_threads 2 --model_alias smollm2 \
          --port 8765 &
      python benchmarks/multistage_llm.py --model smollm2 --base-url http://127.0.0.1:8765/v1 --budget 3000 \
          --max-tokens 400 --cache .bench-cache/multistage-llm
Writes: benchmarks/results/multistage_llm.json
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, mean_rouge, write_result  # noqa: E402
from lightpal_odsum import open_index, titled  # noqa: E402
from multistage_odsum import CORPORA  # noqa: E402
from multistage_summhay import SYSTEMS, context_of, offline_structures  # noqa: E402

from citesum.datasets import load_dataset  # noqa: E402
from citesum.datasets.summhay import Haystack, load_haystack  # noqa: E402
from citesum.errors import UnusableOutputError  # noqa: E402
from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.runner import PipelineConfig, haystack_index, judge_summaries, summary_lines  # noqa: E402
from citesum.index.store import IndexSettings  # noqa: E402
from citesum.llm import ResponseCache, get_llm  # noqa: E402
from citesum.readagent import ReadAgent, ReadReport  # noqa: E402
from citesum.summarize import summarize_context  # noqa: E402
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer  # noqa: E402
from citesum.summarize.llm import LLMSummarizer  # noqa: E402
from citesum.summarize.statements import GIST_INSTRUCTION, RAPTOR_INSTRUCTION, LLMStatements, WriteReport  # noqa: E402
from citesum.types import Summary  # noqa: E402


#: a node summary or gist asks for about 75 words (100 tokens); SmolLM2 may run on, so its output is capped
STATEMENT_TOKENS = 256


#: the seed of the document and story samples
SAMPLE_SEED = 0


def sampled(haystack: Haystack, documents: int, seed: int = SAMPLE_SEED) -> Haystack:
    """``documents`` of the haystack's documents (seeded, in their order), each subtopic keeping the insights
    they state, with only them as gold."""
    kept = set(random.Random(seed).sample([d.id for d in haystack.documents], documents))
    subtopics = []
    for subtopic in haystack.subtopics:
        gold = {insight: tuple(d for d in ids if d in kept) for insight, ids in subtopic.insight_documents.items()}
        subtopics.append(dataclasses.replace(subtopic, insights=tuple(i for i in subtopic.insights if gold[i.id]),
                                             insight_documents={k: v for k, v in gold.items() if v}))
    return dataclasses.replace(haystack, documents=[d for d in haystack.documents if d.id in kept],
                               subtopics=[s for s in subtopics if s.insights])


def llm_structures(index: Any, llm: Any) -> tuple[Any, ReadAgent, Any, dict[str, Any]]:
    """RAPTOR's tree and ReadAgent's memory of ``index``, written by ``llm``, with what fell back offline."""
    tree_report, read_report = WriteReport(), ReadReport()
    agent = ReadAgent(LLMStatements(llm, GIST_INSTRUCTION, max_tokens=STATEMENT_TOKENS), llm)
    tree, memory, about = offline_structures(index, agent, LLMStatements(llm, RAPTOR_INSTRUCTION,
                                                                         max_tokens=STATEMENT_TOKENS),
                                             tree_report, read_report)
    return tree, agent, memory, {
        **about, "tree_node_fallbacks": len(tree_report.fallbacks), "tree_groups": tree_report.groups,
        "pagination_fallbacks": len(read_report.pagination_fallbacks),
        "gist_fallbacks": len(read_report.gists.fallbacks)}


def answer(query: str, context: Any, summarizer: Any, failures: list[str]) -> Summary | None:
    """The summary, or None (noted in ``failures``) when the LLM gave no usable bullet after its retry (a server
    that fails stops the run)."""
    try:
        return summarize_context(query, context, summarizer)
    except UnusableOutputError as exc:
        failures.append(str(exc)[:200])
        return None


def compare(queries: list[str], bullets: list[int], index: Any, llm: Any, budget: int,
            readers: dict[str, Callable[[int], Any]],
            score: Callable[[list[Summary | None]], dict[str, Any]]) -> tuple[dict, list[dict]]:
    """Every system's contexts for ``queries``, answered by each reader (made for the query's number of
    bullets) and scored by ``score(summaries)``."""
    tree, agent, memory, structure = llm_structures(index, llm)
    print(structure, flush=True)
    rows = []
    for system in SYSTEMS:
        contexts, notes, seconds = [], 0, 0.0
        for query in queries:
            started = time.perf_counter()
            if system == "readagent":  # the LLM picks the pages to read again
                context, context_notes = agent.context(query, index, memory, budget=budget)
                notes += len(context_notes)
            else:
                context = context_of(system, query, index, budget, tree, agent, memory)
            seconds += time.perf_counter() - started
            contexts.append(context)
        for reader, make in readers.items():
            failures: list[str] = []
            started = time.perf_counter()
            summaries = [answer(q, c, make(n), failures) for q, n, c in zip(queries, bullets, contexts)]
            row = {"system": system, "reader": reader, **score(summaries),
                   "unanswered": len(failures), "context_s_per_query": round(seconds / len(queries), 2),
                   "answer_s_per_query": round((time.perf_counter() - started) / len(queries), 2)}
            if system == "readagent":
                row["lookup_notes"] = notes
            if failures:
                row["first_failure"] = failures[0]
            rows.append(row)
            print(row, flush=True)
    return structure, rows


def summhay_part(topic: str, documents: int, root: Path, llm: Any, budget: int, max_tokens: int) -> dict[str, Any]:
    haystack = sampled(load_haystack(SHARED_DATA / "summhay" / topic), documents)
    index = haystack_index(haystack, root / f"summhay-{topic}-{documents}-seed{SAMPLE_SEED}",
                           PipelineConfig(unit="passage"))
    judge = get_judge("offline")
    subtopics = haystack.subtopics
    readers = {"llm": lambda bullets: LLMSummarizer(llm, "summhay", bullets=bullets, max_tokens=max_tokens),
               "extractive": lambda bullets: ExtractiveSummarizer(ExtractiveOptions(bullets=bullets))}

    def score(summaries: list[Summary | None]) -> dict[str, Any]:
        lines = {s.id: summary_lines(haystack, summary) if summary is not None else []
                 for s, summary in zip(subtopics, summaries)}
        scores, _ = judge_summaries([haystack], [lines], judge)
        return {"judge": judge.name, **scores.as_dict()}

    structure, rows = compare([s.query for s in subtopics], [len(s.insights) for s in subtopics], index, llm,
                              budget, readers, score)
    return {"haystack": topic, "documents": documents, "subtopics": len(subtopics),
            "insights": sum(len(s.insights) for s in subtopics), "structure": structure, "rows": rows}


def odsum_part(stories: int, root: Path, llm: Any, budget: int, max_tokens: int) -> dict[str, Any]:
    name, path, words = CORPORA["story"]
    dataset = load_dataset(name, str(path))
    every_story = sorted({d.metadata["story"] for d in dataset.documents})
    chosen = sorted(random.Random(SAMPLE_SEED).sample(every_story, stories))
    documents = [d for d in dataset.documents if d.metadata["story"] in chosen]
    queries = [q for q in titled(dataset) if q.id.split("/")[0] in chosen]
    index = open_index(root / f"odsum-story-{stories}", IndexSettings(), documents)
    readers = {"llm": lambda bullets: LLMSummarizer(llm, "long", num_words=words, max_tokens=max_tokens),
               "extractive": lambda bullets: ExtractiveSummarizer(ExtractiveOptions(bullets=None, max_words=words))}

    def score(summaries: list[Summary | None]) -> dict[str, Any]:
        return mean_rouge([" ".join(b.text for b in s.bullets) if s is not None else "" for s in summaries],
                          [q.references for q in queries])

    structure, rows = compare([q.text for q in queries], [5] * len(queries), index, llm, budget, readers, score)
    return {"stories": chosen, "sections": len(documents), "questions": len(queries), "structure": structure,
            "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--budget", type=int, default=3_000)
    parser.add_argument("--max-tokens", type=int, default=400, help="answer length cap")
    parser.add_argument("--haystack", default="topic_news1.json")
    parser.add_argument("--documents", type=int, default=30, help="the haystack's documents in the sample")
    parser.add_argument("--stories", type=int, default=2, help="ODSum Story dev stories in the sample (0: none)")
    parser.add_argument("--cache", default=None, help="indexes and the LLM response cache, kept between runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(args.cache or temporary)
        root.mkdir(parents=True, exist_ok=True)
        llm = get_llm("openai", args.model, base_url=args.base_url,
                      cache=ResponseCache(root / "responses.sqlite"), timeout=900.0)
        started = time.perf_counter()
        results = {"summhay": summhay_part(args.haystack, args.documents, root, llm, args.budget,
                                           args.max_tokens)}
        if args.stories:
            results["odsum_story"] = odsum_part(args.stories, root, llm, args.budget, args.max_tokens)
        seconds = time.perf_counter() - started
    write_result("multistage_llm", {
        "model": args.model, "budget": args.budget, "max_tokens": args.max_tokens,
        "units": "passages of at most 100 tokens (cl100k)", "retriever": "dense (wordllama cosine)",
        "readers": {"llm": "the model; SummHay: the paper's prompt, one bullet per insight; ODSum: the long prompt, "
                           "250 words",
                    "extractive": "citesum's offline summarizer over the same contexts"},
        "held_out": "nothing here was tuned on these data; the extractive reader's ranking rules were designed "
                    "looking at the SummHay news haystacks",
        "seconds": round(seconds, 1), "usage": llm.usage.__dict__, "results": results})


if __name__ == "__main__":
    main()
