from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from citesum.evaluate.plots import plot_scores_against_budget, plot_scores_per_system  # noqa: E402


def test_plots_are_written_as_png(tmp_path: Path) -> None:
    rows = [{"label": "a", "coverage": 50, "citation": 40, "joint": 20}, {"label": "b", "coverage": 60,
                                                                          "citation": 30, "joint": 18}]
    bars = plot_scores_per_system(rows, tmp_path / "bars.png", "test")
    lines = plot_scores_against_budget([2000, 4000], {"joint": [10.0, 12.0]}, tmp_path / "budget.png", "test")
    for path in (bars, lines):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 2000
