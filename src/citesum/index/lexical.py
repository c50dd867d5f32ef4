"""BM25 over the index units (bm25s + PyStemmer), with the same tokenisation for corpus and queries."""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import AbstractSet, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from citesum.errors import IndexStoreError

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


def document_frequency(token_sets: Sequence[AbstractSet[str]]) -> Counter[str]:
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


class TermCounts:
    """The analysed term counts of one segment's units (citesum.index.local), both ways: by unit (a CSR row per
    unit: what query feedback and "more like this" read) and by term (a posting list per term: what a query
    scores), with each unit's length. Term ids are the index's vocabulary's, those known when the segment was
    written (``vocabulary_size``). Immutable: a loaded segment's arrays are memory-mapped.

    A posting holds its class, not its count: the classes are the segment's distinct (count, unit length)
    pairs, and a posting's BM25 weight depends on nothing else but the term's idf and the generation's mean
    length. A query turns the small class table into weights and reads each posting's weight from it: one
    gather. In a scratch comparison on 300,000 generated units (not in a benchmark), a query this way took
    somewhat longer than with bm25s's precomputed matrix, and far less than computing each posting's weight."""

    #: the arrays and their file names
    FILES = ("unit_indptr", "unit_terms", "unit_counts", "term_indptr", "term_units", "term_classes", "classes",
             "lengths")

    def __init__(self, arrays: Mapping[str, np.ndarray]) -> None:
        self.unit_indptr, self.unit_terms, self.unit_counts = (arrays[k] for k in self.FILES[:3])
        self.term_indptr, self.term_units, self.term_classes = (arrays[k] for k in self.FILES[3:6])
        #: (count, unit length) of each class
        self.classes = arrays["classes"]
        self.lengths = arrays["lengths"]

    @classmethod
    def from_matrix(cls, counts) -> "TermCounts":  # type: ignore[no-untyped-def]
        """From a (units x vocabulary) CSR matrix of counts."""
        counts.sort_indices()
        by_term = counts.tocsc()
        by_term.sort_indices()
        lengths = _unit_lengths(counts)
        classes, term_classes = _classes(by_term.data, by_term.indices, lengths)
        # not copied where scipy's arrays already have the type (large at a million units, and held while a
        # build's last batches are embedded)
        return cls({"unit_indptr": counts.indptr.astype(np.int64, copy=False),
                    "unit_terms": counts.indices.astype(np.int32, copy=False),
                    "unit_counts": counts.data.astype(np.int32, copy=False),
                    "term_indptr": by_term.indptr.astype(np.int64, copy=False),
                    "term_units": by_term.indices.astype(np.int32, copy=False), "term_classes": term_classes,
                    "classes": classes, "lengths": lengths})

    @classmethod
    def concatenated(cls, parts: Sequence[tuple["TermCounts", np.ndarray | None]]) -> "TermCounts":
        """The units of ``parts`` (one or more, each with the rows it keeps, None: all), in order, as one
        segment."""
        import scipy.sparse

        width = max(part.vocabulary_size for part, _ in parts)
        matrices = []
        for part, rows in parts:
            matrix = part.by_unit(width)
            matrices.append(matrix if rows is None else matrix[rows])
        return cls.from_matrix(scipy.sparse.vstack(matrices, format="csr"))

    @classmethod
    def load(cls, folder: Path) -> "TermCounts":
        return cls({name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in cls.FILES})

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name in self.FILES:
            np.save(folder / f"{name}.npy", np.ascontiguousarray(getattr(self, name)))

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def vocabulary_size(self) -> int:
        return len(self.term_indptr) - 1

    def by_unit(self, width: int | None = None):  # type: ignore[no-untyped-def]
        """The counts as scipy CSR (units x ``width`` terms, default the segment's vocabulary), not copied."""
        import scipy.sparse

        return scipy.sparse.csr_matrix((self.unit_counts, self.unit_terms, self.unit_indptr),
                                       shape=(len(self), width or self.vocabulary_size))

    def renumbered(self, rows: np.ndarray | None, new_id: np.ndarray, width: int) -> "TermCounts":
        """The units ``rows`` (None: all) with each term id ``t`` made ``new_id[t]`` in a vocabulary of ``width``
        terms (the terms they hold must all have one)."""
        import scipy.sparse

        matrix = self.by_unit() if rows is None else self.by_unit()[rows]
        return TermCounts.from_matrix(scipy.sparse.csr_matrix(
            (np.asarray(matrix.data), new_id[matrix.indices], np.asarray(matrix.indptr)),
            shape=(matrix.shape[0], width)))

    def unit_frequency(self, rows: np.ndarray) -> np.ndarray:
        """For each term id of the segment, how many of its units ``rows`` hold it (a unit's row holds a term
        once)."""
        return np.bincount(self.by_unit()[rows].indices, minlength=self.vocabulary_size).astype(np.int64)


