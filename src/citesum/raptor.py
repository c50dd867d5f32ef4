"""RAPTOR (Sarthi et al., 2024): a tree of cluster summaries over an index's units, read as a collapsed tree.

Building (``citesum tree``): the index's units are the leaves. Their embeddings are clustered; each cluster gets
a summary (:mod:`citesum.summarize.statements`: an LLM's cited bullets, or offline its most central
sentences), which becomes a node one level up; the nodes are embedded and clustered again, up to ``levels``
levels or until a level has too few nodes to cluster. Clustering follows RAPTOR: Gaussian mixtures with the
number of components chosen by BIC, soft membership (a text joins every cluster whose probability reaches
0.1), and a cluster whose texts exceed the summarizer's input limit is clustered again on its own. One
change by default: the vectors are reduced by PCA, not UMAP (``ClusterOptions(reduction="umap")`` is RAPTOR's
own way, extra ``umap``). Both only make a 384-768-dimensional space small enough for a mixture of Gaussians.
PCA needs scikit-learn alone and takes a fraction of a second; UMAP brings numba and its compile time, and is
seeded here (RAPTOR's code does not seed it), which also keeps it on one thread. ``benchmarks/raptor_reduction.py``
measures the two. The tree is stored beside the index
(``DIR/raptor-tree.npz``, replaced atomically) with the index generation it describes.

Reading (``--retriever raptor``): every node of every level, leaves included, is ranked by cosine with the query
and added in that order while it fits in the budget (RAPTOR's "collapsed tree"). A node's statements keep the
documents they were written from, so the summarizer cites documents, never nodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from citesum.embed import Embedder, get_embedder
from citesum.errors import ConfigError, MissingExtraError
from citesum.index.artifacts import save_arrays
from citesum.index.cosine import cosine_scores
from citesum.index.store import IndexReader, ProgressFn
from citesum.pack import Piece, pack_pieces
from citesum.summarize.statements import StatementWriter, WriteReport, statement_rows, statements_of
from citesum.tokens import Tokenizer, get_tokenizer
from citesum.types import Context, Statement

TREE_FILE = "raptor-tree.npz"
#: RAPTOR's settings: reduce to 10 dimensions, membership threshold 0.1, at most 50 clusters per clustering,
#: 3,500 tokens of input per summary, summaries of about 100 tokens
DEFAULT_DIMENSIONS = 10
DEFAULT_MEMBERSHIP = 0.1
DEFAULT_MAX_CLUSTERS = 50
DEFAULT_CLUSTER_TOKENS = 3_500
DEFAULT_SUMMARY_TOKENS = 100
DEFAULT_LEVELS = 3
#: the search over the number of clusters stops once this many larger mixtures have not lowered BIC (RAPTOR
#: tries every number up to the maximum; past the minimum, BIC rises with the parameters' penalty)
BIC_PATIENCE = 10


REDUCTIONS = ("pca", "umap")


def _gaussian_mixture() -> type:
    try:
        from sklearn.mixture import GaussianMixture  # type: ignore[import-untyped]
    except ImportError as exc:
        raise MissingExtraError("RAPTOR's clustering", "raptor", "scikit-learn") from exc
    return GaussianMixture


def _reduce(vectors: np.ndarray, dimensions: int, reduction: str, stage: str, seed: int) -> np.ndarray:
    """``vectors`` in ``dimensions`` dimensions: PCA, or UMAP as RAPTOR runs it (cosine, sqrt(n - 1)
    neighbours in the global stage, 10 in the local one)."""
    if reduction == "pca":
        from sklearn.decomposition import PCA  # type: ignore[import-untyped]

        return PCA(n_components=dimensions, svd_solver="full").fit_transform(vectors)
    try:
        import umap  # type: ignore[import-untyped]
    except ImportError as exc:
        raise MissingExtraError("RAPTOR's UMAP reduction", "umap", "umap-learn") from exc
    neighbours = max(2, int((len(vectors) - 1) ** 0.5)) if stage == "global" else 10
    reducer = umap.UMAP(n_neighbors=min(neighbours, len(vectors) - 1), n_components=dimensions, metric="cosine",
                        random_state=seed, n_jobs=1)  # a seed makes UMAP run on one thread anyway
    return np.asarray(reducer.fit_transform(vectors))


@dataclass(frozen=True)
class ClusterOptions:
    dimensions: int = DEFAULT_DIMENSIONS
    membership: float = DEFAULT_MEMBERSHIP
    max_clusters: int = DEFAULT_MAX_CLUSTERS
    max_tokens: int = DEFAULT_CLUSTER_TOKENS
    seed: int = 0
    reduction: str = "pca"

    def __post_init__(self) -> None:
        if self.dimensions < 1 or self.max_clusters < 1 or self.max_tokens < 1 or not 0 < self.membership <= 1:
            raise ConfigError("clustering needs dimensions, max_clusters and max_tokens >= 1 and 0 < membership <= 1")
        if self.reduction not in REDUCTIONS:
            raise ConfigError(f"unknown reduction '{self.reduction}'; choose one of {', '.join(REDUCTIONS)}")


def cluster(vectors: np.ndarray, token_counts: np.ndarray, options: ClusterOptions = ClusterOptions()
            ) -> list[np.ndarray]:
    """Soft clusters of the rows of ``vectors`` (positions, ascending), each within ``options.max_tokens``
    tokens unless it is one text. Every row is in at least one cluster (its most probable one).

    RAPTOR's two stages: a global mixture over all rows, then a local one within each global cluster; a
    cluster still over the token limit is clustered again on its own, or, when the mixtures cannot split it,
    cut in reading order."""
    out: list[np.ndarray] = []
    for global_cluster in _mixture_clusters(vectors, options, "global"):
        for local in _mixture_clusters(vectors[global_cluster], options, "local"):
            positions = global_cluster[local]
            if token_counts[positions].sum() <= options.max_tokens or len(positions) == 1:
                out.append(positions)
            elif len(positions) < len(vectors):
                out += [positions[inner] for inner in cluster(vectors[positions], token_counts[positions], options)]
            else:
                out += _within_tokens(positions, token_counts, options.max_tokens)
    return out


def _mixture_clusters(vectors: np.ndarray, options: ClusterOptions, stage: str) -> list[np.ndarray]:
    """One stage: a Gaussian mixture over the reduced rows, its size by BIC, soft membership (all rows in one
    cluster when there are too few to fit a mixture in the reduced space: RAPTOR's rule)."""
    n = len(vectors)
    if n <= options.dimensions + 1:
        return [np.arange(n)] if n else []
    GaussianMixture = _gaussian_mixture()
    reduced = _reduce(vectors, min(options.dimensions, n - 2), options.reduction, stage, options.seed)
    best: tuple[float, int, Any] | None = None
    for k in range(1, min(options.max_clusters, n - 1) + 1):
        if best is not None and k - best[1] > BIC_PATIENCE:
            break  # BIC has not improved for a while: larger mixtures only overfit more (and cost the most)
        mixture = GaussianMixture(n_components=k, random_state=options.seed).fit(reduced)
        bic = float(mixture.bic(reduced))
        if best is None or bic < best[0]:
            best = (bic, k, mixture)
    assert best is not None
    probabilities = best[2].predict_proba(reduced)
    members = probabilities >= options.membership
    members[np.arange(n), probabilities.argmax(axis=1)] = True
    return [positions for positions in (np.flatnonzero(column) for column in members.T) if len(positions)]


def _within_tokens(positions: np.ndarray, token_counts: np.ndarray, max_tokens: int) -> list[np.ndarray]:
    """``positions`` cut into consecutive runs of at most ``max_tokens`` tokens (a longer text alone)."""
    runs: list[list[int]] = [[]]
    used = 0
    for position in positions.tolist():
        if runs[-1] and used + int(token_counts[position]) > max_tokens:
            runs.append([])
            used = 0
        runs[-1].append(position)
        used += int(token_counts[position])
    return [np.asarray(run, dtype=np.int64) for run in runs if run]


@dataclass(frozen=True)
class TreeNode:
    """A summary node: its level (1 = summarizes leaves), its children (unit positions of the index at level 1,
    node numbers of the tree above), and what it says."""

    level: int
    children: tuple[int, ...]
    statements: tuple[Statement, ...]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.statements)


