"""Helpers shared by the benchmark scripts: paths, machine description, result writing."""

from __future__ import annotations

import json
import os
import platform
import resource
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

if TYPE_CHECKING:
    from citesum.datasets.summhay import Haystack
    from citesum.llm.base import LLM

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"
HAYSTACKS = ["topic_news1.json", "topic_news2.json", "topic_news4.json"]



def load_script(path: Path, name: str) -> Any:
    """The Python file ``path`` (a benchmark script, not a package module) imported as module ``name``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module  # dataclasses and pickling look a module up by name
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module

#: SummHay retrieval: whole documents in score order within this many tokens (the paper's 15K setting)
RETRIEVAL_BUDGET = 15_000


def retrieval_scores(ranking: list[str], subtopic, token_count) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """NDCG@10 of a document ranking of a SummHay subtopic, and the insight coverage and occurrence recall of
    the documents it puts in the budget (stopping at the first that does not fit, as the SummHay code does)."""
    from citesum.evaluate.retrieval import insight_recall, ndcg_at_k, select_within_budget

    selected = select_within_budget(ranking, token_count, RETRIEVAL_BUDGET)
    coverage, occurrences = insight_recall(selected, subtopic.insight_documents)
    return {"ndcg@10": ndcg_at_k(ranking, subtopic.relevance, 10), "insight_coverage@15k": coverage,
            "insight_recall@15k": occurrences}


def mean_rouge(answers: Iterable[str], references: Iterable[Sequence[str]]) -> dict[str, float]:
    """ROUGE-1/2/L F1 of each answer against the best of its references, averaged, in percent (2 decimals)."""
    import numpy as np

    from citesum.evaluate.rouge import METRICS, rouge

    scores: dict[str, list[float]] = {m: [] for m in METRICS}
    for answer, refs in zip(answers, references, strict=True):
        for metric, value in rouge(answer, refs).items():
            scores[metric].append(value)
    return {m: round(100 * float(np.mean(v)), 2) for m, v in scores.items()}


def machine() -> dict[str, Any]:
    return {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count()}


def git_state(tree: Path = ROOT) -> dict[str, Any]:
    """The commit measured, and the files under src/ that differ from it (a run of uncommitted code says so):
    this checkout's, or that of the checkout at ``tree``."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    return {"commit": git("rev-parse", "HEAD"),
            "uncommitted_in_src": git("status", "--porcelain", "--", "src").splitlines()}


def process_tree_files(pid: int, name: str) -> Iterator[str]:
    """The text of ``/proc/<pid>/<name>`` for process ``pid`` and each of its descendants (a server and its
    worker processes) still running."""
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            text = Path(f"/proc/{current}/{name}").read_text()
            pending += [int(c) for task in Path(f"/proc/{current}/task").iterdir()
                        for c in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue  # ended meanwhile
        yield text


def process_tree_rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` and its descendants, in MB."""
    total_kib = sum(next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
                    for status in process_tree_files(pid, "status"))
    return round(total_kib / 1024, 1)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def news_haystacks() -> list["Haystack"]:
    """The three shared SummHay news haystacks, in the order of ``HAYSTACKS``."""
    from citesum.datasets.summhay import load_haystack

    return [load_haystack(SHARED_DATA / "summhay" / t) for t in HAYSTACKS]


def document_index_folders(root: str | Path) -> list[Path]:
    """One index folder per news haystack (whole documents as units), shared by the SummHay pipeline scripts so
    that ``--cache`` reuses each index across them."""
    return [Path(root) / f"{t}-doc" for t in HAYSTACKS]


@contextmanager
def fresh_llm(model: str, base_url: str) -> Iterator["LLM"]:
    """An OpenAI-compatible backend with an empty response cache: a rerun measures the server again instead of
    replaying the last run's answers, while a request repeated within the run is answered from the cache."""
    from citesum.llm import ResponseCache, get_llm

    with tempfile.TemporaryDirectory() as folder:
        yield get_llm("openai", model, base_url=base_url, cache=ResponseCache(Path(folder) / "responses.sqlite"))


def write_result(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    script = Path(sys.argv[0]).resolve()
    command = " ".join(["python", str(script.relative_to(ROOT)) if script.is_relative_to(ROOT) else script.name,
                        *sys.argv[1:]])
    payload = {"benchmark": name, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "command": command,
               "machine": machine(), **payload}
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")
    return path


class CitesumServer:
    """``citesum serve ARGUMENTS`` (the console script of this environment) on a free loopback port, ready once
    its ``/health`` answers 200."""

    def __init__(self, arguments: Sequence[str], start_s: float = 180) -> None:
        import httpx

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        citesum = Path(sys.executable).parent / "citesum"
        self.process = subprocess.Popen([str(citesum), "serve", *arguments, "--port", str(self.port)],
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + start_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.3)
        self.close()
        raise RuntimeError("the server did not start")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
