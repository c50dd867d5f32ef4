"""Citation repair's thresholds, chosen on two SummHay haystacks and reported on the third (rotating).

The earlier defaults (``mix`` 0.7, ``relative_threshold`` 0.7) were chosen looking at all three shared news
haystacks, so their numbers were in-sample. Here
every setting of a grid repairs every stored system's summaries (78 systems, against the whole haystack, with
the stored GPT-4o coverage judgments held fixed, as in ``citation_repair.py``); for each haystack in turn the
setting with the best mean joint over the systems on the other two is chosen, and scored on the held-out one.

Reported per held-out haystack: the chosen setting, the mean joint before repair, after repair with the chosen
setting (held out) and with the earlier defaults (in-sample), and how many systems improve; then the three
pooled. Every fold chose mix 0.4 and relative threshold 0.6, which became the defaults of ``citesum.summarize.
verify``. ``min_support`` stays at 0.3, the value it had (chosen before, looking at all three haystacks).

Run: python benchmarks/citation_repair_held_out.py
Writes: benchmarks/results/citation_repair_held_out.json
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HAYSTACKS, news_haystacks, write_result  # noqa: E402

from citesum.evaluate.summhay import (  # noqa: E402
    InsightScore, aggregate, gold_positions, score_insights, score_stored, stored_judgments, stored_systems,
)
from citesum.summarize.citations import strip_citations  # noqa: E402
from citesum.summarize.verify import (  # noqa: E402
    DEFAULT_MIN_SUPPORT, DEFAULT_MIX, DEFAULT_RELATIVE_THRESHOLD, CitationVerifier,
)

MIXES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
RELATIVE_THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)
#: min_support stays at its default: it only decides whether a line states anything at all (a preamble, a
#: heading), and the 35 settings of the other two take ~6 minutes on 2 cores
MIN_SUPPORTS = (DEFAULT_MIN_SUPPORT,)
Setting = tuple[float, float, float]
#: the defaults before this script chose them (in-sample), for comparison
EARLIER_DEFAULT: Setting = (0.7, 0.7, DEFAULT_MIN_SUPPORT)


def main() -> None:
    haystacks = news_haystacks()
    systems = stored_systems(haystacks)
    grid: list[Setting] = list(itertools.product(MIXES, RELATIVE_THRESHOLDS, MIN_SUPPORTS))
    # setting -> haystack -> system -> insight scores after repair
    after: dict[Setting, dict[str, dict[str, list[InsightScore]]]] = {
        setting: {t: {s: [] for s in systems} for t in HAYSTACKS} for setting in grid}
    started = time.perf_counter()
    for topic, haystack in zip(HAYSTACKS, haystacks):
        verifier = CitationVerifier(haystack.documents)
        position = haystack.citation_numbers
        for subtopic in haystack.subtopics:
            gold = gold_positions(haystack, subtopic)
            for system in systems:
                lines = list(subtopic.summaries[system])
                # the costly part (embedding, keyword overlap) once per line; every setting reuses it
                statements = {i: (line, verifier.support_parts(strip_citations(line)))
                              for i, line in enumerate(lines) if len(line.split()) >= 3}
                judgments = stored_judgments(subtopic, system)
                for setting in grid:
                    verifier.mix, verifier.relative_threshold, verifier.min_support = setting
                    repaired = list(lines)
                    for i, (line, parts) in statements.items():
                        result = verifier.verify(line, [], parts=parts)
                        repaired[i] = result.text + " " + "".join(f"[{position[d]}]" for d in result.citations)
                    after[setting][topic][system].extend(score_insights(repaired, judgments, gold))
        print(f"{topic}: {time.perf_counter() - started:.0f}s", flush=True)

    def mean_joint(setting: Setting, topics: list[str]) -> float:
        return float(np.mean([aggregate([x for t in topics for x in after[setting][t][s]]).joint for s in systems]))

    folds: dict[str, Any] = {}
    for held in HAYSTACKS:
        tuning = [t for t in HAYSTACKS if t != held]
        chosen = max(grid, key=lambda setting: mean_joint(setting, tuning))
        before = {s: score_stored([haystacks[HAYSTACKS.index(held)]], s)[0].joint for s in systems}
        held_after = {s: aggregate(after[chosen][held][s]).joint for s in systems}
        folds[held] = {
            "chosen": dict(zip(("mix", "relative_threshold", "min_support"), chosen)),
            "tuning_mean_joint": round(mean_joint(chosen, tuning), 2),
            "held_out_mean_joint_before": round(float(np.mean(list(before.values()))), 2),
            "held_out_mean_joint_after": round(float(np.mean(list(held_after.values()))), 2),
            "held_out_mean_joint_after_with_earlier_defaults": round(mean_joint(EARLIER_DEFAULT, [held]), 2),
            "held_out_systems_improved": sum(1 for s in systems if held_after[s] > before[s]),
            "systems": len(systems),
        }
        print(held, folds[held], flush=True)
    pooled = {
        "mean_joint_before": round(float(np.mean([f["held_out_mean_joint_before"] for f in folds.values()])), 2),
        "mean_joint_after_held_out": round(float(np.mean([f["held_out_mean_joint_after"] for f in folds.values()])), 2),
        "mean_joint_after_earlier_defaults_in_sample": round(mean_joint(EARLIER_DEFAULT, HAYSTACKS), 2),
        "systems_improved_on_every_held_out_haystack": sum(
            1 for s in systems if all(aggregate(after[_chosen(folds, t)][t][s]).joint
                                      > score_stored([haystacks[HAYSTACKS.index(t)]], s)[0].joint for t in HAYSTACKS)),
        "best_setting_in_sample": dict(zip(("mix", "relative_threshold", "min_support"),
                                           max(grid, key=lambda setting: mean_joint(setting, HAYSTACKS)))),
    }
    print(pooled)
    write_result("citation_repair_held_out", {"grid": {"mix": MIXES, "relative_threshold": RELATIVE_THRESHOLDS,
                                                       "min_support": MIN_SUPPORTS},
                                              "earlier_defaults": dict(zip(
                                                  ("mix", "relative_threshold", "min_support"), EARLIER_DEFAULT)),
                                              "defaults_now": {"mix": DEFAULT_MIX,
                                                               "relative_threshold": DEFAULT_RELATIVE_THRESHOLD,
                                                               "min_support": DEFAULT_MIN_SUPPORT},
                                              "folds": folds, "pooled": pooled,
                                              "seconds": round(time.perf_counter() - started, 1)})


def _chosen(folds: dict[str, Any], topic: str) -> Setting:
    chosen = folds[topic]["chosen"]
    return chosen["mix"], chosen["relative_threshold"], chosen["min_support"]


if __name__ == "__main__":
    main()