@dataclass(frozen=True)
class RaptorTree:
    nodes: tuple[TreeNode, ...]
    #: one L2-normalised vector per node, by the index's embedder
    vectors: np.ndarray
    generation: int
    writer: str

    def save(self, index_path: str | Path) -> Path:
        """Into the index folder: a temporary file, fsynced, renamed over the old tree (an interrupted write
        leaves the previous tree intact)."""
        nodes = [{"level": n.level, "children": list(n.children),
                  "statements": statement_rows(n.statements)} for n in self.nodes]
        return save_arrays(Path(index_path) / TREE_FILE, vectors=self.vectors.astype(np.float32),
                           generation=self.generation, writer=self.writer, nodes=json.dumps(nodes))

    @classmethod
    def load(cls, index: IndexReader) -> "RaptorTree":
        """The tree stored with ``index``; a ConfigError naming the fix when it is missing, damaged or stale."""
        path = Path(index.path) / TREE_FILE
        build = f"build it with: citesum tree --index {index.path}"
        if not path.exists():
            raise ConfigError(f"the index {index.path} has no RAPTOR tree; {build}")
        try:
            with np.load(path) as stored:
                nodes = tuple(TreeNode(int(n["level"]), tuple(n["children"]), statements_of(n["statements"]))
                              for n in json.loads(str(stored["nodes"])))
                tree = cls(nodes, stored["vectors"], int(stored["generation"]), str(stored["writer"]))
        except (OSError, KeyError, ValueError, TypeError) as exc:
            raise ConfigError(f"{path}: unreadable RAPTOR tree ({type(exc).__name__}: {exc}); {build}") from exc
        if tree.generation != index.generation or len(tree.vectors) != len(tree.nodes):
            raise ConfigError(f"the RAPTOR tree in {path} was built for index generation {tree.generation}; the "
                              f"index is at generation {index.generation}: rebuild it with: "
                              f"citesum tree --index {index.path}")
        return tree

    @property
    def levels(self) -> int:
        return max((n.level for n in self.nodes), default=0)


