"""What the stream adds: time to the first bullet through ``citesum serve``'s ``/summarize/stream`` against
the model's own time to write that bullet, with a loopback llama.cpp server (llama-cpp-python's) running the
packaged SmolLM2 on this machine's cores, over the demo index, for the demo's three questions.

For each question:

1. *the model alone*: the prompt the service sends (taken from the same pipeline in this process, with the
   same window, budget and options) is streamed straight from the llama.cpp server, timed from the request to
   the piece with which the model had written the service's first bullet (its last letters);
2. *through the service*: the question is asked of ``/summarize/stream`` (retrieval, packing, the model's
   stream, each bullet's citation check, server-sent events), timed from the request to the first ``bullet``
   event, and to ``done``.

Before each timed call another prompt is answered, so that neither finds the previous prompt in the server's
cache. The goal (issue of the stream): the service's first bullet within 1.2x of the model's own.

    python benchmarks/streaming.py [--n-ctx 8192] [--rounds 2]

Writes benchmarks/results/streaming.json. Measured once: the model's pace on a shared machine varies, and the
spread of the rounds is in the JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import git_state, write_result  # noqa: E402
from llm_server_defaults import demo_served_by_smollm2  # noqa: E402

def _flush(llm_url: str) -> None:
    """Another prompt answered: the server's cached prompt is no longer the next one's."""
    import httpx

    httpx.post(f"{llm_url}/chat/completions", timeout=300, json={
        "model": "smollm2", "max_tokens": 1, "messages": [{"role": "user", "content": "Say yes."}]})


def model_stream(llm_url: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    """The model answering ``prompt`` streamed straight from its server: (seconds since the request, the answer
    so far) at each piece, and the whole answer's time."""
    import httpx

    started = time.perf_counter()
    written, checkpoints = "", []
    body = {"model": "smollm2", "stream": True, "temperature": 0.0, "seed": 0, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}]}
    with httpx.stream("POST", f"{llm_url}/chat/completions", json=body, timeout=600) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:]).get("choices") or []:
                written += (choice.get("delta") or {}).get("content") or ""
            checkpoints.append((time.perf_counter() - started, written))
    return {"checkpoints": checkpoints, "whole_s": time.perf_counter() - started, "output": written}


def _letters(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).lower()


def written_by(checkpoints: list[tuple[float, str]], bullet: str) -> float | None:
    """When the model alone had written ``bullet`` (the service's first bullet, as it parsed it): the first
    checkpoint whose answer holds the bullet's last letters."""
    end = _letters(bullet)[-30:]
    return next((at for at, written in checkpoints if end and end in _letters(written)), None)


def service_first_bullet_s(url: str, question: str) -> dict[str, Any]:
    import httpx

    started = time.perf_counter()
    first, done, bullets, name, first_text = None, None, 0, "", None
    with httpx.stream("POST", f"{url}/summarize/stream", json={"query": question}, timeout=600) as response:
        for line in response.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                if name == "bullet":
                    bullets += 1
                    if first is None:
                        first, first_text = time.perf_counter() - started, json.loads(line[6:])["text"]
                elif name == "done":
                    done = json.loads(line[6:])
    return {"first_bullet_s": first, "first_bullet": first_text, "done_s": time.perf_counter() - started,
            "bullets": bullets,
            "context_tokens": (done or {}).get("context", {}).get("tokens")}


def main() -> None:
    from citesum.llm.options import LLMOptions
    from citesum.pipeline import Pipeline, PipelineOptions

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-ctx", type=int, default=8192, help="the llama.cpp server's context (its --n_ctx)")
    parser.add_argument("--rounds", type=int, default=2, help="times each question is timed each way")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, demo_served_by_smollm2(Path(tmp), args.n_ctx) as served:
        llm_url, url = served.llm_url, served.url
        # the prompts the service sends: the same pipeline, window and options, built here
        options = PipelineOptions(summarizer="llm", verify=True,
                                  llm=LLMOptions(model="smollm2", base_url=(llm_url,), cache=False))
        pipeline = Pipeline(served.demo / "index", options)
        rows = []
        for topic, question in served.questions:
            with pipeline.index.read() as view:
                context, _, _ = pipeline._context(question, view, None, None)
            prompt = pipeline.summarizer.prompt(question, context)  # type: ignore[attr-defined]
            for round_number in range(args.rounds):
                _flush(llm_url)
                alone = model_stream(llm_url, prompt, options.max_tokens)
                _flush(llm_url)
                service = service_first_bullet_s(url, question)
                model_first = (written_by(alone["checkpoints"], service["first_bullet"])
                               if service["first_bullet"] else None)
                ratio = service["first_bullet_s"] / model_first if service["first_bullet_s"] and model_first else None
                rows.append({"topic": topic, "question": question, "round": round_number,
                             "model_first_bullet_s": model_first, "model_whole_s": alone["whole_s"],
                             "first_bullet": service["first_bullet"], "model_output": alone["output"],
                             "service_first_bullet_s": service["first_bullet_s"], "service_done_s": service["done_s"],
                             "bullets": service["bullets"], "ratio": ratio,
                             "prompt_tokens": pipeline.tokenizer.count(prompt),
                             # the same context both ways (the service's budget may follow the model's pace)
                             "model_context_tokens": context.token_count,
                             "service_context_tokens": service["context_tokens"]})
                print(json.dumps(rows[-1]), flush=True)
    ratios = [row["ratio"] for row in rows if row["ratio"] is not None]
    write_result("streaming", {
        "command": "python benchmarks/streaming.py" + (f" --n-ctx {args.n_ctx}" if args.n_ctx != 8192 else "")
                   + (f" --rounds {args.rounds}" if args.rounds != 2 else ""),
        "n_ctx": args.n_ctx, "rounds": args.rounds, "rows": rows,
        "ratio": {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)} if ratios else None,
        "goal": "the service's first bullet within 1.2x of the model's own", **git_state()})


if __name__ == "__main__":
    main()
