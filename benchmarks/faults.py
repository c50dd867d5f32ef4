"""The fault list at full size, against real processes on loopback: what a hostile client, a careless operator
and a flaky disk did to the service, the index and the Milvus store (tests/faults/ runs each at a size a 2-core
CI machine does in seconds; this runs them as they were found).

One ``citesum serve`` of a small index (its defaults: worker processes, connection limits), its resident memory
with its workers' sampled every 20 ms; then, in order:

- ``idle``: a search and a summary, then the memory level every later probe is held against;
- ``held_connections``: N connections that send part of their headers and stop, from one address, then N from
  many (127.0.x.y); a fresh client's /health is timed while they are held; the server's log growth is read;
- ``zip_bomb``: a 1 MB .docx whose document part declares 1,000 bytes and inflates to 1.1 GB, uploaded;
- ``big_integers``: ``k``, ``budget`` and an unknown key of 5,000 digits;
- ``malformed``, ``https_origin``, ``nul_query``: a request that is not HTTP, a foreign origin, a query of NULs.

Every answer's status and content type is kept: the result counts the plain-text and 500 answers (goal: none),
and the memory peak of each probe against the idle level (goal: under 1.5x). Then, each in its own processes:
``bit_rot`` (100 bytes flipped in a segment's vectors in place, mtime put back: dense and hybrid search must not
answer differently in silence), ``milvus`` (build in one process, search, check and serve from others, update
from a third), ``stopped_service_log`` (the write-ahead log after SIGTERM).

    python benchmarks/faults.py [--connections 20000]

Writes benchmarks/results/faults.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _common import free_port, git_state, process_tree_rss_mb, write_result  # noqa: E402
from fixtures import declaring_sizes, make_docx, with_part_inflating_to  # noqa: E402

CITESUM = str(Path(sys.executable).parent / "citesum")
PARTIAL_HEAD = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
DOCUMENTS = {
    "water.txt": "The Lakemont reservoir fell to 41 percent of capacity in August. Rationing began in September.",
    "trams.txt": "The new Eastline tram will connect the airport to the central station in 22 minutes.",
    "rents.txt": "The rental vacancy rate dropped to 1.8 percent, far below the healthy level of 5 percent.",
    "buses.txt": "A three-day drivers' strike in May cancelled about 9,000 bus trips across the network.",
}
QUERY = "How far did the Lakemont reservoir fall?"


def _citesum(*arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([CITESUM, *arguments], capture_output=True, text=True, timeout=600)
    if check and done.returncode != 0:
        raise RuntimeError(f"citesum {arguments[0]} failed: {done.stderr[-500:]}")
    return done


def _corpus(folder: Path) -> Path:
    folder.mkdir()
    for name, text in DOCUMENTS.items():
        (folder / name).write_text(text + "\n")
    return folder


class Served:
    """``citesum serve`` in a subprocess, its memory sampled and its answers recorded."""

    def __init__(self, index: Path, log: Path) -> None:
        import httpx

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self._log = open(log, "wb")
        self.process = subprocess.Popen([CITESUM, "serve", "--index", str(index), "--port", str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=self._log)
        self.answers: list[tuple[str, int, str]] = []  # (probe, status, content type)
        self.peaks: dict[str, float] = {}
        self._probe = "start"
        self._sampling = True
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        else:
            self.process.kill()
            self._log.close()
            raise RuntimeError("the service did not start: " + log.read_text(errors="replace")[-500:])
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while self._sampling:
            rss = process_tree_rss_mb(self.process.pid)
            self.peaks[self._probe] = max(self.peaks.get(self._probe, 0.0), rss)
            time.sleep(0.02)

    def probe(self, name: str) -> None:
        self._probe = name

    def ask(self, method: str, path: str, **options: Any) -> Any:
        import httpx

        response = httpx.request(method, self.url + path, timeout=60, **options)
        self.answers.append((self._probe, response.status_code, response.headers.get("content-type", "")))
        return response

    def raw(self, data: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as sock:
            sock.sendall(data)
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
        status = int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/") else 0
        kind = next((line.split(b":", 1)[1].strip().decode() for line in reply.split(b"\r\n\r\n")[0].split(b"\r\n")
                     if line.lower().startswith(b"content-type:")), "")
        self.answers.append((self._probe, status, kind))
        return reply

    def close(self) -> None:
        self._sampling = False
        self._sampler.join()
        self.process.terminate()
        self.process.wait(timeout=60)
        self._log.close()


def _open_partial(port: int, count: int, sources: Callable[[int], str]) -> list[socket.socket]:
    held = []
    for number in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(sources(number), 0))
            sock.sendall(PARTIAL_HEAD)
            held.append(sock)
        except OSError:
            break  # this process's own file limit
    return held


def _still_open(held: list[socket.socket]) -> int:
    count = 0
    for sock in held:
        sock.setblocking(False)
        try:
            count += sock.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:
            count += 1
        except OSError:
            pass
    return count


def _health_ms(served: Served, tries: int = 5) -> float:
    slowest = 0.0
    for _ in range(tries):
        started = time.perf_counter()
        assert served.ask("GET", "/health").status_code == 200
        slowest = max(slowest, time.perf_counter() - started)
    return round(1000 * slowest, 1)


def held_connections(served: Served, count: int) -> dict[str, Any]:
    result: dict[str, Any] = {"asked": count}
    log_before = served.log.stat().st_size
    for label, sources in (("one_address", lambda n: "127.0.0.1"),
                           ("many_addresses", lambda n: f"127.0.{1 + n // 200}.{2 + n % 200}")):
        started = time.perf_counter()
        held = _open_partial(served.port, count, sources)
        opened_s = time.perf_counter() - started
        time.sleep(1.0)
        result[label] = {"opened": len(held), "open_seconds": round(opened_s, 1),
                         "held_by_server": _still_open(held), "fresh_health_ms_max_of_5": _health_ms(served)}
        for sock in held:
            sock.close()
    result["log_bytes_written"] = served.log.stat().st_size - log_before
    return result


def zip_bomb(served: Served, folder: Path) -> dict[str, Any]:
    real = folder / "real.docx"
    make_docx(real, ["The ferry fleet has 12 boats."])
    inflated = 1100 << 20
    bomb = declaring_sizes(with_part_inflating_to(real.read_bytes(), "word/document.xml", inflated),
                           "word/document.xml", 1_000, crc=0)
    response = served.ask("POST", "/documents", files=[("files", ("bomb.docx", bomb, "application/octet-stream"))])
    job = response.json()
    deadline = time.monotonic() + 300
    while job.get("state") not in ("committed", "failed") and time.monotonic() < deadline:
        time.sleep(0.2)
        job = served.ask("GET", response.headers["location"]).json()
    report = (job.get("files") or [{}])[0]
    return {"archive_bytes": len(bomb), "inflates_to_bytes": inflated, "job_state": job.get("state"),
            "file_status": report.get("status"), "reason": report.get("reason", job.get("error"))}


def big_integers(served: Served) -> dict[str, Any]:
    statuses = {}
    for field, path in (("k", "/search"), ("budget", "/summarize"), ("unknown", "/summarize")):
        body = '{"query": "reservoir", "%s": %s}' % (field, "9" * 5000)
        statuses[field] = served.ask("POST", path, content=body,
                                     headers={"Content-Type": "application/json"}).status_code
    return statuses


def small_requests(served: Served) -> dict[str, Any]:
    served.probe("malformed")
    malformed = served.raw(b"NOT HTTP AT ALL\r\n\r\n")
    served.probe("https_origin")
    origin = served.ask("POST", "/search", json={"query": "reservoir"},
                        headers={"Origin": f"https://127.0.0.1:{served.port}"}).status_code
    served.probe("nul_query")
    nul = served.ask("POST", "/summarize", json={"query": "\u0000" * 20}).status_code
    return {"malformed_status": int(malformed.split(b" ", 2)[1]), "https_origin_status": origin,
            "nul_query_status": nul}


def _top(index: Path, retriever: str) -> tuple[int, list[str], str]:
    done = _citesum("search", QUERY, "--index", str(index), "--retriever", retriever, "-k", "4", "--json",
                    check=False)
    hits = json.loads(done.stdout)["hits"] if done.returncode == 0 else []
    return done.returncode, [h["document_id"] for h in hits], done.stderr.strip()[-300:]


def bit_rot(folder: Path, docs: Path) -> dict[str, Any]:
    index = folder / "rot-ix"
    _citesum("index", str(docs), "--index", str(index))
    before = {r: _top(index, r)[1] for r in ("dense", "hybrid")}
    vectors = sorted(index.glob("gen-*/**/vectors.npy"))[0]
    stat = vectors.stat()
    data = bytearray(vectors.read_bytes())
    for offset in range(len(data) - 100, len(data)):
        data[offset] ^= 0xFF
    with open(vectors, "r+b") as handle:  # in place: the same inode
        handle.write(data)
    os.utime(vectors, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    result: dict[str, Any] = {"file": str(vectors.relative_to(index))}
    for retriever in ("dense", "hybrid"):
        code, top, said = _top(index, retriever)
        silent_wrong = code == 0 and top != before[retriever] and not said
        result[retriever] = {"exit": code, "same_top": top == before[retriever], "said": said,
                             "silent_wrong": silent_wrong}
    return result


def milvus(folder: Path, docs: Path) -> dict[str, Any]:
    index = folder / "milvus-ix"
    _citesum("index", str(docs), "--index", str(index), "--store", "milvus")
    result: dict[str, Any] = {r: _top(index, r)[1][:1] == ["water.txt"] for r in ("bm25", "dense", "hybrid")}
    result["check_exit"] = _citesum("check", "--index", str(index), check=False).returncode
    served = Served(index, folder / "milvus-serve.log")
    try:
        result["served_search_status"] = served.ask("POST", "/search", json={"query": QUERY}).status_code
    finally:
        served.close()
    (docs / "parade.txt").write_text("A flamingo parade closed the harbour road on Sunday.\n")
    _citesum("index", str(docs), "--index", str(index))
    found = _citesum("search", "flamingo parade", "--index", str(index), "--retriever", "bm25", "-k", "1", "--json")
    result["update_seen"] = json.loads(found.stdout)["hits"][0]["document_id"] == "parade.txt"
    (docs / "parade.txt").unlink()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=20_000,
                        help="connections held per address pattern (bounded by this process's file limit)")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    connections = min(args.connections, hard - 200)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        docs = _corpus(folder / "docs")
        index = folder / "ix"
        _citesum("index", str(docs), "--index", str(index))
        served = Served(index, folder / "serve.log")
        probes: dict[str, Any] = {}
        try:
            served.probe("idle")
            served.ask("POST", "/search", json={"query": QUERY})
            served.ask("POST", "/summarize", json={"query": QUERY})
            time.sleep(1.0)
            idle = process_tree_rss_mb(served.process.pid)
            served.probe("held_connections")
            probes["held_connections"] = held_connections(served, connections)
            served.probe("zip_bomb")
            probes["zip_bomb"] = zip_bomb(served, folder)
            served.probe("big_integers")
            probes["big_integers"] = big_integers(served)
            probes.update(small_requests(served))
        finally:
            served.close()
        probes["stopped_service_log_bytes"] = (index / "index.sqlite-wal").stat().st_size \
            if (index / "index.sqlite-wal").exists() else 0
        probes["bit_rot"] = bit_rot(folder, docs)
        probes["milvus"] = milvus(folder, docs)
    answers = served.answers
    result = {
        "git": git_state(), "open_file_limit": {"soft": soft, "hard": hard}, "connections": connections,
        "idle_rss_mb": idle,
        "peak_rss_mb": {probe: round(peak, 1) for probe, peak in served.peaks.items() if probe != "start"},
        "peak_over_idle": {probe: round(peak / idle, 2) for probe, peak in served.peaks.items() if probe != "start"},
        "answers": len(answers),
        "plain_text_answers": sum(1 for _, status, kind in answers if not kind.startswith("application/json")),
        "answers_500": sum(1 for _, status, _ in answers if status >= 500 and status != 503),
        "probes": probes,
    }
    write_result("faults", result)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
