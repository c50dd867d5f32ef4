"""BM25 over the index units (bm25s + PyStemmer), with the same tokenisation for corpus and queries."""

from __future__ import annotations

import logging
import math
from collections import Counter
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

_STOPWORDS = "en"



def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("english")


def _bm25s():  # type: ignore[no-untyped-def]
    import bm25s

    # bm25s sets its logger to DEBUG on import and logs every index build; keep it to warnings.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased, stop-word-free, stemmed tokens (the analyser BM25 uses on both sides)."""
    return _bm25s().tokenize(list(texts), stopwords=_STOPWORDS, stemmer=_stemmer(), return_ids=False,
                          show_progress=False)


def document_frequency(token_sets: Sequence[set[str]]) -> Counter[str]:
    """How many of the token sets contain each token."""
    frequency: Counter[str] = Counter()
    for tokens in token_sets:
        frequency.update(tokens)
    return frequency


def keyword_overlap(keywords: set[str], token_sets: Sequence[set[str]], frequency: Mapping[str, int]) -> np.ndarray:
    """For each token set, the IDF-weighted share of ``keywords`` it contains (IDF over the sets counted in
    ``frequency``), so a word every sentence shares counts little and a specific one counts much."""
    count = len(token_sets)
    idf = {k: math.log((count + 1) / (1 + frequency.get(k, 0))) for k in keywords}
    return weighted_keyword_share(keywords, token_sets, idf)


def weighted_keyword_share(keywords: set[str], token_sets: Sequence[set[str]], idf: Mapping[str, float]) -> np.ndarray:
    """For each token set, the ``idf``-weighted share of ``keywords`` it contains (0 when the keywords weigh
    nothing)."""
    total = sum(idf[k] for k in keywords)
    if total <= 0:
        return np.zeros(len(token_sets))
    return np.array([sum(idf[k] for k in keywords & tokens) / total for tokens in token_sets])


class LexicalIndex:
    def __init__(self, model: object, size: int) -> None:
        self._model = model
        self.size = size

    @classmethod
    def build(cls, texts: Sequence[str]) -> "LexicalIndex":
        bm25s = _bm25s()
        model = bm25s.BM25()
        if texts:
            model.index(bm25s.tokenize(list(texts), stopwords=_STOPWORDS, stemmer=_stemmer(), show_progress=False),
                        show_progress=False)
        return cls(model, len(texts))

    @classmethod
    def load(cls, path: Path) -> "LexicalIndex":
        model = _bm25s().BM25.load(str(path))
        return cls(model, int(model.scores["num_docs"]) if hasattr(model, "scores") else 0)

    def save(self, path: Path) -> None:
        if self.size == 0:
            # bm25s cannot save a model of no documents; the index then reads the empty folder as missing
            # artifacts and rebuilds them from its database, which is empty too.
            path.mkdir(parents=True, exist_ok=True)
            return
        self._model.save(str(path))  # type: ignore[attr-defined]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every unit for ``query`` (zeros when no query term is in the vocabulary)."""
        return self.term_scores(tokenize([query])[0])

    def document_frequency(self, term: str) -> int:
        """How many units hold the (analysed) ``term``: the length of its column of BM25 scores (every
        occurrence scores above zero)."""
        term_id = self._model.vocab_dict.get(term) if self.size else None  # type: ignore[attr-defined]
        if term_id is None:
            return 0
        indptr = self._model.scores["indptr"]  # type: ignore[attr-defined]
        return int(indptr[term_id + 1] - indptr[term_id])

    def weighted_scores(self, weights: Mapping[str, float]) -> np.ndarray:
        """sum over terms of weight * BM25(term, unit), for every unit: a weighted query (RM3's)."""
        total = np.zeros(self.size, dtype=np.float32)
        if self.size == 0:  # an empty index has no vocabulary
            return total
        for term, weight in weights.items():
            if weight > 0 and term in self._model.vocab_dict:  # type: ignore[attr-defined]
                total += np.float32(weight) * np.asarray(self._model.get_scores([term]), dtype=np.float32)  # type: ignore[attr-defined]
        return total

    def term_scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every unit for already-analysed (stemmed) terms."""
        if self.size == 0:
            return np.zeros(0, dtype=np.float32)
        known = [t for t in terms if t in self._model.vocab_dict]  # type: ignore[attr-defined]
        if not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._model.get_scores(known), dtype=np.float32)  # type: ignore[attr-defined]
