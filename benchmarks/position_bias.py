"""Position bias (SummHay §5): the whole haystack as context with the relevant documents at the top, bottom or
middle, versus random order; sensitivity = largest |joint - joint(random)|.

Two parts:
* the stored full-context runs of three LLMs, scored with their stored GPT-4o judgments;
* our summarizers run by ``citesum.evaluate.runner.position_experiment`` and judged by the offline judge:
  the extractive summarizer (always), and an LLM when ``--summarizer-model`` is given (any OpenAI-compatible
  server). ``--budget`` is the context size; over it every document is cut to a common length, so a small
  window sees short openings of all 100 documents in the same placement.

Run: python benchmarks/position_bias.py [--budget 30000]
     [--summarizer-model smollm2 --summarizer-base-url http://127.0.0.1:8765/v1 --llm-budget 3000
      --llm-max-tokens 400 --llm-haystacks topic_news1.json]
Writes: benchmarks/results/position_bias.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, fresh_llm, news_haystacks, write_result  # noqa: E402

from citesum.evaluate.judges import get_judge  # noqa: E402
from citesum.evaluate.position import STORED_PLACEMENT_KEYS, sensitivity  # noqa: E402
from citesum.evaluate.runner import SummarizerFactory, extractive_factory, position_experiment  # noqa: E402
from citesum.evaluate.summhay import score_stored  # noqa: E402

MODELS = ("claude3-opus", "gemini-1.5-pro", "gpt-4o")


def ours(haystacks, name: str, factory: SummarizerFactory, budget: int, repair: bool) -> dict[str, object]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = position_experiment(haystacks, factory, get_judge("offline"), budget, repair_citations=repair)
    row = {"model": name, "judge": "offline:minilm", "budget": budget,
           **{p: round(s.joint, 1) for p, s in result.scores.items()},
           "coverage": {p: round(s.coverage, 1) for p, s in result.scores.items()},
           "citation": {p: round(s.citation, 1) for p, s in result.scores.items()},
           "sensitivity": round(result.sensitivity, 1), "seconds": round(time.perf_counter() - started, 1)}
    print(row, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=int, default=30_000, help="context tokens for the extractive run")
    parser.add_argument("--summarizer-model", default=None)
    parser.add_argument("--summarizer-base-url", default=None)
    parser.add_argument("--llm-budget", type=int, default=3_000)
    parser.add_argument("--llm-max-tokens", type=int, default=400)
    parser.add_argument("--llm-haystacks", default=",".join(HAYSTACKS),
                        help="comma-separated haystack files for the LLM run (a small model on a CPU is slow)")
    args = parser.parse_args()
    haystacks = news_haystacks()
    rows = []
    for model in MODELS:
        joint = {p: round(score_stored(haystacks, k.format(model=model))[0].joint, 1)
                 for p, k in STORED_PLACEMENT_KEYS.items()}
        rows.append({"model": model, "judge": "stored GPT-4o", "budget": "full", **joint,
                     "sensitivity": round(sensitivity(joint), 1)})
        print(rows[-1], flush=True)
    rows.append(ours(haystacks, "citesum extractive", extractive_factory, args.budget, repair=False))
    if args.summarizer_model:
        from citesum.summarize.llm import LLMSummarizer

        subset = [h for t, h in zip(HAYSTACKS, haystacks) if t in args.llm_haystacks.split(",")]
        with fresh_llm(args.summarizer_model, args.summarizer_base_url) as llm:
            rows.append(ours(subset, f"citesum llm {args.summarizer_model} + repair",
                             lambda bullets: LLMSummarizer(llm, "summhay", bullets=bullets,
                                                           max_tokens=args.llm_max_tokens),
                             args.llm_budget, repair=True))
        rows[-1]["haystacks"] = args.llm_haystacks.split(",")
    write_result("position_bias", {"placements": dict(STORED_PLACEMENT_KEYS), "rows": rows})


if __name__ == "__main__":
    main()
