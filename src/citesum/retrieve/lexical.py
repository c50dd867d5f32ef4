"""Lexical retrievers: BM25, and SummHay's keyword-overlap baseline."""

from __future__ import annotations

import numpy as np

from citesum.index.lexical import LexicalIndex, tokenize
from citesum.retrieve.base import Retriever, top_rows


class BM25Retriever(Retriever):
    """Okapi BM25 (bm25s, k1=1.5, b=0.75) over stemmed, stop-word-free tokens."""

    name = "bm25"
    ranks_from_arrays = True
    matches_only_positive = True

    def scores(self, query: str) -> np.ndarray:
        return self.index.lexical.scores(query)

    def _top(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        lexical = self.index.lexical
        if not isinstance(lexical, LexicalIndex):  # a store's own BM25
            return super()._top(query, k)
        return top_rows(lexical.term_row_scores(tokenize([query])[0]), k)


class KeywordRetriever(Retriever):
    """SummHay's keyword baseline: the share of the query's keywords (stop words removed) found in a unit."""

    name = "keywords"
    ranks_from_arrays = True
    matches_only_positive = True

    def scores(self, query: str) -> np.ndarray:
        keywords = sorted(set(tokenize([query])[0]))
        present = np.zeros(len(self.index), dtype=np.float32)
        if not keywords:
            return present
        for keyword in keywords:
            # a unit contains the keyword exactly when its BM25 score for that one term is positive
            present += self.index.lexical.scores(keyword) > 0
        return present / len(keywords)
