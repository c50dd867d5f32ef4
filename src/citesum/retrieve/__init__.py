"""Retrievers by name.

Names: ``bm25``, ``bm25-rm3`` (BM25 with RM3 query expansion), ``dense``, ``dense-prf`` (Rocchio feedback),
``hybrid`` (RRF of bm25-rm3 + dense-prf; ``hybrid:bm25+dense`` picks the parts), ``keywords`` (SummHay keyword
overlap), ``random`` (seeded), ``oracle`` (needs gold relevance), ``lightpal`` (BM25 completed by a walk on the
index's passage graph; ``lightpal:<retriever>`` picks the base; the graph is built by ``citesum graph``),
``promptrank`` (PromptRank: BM25's best units reordered by a language model's likelihood of the question after
chains of them, the packaged SmolLM2 in-process unless a ``likelihood`` is given; ``promptrank:<retriever>``
picks the base).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from citesum.errors import ConfigError, unknown_name_error
from citesum.index.store import IndexReader
from citesum.retrieve.base import Retriever
from citesum.retrieve.dense import DenseRetriever
from citesum.retrieve.feedback import DensePRFRetriever, RM3Retriever
from citesum.retrieve.fusion import RRF_K, HybridRetriever, StoreHybridRetriever
from citesum.retrieve.lexical import BM25Retriever, KeywordRetriever
from citesum.retrieve.reference import OracleRetriever, RandomRetriever

if TYPE_CHECKING:
    from citesum.llm.likelihood import Likelihood

RETRIEVER_NAMES = ["bm25", "bm25-rm3", "dense", "dense-prf", "hybrid", "keywords", "random", "oracle", "lightpal",
                   "promptrank"]
# Tuned in-sample: the best composition on all 26 queries of the three shared SummHay news haystacks
# (benchmarks/retrieval_summhay.py); chosen on two haystacks and scored on the third, a configuration scores
# lower than in-sample (the held-out figures are in docs/retrieval.md). "hybrid:bm25+dense" is the classic.
DEFAULT_HYBRID_PARTS = ("bm25-rm3", "dense-prf")
MAX_HYBRID_PARTS = 4


#: the retrievers that run others: a hybrid fuses its members' rankings, lightpal and promptrank re-rank a base's
_COMPOSERS = ("hybrid", "lightpal", "promptrank")


def composition(name: str) -> tuple[str, list[str]]:
    """A retriever's name read as what runs and what it runs on: "hybrid:bm25+dense" is ("hybrid", ["bm25",
    "dense"]), "hybrid" the default hybrid's parts, "lightpal" ("lightpal", ["bm25"]), "bm25" ("bm25", [])."""
    composer, colon, rest = name.partition(":")
    if composer not in _COMPOSERS:
        return name, []
    if composer == "hybrid":
        return composer, list(DEFAULT_HYBRID_PARTS) if not colon else [p for p in rest.split("+") if p]
    return composer, [rest or "bm25"]


def retriever_parts(name: str) -> list[str]:
    """The retrievers a name runs, each named alone: "hybrid:bm25+dense" runs hybrid, bm25 and dense;
    "lightpal:hybrid" runs lightpal, hybrid and hybrid's parts. Whether the composition is valid is
    :func:`get_retriever`'s to say."""
    composer, members = composition(name)
    parts = [composer]
    for member in members:
        parts += [part for part in retriever_parts(member) if part not in parts]
    return parts


def get_retriever(
    name: str,
    index: IndexReader,
    *,
    relevance: Mapping[str, float] | None = None,
    seed: int = 0,
    rrf_k: int = RRF_K,
    likelihood: Likelihood | None = None,
) -> Retriever:
    """Build a retriever over ``index`` by name (see the module docstring for the names). ``likelihood``: the
    language model of ``promptrank`` (default: the packaged SmolLM2 in this process)."""
    composer, named = composition(name)
    if composer == "hybrid":
        parts = tuple(named)
        if len(parts) < 2 or any(p.startswith("hybrid") for p in parts):
            raise ConfigError(f"'{name}': a hybrid needs two or more non-hybrid retrievers, e.g. hybrid:bm25+dense")
        if len(set(parts)) != len(parts) or len(parts) > MAX_HYBRID_PARTS:
            raise ConfigError(f"'{name}': a hybrid fuses {MAX_HYBRID_PARTS} different retrievers at most "
                              "(a repeated one only costs time)")
        if index.lexical.serves_hybrid and (name == "hybrid" or set(parts) == {"bm25", "dense"}):
            # the store fuses BM25 and dense in one round trip (RM3 needs term counts a Milvus store does not keep)
            return StoreHybridRetriever(index, k=rrf_k)
        members = [get_retriever(p, index, relevance=relevance, seed=seed, likelihood=likelihood) for p in parts]
        return HybridRetriever(index, members, k=rrf_k)
    if composer == "lightpal":
        from citesum.retrieve.lightpal import LightPALRetriever

        [base] = named
        if base.startswith("lightpal"):
            raise ConfigError(f"'{name}': the base of lightpal cannot be lightpal")
        return LightPALRetriever(index, get_retriever(base, index, relevance=relevance, seed=seed, rrf_k=rrf_k,
                                                      likelihood=likelihood))
    if composer == "promptrank":
        from citesum.retrieve.promptrank import PromptRankRetriever

        [base] = named
        if base.startswith("promptrank"):
            raise ConfigError(f"'{name}': the base of promptrank cannot be promptrank")
        return PromptRankRetriever(index, get_retriever(base, index, relevance=relevance, seed=seed, rrf_k=rrf_k),
                                   likelihood)
    if name == "bm25":
        return BM25Retriever(index)
    if name == "bm25-rm3":
        if not index.lexical.term_statistics:
            raise ConfigError("'bm25-rm3' reads each unit's term counts, which the local store keeps and this "
                              "index's store does not; use 'bm25' or 'hybrid'")
        return RM3Retriever(index)
    if name == "dense":
        return DenseRetriever(index)
    if name == "dense-prf":
        return DensePRFRetriever(index)
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