@dataclass
class _Part:
    """One segment's term counts in a generation: the units it still holds (``live``: its row of each, None when
    all), their first position among the generation's units, and what is computed from them once."""

    counts: TermCounts
    live: np.ndarray | None
    start: int
    #: where its rows begin among the rows of every part, held or not (:class:`RowScores`)
    row_start: int
    #: k1 * (1 - b + b |u| / avg|u|) of each of the segment's units (this generation's average length)
    normalisation: np.ndarray | None = None
    #: tf / (tf + k1 * (...)) of each of the segment's classes of postings (this generation's average length)
    class_factors: np.ndarray | None = None
    #: the BM25 weights as scipy CSC (units x terms): made for "more like this" queries only
    weights: object | None = None

    @property
    def size(self) -> int:
        return len(self.counts) if self.live is None else len(self.live)


class LexicalIndex:
    """BM25 over a generation's units (bm25s's Lucene variant, its default), from their analysed term counts.

    The counts are kept per segment (citesum.index.local): a segment is written once and shared by the
    generations after it, which may no longer hold some of its units (their documents were deleted or revised).
    What BM25 takes from the whole generation (the number of units, how many hold each term, the mean length)
    is kept beside them and applied when a query is scored, as Lucene does, so an update writes only the new
    units' counts: a segment's weights would change with every update. The scores are bm25s's, bit for bit
    (a test compares them): each posting's weight is computed with the same float operations as bm25s's
    precomputed matrix, and a query's terms are added in the same order.
    """

    #: bm25s's defaults, which every index so far was built with
    K1, B = 1.5, 0.75
    #: what a search store's BM25 offers (citesum.index.search_store.LexicalScorer): term counts, no fusion
    term_statistics = True
    serves_hybrid = False
    #: share of the vocabulary that no unit holds any more above which a write renumbers the terms
    UNHELD_TERMS = 0.2

    def __init__(self, vocabulary: dict[str, int], parts: Sequence[tuple[TermCounts, np.ndarray | None]],
                 unit_frequency: np.ndarray, total_length: int) -> None:
        self._vocabulary = vocabulary
        self._parts: list[_Part] = []
        start = row_start = 0
        for counts, live in parts:
            self._parts.append(_Part(counts, live, start, row_start))
            start += self._parts[-1].size
            row_start += len(counts)
        self.size = start
        #: the rows of every part, those of units the generation no longer holds included
        self.rows = row_start
        #: for each term id, how many of the generation's units hold it
        self.unit_frequency = unit_frequency
        self.total_length = total_length
        self._starts = np.array([part.start for part in self._parts], dtype=np.int64)
        self._row_starts = np.array([part.row_start for part in self._parts], dtype=np.int64)
        self._unheld: np.ndarray | None = None  # the rows of units not held, and which rows are held: made once
        self._held: np.ndarray | None = None
        self._terms: list[str] | None = None
        self._alphabetical_rank: np.ndarray | None = None
        self._feedback_terms: dict[float, np.ndarray] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, object]:  # sent to the workers of a parallel job (citesum.parallel)
        return {key: value for key, value in self.__dict__.items() if key != "_lock"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @classmethod
    def build(cls, texts: Sequence[str]) -> "LexicalIndex":
        vocabulary: dict[str, int] = {}
        counts = TermCounts.from_matrix(_analysed_counts(texts, vocabulary))
        return cls(vocabulary, [(counts, None)], np.diff(counts.term_indptr), int(counts.lengths.sum()))

    def updated(self, keep: np.ndarray, texts: Sequence[str]) -> "LexicalIndex":
        """This index without the units where ``keep`` is False, followed by the units of ``texts`` as a new
        segment (the last part; none without texts): only the new texts are analysed, and the kept segments are
        shared."""
        vocabulary = dict(self._vocabulary)  # new terms get the next ids
        added = TermCounts.from_matrix(_analysed_counts(texts, vocabulary))
        frequency = np.zeros(len(vocabulary), dtype=np.int64)
        frequency[: len(self.unit_frequency)] = self.unit_frequency
        frequency[: added.vocabulary_size] += np.diff(added.term_indptr)
        total_length = self.total_length + int(added.lengths.sum())
        parts: list[tuple[TermCounts, np.ndarray | None]] = []
        for part in self._parts:
            held = part.live if part.live is not None else np.arange(len(part.counts))
            kept = keep[part.start: part.start + part.size]
            dropped = held[~kept]
            if len(dropped):
                frequency[: part.counts.vocabulary_size] -= part.counts.unit_frequency(dropped)
                total_length -= int(part.counts.lengths[dropped].sum())
            parts.append((part.counts, held[kept] if len(dropped) or part.live is not None else None))
        return LexicalIndex(vocabulary, [*parts, (added, None)] if len(added) else parts, frequency, total_length)

    def with_segments_merged(self, start: int, stop: int) -> "LexicalIndex":
        """The same units, with those of parts ``start`` to ``stop`` (excluded) in one segment."""
        if stop - start == 1 and self._parts[start].live is None:
            return self
        parts = self.segments
        merged = TermCounts.concatenated(parts[start:stop])
        return LexicalIndex(self._vocabulary, [*parts[:start], (merged, None), *parts[stop:]], self.unit_frequency,
                            self.total_length)

    def without_segments(self, start: int, stop: int) -> "LexicalIndex":
        """The same units, without parts ``start`` to ``stop`` (excluded), which hold none."""
        parts = self.segments
        del parts[start:stop]
        return self.with_segments(parts)

    def with_segments(self, parts: Sequence[tuple[TermCounts, np.ndarray | None]]) -> "LexicalIndex":
        """The same units and statistics, from other term counts of them (the same segments saved and mapped)."""
        return LexicalIndex(self._vocabulary, parts, self.unit_frequency, self.total_length)

    @property
    def unheld_terms_share(self) -> float:
        """The share of the vocabulary that no unit holds any more (terms of deleted or revised units)."""
        return float(np.mean(self.unit_frequency == 0)) if len(self.unit_frequency) else 0.0

    def without_unheld_terms(self) -> "LexicalIndex":
        """The same units, each segment written again with only the units it holds and the vocabulary with only
        the terms they hold, renumbered in their order (what a write does past :data:`UNHELD_TERMS`)."""
        held = self.unit_frequency > 0
        new_id = np.cumsum(held) - 1
        vocabulary = {term: int(new_id[term_id]) for term, term_id in self._vocabulary.items() if held[term_id]}
        parts = [(part.counts.renumbered(part.live, new_id, len(vocabulary)), None) for part in self._parts]
        return LexicalIndex(vocabulary, parts, self.unit_frequency[held], self.total_length)

    @property
    def segments(self) -> list[tuple[TermCounts, np.ndarray | None]]:
        """Each segment's term counts and the rows of it this index holds (None: all)."""
        return [(part.counts, part.live) for part in self._parts]

    # ---- files: the generation's own (a segment's counts are saved with it, TermCounts.save) ---------------
    VOCABULARY, FREQUENCY, LENGTH = "vocabulary.json", "unit_frequency.npy", "total_length.json"

    def save(self, folder: Path) -> None:
        """What the generation adds to its segments' counts: the vocabulary, how many units hold each term, the
        total length."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / self.VOCABULARY).write_text(json.dumps(self.terms), encoding="utf-8")
        np.save(folder / self.FREQUENCY, self.unit_frequency)
        (folder / self.LENGTH).write_text(json.dumps(self.total_length), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, parts: Sequence[tuple[TermCounts, np.ndarray | None]]) -> "LexicalIndex":
        terms = json.loads((folder / cls.VOCABULARY).read_text(encoding="utf-8"))
        index = cls({term: i for i, term in enumerate(terms)}, parts, np.load(folder / cls.FREQUENCY),
                    int(json.loads((folder / cls.LENGTH).read_text(encoding="utf-8"))))
        index._terms = terms
        return index

    # ---- the vocabulary ----------------------------------------------------------------------------------
    @property
    def terms(self) -> list[str]:
        """The vocabulary by term id (it keeps the terms no unit holds any more until a write renumbers them, past
        :data:`UNHELD_TERMS`: they hold no unit and score nothing)."""
        if self._terms is None:
            terms = [""] * len(self._vocabulary)
            for term, term_id in self._vocabulary.items():
                terms[term_id] = term
            self._terms = terms  # published whole: another thread may read it meanwhile
        return self._terms

    def term_id(self, term: str) -> int | None:
        """The id of an analysed term; None when it is not in the vocabulary."""
        return self._vocabulary.get(term)

    @property
    def alphabetical_rank(self) -> np.ndarray:
        """For each term id, the term's position in alphabetical order (what breaks ties between terms)."""
        if self._alphabetical_rank is None:
            order = np.argsort(np.array(self.terms, dtype=str), kind="stable")
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            self._alphabetical_rank = rank  # published whole: another thread may read it meanwhile
        return self._alphabetical_rank

    def unit_frequencies(self, terms: Sequence[str]) -> np.ndarray:
        """How many units hold each of the analysed ``terms`` (0 for a term not in the vocabulary)."""
        ids = [self.term_id(term) for term in terms]
        return np.array([int(self.unit_frequency[i]) if i is not None else 0 for i in ids], dtype=np.int64)

    def feedback_terms(self, max_units: float) -> np.ndarray:
        """For each term id, whether query feedback may add the term: 2 to 20 letters and digits (what
        Anserini's RM3 takes) held by at most ``max_units`` units (a term in most units says nothing about a
        query). Computed once per bound over the whole vocabulary, since every query asks the same."""
        if max_units not in self._feedback_terms:
            terms = self.terms
            held = self.unit_frequency
            rare = (held > 0) & (held <= max_units)
            # one regular-expression scan over the rare terms, one per line: the first query after each new
            # generation pays for this (a term-by-term loop was much slower on the meeting index)
            rare_ids = np.flatnonzero(rare)
            lines = "\n".join(terms[i] for i in rare_ids.tolist())
            line_starts = np.r_[0, np.cumsum([len(terms[i]) + 1 for i in rare_ids.tolist()])[:-1]]
            matched = np.array([m.start() for m in _FEEDBACK_TERMS.finditer(lines)], dtype=np.int64)
            allowed = np.zeros(len(terms), dtype=bool)
            allowed[rare_ids[np.searchsorted(line_starts, matched)]] = True
            self._feedback_terms[max_units] = allowed
        return self._feedback_terms[max_units]

    # ---- a unit's counts ---------------------------------------------------------------------------------
    def _locate(self, unit: int) -> tuple[_Part, int]:
        """The part holding the generation's unit ``unit`` and its row there."""
        part = self._parts[int(np.searchsorted(self._starts, unit, side="right")) - 1]
        local = unit - part.start
        return part, int(local if part.live is None else part.live[local])

    def unit_term_counts(self, unit: int) -> tuple[np.ndarray, np.ndarray]:
        """The term ids of one unit's analysed terms and how often each occurs."""
        part, row = self._locate(unit)
        start, end = part.counts.unit_indptr[row], part.counts.unit_indptr[row + 1]
        return np.asarray(part.counts.unit_terms[start:end]), np.asarray(part.counts.unit_counts[start:end])

    # ---- scoring -----------------------------------------------------------------------------------------
    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every unit for ``query`` (zeros when no query term is in the vocabulary)."""
        return self.term_scores(tokenize([query])[0])

    def term_scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every unit for already-analysed (stemmed) terms, each added in the order given (a
        repeated term counts again), in float32: bm25s's sums."""
        return self.term_row_scores(terms).by_unit()

    def term_row_scores(self, terms: Sequence[str]) -> "RowScores":
        """:meth:`term_scores` by row: what ranks the units without taking every score to its unit's position."""
        ids = [i for i in map(self.term_id, terms) if i is not None]
        idf = self._idf32(np.array(ids, dtype=np.int64)).tolist()
        return self._row_scores(self._summed(np.float32, (posting for term_id, term_idf in zip(ids, idf)
                                                          for posting in self._postings(term_id, term_idf))))

    def weighted_row_scores(self, term_ids: np.ndarray, weights: np.ndarray) -> "RowScores":
        """sum over terms of weight * BM25(term, unit), by row: a weighted query (RM3's feedback terms), summed in
        float64 term by term in the order given (what scipy's product of the BM25 matrix's columns with the
        weights adds, which it computed before the weights were made at query time), then float32."""
        keep = (weights > 0) & (term_ids < len(self.unit_frequency))
        term_ids, weights = term_ids[keep], weights[keep].astype(np.float64)
        weighted = ((part, units, classes, class_weights.astype(np.float64) * weight)
                    for term_id, idf, weight in zip(term_ids.tolist(), self._idf32(term_ids).tolist(), weights.tolist())
                    for part, units, classes, class_weights in self._postings(term_id, idf))
        return self._row_scores(self._summed(np.float64, weighted).astype(np.float32))

    def _summed(self, dtype: type, postings: Iterable[tuple[_Part, np.ndarray, np.ndarray, np.ndarray]]
                ) -> np.ndarray:
        """Every row's sum of the weights of its ``postings`` (each: a part, its rows holding a term, their classes
        and the weight of each class, as ``dtype``), added in the order given: the rows of every part, those of
        units the generation no longer holds included. Each posting's position among the held units looked up
        instead took most of RM3's time after a 1% update at a million units."""
        sums = np.zeros(self.rows, dtype=dtype)
        for part, units, classes, class_weights in postings:
            add_class_weights(sums[part.row_start: part.row_start + len(part.counts)], units, classes, class_weights)
        return sums

    def _row_scores(self, sums: np.ndarray) -> "RowScores":
        if self.rows != self.size:
            sums[self._unheld_rows()] = -np.inf
        return RowScores(sums, self)

    def _unheld_rows(self) -> np.ndarray:
        """The rows of the units the generation no longer holds (made once)."""
        if self._unheld is None:
            self._unheld = np.concatenate([np.setdiff1d(np.arange(len(part.counts)), part.live) + part.row_start
                                           for part in self._parts if part.live is not None] or [np.zeros(0, int)])
        return self._unheld

    def held_values(self, by_row: np.ndarray) -> np.ndarray:
        """Values of every row, as values of every unit (a boolean mask over the rows: one pass)."""
        if self.rows == self.size:
            return by_row
        if self._held is None:
            held = np.ones(self.rows, dtype=bool)
            held[self._unheld_rows()] = False
            self._held = held
        return by_row[self._held]

    def positions_of_rows(self, rows: np.ndarray) -> np.ndarray:
        """The positions among the generation's units of held ``rows``."""
        rows = np.asarray(rows, dtype=np.int64)
        if self.rows == self.size:
            return rows
        part_of = np.searchsorted(self._row_starts, rows, side="right") - 1
        positions = np.empty(len(rows), dtype=np.int64)
        for number in np.unique(part_of).tolist():
            part, chosen = self._parts[number], part_of == number
            local = rows[chosen] - part.row_start
            positions[chosen] = part.start + (local if part.live is None else np.searchsorted(part.live, local))
        return positions

    def similar_units(self, units: Sequence[int], max_terms: int = 32) -> np.ndarray:
        """BM25 score of every unit for each of ``units`` taken as a query (rows: ``units``; float32): the
        unit's ``max_terms`` terms of highest BM25 weight in it, each weighted by how often it occurs there,
        Lucene's "more like this" query.

        The terms are cut because a unit's rarest, most repeated terms say what it is about, and a shorter query
        costs less: in a scratch comparison on the ODSum Story train questions (not in a benchmark), graphs
        from the 32 heaviest terms and from the whole unit gave the walk the same gain, 16 terms a smaller one."""
        import scipy.sparse

        idf = _idf(self.size, self.unit_frequency)
        rows, columns, frequencies = [], [], []
        for row, unit in enumerate(units):
            part, local = self._locate(int(unit))
            start, end = part.counts.unit_indptr[local], part.counts.unit_indptr[local + 1]
            ids = np.asarray(part.counts.unit_terms[start:end])
            tf = np.asarray(part.counts.unit_counts[start:end]).astype(np.float64)
            weight = idf[ids] * tf / (tf + self._normalisation(part)[local])
            # the heaviest terms, the lowest term id first among equal weights (a stable order)
            kept = np.sort(np.argsort(-weight, kind="stable")[:max_terms])
            rows.append(np.full(len(kept), row))
            columns.append(ids[kept])
            frequencies.append(tf[kept])
        similarity = np.zeros((len(rows), self.size), dtype=np.float32)
        if not rows:
            return similarity
        query = scipy.sparse.csr_matrix((np.concatenate(frequencies), (np.concatenate(rows), np.concatenate(columns))),
                                        shape=(len(rows), len(self.unit_frequency)))
        for part in self._parts:
            product = (query[:, : part.counts.vocabulary_size] @ self._weights(part).T).toarray()
            held = product if part.live is None else product[:, part.live]
            similarity[:, part.start: part.start + part.size] = held
        return similarity

    def _idf32(self, term_ids: np.ndarray) -> np.ndarray:
        """bm25s's idf of the terms, in float32 as its matrix holds it."""
        return _idf(self.size, self.unit_frequency[term_ids]).astype(np.float32)

    def _normalisation(self, part: _Part) -> np.ndarray:
        """k1 * (1 - b + b |u| / avg|u|) of each of the part's units."""
        if part.normalisation is None:
            part.normalisation = self._length_normalisation(np.asarray(part.counts.lengths))
        return part.normalisation

    def _length_normalisation(self, lengths: np.ndarray) -> np.ndarray:
        average = self.total_length / self.size if self.total_length else 1.0
        return self.K1 * ((1 - self.B) + self.B * lengths / average)

    def _class_factors(self, part: _Part) -> np.ndarray:
        """tf / (tf + k1 * (1 - b + b |u| / avg|u|)) of each of the part's classes (float64): a posting's BM25
        weight is its term's idf times its class's factor."""
        if part.class_factors is None:
            counts = part.counts.classes[:, 0].astype(np.float64)
            part.class_factors = counts / (self._length_normalisation(part.counts.classes[:, 1]) + counts)
        return part.class_factors

    def _weights(self, part: _Part):  # type: ignore[no-untyped-def]
        """The part's BM25 weights as CSC (units x terms), made once (for "more like this" queries)."""
        with self._lock:
            if part.weights is None:
                import scipy.sparse

                counts = part.counts
                idf = _idf(self.size, self.unit_frequency[: counts.vocabulary_size]).astype(np.float32)
                per_posting = np.repeat(idf.astype(np.float64), np.diff(counts.term_indptr))
                data = (per_posting * self._class_factors(part)[counts.term_classes]).astype(np.float32)
                part.weights = scipy.sparse.csc_matrix((data, np.asarray(counts.term_units),
                                                        np.asarray(counts.term_indptr)),
                                                       shape=(len(counts), counts.vocabulary_size))
            return part.weights

    def _postings(self, term_id: int, idf: float) -> Iterator[tuple[_Part, np.ndarray, np.ndarray, np.ndarray]]:
        """For each part holding the term: the part, its units that hold it (rows of the part), their classes
        and the term's BM25 weight in each class (float32): bm25s's float32 idf times the class's factor in
        float64, then float32."""
        for part in self._parts:
            counts = part.counts
            if term_id >= counts.vocabulary_size:
                continue
            start, end = counts.term_indptr[term_id], counts.term_indptr[term_id + 1]
            if start == end:
                continue
            weights = (np.float64(np.float32(idf)) * self._class_factors(part)).astype(np.float32)
            yield part, counts.term_units[start:end], counts.term_classes[start:end], weights


#: texts analysed at a time: bm25s gives each token of a call a Python int in a list, tens of bytes a token, so
#: a million units of 100 tokens at once took a great deal of memory, at a build's busiest moment; a block's CSR
#: is 8 bytes a posting
TEXTS_PER_BLOCK = 20_000


def _analysed_counts(texts: Sequence[str], vocabulary: dict[str, int]):  # type: ignore[no-untyped-def]
    """(units x vocabulary) CSR of how often each analysed term occurs in each text; terms not yet in
    ``vocabulary`` are added to it with the next ids, ``TEXTS_PER_BLOCK`` texts at a time."""
    import scipy.sparse

    blocks = [_block_counts(texts[start: start + TEXTS_PER_BLOCK], vocabulary)
              for start in range(0, len(texts), TEXTS_PER_BLOCK)]
    if not blocks:
        return scipy.sparse.csr_matrix((0, len(vocabulary)), dtype=np.int32)
    for block in blocks:  # the earlier blocks were made before the later blocks' new terms
        block.resize(block.shape[0], len(vocabulary))
    return scipy.sparse.vstack(blocks, format="csr", dtype=np.int32)


def _block_counts(texts: Sequence[str], vocabulary: dict[str, int]):  # type: ignore[no-untyped-def]
    """:func:`_analysed_counts` of one block of texts, as wide as ``vocabulary`` once its new terms are added."""
    import scipy.sparse

    tokenized = _bm25s().tokenize(list(texts), stopwords=_STOPWORDS, stemmer=_stemmer(), show_progress=False)
    # the ids of this call's own vocabulary, mapped to the index's; new terms numbered in alphabetical order (the
    # order of bm25s's vocabulary follows the string hash seed, and a weighted query sums its terms in id order,
    # so the scores' last bits would differ from run to run)
    local = np.empty(len(tokenized.vocab), dtype=np.int64)
    for term, local_id in sorted(tokenized.vocab.items()):
        local[local_id] = vocabulary.setdefault(term, len(vocabulary))
    lengths = np.fromiter((len(unit) for unit in tokenized.ids), dtype=np.int64, count=len(tokenized.ids))
    columns = local[np.fromiter((t for unit in tokenized.ids for t in unit), dtype=np.int64, count=int(lengths.sum()))]
    del tokenized
    rows = np.repeat(np.arange(len(texts)), lengths)
    counts = scipy.sparse.csr_matrix((np.ones(len(columns), dtype=np.int32), (rows, columns)),
                                     shape=(len(texts), len(vocabulary)))
    counts.sum_duplicates()
    return counts


def _unit_lengths(counts) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Each unit's number of analysed terms, from the term counts (CSR): by ``reduceat``, several times faster
    than scipy's row sums at a million units (scratch); summed over the units that have terms, since reduceat
    would give an empty one the next unit's first count."""
    lengths = np.zeros(counts.shape[0], dtype=np.int64)
    has_terms = np.diff(counts.indptr) > 0
    if has_terms.any():
        lengths[has_terms] = np.add.reduceat(counts.data, counts.indptr[:-1][has_terms], dtype=np.int64)
    return lengths


def _idf(units: int, frequency: np.ndarray) -> np.ndarray:
    """bm25s's Lucene idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)), float64."""
    return np.log(1 + (units - frequency + 0.5) / (frequency + 0.5))


#: postings whose classes are found at a time: at once, the temporaries for a million units' postings took a
#: great deal of memory, at the build's busiest moment
_CLASS_BLOCK = 1 << 20


def _classes(counts: np.ndarray, units: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (count, unit length) pairs of the postings (their ``counts`` and ``units``; each unit's
    ``lengths``), as a (classes x 2) table in ascending order, and each posting's class (uint16, or int32 past
    65,536 classes), a block of postings at a time."""
    if not len(counts):
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.uint16)
    base = int(lengths.max()) + 1
    blocks = range(0, len(counts), _CLASS_BLOCK)

    def keys(start: int) -> np.ndarray:
        return counts[start: start + _CLASS_BLOCK].astype(np.int64) * base + lengths[units[start: start + _CLASS_BLOCK]]

    largest = (int(counts.max()) + 1) * base
    number = None
    if largest < 1 << 26:  # a table of every possible key: linear passes, where sorting took seconds
        present = np.zeros(largest, dtype=bool)
        for start in blocks:
            present[keys(start)] = True
        distinct = np.flatnonzero(present)
        number = np.cumsum(present, dtype=np.int32) - 1  # int32: the table may have 2**26 entries
    else:
        distinct = np.unique(np.concatenate([np.unique(keys(start)) for start in blocks]))
    posting_classes = np.empty(len(counts), dtype=np.uint16 if len(distinct) <= 1 << 16 else np.int32)
    for start in blocks:
        block = keys(start)
        posting_classes[start: start + _CLASS_BLOCK] = number[block] if number is not None else np.searchsorted(
            distinct, block)
    return np.stack([distinct // base, distinct % base], axis=1), posting_classes


#: ones of each float type, at least as many as the longest posting list summed so far (it only grows, to at most
#: twice that: a few megabytes at a million units): the "matrix" of :func:`add_class_weights`, sliced,
#: not made again for each term; read-only, so threads share them
_ONES: dict[np.dtype, np.ndarray] = {}
#: the stored types of a posting's unit and class (a segment with more than 65,536 classes stores them as int32),
#: each with the unsigned type of its width: a negative number read as unsigned is past any end
_UNIT_TYPES = {np.dtype(np.int32): np.uint32, np.dtype(np.int64): np.uint64}
_CLASS_TYPES = {np.dtype(np.uint16): np.uint16, np.dtype(np.int32): np.uint32}


def add_class_weights(sums: np.ndarray, units: np.ndarray, classes: np.ndarray, class_weights: np.ndarray) -> None:
    """``sums[units[i]] += class_weights[classes[i]]`` for each posting i, in order, in the type of ``sums``, which
    must be that of ``class_weights``.

    Done by SciPy's kernel of a COO matrix's product with a vector, the postings a matrix of ones (row: the unit;
    column: the class) and the weights of the classes the vector: one pass over the postings, reading their
    stored units in place. ``np.add.at`` of the weights gathered by class gives the same sums bit for bit (1 times
    a weight is that weight, added in the same order) but took more than twice the time for queries of about 2
    million postings each over a million units (scratch comparison). The kernel
    is in a private module; a SciPy without it, or whose kernel no longer sums as it did, gets NumPy's sums. The
    kernel reads and writes where the numbers point, unchecked, so they are checked first: a damaged index file
    gets an error, not a read or write outside the arrays (nor, by NumPy, a negative number counted from the
    end)."""
    if class_weights.dtype != sums.dtype:
        raise TypeError(f"class weights of {class_weights.dtype} summed into {sums.dtype}")
    if not len(units):
        return
    unit_view, class_view = _UNIT_TYPES.get(units.dtype), _CLASS_TYPES.get(classes.dtype)
    if unit_view is None or class_view is None or units.view(unit_view).max() >= len(sums) or (
            classes.view(class_view).max() >= len(class_weights)):
        raise IndexStoreError(
            f"a posting names a unit or class outside its segment's {len(sums)} units and {len(class_weights)} "
            f"classes, or stores them as {units.dtype} and {classes.dtype}: the index's files are damaged "
            "(citesum check --index DIR --repair writes them again from the database)")
    kernel = _coo_matvec()
    if kernel is None:
        # intp units: given int32, np.add.at takes a slower path; np.take, not fancy indexing, which converts
        # narrow ints first
        np.add.at(sums, units.astype(np.intp), np.take(class_weights, classes))
        return
    ones = _ONES.get(sums.dtype)
    if ones is None or len(ones) < len(units):
        ones = np.ones(max(len(units), 2 * len(ones) if ones is not None else 0), sums.dtype)
        ones.flags.writeable = False
        _ONES[sums.dtype] = ones
    kernel(len(units), units, classes.astype(units.dtype, copy=False), ones[: len(units)], class_weights, sums)


@functools.cache
def _coo_matvec() -> Callable[..., None] | None:
    """SciPy's COO product kernel, once it has summed a few postings as :func:`add_class_weights` needs (one unit
    three times, where another order gives another float32 sum); None where SciPy no longer has it there, or
    sums otherwise."""
    try:
        from scipy.sparse._sparsetools import coo_matvec

        sums = np.zeros(2, dtype=np.float32)
        units, classes = np.array([1, 1, 1], dtype=np.int32), np.array([0, 1, 2], dtype=np.int32)
        coo_matvec(3, units, classes, np.ones(3, dtype=np.float32), np.array([1e8, 1, -1e8], np.float32), sums)
    except (ImportError, TypeError, ValueError):
        return None
    return coo_matvec if sums.tolist() == [0.0, 0.0] else None


class RowScores:
    """BM25 scores of every row of a generation's segments, those of units it no longer holds at -inf. The held
    rows are in the order of the units, so the best rows (ties by row) are the best units (ties by position):
    a ranking takes its few rows to their units (:meth:`positions`) where taking a million scores to theirs
    (:meth:`by_unit`) was a pass over every score, for each of RM3's two, after an update."""

    def __init__(self, values: np.ndarray, index: LexicalIndex) -> None:
        self.values = values
        #: how many units the generation holds (rows that do not score -inf)
        self.units = index.size
        self._index = index

    def positions(self, rows: np.ndarray) -> np.ndarray:
        return self._index.positions_of_rows(rows)

    def by_unit(self) -> np.ndarray:
        return self._index.held_values(self.values)
