"""Hybrid retrieval by reciprocal rank fusion (Cormack et al., 2009) over any retrievers."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Hashable, Sequence, TypeVar

import numpy as np

from citesum.embed import Embedder, get_embedder
from citesum.index.store import IndexReader
from citesum.retrieve.base import Retriever, top_scores

RRF_K = 60
Key = TypeVar("Key", bound=Hashable)
Ranking = TypeVar("Ranking")
#: the threads members of a fusion rank on beside the caller's, when they rank at once (get_retriever makes
#: fusions of citesum.retrieve.MAX_HYBRID_PARTS = 4 members at most; more queue). Made at the first such fusion of
#: a process.
_POOL_THREADS = 3
_POOL_PREFIX = "citesum-fusion"
_member_threads: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _member_pool() -> ThreadPoolExecutor:
    global _member_threads
    with _pool_lock:
        if _member_threads is None:
            _member_threads = ThreadPoolExecutor(max_workers=_POOL_THREADS, thread_name_prefix=_POOL_PREFIX)
        return _member_threads


def _forget_member_pool() -> None:
    """In a forked child: the parent's threads are not there, and a pool that counts them would wait forever."""
    global _member_threads
    _member_threads = None


os.register_at_fork(after_in_child=_forget_member_pool)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Key]], k: int = RRF_K) -> dict[Key, float]:
    """score(item) = sum over rankings of 1 / (k + rank), ranks starting at 1."""
    fused: dict[Key, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused


class HybridRetriever(Retriever):
    """Fuses its members' rankings with RRF, counting each member's top ``depth`` results.

    Units are fused by unit rank; documents (:meth:`rank_documents`) by each member's document rank, so every
    member aggregates its own scores before fusion and RRF never sums ranks of different granularity.

    ``at_once``: whether the members rank at once, on threads reading the generation the query pinned
    (:meth:`_each_member`). None: when the generation has a nearest-neighbour search. There the members' work is
    long and mostly outside Python's lock (the graph search, the products with the vectors, postings): at a
    million passages, with BLAS products, the default hybrid answered faster at once than in turn (measured by
    benchmarks/scale.py). Below the graph's threshold, at once saved little, varied from run to run, and on
    small indexes took longer than in turn (measured by benchmarks/fusion_at_once.py): too little, and too
    uncertain, to give a service worker's query a second core.
    """

    def __init__(self, index: IndexReader, retrievers: Sequence[Retriever], k: int = RRF_K, depth: int = 1000,
                 at_once: bool | None = None) -> None:
        super().__init__(index)
        self.retrievers = list(retrievers)
        self.k = k
        self.depth = depth
        self.at_once = at_once
        self.name = "hybrid(" + "+".join(r.name for r in self.retrievers) + ")"
        # a fusion with the oracle carries its gold grades
        self.scores_reach_the_summarizer = all(r.scores_reach_the_summarizer for r in self.retrievers)

    def _member_ranking(self, retriever: Retriever, query: str) -> np.ndarray:
        ranked, scores = retriever._top(query, self.depth)
        # a lexical score of 0 means "no query term": such units are not ranked at all
        return ranked[scores > 0] if retriever.matches_only_positive else ranked

    def _each_member(self, rank: Callable[[Retriever], Ranking]) -> list[Ranking]:
        """``rank(member)`` of every member, in the members' order; at once (see ``at_once``): the members that
        rank from the generation's arrays alone (:attr:`~Retriever.ranks_from_arrays`) and read this fusion's index
        on other threads, reading the generation this thread pinned, and the others (or the first, when all can)
        on this one. A fusion ranked on one of those threads ranks in turn (it would wait for its own pool)."""
        members = self.retrievers
        at_once = self.index.ann is not None if self.at_once is None else self.at_once
        if not at_once or threading.current_thread().name.startswith(_POOL_PREFIX):
            return [rank(member) for member in members]
        stays = [not (m.ranks_from_arrays and m.index is self.index) for m in members]
        if not any(stays):
            stays[0] = True
        reading = self.index.reading_elsewhere()

        def elsewhere(member: Retriever) -> Ranking:
            with reading():
                return rank(member)

        handed = {i: _member_pool().submit(elsewhere, m) for i, m in enumerate(members) if not stays[i]}
        try:
            ranked_here = {i: rank(m) for i, m in enumerate(members) if stays[i]}
        except BaseException:
            for future in handed.values():  # not left to take the pool's threads from the next query
                future.cancel()
            raise
        return [ranked_here[i] if stays[i] else handed[i].result() for i in range(len(members))]

    def _fused(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """reciprocal_rank_fusion over unit positions, as array operations (a dict loop over every member's ranks
        was a visible cost of a query): the units some member ranks, ascending, and their fused scores. The
        caller pins the generation every member reads."""
        rankings = self._each_member(lambda member: self._member_ranking(member, query))
        ranked = np.concatenate(rankings)
        contributions = np.concatenate([1.0 / (self.k + np.arange(1, len(r) + 1)) for r in rankings])
        units, slot = np.unique(ranked, return_inverse=True)
        # bincount adds in the members' order, the sums a running total over the members gives
        return units, np.bincount(slot, weights=contributions, minlength=len(units)).astype(np.float32)

    def scores(self, query: str) -> np.ndarray:
        with self.index.pinned():
            return self._every_unit(*self._fused(query))

    def _every_unit(self, units: np.ndarray, fused: np.ndarray) -> np.ndarray:
        scores = np.zeros(len(self.index), dtype=np.float32)  # a unit no member ranks scores 0
        scores[units] = fused
        return scores

    def _top(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        units, fused = self._fused(query)
        if len(units) < k:  # the rest are the unranked units, at 0 in collection order
            return top_scores(self._every_unit(units, fused), k)
        order, best = top_scores(fused, k)  # the units are ascending, so ties keep collection order
        return units[order], best

    def _rank_documents(self, query: str, k: int | None, passages_per_document: int) -> list[tuple[str, float]]:
        rankings = self._each_member(lambda member: [
            doc_id for doc_id, score in member._rank_documents(query, self.depth, passages_per_document)
            if score > 0 or not member.matches_only_positive])
        ranked = sorted(reciprocal_rank_fusion(rankings, self.k).items(), key=lambda item: -item[1])
        return ranked if k is None else ranked[:k]


class StoreHybridRetriever(Retriever):
    """BM25 and dense fused by the search store itself, in one round trip (a Milvus store: its RRF ranker over
    each part's top 1,000 units). Documents are ranked by their best units' fused scores, as for any unit
    scores (a local hybrid fuses each member's document ranking instead)."""

    name = "hybrid(bm25+dense)"

    def __init__(self, index: IndexReader, embedder: Embedder | None = None, k: int = RRF_K) -> None:
        super().__init__(index)
        self.embedder = embedder or get_embedder(index.settings.embedder)
        self.k = k

    def scores(self, query: str) -> np.ndarray:
        with self.index.pinned() as view:
            if len(view) == 0:
                return np.zeros(0, dtype=np.float32)
            return view.lexical.hybrid_scores(query, self.embedder.encode_query(query), self.k)  # type: ignore[attr-defined]
