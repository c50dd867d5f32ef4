"""What bounds ``citesum index`` over a folder (issue 18): the files are read as the index takes them
(citesum.ingest.iter_documents, Index.update_from), a batch of about ``segment_units`` units' worth of text at a
time, so the run's peak memory follows the setting, not the folder.

For each of ``--sizes`` passages, our generated haystack (benchmarks/scale.py's documents, seed 2026, 100-token
passages) is written as JSON Lines files of 1,000 documents each, and ``citesum index FOLDER --index IX
--segment-units S --ann-min-units 20000 --json`` runs on it in its own process (the CLI as a user runs it,
wordllama). Reported: the run's wall time, its peak RSS (the child's ru_maxrss), the generations it committed and
the size of the folder. With the same setting, a folder three times larger should peak at about the same RSS.

Run: python benchmarks/bounded_ingest.py [--segment-units 100000] [--sizes 100000,300000]
Writes: benchmarks/results/bounded_ingest.json
"""

from __future__ import annotations

import argparse
import json
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


def run_cli(folder: Path, index: Path, segment_units: int) -> dict[str, Any]:
    """``citesum index`` in a child process: its wall time, peak RSS and JSON output."""
    command = [str(Path(sys.executable).parent / "citesum"), "index", str(folder), "--index", str(index), "--segment-units",
               str(segment_units), "--ann-min-units", str(ANN_MIN_UNITS), "--json"]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    # ru_maxrss of the children waited for: this process runs one child at a time, so each size gets its own
    # process; the maximum so far is the largest child's, which is why the sizes run smallest first
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    stats = json.loads(done.stdout)["stats"]
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(peak, 1), "generations": stats["generation"],
            "units": stats["passages_embedded"], "documents": stats["added"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--segment-units", type=int, default=100_000)
    parser.add_argument("--sizes", default="100000,300000")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    runs = []
    with tempfile.TemporaryDirectory(prefix="citesum-ingest-") as scratch:
        for passages in sizes:
            folder = Path(scratch) / f"corpus-{passages}"
            size = write_folder(folder, passages)
            result = {"passages": passages, "folder_mb": round(size / 2**20, 1),
                      **run_cli(folder, Path(scratch) / f"ix-{passages}", args.segment_units)}
            print(json.dumps(result), flush=True)
            runs.append(result)
    write_result("bounded_ingest", {"segment_units": args.segment_units, "ann_min_units": ANN_MIN_UNITS,
                                    "documents_per_file": DOCUMENTS_PER_FILE, "embedder": "wordllama", "runs": runs})


if __name__ == "__main__":
    main()
