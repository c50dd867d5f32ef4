"""The retriever interface: a score for every unit of the index, and ranked hits from it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Sequence

import numpy as np

from citesum.index.lexical import RowScores
from citesum.index.passages import StoredPassages
from citesum.index.store import IndexReader
from citesum.tokens import clip_query
from citesum.types import Hit

#: Tuned in-sample: chosen looking at all 26 queries of the three shared SummHay news haystacks
#: (benchmarks/retrieval_summhay.py; docs/retrieval.md gives the held-out figures).
DEFAULT_PASSAGES_PER_DOCUMENT = 3


class Retriever(ABC):
    """Scores every retrieval unit of an index for a query; higher is better.

    Subclasses implement :meth:`scores`; ranking, top-k and document-level aggregation are shared.
    """

    name: str
    #: True when every unit of a document gets that document's score (oracle, random): summing several
    #: units would then only reward long documents, so documents are ranked by that one score.
    scores_documents: bool = False
    #: True when the ranking depends on how many units are wanted (LightPAL fills 40% of K by its walk): a
    #: context is then packed a second time with K = the number of units the first packing took.
    ranking_depends_on_k: bool = False
    #: True for lexical scores, where 0 means the unit holds no term of the query: it is no match at all
    matches_only_positive: bool = False
    #: False when the scores are gold labels (the oracle): they may choose what goes into a context, but the
    #: summarizer must not see them, or they would rank the facts inside it too
    scores_reach_the_summarizer: bool = True
    #: True when ranking reads only the generation's arrays (BM25, vectors, graph) or a search service, never the
    #: database through the reader (passage texts, documents; a Milvus store's vectors are read through a
    #: connection of their own): a fusion may then rank with it on another thread
    ranks_from_arrays: bool = False

    def __init__(self, index: IndexReader) -> None:
        self.index = index

    @abstractmethod
    def scores(self, query: str) -> np.ndarray:
        """One score per unit, aligned with ``index.passages``."""

    def retrieve(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` best units (ties keep collection order, so results are reproducible). Only the first
        :data:`~citesum.tokens.MAX_QUERY_TOKENS` tokens of the query are read."""
        with self.index.pinned():
            return self._retrieve(clip_query(query), k)

    def _retrieve(self, query: str, k: int) -> list[Hit]:
        """:meth:`retrieve` of a query already clipped (what a retriever with its own ranking overrides)."""
        positions, scores = self._top(query, k)
        passages = self.index.passages.take(positions.tolist())
        return [Hit(passage, score, rank, self.name)
                for rank, (passage, score) in enumerate(zip(passages, scores.tolist()), start=1)]

    def _top(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The positions of the ``k`` best units for a query already clipped, best first (ties keep collection
        order), and their scores: ``top_k`` of :meth:`scores`, read in the generation the caller pinned.

        A retriever that finds its best units without scoring every unit (through a nearest-neighbour graph)
        overrides this with the same result: on a million units, making, selecting from and fusing arrays of
        every unit was a third of a default hybrid query.
        """
        return top_scores(self.scores(query), k)

    def rank_documents(
        self, query: str, k: int | None = None, *, passages_per_document: int = DEFAULT_PASSAGES_PER_DOCUMENT
    ) -> list[tuple[str, float]]:
        """Documents ranked by the sum of their best ``passages_per_document`` unit scores.

        With 1 this is MaxP (the best unit decides). Summing a few rewards documents that address the query
        in several places, which is what multi-fact queries need: on the SummHay haystacks the sum of the
        best 3 passages beats MaxP for BM25 and dense alike (benchmarks/retrieval_summhay.py). An index of
        whole-document units has one unit per document, so the choice makes no difference there.
        """
        with self.index.pinned():
            return self._rank_documents(clip_query(query), k, passages_per_document)

    def _rank_documents(self, query: str, k: int | None, passages_per_document: int) -> list[tuple[str, float]]:
        """:meth:`rank_documents` of a query already clipped (what a fusion of retrievers overrides)."""
        owners, document_ids = self.index.unit_documents
        per_document = 1 if self.scores_documents else passages_per_document
        return aggregate_documents(owners, document_ids, self.scores(query), k, per_document)


def aggregate_documents(
    owners: np.ndarray, document_ids: Sequence[str], scores: np.ndarray, k: int | None, passages_per_document: int
) -> list[tuple[str, float]]:
    """``[(document_id, score), ...]`` best first; a document's score sums its best units' scores.

    ``owners[i]`` is the document (an index into ``document_ids``) of unit ``i``. Ties keep collection order.
    """
    if len(scores) == 0:
        return []
    order = np.lexsort((-scores, owners))  # grouped by document, best unit first within each
    grouped = owners[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    rank_in_document = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    keep = order[rank_in_document < passages_per_document]
    totals = np.bincount(owners[keep], weights=scores[keep].astype(np.float64), minlength=len(document_ids))
    present = np.flatnonzero(np.bincount(owners, minlength=len(document_ids)))
    # present is in collection order, and top_k breaks ties by position: ties keep collection order
    ranked = present[top_k(totals[present], len(present) if k is None else k)]
    return [(document_ids[i], float(totals[i])) for i in ranked]


def rank_scores(order: np.ndarray) -> np.ndarray:
    """Scores of a retriever that orders units rather than scoring them (LightPAL, PromptRank): 1 / (1 + rank)
    for ``order``, every unit best first."""
    out = np.zeros(len(order), dtype=np.float32)
    out[order] = 1.0 / (1.0 + np.arange(len(order)))
    return out


def ranked_hits(passages: StoredPassages, order: Sequence[int], source: str) -> list[Hit]:
    """The hits of units in ``order``, scored 1 / rank as :func:`rank_scores` scores them."""
    return [Hit(passage, 1.0 / rank, rank, source) for rank, passage in enumerate(passages.take(order), start=1)]


def top_scores(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`top_k` of ``scores``, their scores)."""
    order = top_k(scores, k)
    return order, scores[order]


def top_rows(scores: RowScores, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top_scores` of BM25 scores by row: the positions of the ``k`` best units, and their scores."""
    rows = top_k(scores.values, min(k, scores.units))  # the rows of units not held score -inf: never among them
    return scores.positions(rows), scores.values[rows]


#: every how many scores top_k samples to bound the k best of a long array
_SAMPLE_STRIDE = 97


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest scores, best first, ties broken by position."""
    n = len(scores)
    k = min(max(k, 0), n)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    if k == n:
        return np.argsort(-scores, kind="stable")  # stable: equal scores keep position order
    if n >= 4 * k * _SAMPLE_STRIDE:
        # every unit scoring at least a bound that a few times k units reach holds the k best and every unit
        # tied with the k-th, in position order: selecting among them is the same selection, and finding them
        # is one comparison over the scores, cheaper than a selection over all of them
        sample = scores[::_SAMPLE_STRIDE]
        rank = min(len(sample) - 1, 2 * -(-k // _SAMPLE_STRIDE) + 1)
        bound = -np.partition(-sample, rank)[rank]
        above = np.flatnonzero(scores >= bound)
        if k <= len(above) <= n // 8:  # else (most units tied at the bound, e.g. at 0) select over them all
            return above[top_k(scores[above], k)]
    # the k-th largest score; selecting near the front of the negated scores stays fast when most are equal
    # (selecting at n - k was slow on BM25 scores, most of which are 0)
    threshold = -np.partition(-scores, k - 1)[k - 1]
    above = np.flatnonzero(scores > threshold)
    # of the units tied with the k-th score, the first by position fill the rest (a lexical score leaves most
    # units tied at 0: sorting them all took longer than the query)
    tied = np.flatnonzero(scores == threshold)[: k - len(above)]
    return np.concatenate((above[np.argsort(-scores[above], kind="stable")], tied))
