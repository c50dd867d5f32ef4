"""Citation repair on every stored SummHay system: citation F1 and joint before and after, with the stored
GPT-4o coverage judgments (which bullet covers which insight) held fixed, so that only citations change.

Each non-empty summary line is repaired against its whole haystack (100 documents) and rewritten with the
repaired citations as 1-based document positions, then scored with the paper's protocol.

Run: python benchmarks/citation_repair.py [--mix 0.7] [--relative-threshold 0.7]
Writes: benchmarks/results/citation_repair.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, SHARED_DATA, write_result  # noqa: E402

from citesum.datasets.summhay import load_haystack  # noqa: E402
from citesum.evaluate.summhay import (  # noqa: E402
    aggregate, gold_positions, score_insights, score_stored, stored_judgments, stored_systems, system_label,
)
from citesum.summarize.verify import (  # noqa: E402
    DEFAULT_MIN_SUPPORT, DEFAULT_MIX, DEFAULT_RELATIVE_THRESHOLD, CitationVerifier,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mix", type=float, default=DEFAULT_MIX)
    parser.add_argument("--relative-threshold", type=float, default=DEFAULT_RELATIVE_THRESHOLD)
    parser.add_argument("--min-support", type=float, default=DEFAULT_MIN_SUPPORT)
    args = parser.parse_args()
    haystacks = [load_haystack(SHARED_DATA / "summhay" / t) for t in HAYSTACKS]
    systems = stored_systems(haystacks)
    build_seconds, repair_seconds, lines_repaired = [], [], 0
    repaired: dict[str, list] = {s: [] for s in systems}
    for haystack in haystacks:
        started = time.perf_counter()
        verifier = CitationVerifier(haystack.documents, mix=args.mix, relative_threshold=args.relative_threshold,
                                    min_support=args.min_support)
        build_seconds.append(time.perf_counter() - started)
        position = {d.id: int(d.metadata["idx"]) + 1 for d in haystack.documents}
        for subtopic in haystack.subtopics:
            gold = gold_positions(haystack, subtopic)
            for system in systems:
                started = time.perf_counter()
                lines = []
                for line in subtopic.summaries[system]:
                    if len(line.split()) < 3:
                        lines.append(line)
                        continue
                    result = verifier.verify(line, [])
                    lines.append(result.text + " " + "".join(f"[{position[d]}]" for d in result.citations))
                    lines_repaired += 1
                repair_seconds.append(time.perf_counter() - started)
                repaired[system].extend(score_insights(lines, stored_judgments(subtopic, system), gold))
    rows = []
    for system in systems:
        before, _ = score_stored(haystacks, system)
        after = aggregate(repaired[system])
        retriever, model = system_label(system)
        rows.append({"system": system, "retriever": retriever, "model": model,
                     "before": before.as_dict(), "after": after.as_dict()})
    rows.sort(key=lambda r: -r["after"]["joint"])
    improved = sum(1 for r in rows if r["after"]["joint"] > r["before"]["joint"])
    summary = {
        "systems": len(rows), "improved_joint": improved,
        "mean_joint_before": round(float(np.mean([r["before"]["joint"] for r in rows])), 1),
        "mean_joint_after": round(float(np.mean([r["after"]["joint"] for r in rows])), 1),
        "mean_citation_before": round(float(np.mean([r["before"]["citation"] for r in rows])), 1),
        "mean_citation_after": round(float(np.mean([r["after"]["citation"] for r in rows])), 1),
        "evidence_index_build_s_per_haystack": [round(s, 2) for s in build_seconds],
        "repair_s_per_summary_p50": round(float(np.percentile(repair_seconds, 50)), 4),
        "repair_s_per_summary_p95": round(float(np.percentile(repair_seconds, 95)), 4),
        "lines_repaired": lines_repaired,
    }
    print(summary)
    for row in rows:
        if row["system"] in ("summary_subtopic_gpt-4o", "summary_subtopic_oracle_gemini-1.5-pro"):
            print(row)
    write_result("citation_repair", {"mix": args.mix, "relative_threshold": args.relative_threshold,
                                     "min_support": args.min_support,
                                     "summary": summary, "rows": rows})


if __name__ == "__main__":
    main()
