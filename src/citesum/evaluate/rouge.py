"""ROUGE-1/2/L F1 against one or more references (``rouge-score``, Porter stemming); the best reference
counts for each metric, as usual with multiple human summaries (ODSum Story has four per question)."""

from __future__ import annotations

from typing import Sequence

from citesum.errors import ConfigError, MissingExtraError

METRICS = ("rouge1", "rouge2", "rougeL")


def rouge(prediction: str, references: Sequence[str]) -> dict[str, float]:
    try:
        from rouge_score import rouge_scorer
    except ImportError as exc:
        raise MissingExtraError("ROUGE", "eval", "rouge-score") from exc
    if not references:
        raise ConfigError("ROUGE needs at least one reference")
    scorer = rouge_scorer.RougeScorer(list(METRICS), use_stemmer=True)
    best = {metric: 0.0 for metric in METRICS}
    for reference in references:
        scores = scorer.score(reference, prediction)
        for metric in METRICS:
            best[metric] = max(best[metric], scores[metric].fmeasure)
    return best
