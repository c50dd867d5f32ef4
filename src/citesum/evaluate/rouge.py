"""ROUGE-1/2/L F1 against one or more references (``rouge-score``, Porter stemming); the best reference
counts for each metric, as usual with multiple human summaries (ODSum Story has four per question)."""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Sequence

from citesum.errors import ConfigError, MissingExtraError

METRICS = ("rouge1", "rouge2", "rougeL")


@lru_cache(maxsize=1)
def _scorer():  # type: ignore[no-untyped-def]
    try:
        from rouge_score import rouge_scorer
    except ImportError as exc:
        raise MissingExtraError("ROUGE", "eval", "rouge-score") from exc
    # rouge-score logs "Using default tokenizer" at INFO through absl on every scorer it builds.
    logging.getLogger("absl").setLevel(logging.WARNING)
    return rouge_scorer.RougeScorer(list(METRICS), use_stemmer=True)


def rouge(prediction: str, references: Sequence[str]) -> dict[str, float]:
    if not references:
        raise ConfigError("ROUGE needs at least one reference")
    scorer = _scorer()
    best = {metric: 0.0 for metric in METRICS}
    for reference in references:
        scores = scorer.score(reference, prediction)
        for metric in METRICS:
            best[metric] = max(best[metric], scores[metric].fmeasure)
    return best
