"""The service under a real uvicorn server on loopback: parallel reads, capacity, deadlines, LLM failures,
huge bodies and index updates during load (what the test client, which serialises requests, cannot show)."""

from __future__ import annotations

import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest

from citesum.index.store import Index, IndexSettings
from citesum.service.config import ServiceConfig

pytest.importorskip("fastapi")
import httpx  # noqa: E402

from citesum.llm.openai_compat import OpenAIChat  # noqa: E402
from citesum.service.app import create_app  # noqa: E402
from live import LiveServer, citesum_serve  # noqa: E402
from loopback import answer, reply  # noqa: E402

WATER = "How much did the Lakemont reservoir fall?"
BULLET = "- The Lakemont reservoir fell to 41 percent of capacity in August. [1]"


@pytest.fixture
def index_path(tmp_path: Path, haystack) -> Path:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents)
    return index.path


@pytest.fixture
def live(index_path: Path) -> Iterator[Any]:
    servers: list[LiveServer] = []

    def start(llm: Any = None, **config: Any) -> LiveServer:
        config = {"worker_kind": "thread", **config}
        servers.append(LiveServer(create_app(index_path, ServiceConfig(**config), llm=llm)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _llm(url: str, **options: Any) -> OpenAIChat:
    return OpenAIChat("m", url, cache=None, backoff_base=0.01, **options)


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_reads_run_in_parallel(live, serve, kind: str) -> None:  # type: ignore[no-untyped-def]
    """Two summaries at once reach the LLM together: no global lock (before, the second waited for the first,
    so this barrier of two never filled)."""
    barrier = threading.Barrier(2, timeout=10)
    in_flight: list[int] = []

    def both_at_once(handler, request, n):  # type: ignore[no-untyped-def]
        try:
            in_flight.append(barrier.wait())
            answer(handler, BULLET)
        except threading.BrokenBarrierError:
            reply(handler, 500, b"the other request never came")

    server = live(llm=_llm(serve(both_at_once).url, max_retries=0), workers=2, worker_kind=kind)
    with ThreadPoolExecutor(2) as threads:
        responses = list(threads.map(lambda _: httpx.post(f"{server.url}/summarize", json={"query": WATER},
                                                          timeout=30), range(2)))
    assert [r.status_code for r in responses] == [200, 200], [r.text for r in responses]
    assert sorted(in_flight) == [0, 1]


def test_a_full_queue_is_503_with_retry_after_and_capacity_comes_back(live, serve) -> None:  # type: ignore[no-untyped-def]
    release = threading.Event()

    def held(handler, request, n):  # type: ignore[no-untyped-def]
        release.wait(20)
        answer(handler, BULLET)

    llm_server = serve(held)
    server = live(llm=_llm(llm_server.url, max_retries=0), workers=1, queue=0)
    with ThreadPoolExecutor(1) as threads:
        first = threads.submit(httpx.post, f"{server.url}/summarize", json={"query": WATER}, timeout=30)
        deadline = time.monotonic() + 10
        while llm_server.calls == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        refused = httpx.post(f"{server.url}/summarize", json={"query": "water"}, timeout=10)
        assert refused.status_code == 503 and int(refused.headers["retry-after"]) >= 1
        assert refused.json()["error"] == "overloaded"
        # searches have their own lane: they are answered while the summaries are full
        assert httpx.post(f"{server.url}/search", json={"query": "water"}, timeout=10).status_code == 200
        health = httpx.get(f"{server.url}/health").json()  # health answers when the workers are all busy
        assert health["workers"]["summarize"]["busy"] == 1
        release.set()
        assert first.result().status_code == 200
    assert httpx.post(f"{server.url}/summarize", json={"query": "water"}).status_code == 200


def test_a_request_past_the_deadline_is_504(live, serve) -> None:  # type: ignore[no-untyped-def]
    def slow(handler, request, n):  # type: ignore[no-untyped-def]
        time.sleep(2)
        answer(handler, BULLET)

    server = live(llm=_llm(serve(slow).url, max_retries=0), timeout_s=0.5)
    response = httpx.post(f"{server.url}/search", json={"query": WATER}, timeout=30)
    assert response.status_code == 200  # a search has the service's limit, a summary by the model its own
    server = live(llm=_llm(serve(slow).url, max_retries=0), llm_timeout_s=0.5)
    response = httpx.post(f"{server.url}/summarize", json={"query": WATER}, timeout=30)
    assert response.status_code == 504 and "0.5 s" in response.json()["detail"]


def _held_until_the_client_leaves(left: list[float]):  # type: ignore[no-untyped-def]
    """A model's server that never answers, and notes when its client (citesum) closes the connection."""
    def held(handler, request, n):  # type: ignore[no-untyped-def]
        connection = handler.connection
        connection.setblocking(False)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if connection.recv(1, socket.MSG_PEEK) == b"":
                    left.append(time.monotonic())
                    return
            except BlockingIOError:
                pass
            time.sleep(0.02)

    return held


def _noted(left: list[float], within: float = 5.0) -> list[float]:
    seen_by = time.monotonic() + within
    while not left and time.monotonic() < seen_by:
        time.sleep(0.05)
    return left


def test_a_summary_past_its_time_limit_cancels_the_model_call(live, serve) -> None:  # type: ignore[no-untyped-def]
    """The model's server sees the client leave when the limit passes, and can free its slot, instead of
    writing an answer for a request that was answered 504 already."""
    left: list[float] = []
    server = live(llm=_llm(serve(_held_until_the_client_leaves(left)).url, max_retries=0), llm_timeout_s=5.0)
    started = time.monotonic()
    response = httpx.post(f"{server.url}/summarize", json={"query": WATER}, timeout=30)
    assert response.status_code == 504
    assert "did not answer" in response.json()["detail"] and "--llm-timeout" in response.json()["detail"]
    assert _noted(left) and left[0] - started < 6.0  # before: the call ran on, and the model with it


def test_a_client_that_leaves_frees_the_model(live, serve) -> None:  # type: ignore[no-untyped-def]
    """A page closed while the model writes: the service gives the summary up and closes its call."""
    left: list[float] = []
    server = live(llm=_llm(serve(_held_until_the_client_leaves(left)).url, max_retries=0), llm_timeout_s=60.0)
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/summarize", json={"query": WATER}, timeout=1.0)  # the user gives up at 1 s
    assert _noted(left) and left[0] - started < 4.0  # before: the model wrote on for the whole minute
    assert httpx.get(f"{server.url}/health").status_code == 200



@pytest.mark.parametrize("script, message", [
    (lambda handler, request, n: reply(handler, 500, b"upstream exploded"), "HTTP 500"),
    (lambda handler, request, n: reply(handler, 200, b"<html>not json</html>"), "malformed"),
    (lambda handler, request, n: answer(handler, "   "), "no usable bullet"),
])
def test_a_failing_llm_server_is_502_with_the_reason(live, serve, script, message: str) -> None:  # type: ignore[no-untyped-def]
    server = live(llm=_llm(serve(script).url, max_retries=1))
    response = httpx.post(f"{server.url}/summarize", json={"query": WATER}, timeout=30)
    assert response.status_code == 502 and message in response.json()["detail"], response.text


def test_llm_citations_outside_the_context_never_reach_the_user(live, serve) -> None:  # type: ignore[no-untyped-def]
    server = live(llm=_llm(serve(lambda h, r, n: answer(h, BULLET + "[99]")).url))
    result = httpx.post(f"{server.url}/summarize", json={"query": WATER, "budget": 2000}, timeout=30).json()
    assert result["summarizer"] == "llm:openai:m" and result["dropped_citations"] == [99]
    cited = {d for b in result["bullets"] for d in b["citations"]}
    in_context = {s["document_id"] for s in result["sources"].values()}
    assert cited and cited <= in_context
    assert all(e["supported"] and "Lakemont" in e["text"] for b in result["bullets"] for e in b["evidence"])


def test_a_20_mb_body_gets_413_and_no_reset(live) -> None:  # type: ignore[no-untyped-def]
    server = live()
    body = b'{"query": "' + b"w" * (20 * 1024 * 1024) + b'"}'
    response = httpx.post(f"{server.url}/search", content=body, headers={"content-type": "application/json"},
                          timeout=30)
    assert response.status_code == 413 and "limit here is 65,536" in response.json()["detail"]
    # A client that announces the body and waits (Expect: 100-continue) is answered before it sends a byte.
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(b"POST /documents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; "
                     b"boundary=x\r\nContent-Length: 999999999\r\nExpect: 100-continue\r\n\r\n")
        assert conn.recv(4096).startswith(b"HTTP/1.1 413")
    assert httpx.get(f"{server.url}/health").status_code == 200


def test_requests_during_index_updates_never_fail(live, index_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    """What `citesum index --sync` deleting documents did to /summarize (500s, KeyError in pack): each
    request now reads the generation it started on."""
    server = live(workers=2, worker_kind="process")  # the default of `citesum serve`
    documents = list(haystack.documents)
    statuses: list[int] = []
    rounds = 0

    def writer() -> None:
        nonlocal rounds
        index = Index.open(index_path)
        while rounds < 6 or len(statuses) < 30:
            half = documents[rounds % 2 :: 2]
            index.delete([d.id for d in half])
            index.add(half)
            rounds += 1

    def reader(path: str, body: dict[str, Any]) -> None:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            while updating.is_alive():
                statuses.append(client.post(path, json=body).status_code)

    updating = threading.Thread(target=writer)
    updating.start()
    readers = [threading.Thread(target=reader, args=("/summarize", {"query": WATER})),
               threading.Thread(target=reader, args=("/search", {"query": "bus fares", "documents": True}))]
    for thread in readers:
        thread.start()
    for thread in [updating, *readers]:
        thread.join(timeout=300)
    assert rounds >= 6 and len(statuses) >= 30 and set(statuses) == {200}


def _spawned(parent: int) -> list[int]:
    """The worker processes a server process started."""
    children = [int(pid) for task in Path(f"/proc/{parent}/task").iterdir()
                for pid in (task / "children").read_text().split()]
    return [pid for pid in children if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text()]


def test_a_worker_that_dies_under_load_is_replaced_once(live) -> None:  # type: ignore[no-untyped-def]
    """Every request of a broken pool sees it broken; if each restarted it, the new workers were killed in turn
    (22 restarts and 21 failed requests for one death, before)."""
    import os
    import signal

    server = live(workers=2, search_workers=1, worker_kind="process")
    with httpx.Client(base_url=server.url, timeout=60) as client:
        assert client.post("/summarize", json={"query": WATER}).status_code == 200
    before = _spawned(os.getpid())
    assert len(before) == 3  # two for summaries, one for searches

    def ask(_: int) -> int:
        return httpx.post(f"{server.url}/summarize", json={"query": WATER}, timeout=60).status_code

    with ThreadPoolExecutor(8) as threads:
        pending = [threads.submit(ask, n) for n in range(16)]
        time.sleep(0.05)
        os.kill(before[0], signal.SIGKILL)  # a summary or a search worker, mid-load
        statuses = [f.result() for f in pending]
    assert set(statuses) <= {200, 503} and statuses.count(503) <= 8  # only those in the broken pool's hands
    later = [ask(n) for n in range(6)]
    searched = [httpx.post(f"{server.url}/search", json={"query": "water"}, timeout=60).status_code
                for _ in range(3)]
    assert later == [200] * 6 and searched[1:] == [200, 200] and searched[0] in (200, 503)
    after = _spawned(os.getpid())
    assert len(after) == 3 and before[0] not in after  # one replacement set, not a storm


def test_a_body_that_never_comes_is_408_not_a_hung_connection(live) -> None:  # type: ignore[no-untyped-def]
    server = live(body_timeout_s=0.5)
    host, port = server.url.removeprefix("http://").split(":")
    upload_start = b'--x\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\nThe fer'
    for path, kind, start in (("/search", "application/json", b'{"query": "wa'),
                              ("/documents", "multipart/form-data; boundary=x", upload_start)):
        with socket.create_connection((host, int(port)), timeout=10) as conn:
            conn.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {kind}\r\n"
                         f"Content-Length: 1000\r\n\r\n".encode() + start)
            answer = b""
            while not answer.endswith(b"}") and (part := conn.recv(4096)):
                answer += part
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"no part of the request body came for 0.5 s" in answer


def test_serve_refuses_a_public_address_without_a_token(index_path: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from citesum.cli import main

    runner = CliRunner()
    result = runner.invoke(main, ["serve", "--index", str(index_path), "--host", "0.0.0.0"],
                           env={"CITESUM_TOKEN": None})
    assert result.exit_code == 1 and "refusing to serve on 0.0.0.0 without a token" in result.output
    short = runner.invoke(main, ["serve", "--index", str(index_path), "--host", "0.0.0.0"],
                          env={"CITESUM_TOKEN": "short"})
    assert short.exit_code == 1 and "at least 16" in short.output
    window = runner.invoke(main, ["serve", "--index", str(index_path), "--window", "8192"])
    assert window.exit_code == 1 and "--window is the LLM's context window" in window.output


def test_worker_processes_end_with_a_killed_server(index_path: Path) -> None:
    """A server killed outright (SIGKILL, out of memory) must not leave its worker processes running."""
    import os
    import signal

    server = citesum_serve(index_path, index_path.parent / "serve.log", "--workers", "2")
    try:
        # the workers, and multiprocessing's resource tracker
        workers = [int(pid) for task in Path(f"/proc/{server.pid}/task").iterdir()
                   for pid in (task / "children").read_text().split()]
        assert len(workers) >= 2
    finally:
        os.kill(server.pid, signal.SIGKILL)
        server.close()
    # a worker's watch looks each second, and the resource tracker ends after the workers; on a busy 2-core CI
    # machine a worker still loading its models had not ended within 10 s
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in workers):
        assert time.monotonic() < deadline, "worker processes outlived the server"
        time.sleep(0.1)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (FileNotFoundError, IndexError):
        return "Z"


def test_the_served_socket_sends_without_delay() -> None:
    """The socket `citesum serve` listens on makes asyncio turn Nagle off on each connection: with it on, each
    keep-alive request waited ~40 ms for a delayed ACK (a socket made with protocol 0 does not qualify)."""
    import asyncio

    from citesum.cli.serving import _listen

    listener = _listen("127.0.0.1", 0)
    delays: list[int] = []

    async def main() -> None:
        def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            delays.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(connected, sock=listener)
        reader, writer = await asyncio.open_connection(*listener.getsockname())
        await reader.read()
        writer.close()
        server.close()

    asyncio.run(main())
    assert delays and delays[0] != 0


def test_serve_on_a_busy_port_says_so_before_anything_else(index_path: Path) -> None:
    from click.testing import CliRunner

    from citesum.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["serve", "--index", str(index_path), "--port", str(port)])
    assert result.exit_code == 1 and f"cannot listen on 127.0.0.1:{port}" in result.output
    assert "serving" not in result.output


def test_cli_search_through_a_running_service_prints_what_the_index_gives(  # type: ignore[no-untyped-def]
    live, index_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`citesum search --server URL` asks a running service (index and models loaded) and prints the same
    lines as a search of the index itself; a wrong token, a refused request and no service are one-line errors."""
    from click.testing import CliRunner

    from citesum.cli import main

    token = "s3cret-token-of-enough-length"
    server = live(token=token)
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    runner = CliRunner()
    for options in (["--retriever", "bm25"], ["--documents", "-k", "3"], []):
        local = runner.invoke(main, ["search", WATER, "--index", str(index_path), *options])
        remote = runner.invoke(main, ["search", WATER, "--server", server.url, "--token-file", str(token_file),
                                      *options])
        assert local.exit_code == remote.exit_code == 0, remote.output
        assert remote.output == local.output and len(remote.output.splitlines()) >= 3
    monkeypatch.setenv("CITESUM_SERVER", server.url)
    monkeypatch.setenv("CITESUM_TOKEN", token)
    assert runner.invoke(main, ["search", WATER, "--retriever", "bm25"]).output == \
        runner.invoke(main, ["search", WATER, "--index", str(index_path), "--retriever", "bm25"]).output
    monkeypatch.delenv("CITESUM_TOKEN")
    refused = runner.invoke(main, ["search", WATER])
    assert refused.exit_code == 1 and "answered 401: unauthorized" in refused.output
    monkeypatch.setenv("CITESUM_TOKEN", token)
    unknown = runner.invoke(main, ["search", WATER, "--retriever", "bm26"])
    assert unknown.exit_code == 1 and "answered 400: bad request: retriever 'bm26' is no retriever citesum knows" in unknown.output
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    gone = runner.invoke(main, ["search", WATER, "--server", closed])
    assert gone.exit_code == 1 and f"cannot reach the citesum service at {closed}" in gone.output
    oracle = runner.invoke(main, ["search", WATER, "--qrels", "{}"])
    assert oracle.exit_code == 2 and "need the index itself" in oracle.output


def test_cli_search_says_when_the_server_is_not_a_citesum_service(serve) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from citesum.cli import main

    page = serve(lambda handler, request, n: reply(handler, 200, b"<html>a router's login page</html>"))
    result = CliRunner().invoke(main, ["search", WATER, "--server", page.url])
    assert result.exit_code == 1 and "did not answer with a JSON object: is it a citesum service?" in result.output
    broken = serve(lambda handler, request, n: reply(handler, 502, b"<html>Bad Gateway</html>"))
    result = CliRunner().invoke(main, ["search", WATER, "--server", broken.url])
    assert result.exit_code == 1 and "answered 502: <html>Bad Gateway</html>" in result.output


def test_the_client_names_a_port_that_does_not_speak_http_and_a_service_that_does_not_answer() -> None:
    from citesum.client import ServiceError, post_json

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"

        def banner() -> None:  # an SSH server's greeting, then it closes
            connection, _ = listener.accept()
            with connection:
                connection.recv(65536)
                connection.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")

        thread = threading.Thread(target=banner)
        thread.start()
        with pytest.raises(ServiceError, match="does not speak HTTP .*is it a citesum service"):
            post_json(url, "/search", {"query": "q"})
        thread.join()
        # a listener that accepts and never answers: the backlog takes the connection, nobody reads it
        with pytest.raises(ServiceError, match=r"did not answer within 0.3 s"):
            post_json(url, "/search", {"query": "q"}, timeout=0.3)


def test_a_model_too_slow_for_the_default_budget_gets_a_smaller_one_and_says_so(live, serve) -> None:  # type: ignore[no-untyped-def]
    def slow_reader(handler, request, n):  # type: ignore[no-untyped-def]
        time.sleep(0.6)  # 6,000 prompt tokens in 0.6 s: a summary of the default budget would not come in 1.5 s
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": BULLET}}],
                "usage": {"prompt_tokens": 6_000, "completion_tokens": 40}}
        reply(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    server = live(llm=_llm(serve(slow_reader).url, max_retries=0), llm_timeout_s=1.5)
    before = httpx.get(f"{server.url}/health").json()
    assert before["limits"]["budget"] == 15_000 and before["model"]["pace_tokens_per_s"] is None
    assert httpx.post(f"{server.url}/summarize", json={"query": WATER}, timeout=30).status_code == 200
    after = httpx.get(f"{server.url}/health").json()["model"]
    assert 4_000 < after["pace_tokens_per_s"] < 10_000  # 6,000 tokens in 0.6 s of sleep, and the call's own time
    # what the model reads in 60% of the limit, in citesum's tokens
    expected = after["pace_tokens_per_s"] * 1.5 * 0.6 / (after["tokens_per_citesum_token"] or 1.0)
    assert httpx.get(f"{server.url}/health").json()["limits"]["budget"] == pytest.approx(expected, rel=0.01)
    assert "lowered from 15,000" in after["budget_note"]
    assert httpx.post(f"{server.url}/summarize", json={"query": WATER}, timeout=30).status_code == 200
