"""PNG plots of evaluation results (matplotlib, extra ``eval``; drawn off-screen)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from citesum.errors import MissingExtraError


def _pyplot():  # type: ignore[no-untyped-def]
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display on servers and CI
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtraError("plots", "eval", "matplotlib") from exc
    return plt


def plot_scores_per_system(rows: Sequence[Mapping[str, object]], path: str | Path, title: str,
                           metrics: Sequence[str] = ("coverage", "citation", "joint"),
                           ylabel: str = "score (0-100)") -> Path:
    """Grouped bars, one group per row (its ``label``), one bar per metric."""
    plt = _pyplot()
    labels = [str(r["label"]) for r in rows]
    figure, axis = plt.subplots(figsize=(max(6, 0.6 * len(rows) + 2), 4.5))
    width = 0.8 / len(metrics)
    for number, metric in enumerate(metrics):
        offset = (number - (len(metrics) - 1) / 2) * width
        axis.bar([i + offset for i in range(len(rows))], [float(r[metric]) for r in rows], width, label=metric)  # type: ignore[arg-type]
    axis.set_xticks(range(len(rows)), labels, rotation=45, ha="right", fontsize=8)
    axis.set_ylabel(ylabel)
    return _save(plt, figure, axis, title, path)


def plot_scores_against_budget(budgets: Sequence[int], series: Mapping[str, Sequence[float]], path: str | Path,
                               title: str) -> Path:
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6, 4))
    for name, values in series.items():
        axis.plot(list(budgets), list(values), marker="o", label=name)
    axis.set_xlabel("context budget (tokens)")
    axis.set_ylabel("score (0-100)")
    return _save(plt, figure, axis, title, path)


def plot_budget_panels(budgets: Sequence[int], panels: Mapping[str, Mapping[str, Sequence[float]]], path: str | Path,
                       title: str, *, flat: Mapping[str, Mapping[str, float]] | None = None,
                       marks: Mapping[str, int] | None = None) -> Path:
    """Side-by-side panels of scores against the context budget, one per entry of ``panels`` (its y-axis label ->
    series name -> values), each with its ``flat`` values (a budget-free reference such as the full context) as
    dashed lines and ``marks`` (label -> budget, such as the estimate) as dotted vertical lines."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for axis, (ylabel, series) in zip(axes[0], panels.items()):
        for name, values in series.items():
            line = axis.plot(list(budgets), list(values), marker="o", label=name)[0]
            if name in (flat or {}).get(ylabel, {}):
                axis.axhline(flat[ylabel][name], linestyle="--", color=line.get_color(),  # type: ignore[index]
                             label=f"{name}, full context")
        for number, (label, budget) in enumerate((marks or {}).items()):
            axis.axvline(budget, linestyle=":", color=f"C{len(series) + number}", label=label)
        axis.set_xlabel("context budget (tokens)")
        axis.set_ylabel(ylabel)
        axis.legend(fontsize=7)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return Path(path)


def _save(plt, figure, axis, title: str, path: str | Path) -> Path:  # type: ignore[no-untyped-def]
    axis.set_title(title)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return Path(path)
