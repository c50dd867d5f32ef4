"""Our pipeline with a real LLM summarizer on the three SummHay news haystacks, judged by the offline judge:
hybrid retrieval, DOS RAG order, one bullet per insight (the paper's prompt), with and without citation repair.

Any OpenAI-compatible server works. Offline, the packaged SmolLM2-135M behind llama-cpp-python's server is the
only model at hand: it measures that the whole LLM path runs on real data, not what a capable LLM scores.

Run:  python -m llama_cpp.server --model <SmolLM2 GGUF> --n_ctx 8192 --model_alias smollm2 --port 8765 &
      python benchmarks/summhay_llm.py --model smollm2 --base-url http://127.0.0.1:8765/v1 --budget 3000 \
          --max-tokens 400
Writes: benchmarks/results/summhay_llm.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import document_index_folders, fresh_llm, news_haystacks, write_result  # noqa: E402

from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.runner import PipelineConfig, judge_summaries, run_on_haystacks  # noqa: E402
from citesum.summarize.llm import LLMSummarizer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--budget", type=int, default=15_000)
    parser.add_argument("--retriever", default="hybrid")
    parser.add_argument("--max-tokens", type=int, default=1024, help="answer length cap")
    parser.add_argument("--cache", default=None, help="folder for the haystack indexes")
    args = parser.parse_args()
    judge = get_judge("offline")
    haystacks = news_haystacks()
    with fresh_llm(args.model, args.base_url) as llm, tempfile.TemporaryDirectory() as temporary:
        config = PipelineConfig(retriever=args.retriever, budget=args.budget)
        folders = document_index_folders(args.cache or temporary)
        rows = []
        # The second run (repair) replays the first run's answers from the response cache: only citations change.
        for repair in (False, True):
            started = time.perf_counter()
            summaries = run_on_haystacks(haystacks, folders, config,
                                         lambda bullets: LLMSummarizer(llm, "summhay", bullets=bullets,
                                                                         max_tokens=args.max_tokens),
                                         repair_citations=repair)
            seconds = time.perf_counter() - started
            scores, _ = judge_summaries(haystacks, summaries, judge)
            bullets = sum(len(lines) for by_subtopic in summaries for lines in by_subtopic.values())
            rows.append({"model": args.model, "repair": repair, "judge": judge.name, **scores.as_dict(),
                         "bullets": bullets, "seconds": round(seconds, 1)})
            print(rows[-1], flush=True)
    write_result("summhay_llm", {"budget": args.budget, "retriever": args.retriever, "order": "original",
                                 "max_tokens": args.max_tokens,
                                 "rows": rows, "usage": llm.usage.__dict__})


if __name__ == "__main__":
    main()
