"""How citation repair scales with collection size: building the sentence evidence index once, then
verifying one bullet, on generated collections of 100 / 1,000 / 10,000 documents (2 cores, wordllama).

Run: python benchmarks/citation_repair_scaling.py
Writes: benchmarks/results/citation_repair_scaling.json
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402

from citesum.demo.haystack import generate_haystack  # noqa: E402
from citesum.summarize.verify import CitationVerifier  # noqa: E402

BULLETS = ["The Lakemont reservoir fell to 41 percent of capacity in August.",
           "Household water rates rise by 7.5 percent on January 1.",
           "Half of the city's 420 buses will run on batteries by 2027.",
           "Median rent for a two-bedroom flat is $2,340 a month."] * 5


def main() -> None:
    rows = []
    for size in (100, 1_000, 10_000):
        documents = generate_haystack(documents=size, seed=size).documents
        started = time.perf_counter()
        verifier = CitationVerifier(documents)
        build = time.perf_counter() - started
        verifier.verify(BULLETS[0], [])  # warm-up
        times = []
        for bullet in BULLETS:
            started = time.perf_counter()
            verifier.verify(bullet, [documents[0].id])
            times.append((time.perf_counter() - started) * 1000)
        rows.append({"documents": size, "sentences": verifier.sentence_count, "build_s": round(build, 3),
                     "verify_bullet_p50_ms": round(float(np.percentile(times, 50)), 2),
                     "verify_bullet_p95_ms": round(float(np.percentile(times, 95)), 2)})
        print(rows[-1], flush=True)
    write_result("citation_repair_scaling", {"embedder": "wordllama", "rows": rows})


if __name__ == "__main__":
    main()
