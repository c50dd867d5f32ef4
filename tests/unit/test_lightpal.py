from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from citesum.errors import ConfigError
from citesum.index.store import Index, IndexReader, IndexSettings
from citesum.retrieve import get_retriever
from citesum.retrieve.base import Retriever
from citesum.retrieve.lightpal import (
    GRAPH_FILE, LightPALRetriever, PassageGraph, build_passage_graph, personalized_pagerank, transition_matrix)
from citesum.types import Document


class FixedScores(Retriever):
    """A base retriever whose scores are given: the test is about what LightPAL does with them."""

    name = "fixed"

    def __init__(self, index: Index, scores: Sequence[float]) -> None:
        super().__init__(index)
        self._scores = np.asarray(scores, dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        return self._scores


class ScriptedScorer:
    """A context scorer with preset scores per (context, candidate) text; records what it was asked."""

    name = "scripted"

    def __init__(self, preferred: dict[str, str]) -> None:
        self.preferred = preferred  # context text -> the candidate text it scores highest
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, context: str, candidates: Sequence[str]) -> np.ndarray:
        self.calls.append((context, list(candidates)))
        return np.array([1.0 if c == self.preferred.get(context) else 0.0 for c in candidates])


def _index(path: Path, texts: Sequence[str]) -> Index:
    index = Index.create(path, IndexSettings(unit="document"))
    index.add([Document(id=f"d{i}", title="", text=t) for i, t in enumerate(texts)])
    return index


def test_pagerank_matches_the_hand_computed_two_node_walk() -> None:
    # 0 <-> 1, restart at 0, follow an edge with probability 0.2:
    # r0 = 0.8 + 0.2 r1, r1 = 0.2 r0  =>  r0 = 0.8 / 0.96, r1 = 0.16 / 0.96
    rank = personalized_pagerank(transition_matrix(np.array([[1], [0]])), [0], alpha=0.2)
    assert rank == pytest.approx([0.8 / 0.96, 0.16 / 0.96], abs=1e-9)


def test_pagerank_solves_the_linear_system_with_dangling_units() -> None:
    neighbors = np.array([[1, 2], [2, -1], [-1, -1], [0, 2]])  # unit 2 has no edges
    alpha, teleport = 0.5, [0, 3]
    rank = personalized_pagerank(transition_matrix(neighbors), teleport, alpha=alpha)
    # r = (1 - a) p + a (T^T r + mass of dangling units * p), solved exactly
    T = np.array([[0, .5, .5, 0], [0, 0, 1, 0], [0, 0, 0, 0], [.5, 0, .5, 0]])
    p = np.array([.5, 0, 0, .5])
    system = np.eye(4) - alpha * (T.T + np.outer(p, [0, 0, 1, 0]))
    assert rank == pytest.approx(np.linalg.solve(system, (1 - alpha) * p), abs=1e-9)
    assert rank.sum() == pytest.approx(1.0)


def test_lightpal_takes_the_base_top_then_the_walks_best(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", [f"text number {i}" for i in range(8)])
    # the base ranks 0 > 1 > 2 > ...; unit 7 (base: last) is linked from both initial units
    base = FixedScores(index, [8, 7, 6, 5, 4, 3, 2, 1])
    neighbors = np.array([[7, 6], [7, 5], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1], [0, 1]])
    graph = PassageGraph(neighbors, index.generation, "hand", 2)
    lightpal = LightPALRetriever(index, base, graph, k=3)
    ranking = lightpal.ranking("q", 3)
    # ceil(0.6 * 3) = 2 from the base, then the unit both of them link to, then the rest in base order
    assert ranking.tolist() == [0, 1, 7, 2, 3, 4, 5, 6]
    hits = lightpal.retrieve("q", 3)
    assert [h.passage.document_id for h in hits] == ["d0", "d1", "d7"] and [h.rank for h in hits] == [1, 2, 3]
    scores = lightpal.scores("q")
    assert np.argsort(-scores).tolist() == ranking.tolist()


