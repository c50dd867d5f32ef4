from __future__ import annotations

import pytest

from citesum.errors import ConfigError
from citesum.evaluate.position import place_relevant, sensitivity

ITEMS = list("abcdefgh")
GRADES = {"c": 2.0, "f": 1.0, "h": 3.0}


def test_placements() -> None:
    top = place_relevant(ITEMS, GRADES, "top")
    assert top[:3] == ["h", "c", "f"] and sorted(top) == ITEMS
    bottom = place_relevant(ITEMS, GRADES, "bottom")
    assert bottom[-3:] == ["f", "c", "h"] and sorted(bottom) == ITEMS
    middle = place_relevant(ITEMS, GRADES, "middle")
    assert middle[2:5] == ["h", "c", "f"]
    shuffled = place_relevant(ITEMS, GRADES, "random", seed=3)
    assert sorted(shuffled) == ITEMS and shuffled == place_relevant(ITEMS, GRADES, "random", seed=3)
    with pytest.raises(ConfigError, match="top, bottom, middle, random"):
        place_relevant(ITEMS, GRADES, "left")  # type: ignore[arg-type]


def test_sensitivity() -> None:
    assert sensitivity({"random": 40.0, "top": 47.5, "bottom": 31.0}) == 9.0
    with pytest.raises(ConfigError):
        sensitivity({"top": 1.0})
