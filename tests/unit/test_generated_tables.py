"""The results tables in docs/ and the README are written by benchmarks/report.py from benchmarks/results/*.json:
a table edited by hand, or a result re-run without regenerating the tables, fails here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_generated_table_is_what_the_results_give() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "report.py"), "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr + done.stdout


def test_a_stale_table_is_found(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import report
    finally:
        sys.path.pop(0)
    text = "before\n<!-- generated:demo -->\n| a hand-edited table |\n<!-- /generated:demo -->\nafter\n"
    fresh = report.render(text)
    assert fresh != text and fresh.startswith("before\n<!-- generated:demo -->\n| question |")
    assert fresh.endswith("<!-- /generated:demo -->\nafter\n") and report.render(fresh) == fresh



def test_every_table_has_a_place_and_names_no_commit() -> None:
    """Each generator writes a table some page holds, and no table names a commit (its provenance is the command,
    the date and the machine)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import report
    finally:
        sys.path.pop(0)
    placed = {match.group("name") for path in report.TARGETS
              for match in report._BLOCK.finditer(path.read_text(encoding="utf-8"))}
    assert set(report.TABLES) <= placed, f"tables no page holds: {sorted(set(report.TABLES) - placed)}"
    for name, table in report.TABLES.items():
        assert not re.search(r"\b[0-9a-f]{7,40}\b", table()), name
