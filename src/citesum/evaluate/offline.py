"""Coverage judges without an LLM: one similarity score per (insight, bullet), the best bullet, two thresholds.

* :class:`OfflineJudge` (``offline``, ``offline:<embedder>``): the mean of two recalls of the insight by the
  bullet, each weighting the insight's parts by an IDF counted over the summary's own bullets and insights (the
  words the whole summary shares, its topic, count little; the insight's specific details count most):

  - *token recall*: each insight word piece's best cosine with a piece of the bullet (BERTScore's recall);
  - *keyword recall*: the share of the insight's stemmed keywords that the bullet contains.

  Two signals and no fitted weights: the judge has to hold on domains it was not calibrated on, and a linear
  score over seven features fit on conversation summaries did not hold on news. Only the two
  thresholds are fit; ``benchmarks/calibrate_offline_judge.py`` measures them leave one domain out.
* :class:`LexicalJudge` (``lexical``): TF-IDF cosine of the insight and each bullet, no model at all; a reference
  judge independent of any embedder, so that a summarizer using MiniLM is not judged by MiniLM alone.

Thresholds are fit by ``benchmarks/calibrate_offline_judge.py`` on two domains, conversation summaries with
human labels and news summaries with the stored GPT-4o labels, and ship in ``offline_judge.json``.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from citesum.embed.base import TokenVectors
from citesum.errors import ConfigError
from citesum.evaluate.judges import judged_text
from citesum.evaluate.summhay import Coverage, Judgment

CALIBRATION_FILE = Path(__file__).with_name("offline_judge.json")
#: what the shipped thresholds are thresholds of; a calibration file of another score is refused
SCORE = "mean of token recall and keyword recall (local IDF); lexical: TF-IDF cosine (local IDF)"
_WORD_CHARACTER = re.compile(r"[^\W_]")


def local_idf(texts: Sequence[Sequence[str]]) -> dict[str, float]:
    """IDF of every token over the given texts (a summary's insights and bullets), +0.1 so that a token found in
    every text still counts a little."""
    from citesum.index.lexical import document_frequency

    frequency = document_frequency([set(text) for text in texts])
    return {token: math.log((len(texts) + 1) / (count + 1)) + 0.1 for token, count in frequency.items()}


def token_recall_matrix(insights: Sequence[TokenVectors], bullets: Sequence[TokenVectors]) -> np.ndarray:
    """(insights x bullets): each insight piece's best cosine with a piece of the bullet, averaged with the local
    IDF weights (:func:`local_idf` over this summary's pieces). Punctuation pieces weigh nothing."""
    idf = local_idf([text.tokens for text in (*insights, *bullets)])
    recall = np.zeros((len(insights), len(bullets)))
    filled = [j for j, bullet in enumerate(bullets) if bullet.tokens]
    if not filled:
        return recall
    stacked = np.vstack([bullets[j].vectors for j in filled])
    starts = np.cumsum([0] + [len(bullets[j].tokens) for j in filled[:-1]])
    for i, insight in enumerate(insights):
        weights = np.array([idf[token] if _WORD_CHARACTER.search(token) else 0.0 for token in insight.tokens])
        if weights.sum() == 0:
            continue
        best_match = np.maximum.reduceat(insight.vectors @ stacked.T, starts, axis=1)  # pieces x filled bullets
        recall[i, filled] = weights @ best_match / weights.sum()
    return recall


def keyword_recall_matrix(insights: Sequence[Sequence[str]], bullets: Sequence[Sequence[str]]) -> np.ndarray:
    """(insights x bullets): the local-IDF-weighted share of the insight's keywords found in the bullet."""
    from citesum.index.lexical import weighted_keyword_share

    idf = local_idf([*insights, *bullets])
    bullet_sets = [set(b) for b in bullets]
    recall = np.zeros((len(insights), len(bullets)))
    for i, insight in enumerate(insights):
        recall[i] = weighted_keyword_share(set(insight), bullet_sets, idf)
    return recall


def tfidf_cosine_matrix(insights: Sequence[Sequence[str]], bullets: Sequence[Sequence[str]]) -> np.ndarray:
    """(insights x bullets): cosine of sublinear TF x local IDF vectors."""
    idf = local_idf([*insights, *bullets])
    vocabulary = {token: k for k, token in enumerate(idf)}

    def vectors(texts: Sequence[Sequence[str]]) -> np.ndarray:
        out = np.zeros((len(texts), len(vocabulary)))
        for row, text in enumerate(texts):
            for token, count in Counter(text).items():
                out[row, vocabulary[token]] = (1 + math.log(count)) * idf[token]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)

    return vectors(insights) @ vectors(bullets).T


@dataclass(frozen=True)
class Thresholds:
    """FULL if score >= full_at, PARTIAL if >= partial_at, NO otherwise."""

    partial_at: float
    full_at: float

    def label(self, score: float) -> Coverage:
        return "FULL" if score >= self.full_at else "PARTIAL" if score >= self.partial_at else "NO"


def fit_thresholds(scores: np.ndarray, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> Thresholds:
    """The two thresholds whose three-level labels have the highest (weighted) Pearson r with the 1 / 0.5 / 0
    targets: every midpoint between distinct scores when there are at most 100 of them, else 80 quantiles of
    the scores (the search is quadratic in the candidates)."""
    weight = np.ones(len(targets)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    distinct = np.unique(scores)
    if len(distinct) < 3 or len(np.unique(targets)) < 2:
        raise ValueError("fitting two thresholds needs at least three distinct scores and two distinct targets")
    candidates = ((distinct[:-1] + distinct[1:]) / 2 if len(distinct) <= 100
                  else np.unique(np.quantile(scores, np.linspace(0.02, 0.99, 80))))
    best = (-2.0, 0.0, 0.0)
    for k, low in enumerate(candidates):
        for high in candidates[k + 1 :]:
            labels = np.where(scores >= high, 1.0, np.where(scores >= low, 0.5, 0.0))
            if labels.std() == 0:
                continue
            r = _weighted_pearson(labels, targets, weight)
            if r > best[0]:
                best = (r, float(low), float(high))
    return Thresholds(best[1], best[2])


def _weighted_pearson(a: np.ndarray, b: np.ndarray, weight: np.ndarray) -> float:
    weight = weight / weight.sum()
    da, db = a - (weight * a).sum(), b - (weight * b).sum()
    denominator = np.sqrt((weight * da * da).sum() * (weight * db * db).sum())
    return float((weight * da * db).sum() / denominator) if denominator > 0 else 0.0


def load_thresholds(name: str, path: Path = CALIBRATION_FILE) -> Thresholds:
    """The shipped thresholds of judge ``name`` (an embedder's name, or ``lexical``)."""
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
        stored = content["thresholds"][name]
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise ConfigError(f"no offline-judge thresholds for '{name}' in {path} "
                          "(run benchmarks/calibrate_offline_judge.py)") from exc
    if content.get("score") != SCORE:
        raise ConfigError(f"the offline-judge thresholds in {path} are thresholds of another score "
                          f"({content.get('score')!r}); run benchmarks/calibrate_offline_judge.py")
    return Thresholds(float(stored["partial_at"]), float(stored["full_at"]))


class _SimilarityJudge:
    """Label each insight by its best bullet's score: the shape both offline judges share."""

    name: str
    thresholds: Thresholds

    def scores(self, insights: Sequence[str], bullets: Sequence[str]) -> np.ndarray:
        """(insights x bullets) similarity, bullets already cleaned by :func:`judged_text`."""
        raise NotImplementedError

    def best_bullets(self, insights: Sequence[tuple[str, str]], bullets: Sequence[str]) -> list[tuple[int, float]]:
        """For each insight, (0-based index of its best bullet, that bullet's score); (-1, 0.0) without bullets."""
        if not bullets:
            return [(-1, 0.0) for _ in insights]
        matrix = self.scores([text for _, text in insights], [judged_text(b) for b in bullets])
        best = matrix.argmax(axis=1)
        return [(int(j), float(matrix[i, j])) for i, j in enumerate(best)]

    def judge(self, insights: Sequence[tuple[str, str]], bullets: Sequence[str]) -> list[Judgment]:
        out = []
        for (insight_id, _), (best, score) in zip(insights, self.best_bullets(insights, bullets)):
            label = self.thresholds.label(score) if best >= 0 else "NO"
            out.append(Judgment(insight_id, label, best + 1 if label != "NO" else None))
        return out


class OfflineJudge(_SimilarityJudge):
    """Mean of token recall (an embedder's word pieces) and keyword recall (see the module docstring)."""

    def __init__(self, embedder: str = "minilm", thresholds: Thresholds | None = None) -> None:
        from citesum.embed import get_embedder

        self.embedder = get_embedder(embedder)
        self.thresholds = thresholds or load_thresholds(embedder)
        self.name = f"offline:{embedder}"

    def signals(self, insights: Sequence[str], bullets: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(token recall, keyword recall), each (insights x bullets)."""
        from citesum.index.lexical import tokenize

        _, insight_pieces = self.embedder.encode_with_tokens(list(insights))
        _, bullet_pieces = self.embedder.encode_with_tokens(list(bullets))
        return (token_recall_matrix(insight_pieces, bullet_pieces),
                keyword_recall_matrix(tokenize(list(insights)), tokenize(list(bullets))))

    def scores(self, insights: Sequence[str], bullets: Sequence[str]) -> np.ndarray:
        token_recall, keyword_recall = self.signals(insights, bullets)
        return (token_recall + keyword_recall) / 2


class LexicalJudge(_SimilarityJudge):
    """TF-IDF cosine over stemmed, stop-word-free words; no model."""

    def __init__(self, thresholds: Thresholds | None = None) -> None:
        self.thresholds = thresholds or load_thresholds("lexical")
        self.name = "lexical"

    def scores(self, insights: Sequence[str], bullets: Sequence[str]) -> np.ndarray:
        from citesum.index.lexical import tokenize

        return tfidf_cosine_matrix(tokenize(list(insights)), tokenize(list(bullets)))
