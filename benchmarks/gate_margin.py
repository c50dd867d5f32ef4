"""Turned away, yet one sentence stands out: would answering with a best sentence far above the rest do better?

When no sentence of the context reaches the answer floor (``ExtractiveOptions.min_answer``), the offline
summarizer turns the question away and lists the closest sentences as leads. The floor is one number for every
question, but the scores a question's sentences get are not on one scale: a question asked in other words than
the documents' (a trouble described, "no captcha image ever shows up") gets low scores everywhere, and its answer
may still stand far above every other sentence. This script measures a rule that answers such a question with its
best sentence: when the best sentence's answer score reaches ``low`` and exceeds the runner-up's (the best
sentence worded otherwise, from any document) by ``margin``.

For every question the summarizer turns away at the floor (not those for a subject no document mentions, nor
those whose best sentence holds too few of the question's words, ``abstain_below``: the rule does not reach
them), it records the best and the runner-up scores and whether the best sentence states a gold sentence of the
question (by ``benchmarks/realdocs.py``'s matching). It counts, for each ``low`` and ``margin`` of a grid, what
the rule would have done: answers that state a gold sentence, answers that state none, and unanswerable
questions answered. The rule has two knobs, so the splits are halved: every other split in the corpus's order to
choose them on, the rest to report on. The splits are the ones the answer rules were tuned on (all but the one
held out from the latest round): every figure here is in-sample for the summarizer's other rules.

Run:   python benchmarks/gate_margin.py [--splits dev,test,...] [--work DIR]
       (writes benchmarks/results/gate_margin.json; the indexes are those that
       ``python benchmarks/realdocs.py --split S --check-only --work DIR`` builds)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import load_script, write_result  # noqa: E402

from citesum.pipeline import Pipeline  # noqa: E402
from citesum.summarize.extractive import ExtractiveSummarizer  # noqa: E402

#: the least best score the rule answers with, and by how much it must exceed the runner-up
LOWS = (0.3, 0.35, 0.4, 0.45)
MARGINS = (0.06, 0.08, 0.1, 0.12, 0.15)


class _Recording(ExtractiveSummarizer):
    """The default offline summarizer, recording, for each question it turns away, the scores of its sentences
    and the gate the facts were weighed against (None when they were not: the question was turned away before,
    for a subject no document mentions or too few of its words)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate: float | None = None
        self.turned_away: dict[str, Any] | None = None

    def _select(self, groups, sentences, vectors, query_terms, terms, gate, *rest):  # type: ignore[no-untyped-def]
        self.gate = gate
        return super()._select(groups, sentences, vectors, query_terms, terms, gate, *rest)

    def _abstain(self, context, sentences, started, missing, read_as=()):  # type: ignore[no-untyped-def]
        ranked = sorted(sentences, key=lambda s: -s.answer)
        best = ranked[0] if ranked else None
        runner_up = next((s for s in ranked[1:] if best is not None and s.text != best.text), None)
        # at the floor: no sentence reached the gate (not one that reached it, its fact then left out for
        # another reason, as too far below the best group's relevance)
        self.turned_away = {"at_the_floor": best is not None and self.gate is not None and best.answer < self.gate,
                            "best": round(best.answer, 4) if best else None,
                            "runner_up": round(runner_up.answer, 4) if runner_up else None,
                            "best_text": best.text if best else ""}
        return super()._abstain(context, sentences, started, missing, read_as)


def turned_away(splits: Sequence[str], work: Path) -> list[dict[str, Any]]:
    """For each question of ``splits`` turned away at the floor: its kind, its best and runner-up scores, and
    whether the best sentence states a gold sentence."""
    rd = load_script(ROOT / "benchmarks" / "realdocs.py", "realdocs")
    rows = []
    gated = 0
    for split in splits:
        recording = _Recording()
        pipeline = Pipeline(rd.checked_index(work, split), summarizer=recording)
        for q in rd.load_questions(split):
            recording.gate, recording.turned_away = None, None
            pipeline.summarize(q["question"])
            gated += recording.gate is not None
            record = recording.turned_away
            if record is None or not record["at_the_floor"]:
                continue
            gold = [g["sentence"] for g in q.get("gold", [])]
            acceptable = gold + [a["sentence"] for a in q.get("also_answers", [])]
            rows.append({"id": q["id"], "split": split, "kind": q["kind"], "best": record["best"],
                         "runner_up": record["runner_up"],
                         "best_states_gold": rd.states_gold([record["best_text"]], gold),
                         "best_answers": bool(acceptable) and rd.answers(record["best_text"], acceptable)})
    if not gated:  # (the hooks above name the summarizer's own steps: renamed, they would record nothing)
        raise SystemExit("error: no question reached the answer gate; has ExtractiveSummarizer._select changed?")
    return rows


def outcomes(rows: Sequence[dict[str, Any]], low: float, margin: float) -> dict[str, int]:
    """What answering with the best sentence does when it reaches ``low`` and the runner-up by ``margin``."""
    counts = {"gold": 0, "answers_no_gold": 0, "no_answer": 0, "unanswerable_answered": 0}
    for row in rows:
        if row["best"] is None or row["best"] < low or row["best"] - (row["runner_up"] or 0.0) < margin:
            continue
        if row["kind"] == "unanswerable":
            counts["unanswerable_answered"] += 1
        elif row["best_states_gold"]:
            counts["gold"] += 1
        else:
            counts["answers_no_gold" if row["best_answers"] else "no_answer"] += 1
    return counts


def main(argv: Sequence[str]) -> None:
    rd = load_script(ROOT / "benchmarks" / "realdocs.py", "realdocs")
    splits, work = rd.seen_splits_and_work(__doc__.split("\n")[0], argv)
    started = time.perf_counter()
    rows = turned_away(splits, work)
    choose = set(splits[::2])
    halves = {"choose": [r for r in rows if r["split"] in choose],
              "report": [r for r in rows if r["split"] not in choose]}
    grid = {half: [{"low": low, "margin": margin, **outcomes(part, low, margin)} for low in LOWS for margin in MARGINS]
            for half, part in halves.items()}
    counts = {half: {"answerable": sum(r["kind"] != "unanswerable" for r in part),
                     "unanswerable": sum(r["kind"] == "unanswerable" for r in part),
                     "best_states_gold": sum(r["best_states_gold"] for r in part)} for half, part in halves.items()}
    write_result("gate_margin", {"splits": splits, "choose_on": [s for s in splits if s in choose],
                                 "turned_away_at_the_floor": counts, "grid": grid, "questions": rows,
                                 "seconds": round(time.perf_counter() - started, 1)})
    print(json.dumps({"turned_away_at_the_floor": counts, "choose": grid["choose"]}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
