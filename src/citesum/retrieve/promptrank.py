"""PromptRank (Khalifa et al., 2023): passage chains ranked by a language model's likelihood of the question
after them.

A chain p1 ... pn is scored by log P_LM(" <question>" | prompt), summed over the question's tokens, with the
paper's instruction (without its optional few-shot demonstrations) as the prompt::

    Document: <p1>

    Document: <p2>

    Review previous documents and ask some question.
    Question:

The question is the same for every chain of a query, so its summed log-probability ranks them. The search is
a beam search over hops, with these defaults:

* hop 1: the base retriever's best ``seeds`` (10) units, each a chain of one; the best ``beam`` (5) are kept;
* hop 2 (and each further hop up to ``hops``, 2): each kept chain is extended by every unit of the base's
  best ``pool`` (10) that is not in it yet and, when the index has a LightPAL passage graph (``citesum
  graph``), by its last unit's graph neighbours; the best ``beam`` of the new chains are kept.

This is PromptRank's shape adapted to corpora without hyperlinks: the paper's second hop follows the first
page's hyperlinks on Wikipedia; here the base's other best units stand in for them (so two units the base
ranks high can form a chain), and the graph's edges join them when there is a graph. Each passage is cut to
its first ``passage_tokens`` (256) tokens of the index's tokenizer. Units then rank by their best chain of the
last hop (a chain's units in chain order), the rest in the base's order.

A query costs at most ``seeds`` + ``beam`` x (``pool`` + graph edges) language-model calls: with SmolLM2-135M on
one CPU thread a query takes more than a minute where LightPAL's walk takes well under a millisecond (measured by
benchmarks/promptrank_odsum.py; docs/retrieval.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from citesum.errors import ConfigError
from citesum.index.store import IndexReader
from citesum.llm.likelihood import Likelihood, default_likelihood
from citesum.retrieve.base import Retriever, rank_scores, ranked_hits, top_k
from citesum.retrieve.lightpal import GRAPH_FILE, PassageGraph
from citesum.tokens import get_tokenizer
from citesum.types import Hit

INSTRUCTION = "Review previous documents and ask some question.\nQuestion:"
DEFAULT_SEEDS = 10
DEFAULT_BEAM = 5
DEFAULT_POOL = 10
DEFAULT_HOPS = 2
DEFAULT_PASSAGE_TOKENS = 256

Chain = tuple[int, ...]


def chain_prompt(passages: Sequence[str]) -> str:
    """The prompt that precedes the question: each passage as a document, then the instruction."""
    return "".join(f"Document: {text}\n\n" for text in passages) + INSTRUCTION


class PromptRankRetriever(Retriever):
    """A base retriever's best units reordered by the language model's likelihood of the question after chains
    of them (see the module docstring for the search and its defaults).

    Args:
        index: The index.
        base: The first-stage retriever (the paper's TF-IDF; ``promptrank`` alone uses BM25).
        likelihood: The language model; None for the packaged SmolLM2 in this process, loaded at the first query.
        graph: Neighbours for the second hop; None for the index's LightPAL graph when it has one.
    """

    def __init__(self, index: IndexReader, base: Retriever, likelihood: Likelihood | None = None,
                 graph: PassageGraph | None = None, *, seeds: int = DEFAULT_SEEDS, beam: int = DEFAULT_BEAM,
                 pool: int = DEFAULT_POOL, hops: int = DEFAULT_HOPS,
                 passage_tokens: int = DEFAULT_PASSAGE_TOKENS) -> None:
        super().__init__(index)
        if min(seeds, beam, pool, hops, passage_tokens) < 1:
            raise ConfigError("PromptRank needs seeds, beam, pool, hops and passage_tokens >= 1, got "
                              f"{seeds}, {beam}, {pool}, {hops} and {passage_tokens}")
        self.base = base
        self._likelihood = likelihood
        self.graph = graph if graph is not None else stored_graph(index)
        self.seeds, self.beam, self.pool, self.hops, self.passage_tokens = seeds, beam, pool, hops, passage_tokens
        self.name = f"promptrank:{base.name}"
        self.scores_reach_the_summarizer = base.scores_reach_the_summarizer
        self._tokenizer = get_tokenizer(index.settings.tokenizer)

    @property
    def likelihood(self) -> Likelihood:
        if self._likelihood is None:
            self._likelihood = default_likelihood()
        return self._likelihood

    def ranking(self, query: str) -> np.ndarray:
        """All units: those of the last hop's chains in the order of their best chain, then the base order."""
        base_scores = self.base.scores(query)
        n = len(base_scores)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        base_order = top_k(base_scores, n)
        pool = base_order[: self.pool].tolist()
        texts: dict[int, str] = {}  # each unit cut once per query, however many chains hold it
        ranked = self._rank([(int(i),) for i in base_order[: self.seeds]], query, texts)
        for _ in range(self.hops - 1):
            extended = [chain + (unit,) for chain in ranked[: self.beam] for unit in self._extensions(chain, pool)]
            if not extended:  # an index of one unit: nothing to add
                break
            ranked = self._rank(extended, query, texts)
        chosen = np.fromiter(dict.fromkeys(unit for chain in ranked for unit in chain), dtype=np.int64)
        return np.concatenate([chosen, base_order[~np.isin(base_order, chosen)]])

    def _extensions(self, chain: Chain, pool: list[int]) -> list[int]:
        """The units that may follow ``chain``: the base's best, then its last unit's graph neighbours."""
        neighbours = self.graph.neighbors[chain[-1]].tolist() if self.graph is not None else []
        return [unit for unit in dict.fromkeys(pool + neighbours) if unit >= 0 and unit not in chain]

    def _rank(self, chains: list[Chain], query: str, texts: dict[int, str]) -> list[Chain]:
        """``chains`` best first by the likelihood of the question after them (ties keep their order)."""
        unread = sorted({unit for chain in chains for unit in chain} - texts.keys())
        for unit, passage in zip(unread, self.index.passages.take(unread)):
            texts[unit] = self._tokenizer.truncate(passage.text.strip(), self.passage_tokens)
        prompts = [chain_prompt([texts[unit] for unit in chain]) for chain in chains]
        scores = np.asarray(self.likelihood.log_likelihoods(prompts, " " + query.strip()), dtype=np.float64)
        return [chains[i] for i in top_k(scores, len(chains))]

    def scores(self, query: str) -> np.ndarray:
        return rank_scores(self.ranking(query))

    def _retrieve(self, query: str, k: int) -> list[Hit]:
        return ranked_hits(self.index.passages, self.ranking(query)[:k].tolist(), self.name)


def stored_graph(index: IndexReader) -> PassageGraph | None:
    """The index's LightPAL graph, or None when it has none (a stale or unreadable one is an error that says how
    to rebuild it)."""
    return PassageGraph.load(index) if (Path(index.path) / GRAPH_FILE).exists() else None
