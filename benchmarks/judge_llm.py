"""Meta-evaluate the LLM coverage judge (our prompt, JSON schema, one retry) through an OpenAI-compatible server
on the human-annotated SummHay judge benchmark, beside the stored LLM judges of the paper.

Any OpenAI-compatible server works. Offline, the packaged SmolLM2-135M behind llama-cpp-python's server is the
only model at hand: it measures that the LLM judge path runs on real annotations (speed, unreadable replies),
not what a capable judge scores. It also times the shipped prompt (bullets first, so the requests of one summary
share a prefix that the server can keep) against the same prompt with the insight first.

Run:  python -m llama_cpp.server --model <SmolLM2 GGUF> --n_ctx 8192 --model_alias smollm2 --port 8765 &
      python benchmarks/judge_llm.py --model smollm2 --base-url http://127.0.0.1:8765/v1
Writes: benchmarks/results/judge_llm.json
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED_DATA, fresh_llm, write_result  # noqa: E402

from citesum.evaluate.llm_judge import LLM_JUDGE_PROMPT, LLMJudge  # noqa: E402
from citesum.evaluate.meta import load_annotations, meta_evaluate  # noqa: E402

BULLETS_FIRST = "Summary bullets (JSON, keyed by bullet id):\n{bullets}\n\nInsight: {insight}"
INSIGHT_FIRST = "Insight: {insight}\n\nSummary bullets (JSON, keyed by bullet id):\n{bullets}"


def prompt_order_seconds(model: str, base_url: str, samples, rounds: int = 2) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Seconds to judge ``samples`` with the shipped prompt (bullets first: the requests of one summary share a
    prefix) and with the insight first, alternated ``rounds`` times; the least of each is kept."""
    prompts = {"bullets_first": LLM_JUDGE_PROMPT,
               "insight_first": LLM_JUDGE_PROMPT.replace(BULLETS_FIRST, INSIGHT_FIRST)}
    assert prompts["insight_first"] != LLM_JUDGE_PROMPT, "the prompt no longer has the expected layout"
    best = {name: float("inf") for name in prompts}
    for _ in range(rounds):
        for name, prompt in prompts.items():
            with fresh_llm(model, base_url) as llm:
                judge = LLMJudge(llm, prompt=prompt)
                started = time.perf_counter()
                for sample in samples:
                    judge.judge(sample.insights, sample.summary)
                best[name] = min(best[name], round(time.perf_counter() - started, 1))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--samples", type=int, default=None, help="only the first N annotated summaries")
    parser.add_argument("--order-samples", type=int, default=6,
                        help="annotated summaries for the prompt-order timing (0: skip it)")
    args = parser.parse_args()
    samples = load_annotations(SHARED_DATA / "summhay" / "eval_benchmark_dev.json")[: args.samples]
    with fresh_llm(args.model, args.base_url) as llm:
        judge = LLMJudge(llm)
        started = time.perf_counter()
        quality = meta_evaluate(samples, judge)
        seconds = time.perf_counter() - started
        usage = dict(llm.usage.__dict__)
        # The label mix shows whether the judge discriminates at all (one answering FULL to everything has r = 0);
        # a second judge on the same backend replays every answer from the response cache.
        replay = LLMJudge(llm)
        labels = Counter(j.coverage for s in samples for j in replay.judge(s.insights, s.summary))
    result = {
        "model": args.model, "samples": len(samples), "judge": judge.name, **quality.__dict__,
        "labels": dict(labels), "unparsed_replies": len(judge.unparsed), "unparsed_examples": judge.unparsed[:5],
        "seconds": round(seconds, 1), "usage": usage,
        "prompt_order_seconds": {"samples": args.order_samples, "insights": sum(len(s.insights) for s in
                                                                              samples[: args.order_samples]),
                                 **prompt_order_seconds(args.model, args.base_url, samples[: args.order_samples])}
        if args.order_samples else None,
        "stored_judges": {name: meta_evaluate(samples, name).__dict__ for name in samples[0].stored},
    }
    print(result, flush=True)
    write_result("judge_llm", result)


if __name__ == "__main__":
    main()