def test_lightpal_with_k_at_most_the_initial_share_is_the_base(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", [f"text number {i}" for i in range(4)])
    base = FixedScores(index, [1, 4, 3, 2])
    graph = PassageGraph(np.array([[3], [3], [3], [0]]), index.generation, "hand", 1)
    assert LightPALRetriever(index, base, graph).ranking("q", 1).tolist() == [1, 2, 3, 0]


def test_graph_edges_come_from_the_nearest_candidates_ranked_by_the_scorer(tmp_path: Path) -> None:
    texts = ["the reservoir water level fell", "reservoir water level is low", "water level of the reservoir",
             "bus fares for students", "students ride buses free"]
    index = _index(tmp_path / "ix", texts)
    by_cosine = build_passage_graph(index, None, candidates=2, edges=1, neighbours="cosine")
    assert by_cosine.scorer == "cosine" and by_cosine.neighbors.shape == (5, 1)
    assert all(row[0] != i for i, row in enumerate(by_cosine.neighbors))  # no self-loops
    assert set(by_cosine.neighbors[3]) <= {4} and set(by_cosine.neighbors[0]) <= {1, 2}
    scorer = ScriptedScorer({texts[0]: texts[2], texts[1]: texts[0]})
    scored = build_passage_graph(index, scorer, candidates=2, edges=1)
    assert scored.scorer == "scripted"
    asked = dict(scorer.calls)
    assert set(asked[texts[0]]) == {texts[1], texts[2]}  # the 2 nearest by cosine are the candidates
    assert scored.neighbors[0, 0] == 2 and scored.neighbors[1, 0] == 0  # the scorer picks among them


def test_a_unit_as_a_bm25_query_is_its_text_or_its_heaviest_terms(tmp_path: Path) -> None:
    texts = ["the reservoir water level fell and the reservoir dried", "reservoir water level is low",
             "bus fares for students", "students ride buses free, free buses", "water water water"]
    lexical = _index(tmp_path / "ix", texts).lexical
    whole = lexical.similar_units(range(5), max_terms=1000)
    assert whole is not None and whole.shape == (5, 5)
    for i, text in enumerate(texts):
        np.testing.assert_allclose(whole[i], lexical.scores(text), rtol=1e-5)
    # cut to its 2 heaviest terms, read off the BM25 matrix, each repeated as often as it occurs in the unit
    cut = lexical.similar_units([0, 3], max_terms=2)
    for row, unit in enumerate([0, 3]):
        ids, counts = lexical.unit_term_counts(unit)
        own = np.array([lexical.term_scores([lexical.terms[t]])[unit] for t in ids])
        heaviest = np.argsort(-own, kind="stable")[:2]
        query = [lexical.terms[ids[h]] for h in heaviest for _ in range(counts[h])]
        np.testing.assert_allclose(cut[row], lexical.term_scores(query), rtol=1e-5)
    assert not np.allclose(cut[0], whole[0])  # the cut changed the query


def test_bm25_neighbours_link_units_that_share_terms_and_nothing_else(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["reservoir water level fell", "the reservoir level is low", "bus fares for students",
             "students ride buses for free", "an unrelated sentence entirely", "bus fares rise again"]
    index = _index(tmp_path / "ix", texts)
    graph = build_passage_graph(index, None, candidates=3, edges=2, neighbours="bm25")
    assert graph.scorer == "bm25" and graph.neighbors.shape == (6, 2)
    assert set(graph.neighbors[0]) == {1, -1} and set(graph.neighbors[2]) == {3, 5}
    assert list(graph.neighbors[4]) == [-1, -1]  # shares no term with any unit: no edge at all
    scorer = ScriptedScorer({texts[2]: texts[5]})
    scored = build_passage_graph(index, scorer, candidates=3, edges=1, neighbours="bm25")
    assert scored.scorer == "scripted@bm25" and set(dict(scorer.calls)[texts[2]]) == {texts[3], texts[5]}
    assert scored.neighbors[2, 0] == 5  # the scorer ranks the BM25 neighbours
    with pytest.raises(ConfigError, match="neighbours must be one of"):
        build_passage_graph(index, None, neighbours="jaccard")  # type: ignore[arg-type]

    class NoTermCounts:  # a Milvus store's BM25: scores, no term counts
        term_statistics, serves_hybrid = False, False

    monkeypatch.setattr(IndexReader, "lexical", property(lambda self: NoTermCounts()))
    with pytest.raises(ConfigError, match="link the units by cosine"):
        build_passage_graph(index, None, neighbours="bm25")
    assert build_passage_graph(index, None, candidates=3, edges=2).scorer == "cosine"  # the default there


def test_graph_is_stored_with_the_index_and_refused_when_stale(tmp_path: Path) -> None:
    index = _index(tmp_path / "ix", ["alpha beta gamma", "beta gamma delta", "gamma delta epsilon"])
    with pytest.raises(ConfigError, match="citesum graph --index"):
        get_retriever("lightpal", index)
    graph = build_passage_graph(index, None, candidates=2, edges=1)
    graph.save(index.path)
    loaded = PassageGraph.load(Index.open(index.path))
    assert np.array_equal(loaded.neighbors, graph.neighbors) and loaded.scorer == "bm25"  # the local store's default
    assert get_retriever("lightpal:dense", index).name == "lightpal:dense"
    index.add([Document(id="new", title="", text="zeta eta theta")])
    with pytest.raises(ConfigError, match="generation .* rebuild"):
        get_retriever("lightpal", Index.open(index.path))
    with pytest.raises(ConfigError, match="cannot be lightpal"):
        get_retriever("lightpal:lightpal", index)
    with pytest.raises(ConfigError, match="built for another index"):  # a graph handed over directly
        LightPALRetriever(index, get_retriever("bm25", index), graph)


def test_an_interrupted_graph_write_keeps_the_previous_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = _index(tmp_path / "ix", ["alpha beta gamma", "beta gamma delta", "gamma delta epsilon"])
    first = PassageGraph(np.array([[1], [2], [0]]), index.generation, "cosine", 2)
    first.save(index.path)

    def killed(fd: int) -> None:
        raise KeyboardInterrupt  # the process dies after writing, before the rename

    monkeypatch.setattr("citesum.index.artifacts.os.fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        PassageGraph(np.array([[2], [0], [1]]), index.generation, "cosine", 2).save(index.path)
    monkeypatch.undo()
    assert PassageGraph.load(index).neighbors.tolist() == [[1], [2], [0]]
    (index.path / GRAPH_FILE).write_bytes(b"not a graph")
    with pytest.raises(ConfigError, match="unreadable LightPAL graph"):
        PassageGraph.load(index)


def test_a_packed_context_takes_the_units_the_walk_adds(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    from citesum.pack import PackOptions
    from citesum.summarize import build_context

    index = Index.create(tmp_path / "ix", IndexSettings(unit="document"))
    index.add(haystack.documents)
    query = "How much did the Lakemont reservoir fall?"
    options = PackOptions(budget=600, order="score")
    base_context = build_context(query, index, retriever="bm25", options=options)
    held = [block.document_id for block in base_context.blocks]
    assert 3 <= len(held) < len(haystack.documents)
    # every unit links to one document that BM25 leaves out of the context: the walk must bring it in
    owners = [p.document_id for p in index.passages]
    target = next(i for i, d in enumerate(owners) if d not in held)
    neighbors = np.array([[target] if i != target else [0] for i in range(len(owners))])
    PassageGraph(neighbors, index.generation, "hand", 1).save(index.path)
    context = build_context(query, index, retriever="lightpal", options=options)
    walked = [block.document_id for block in context.blocks]
    # K is what the context holds (one unit per document here): ceil(0.6 K) units from BM25's top, then the walk's
    initial = -(-3 * len(held) // 5)
    assert walked[:initial] == held[:initial] and walked[initial] == owners[target]


def test_the_lm_scorer_without_llama_cpp_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from citesum.errors import MissingExtraError
    from citesum.retrieve.lightpal import LanguageModelContextScorer

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # what an install without the extra looks like
    with pytest.raises(MissingExtraError, match=r"pip install 'citesum\[llamacpp\]'"):
        LanguageModelContextScorer()
