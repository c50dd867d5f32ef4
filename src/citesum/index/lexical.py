"""BM25 over the index units (bm25s + PyStemmer), with the same tokenisation for corpus and queries."""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections import Counter
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

_STOPWORDS = "en"
#: what Anserini's RM3 takes as a feedback term, one term per line
_FEEDBACK_TERMS = re.compile(r"^[a-z0-9]{2,20}$", re.MULTILINE)



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
    """BM25 over the units, and each unit's analysed term counts (what query feedback reads: RM3 would otherwise
    analyse its feedback units' text again on every query, half of its time)."""

    #: the units' term counts, a file of the BM25 folder (so the generation's checksums cover it)
    TERM_COUNTS = "unit_term_counts.npz"

    def __init__(self, model: object, size: int, term_counts: object | None = None) -> None:
        self._model = model
        self.size = size
        # scipy CSR (units x vocabulary) of term counts; None for an index written before they were kept
        self._term_counts = term_counts
        self._terms: list[str] | None = None
        self._feedback_vocabulary: dict[float, frozenset[str]] = {}

    @classmethod
    def build(cls, texts: Sequence[str]) -> "LexicalIndex":
        bm25s = _bm25s()
        model = bm25s.BM25()
        if not texts:
            return cls(model, 0)
        tokenized = bm25s.tokenize(list(texts), stopwords=_STOPWORDS, stemmer=_stemmer(), show_progress=False)
        model.index(tokenized, show_progress=False)
        return cls(model, len(texts), _count_matrix(tokenized.ids, len(model.vocab_dict)))  # type: ignore[attr-defined]

    @classmethod
    def load(cls, path: Path) -> "LexicalIndex":
        import scipy.sparse

        model = _bm25s().BM25.load(str(path))
        counts = scipy.sparse.load_npz(path / cls.TERM_COUNTS) if (path / cls.TERM_COUNTS).is_file() else None
        return cls(model, int(model.scores["num_docs"]) if hasattr(model, "scores") else 0, counts)

    def unit_terms(self, unit: int) -> Counter[str] | None:
        """The analysed terms of one unit with their counts; None when the index does not keep them."""
        if self._term_counts is None:
            return None
        if self._terms is None:
            vocabulary = self._model.vocab_dict  # type: ignore[attr-defined]
            self._terms = [""] * len(vocabulary)
            for term, term_id in vocabulary.items():
                self._terms[term_id] = term
        counts = self._term_counts
        start, end = counts.indptr[unit], counts.indptr[unit + 1]  # type: ignore[attr-defined]
        return Counter({self._terms[term_id]: count for term_id, count
                        in zip(counts.indices[start:end].tolist(), counts.data[start:end].tolist())})  # type: ignore[attr-defined]

    def save(self, path: Path) -> None:
        if self.size == 0:
            # bm25s cannot save a model of no documents; the index then reads the empty folder as missing
            # artifacts and rebuilds them from its database, which is empty too.
            path.mkdir(parents=True, exist_ok=True)
            return
        self._model.save(str(path))  # type: ignore[attr-defined]
        if self._term_counts is not None:
            import scipy.sparse

            # uncompressed: every worker of a service loads each new generation, and inflating the file took
            # ~40 ms on the meeting index (~10 ms to load the whole BM25 folder uncompressed)
            scipy.sparse.save_npz(path / self.TERM_COUNTS, self._term_counts, compressed=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every unit for ``query`` (zeros when no query term is in the vocabulary)."""
        return self.term_scores(tokenize([query])[0])

    def feedback_vocabulary(self, max_units: float) -> frozenset[str]:
        """The terms query feedback may add: 2 to 20 letters and digits (what Anserini's RM3 takes) held by at
        most ``max_units`` units (a term in most units says nothing about a query). Computed once per bound
        over the whole vocabulary, since every query asks the same."""
        if max_units not in self._feedback_vocabulary:
            if self.size == 0:  # an empty index has no vocabulary
                return frozenset()
            units = np.diff(self._model.scores["indptr"])  # type: ignore[attr-defined]
            vocabulary = self._model.vocab_dict  # type: ignore[attr-defined]
            # one regular-expression scan over the rare terms, one per line: the first query after each new
            # generation pays for this (a term-by-term loop took ~11 ms on the meeting index)
            term_ids = np.fromiter(vocabulary.values(), dtype=np.int64, count=len(vocabulary))
            known = term_ids < len(units)
            rare_enough = np.zeros(len(term_ids), dtype=bool)
            rare_enough[known] = units[term_ids[known]] <= max_units
            rare = "\n".join(itertools.compress(vocabulary.keys(), rare_enough.tolist()))
            self._feedback_vocabulary[max_units] = frozenset(_FEEDBACK_TERMS.findall(rare))
        return self._feedback_vocabulary[max_units]

    def weighted_scores(self, weights: Mapping[str, float]) -> np.ndarray:
        """sum over terms of weight * BM25(term, unit), for every unit: a weighted query (RM3's), in one pass
        over the terms' columns of the BM25 score matrix."""
        if self.size == 0:  # an empty index has no vocabulary
            return np.zeros(0, dtype=np.float32)
        vocabulary = self._model.vocab_dict  # type: ignore[attr-defined]
        matrix = self._model.scores  # type: ignore[attr-defined]
        pairs = [(vocabulary[t], w) for t, w in weights.items() if w > 0 and t in vocabulary]
        indptr = matrix["indptr"]
        columns = [np.arange(indptr[i], indptr[i + 1]) for i, _ in pairs if i + 1 < len(indptr)]
        if not columns:
            return np.zeros(self.size, dtype=np.float32)
        entries = np.concatenate(columns)
        term_weights = np.repeat([w for i, w in pairs if i + 1 < len(indptr)], [len(c) for c in columns])
        total = np.bincount(matrix["indices"][entries], weights=matrix["data"][entries] * term_weights,
                            minlength=self.size)
        return total.astype(np.float32)

    def term_scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every unit for already-analysed (stemmed) terms."""
        if self.size == 0:
            return np.zeros(0, dtype=np.float32)
        known = [t for t in terms if t in self._model.vocab_dict]  # type: ignore[attr-defined]
        if not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._model.get_scores(known), dtype=np.float32)  # type: ignore[attr-defined]


def _count_matrix(ids: Sequence[Sequence[int]], vocabulary: int):  # type: ignore[no-untyped-def]
    """(units x vocabulary) CSR of how often each term id occurs in each unit."""
    import scipy.sparse

    lengths = np.fromiter((len(unit) for unit in ids), dtype=np.int64, count=len(ids))
    columns = np.fromiter((term for unit in ids for term in unit), dtype=np.int64, count=int(lengths.sum()))
    rows = np.repeat(np.arange(len(ids)), lengths)
    counts = scipy.sparse.csr_matrix((np.ones(len(columns), dtype=np.int32), (rows, columns)),
                                     shape=(len(ids), vocabulary))
    counts.sum_duplicates()
    return counts
