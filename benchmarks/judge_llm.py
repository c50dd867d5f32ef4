"""Meta-evaluate the LLM coverage judge (our prompt, JSON schema, one retry) through an OpenAI-compatible server
on the human-annotated SummHay judge benchmark, beside the stored LLM judges of the paper.

Any OpenAI-compatible server works. Offline, the packaged SmolLM2-135M behind llama-cpp-python's server is the
only model at hand: it measures that the LLM judge path runs on real annotations (speed, unreadable replies),
not what a capable judge scores.

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

from citesum.evaluate.judges import LLMJudge, load_annotations, meta_evaluate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--samples", type=int, default=None, help="only the first N annotated summaries")
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
        "stored_judges": {name: meta_evaluate(samples, name).__dict__ for name in samples[0].stored},
    }
    print(result, flush=True)
    write_result("judge_llm", result)


if __name__ == "__main__":
    main()
