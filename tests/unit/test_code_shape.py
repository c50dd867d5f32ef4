"""The shape the project keeps: the front ends only parse and print (no function of the CLI or the service over
60 lines: the work is the library's), and the README stays a short user guide (no measurement log)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRONT_ENDS = [ROOT / "src" / "citesum" / "cli", ROOT / "src" / "citesum" / "service"]


def test_no_function_of_the_front_ends_is_over_60_lines() -> None:
    long = []
    for folder in FRONT_ENDS:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                    if lines > 60:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, "pipeline logic in a front end: " + "; ".join(long)


def test_the_readme_is_a_short_user_guide() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme) <= 15_000
    assert len(readme.split()) <= 1_400  # about five minutes' reading
    assert not re.search(r"\b[0-9a-f]{7,40}\b", readme.replace("generated:", "")), "a commit hash in the README"
    assert "../" not in re.sub(r"`[^`]*`", "", readme), "a link outside the repository"
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), link
