"""Retrievers by name.

Names: ``bm25``, ``dense``, ``hybrid`` (RRF of bm25 + dense; ``hybrid:bm25+dense+keywords`` picks the parts),
``keywords`` (SummHay keyword overlap), ``random`` (seeded), ``oracle`` (needs gold relevance).
"""

from __future__ import annotations

from typing import Mapping

from citesum.errors import ConfigError, unknown_name_error
from citesum.index.store import Index
from citesum.retrieve.base import Retriever
from citesum.retrieve.dense import DenseRetriever
from citesum.retrieve.fusion import RRF_K, HybridRetriever
from citesum.retrieve.lexical import BM25Retriever, KeywordRetriever
from citesum.retrieve.reference import OracleRetriever, RandomRetriever

RETRIEVER_NAMES = ["bm25", "dense", "hybrid", "keywords", "random", "oracle"]
DEFAULT_HYBRID_PARTS = ("bm25", "dense")


def get_retriever(
    name: str,
    index: Index,
    *,
    relevance: Mapping[str, float] | None = None,
    seed: int = 0,
    rrf_k: int = RRF_K,
) -> Retriever:
    """Build a retriever over ``index`` by name (see the module docstring for the names)."""
    if name == "hybrid" or name.startswith("hybrid:"):
        parts = DEFAULT_HYBRID_PARTS if name == "hybrid" else tuple(p for p in name[7:].split("+") if p)
        if len(parts) < 2 or any(p.startswith("hybrid") for p in parts):
            raise ConfigError(f"'{name}': a hybrid needs two or more non-hybrid retrievers, e.g. hybrid:bm25+dense")
        members = [get_retriever(p, index, relevance=relevance, seed=seed) for p in parts]
        return HybridRetriever(index, members, k=rrf_k)
    if name == "bm25":
        return BM25Retriever(index)
    if name == "dense":
        return DenseRetriever(index)
    if name == "keywords":
        return KeywordRetriever(index)
    if name == "random":
        return RandomRetriever(index, seed=seed)
    if name == "oracle":
        if relevance is None:
            raise ConfigError("the 'oracle' retriever needs gold relevance (--qrels FILE: JSON {document_id: grade})")
        return OracleRetriever(index, relevance)
    raise unknown_name_error("retriever", name, RETRIEVER_NAMES)


__all__ = ["RETRIEVER_NAMES", "Retriever", "get_retriever"]
