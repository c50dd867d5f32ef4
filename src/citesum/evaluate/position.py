"""Position bias (SummHay §5): the full context with the relevant documents at the top, the bottom, the
middle, or in random order; sensitivity = the largest absolute joint-score difference from random."""

from __future__ import annotations

import random
from typing import Literal, Mapping, Sequence, TypeVar

from citesum.errors import ConfigError

Placement = Literal["top", "bottom", "middle", "random"]
PLACEMENTS: tuple[Placement, ...] = ("top", "bottom", "middle", "random")
# The stored SummHay summaries of this experiment, by placement ("random" is the plain full-context run).
STORED_PLACEMENT_KEYS: dict[Placement, str] = {
    "top": "summary_subtopic_fl-ctxt-sort_{model}", "bottom": "summary_subtopic_fl-ctxt-rev-sort_{model}",
    "middle": "summary_subtopic_fl-ctxt-middle_{model}", "random": "summary_subtopic_{model}",
}
Item = TypeVar("Item")


def place_relevant(items: Sequence[Item], key: Mapping[Item, float] | None, placement: Placement,
                   seed: int = 0) -> list[Item]:
    """Reorder ``items``: relevant ones (``key[item] > 0``, most relevant first) at the top, the bottom or the
    middle of the others, which keep a seeded random order; ``random`` shuffles everything."""
    if placement not in PLACEMENTS:
        raise ConfigError(f"unknown placement '{placement}'; choose one of: {', '.join(PLACEMENTS)}")
    rng = random.Random(seed)
    if placement == "random":
        shuffled = list(items)
        rng.shuffle(shuffled)
        return shuffled
    grades = key or {}
    relevant = sorted((i for i in items if grades.get(i, 0) > 0), key=lambda i: -grades[i])
    others = [i for i in items if grades.get(i, 0) <= 0]
    rng.shuffle(others)
    if placement == "top":
        return relevant + others
    if placement == "bottom":
        return others + relevant[::-1]
    half = len(others) // 2
    return others[:half] + relevant + others[half:]


def sensitivity(joint_by_placement: Mapping[str, float]) -> float:
    """Largest absolute difference of a placement's joint score from the random placement's."""
    if "random" not in joint_by_placement:
        raise ConfigError("position sensitivity needs the joint score of the 'random' placement")
    baseline = joint_by_placement["random"]
    return max((abs(v - baseline) for k, v in joint_by_placement.items() if k != "random"), default=0.0)
