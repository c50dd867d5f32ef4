"""How well `citesum demo` answers, over several seeds of our synthetic haystack (its gold is exact).

For each seed: generate the haystack, write it as files, ingest and index them with the offline default, and
answer the three questions exactly as ``citesum demo`` does (the defaults of ``citesum summarize``); then count, from the generator's gold, the bullets
that state an insight of the question's subtopic and the citations to a document that states the bullet's
insight, and the bullets that state no insight at all (filler: background and closing lines; the others state
a fact of another question). This is our own corpus, not evaluation data: it shows what a new user sees, and
where the offline default embedder's vocabulary gaps lie (per question).

Run: python benchmarks/demo_quality.py [--seeds 5] [--documents 60]
Writes: benchmarks/results/demo_quality.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402

from citesum.demo import answer_questions  # noqa: E402
from citesum.demo.haystack import generate_haystack  # noqa: E402
from citesum.index.store import Index  # noqa: E402
from citesum.ingest import ingest_paths  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--documents", type=int, default=60)
    args = parser.parse_args()
    rows = []
    for seed in range(args.seeds):
        haystack = generate_haystack(documents=args.documents, seed=seed)
        with tempfile.TemporaryDirectory() as folder:
            corpus = haystack.write(Path(folder) / "corpus")
            documents, _ = ingest_paths([corpus], exclude=["gold.json"])
            index = Index.create(Path(folder) / "index")
            index.update(upsert=documents)
            for subtopic, query, summary in answer_questions(haystack, index):
                rows.append({"seed": seed, "subtopic": subtopic, "query": query,
                             **asdict(haystack.check(subtopic, summary)), "abstained": int(summary.abstained),
                             "seconds": summary.timings.get("total_s")})
                print(rows[-1], flush=True)
    totals: dict[str, dict[str, int]] = {}
    for row in rows:
        for key in ("all", row["subtopic"]):
            total = totals.setdefault(key, {"answers": 0, "abstained": 0, "bullets": 0, "on_topic": 0, "filler": 0,
                                            "citations": 0, "supported": 0})
            total["answers"] += 1
            for field in total:
                if field != "answers":
                    total[field] += row[field]
    for key, total in totals.items():
        print(f"{key}: on-topic bullets {total['on_topic']}/{total['bullets']}, filler bullets "
              f"{total['filler']}/{total['bullets']}, supported citations {total['supported']}/{total['citations']}")
    write_result("demo_quality", {"seeds": args.seeds, "documents": args.documents, "totals": totals, "rows": rows})


if __name__ == "__main__":
    main()
