"""What bounds ``citesum index`` over a folder (issue 18): the files are read as the index takes them
(citesum.ingest.iter_documents, Index.update_from), a batch of about ``segment_units`` units' worth of text at a
time, so the run's peak memory follows the setting, not the folder.

For each of ``--sizes`` passages, our generated haystack (benchmarks/scale.py's documents, seed 2026, 100-token
passages) is written as JSON Lines files of 1,000 documents each, and ``citesum index FOLDER --index IX
--segment-units S --ann-min-units 20000 --json`` runs on it in its own process (the CLI as a user runs it,
wordllama). Reported: the run's wall time, its peak RSS (the child's ru_maxrss), the generations it committed and
the size of the folder. With the same setting, a folder three times larger should peak at about the same RSS. The
largest folder is indexed again with the default setting, which takes it in one batch.

Then a reader opens each index in its own process and runs the default hybrid on scale.py's 60 queries asked once:
its peak RSS, and its anonymous RSS at the end (RssAnon: what it holds itself; the rest of its RSS is pages of the
index's memory-mapped files, which the kernel can drop and read again).

Run: python benchmarks/bounded_ingest.py [--segment-units 100000] [--sizes 100000,300000]
Writes: benchmarks/results/bounded_ingest.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402

DOCUMENTS_PER_FILE = 1000
ANN_MIN_UNITS = 20_000


def write_folder(folder: Path, passages: int) -> int:
    """The generated documents for ``passages`` passages as JSON Lines files; returns the bytes written."""
    from scale import _documents

    folder.mkdir(parents=True)
    documents = _documents(passages)
    written = 0
    for start in range(0, len(documents), DOCUMENTS_PER_FILE):
        lines = [json.dumps({"id": d.id, "title": d.title, "text": d.text})
                 for d in documents[start: start + DOCUMENTS_PER_FILE]]
        path = folder / f"part{start // DOCUMENTS_PER_FILE:05d}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written += path.stat().st_size
    return written


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.iterdir())


def run_cli(folder: Path, index: Path, segment_units: int | None) -> dict[str, Any]:
    """``citesum index`` in a child process (``segment_units`` None: the default): its wall time, peak RSS (its own
    rusage, from wait4) and JSON output."""
    command = [str(Path(sys.executable).parent / "citesum"), "index", str(folder), "--index", str(index),
               "--ann-min-units", str(ANN_MIN_UNITS), "--json"]
    if segment_units is not None:
        command += ["--segment-units", str(segment_units)]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as output:
        child = subprocess.Popen(command, stdout=output, stderr=subprocess.DEVNULL, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{' '.join(command)} failed")
        output.seek(0)
        stats = json.loads(output.read())["stats"]
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "generations": stats["generation"], "units": stats["passages_embedded"], "documents": stats["added"]}


def read(index_folder: Path) -> dict[str, Any]:
    """A reader: open the index, run the default hybrid on 60 queries asked once; its memory."""
    from scale import _fresh_queries, _timed

    from citesum.index.store import Index
    from citesum.retrieve import get_retriever

    index = Index.open(index_folder)
    retriever = get_retriever("hybrid", index)
    latency = _timed(lambda q: retriever.retrieve(q, 10), _fresh_queries(index))
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {"hybrid_p50_ms": latency["p50_ms"], "anonymous_rss_mb": round(int(status["RssAnon"].split()[0]) / 1024, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--segment-units", type=int, default=100_000)
    parser.add_argument("--sizes", default="100000,300000")
    parser.add_argument("--read", help=argparse.SUPPRESS)  # internal: the reader step on this index, prints JSON
    args = parser.parse_args()
    if args.read:
        print(json.dumps(read(Path(args.read))))
        return
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    runs = []
    with tempfile.TemporaryDirectory(prefix="citesum-ingest-") as scratch:
        # each size with the setting, then the largest folder again with the default (one batch: the whole folder)
        for passages, segment_units in [*((n, args.segment_units) for n in sizes), (sizes[-1], None)]:
            folder = Path(scratch) / f"corpus-{passages}"
            size = write_folder(folder, passages) if not folder.exists() else folder_bytes(folder)
            index = Path(scratch) / f"ix-{passages}-{segment_units or 'default'}"
            result = {"passages": passages, "segment_units": segment_units or "default",
                      "folder_mb": round(size / 2**20, 1), **run_cli(folder, index, segment_units)}
            reader = subprocess.run([sys.executable, __file__, "--read", str(index)], capture_output=True, text=True,
                                    check=True).stdout
            result["reader"] = json.loads(reader.strip().splitlines()[-1])
            print(json.dumps(result), flush=True)
            runs.append(result)
    write_result("bounded_ingest", {"ann_min_units": ANN_MIN_UNITS,
                                    "documents_per_file": DOCUMENTS_PER_FILE, "embedder": "wordllama", "runs": runs})


if __name__ == "__main__":
    main()