def build_tree(index: IndexReader, writer: StatementWriter, *, levels: int = DEFAULT_LEVELS,
               summary_tokens: int = DEFAULT_SUMMARY_TOKENS, options: ClusterOptions = ClusterOptions(),
               embedder: Embedder | None = None, tokenizer: Tokenizer | None = None,
               progress: ProgressFn | None = None, report: WriteReport | None = None) -> RaptorTree:
    """The tree of ``index`` (see the module docstring); ``writer`` writes each cluster's statements."""
    if levels < 1 or summary_tokens < 1:
        raise ConfigError(f"levels and summary_tokens must be >= 1, got {levels} and {summary_tokens}")
    embedder = embedder or get_embedder(index.settings.embedder)
    tokenizer = tokenizer or get_tokenizer(index.settings.tokenizer)
    with index.pinned() as view:
        generation = view.generation
        passages = list(view.passages)
        layer: list[tuple[Statement, ...]] = [(Statement(p.text, (p.document_id,)),) for p in passages]
        vectors = np.asarray(view.vectors, dtype=np.float32)
        counts = np.array([p.token_count for p in passages], dtype=np.int64)
    nodes: list[TreeNode] = []
    node_vectors: list[np.ndarray] = []
    first = 0  # the tree's number of the current layer's first node (leaves: positions, numbered apart)
    for level in range(1, levels + 1):
        if len(layer) <= options.dimensions + 1 and level > 1:
            break  # too few nodes left to cluster: they are the top of the tree
        clusters = cluster(vectors, counts, options)
        statements = writer.write([[s for i in c for s in layer[i]] for c in clusters],
                                  [summary_tokens] * len(clusters), report)
        offset = 0 if level == 1 else first
        made = [TreeNode(level, tuple(int(i) + offset for i in c), said) for c, said in zip(clusters, statements)
                if said]
        if progress:
            progress(f"level {level}", len(made), len(made))
        if not made:
            break
        texts = [node.text for node in made]
        vectors = np.asarray(embedder.encode_documents(texts), dtype=np.float32)
        first = len(nodes)
        nodes += made
        node_vectors.append(vectors)
        layer = [node.statements for node in made]
        counts = np.array([tokenizer.count(text) for text in texts], dtype=np.int64)
        if len(made) == 1:
            break  # the root
    stacked = np.vstack(node_vectors) if node_vectors else np.zeros((0, 0), dtype=np.float32)
    return RaptorTree(tuple(nodes), stacked, generation, getattr(writer, "name", type(writer).__name__))


def raptor_context(query: str, index: IndexReader, tree: RaptorTree | None = None, *, budget: int,
                   embedder: Embedder | None = None, tokenizer: Tokenizer | None = None,
                   stop_at_first_overflow: bool = False) -> Context:
    """The collapsed tree: leaves and summary nodes ranked together by cosine with ``query``, added in that order
    while they fit in ``budget`` tokens (order ``raptor``)."""
    embedder = embedder or get_embedder(index.settings.embedder)
    with index.pinned() as view:
        tree = tree if tree is not None else RaptorTree.load(view)
        if tree.generation != view.generation:
            raise ConfigError(f"the RAPTOR tree was built for index generation {tree.generation}, the index is at "
                              f"{view.generation}: rebuild it with: citesum tree --index {view.path}")
        query_vector = embedder.encode_query(query)
        passages = list(view.passages)  # the collapsed tree ranks every unit and node
        leaf_scores = cosine_scores(view.vectors, query_vector) if passages else np.zeros(0)
        node_scores = (cosine_scores(tree.vectors, query_vector) if len(tree.nodes)
                       else np.zeros(0, dtype=np.float32))
        scores = np.concatenate([leaf_scores, node_scores])
        pieces: list[Piece] = []
        for i in np.argsort(-scores, kind="stable").tolist():
            score = float(scores[i])
            if i < len(passages):
                pieces.append((passages[i], score))
            else:
                pieces += [(statement, score) for statement in tree.nodes[i - len(passages)].statements]
        return pack_pieces(view, pieces, budget, "raptor", tokenizer, stop_at_first_overflow=stop_at_first_overflow)


def tree_summary(tree: RaptorTree) -> dict[str, object]:
    """What ``citesum tree`` reports: nodes per level and their mean statements."""
    per_level = {level: [n for n in tree.nodes if n.level == level] for level in range(1, tree.levels + 1)}
    return {"generation": tree.generation, "writer": tree.writer, "nodes": len(tree.nodes),
            "levels": {str(level): {"nodes": len(nodes),
                                    "mean_children": round(float(np.mean([len(n.children) for n in nodes])), 2)}
                       for level, nodes in per_level.items() if nodes}}


__all__ = ["ClusterOptions", "RaptorTree", "TREE_FILE", "TreeNode", "build_tree", "cluster", "raptor_context",
           "tree_summary"]
