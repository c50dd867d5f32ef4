from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from citesum.demo.haystack import SUBTOPICS
from citesum.errors import ConfigError
from citesum.index.store import Index, IndexSettings
from citesum.retrieve import get_retriever
from citesum.retrieve.base import Retriever, top_k
from citesum.retrieve.fusion import HybridRetriever
from citesum.types import Document


@pytest.fixture(scope="module")
def haystack_index(tmp_path_factory: pytest.TempPathFactory, haystack) -> Index:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path_factory.mktemp("ix") / "ix", IndexSettings())
    index.add(haystack.documents)
    return index


def _precision_at(index: Index, name: str, haystack, k: int = 5) -> float:  # type: ignore[no-untyped-def]
    retriever = get_retriever(name, index)
    found = 0
    for subtopic, query in haystack.queries.items():
        relevant = haystack.relevance(subtopic)
        found += sum(1 for doc_id, _ in retriever.rank_documents(query, k) if doc_id in relevant)
    return found / (k * len(haystack.queries))


def test_exact_fact_query_finds_its_documents(haystack_index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    query = "How much did the Lakemont reservoir fall?"
    gold = set(haystack.gold["water-reservoir"])
    for name in ("bm25", "bm25-rm3", "dense", "dense-prf", "hybrid", "keywords"):
        top = [doc_id for doc_id, _ in get_retriever(name, haystack_index).rank_documents(query, 3)]
        assert top[0] in gold, name


def test_retrievers_beat_random_on_subtopic_queries(haystack_index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    base_rate = np.mean([len(haystack.relevance(s)) / len(haystack.documents) for s in SUBTOPICS])
    random_precision = _precision_at(haystack_index, "random", haystack)
    for name in ("bm25", "bm25-rm3", "dense", "dense-prf", "hybrid", "hybrid:bm25-rm3+dense-prf"):
        assert _precision_at(haystack_index, name, haystack) > max(base_rate, random_precision), name


def test_hits_are_ranked_and_tied_to_passages(haystack_index: Index) -> None:
    hits = get_retriever("bm25", haystack_index).retrieve("desalination plant Port Ardeen", k=4)
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    assert all("desalination" in h.passage.text for h in hits)
    assert hits[0].retriever == "bm25"


def test_k_larger_than_index_and_empty_query(haystack_index: Index) -> None:
    assert len(get_retriever("dense", haystack_index).retrieve("water", k=10_000)) == len(haystack_index)
    scores = get_retriever("bm25", haystack_index).scores("the and of")  # only stop words
    assert not scores.any()
    assert not get_retriever("keywords", haystack_index).scores("").any()


def test_hybrid_is_reciprocal_rank_fusion(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings(embedder="test-hashing"))
    index.update([Document(id=i, title=i, text=t) for i, t in
                  [("a", "apple pie recipe"), ("b", "apple orchard"), ("c", "pie crust")]], embedder=hashing_embedder)

    class Fixed(Retriever):  # retrievers with known rankings; RRF is the unit under test
        def __init__(self, name: str, scores: list[float]) -> None:
            super().__init__(index)
            self.name, self._scores = name, np.array(scores, dtype=np.float32)

        def scores(self, query: str) -> np.ndarray:
            return self._scores

    hybrid = HybridRetriever(index, [Fixed("x", [3, 2, 1]), Fixed("y", [1, 3, 2])], k=60)
    expected = [1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62]
    np.testing.assert_allclose(hybrid.scores("q"), expected, rtol=1e-6)
    assert [h.passage.document_id for h in hybrid.retrieve("q", 3)] == ["b", "a", "c"]


def test_keywords_score_is_share_of_query_keywords(haystack_index: Index) -> None:
    retriever = get_retriever("keywords", haystack_index)
    scores = retriever.scores("reservoir capacity unicorns")
    texts = [p.text.lower() for p in haystack_index.passages]
    for score, text in zip(scores, texts):
        expected = (("reservoir" in text) + ("capacity" in text)) / 3
        assert score == pytest.approx(expected)


def test_random_is_seeded_and_oracle_reads_relevance(haystack_index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    a = get_retriever("random", haystack_index, seed=1).scores("q")
    np.testing.assert_array_equal(a, get_retriever("random", haystack_index, seed=1).scores("q"))
    assert not np.array_equal(a, get_retriever("random", haystack_index, seed=2).scores("q"))
    relevance = haystack.relevance("housing")
    ranked = get_retriever("oracle", haystack_index, relevance=relevance).rank_documents("anything")
    grades = [relevance.get(doc_id, 0) for doc_id, _ in ranked]
    assert grades == sorted(grades, reverse=True) and grades[0] == max(relevance.values())


def test_registry_errors() -> None:
    with pytest.raises(ConfigError, match="bm25, bm25-rm3, dense, dense-prf, hybrid, keywords, lightpal, oracle, promptrank, random"):
        get_retriever("splade", None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="gold relevance"):
        get_retriever("oracle", None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="two or more"):
        get_retriever("hybrid:bm25", None)  # type: ignore[arg-type]


def test_top_k_breaks_ties_by_position() -> None:
    scores = np.array([1.0, 3.0, 3.0, 2.0, 3.0], dtype=np.float32)
    assert top_k(scores, 2).tolist() == [1, 2]
    assert top_k(scores, 4).tolist() == [1, 2, 4, 3]
    assert top_k(scores, 0).tolist() == []
    # against a plain sort, on scores with many ties (a lexical score leaves most units at 0) and without
    rng = np.random.default_rng(1)
    for trial in range(200):
        n = int(rng.integers(1, 60))
        scores = (rng.integers(0, 4, n) if trial % 2 else rng.random(n)).astype(np.float32)
        for k in (1, 3, n - 1, n, n + 5):
            expected = sorted(range(n), key=lambda i: (-scores[i], i))[: max(k, 0)]
            assert top_k(scores, k).tolist() == expected

    # long arrays, where the k best are first bounded through a sample: continuous scores, few distinct values
    # (ties across the bound), mostly 0 (a lexical score), and a best score shared by more than k units
    for trial in range(40):
        n = int(rng.integers(5_000, 60_000))
        kind = trial % 4
        if kind == 0:
            scores = rng.random(n)
        elif kind == 1:
            scores = rng.integers(0, 50, n).astype(np.float64)
        elif kind == 2:
            scores = np.where(rng.random(n) < 0.03, rng.random(n), 0.0)
        else:
            scores = np.where(rng.random(n) < 0.001, 2.0, rng.random(n))
        scores = scores.astype(np.float32)
        expected_order = np.argsort(-scores, kind="stable")
        # k up to n / 388, the largest the sampled bound is used for, where it holds few more units than k
        for k in (1, 10, 12, 40, 97, 100, n // 388):
            assert top_k(scores, k).tolist() == expected_order[:k].tolist(), (kind, n, k)


def test_documents_score_the_sum_of_their_best_passages() -> None:
    from citesum.retrieve.base import aggregate_documents

    owners = np.array([0, 2, 0, 0, 1, 0, 2])  # units of documents a, b, c, interleaved
    scores = np.array([1.0, 2.0, 1.0, 1.0, 2.5, 1.0, 0.2], dtype=np.float32)
    ids = ["a", "b", "c", "d"]  # "d" has no unit: not ranked
    assert aggregate_documents(owners, ids, scores, None, 3) == [("a", 3.0), ("b", 2.5), ("c", pytest.approx(2.2))]
    assert aggregate_documents(owners, ids, scores, 2, 1) == [("b", 2.5), ("c", 2.0)]  # MaxP
    tied = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], dtype=np.float32)
    assert [d for d, _ in aggregate_documents(owners, ids, tied, None, 1)] == ["a", "b", "c"]  # collection order


def test_rm3_expands_the_query_with_weighted_feedback_terms(tmp_path: Path, hashing_embedder) -> None:  # type: ignore[no-untyped-def]
    """RM3 as Anserini runs it, checked by hand: the relevance model of the top 2 units, its 3 heaviest terms,
    interpolated half and half with the query, then one weighted BM25 query."""
    from citesum.retrieve.feedback import RM3Retriever

    index = Index.create(tmp_path / "ix", IndexSettings(embedder="test-hashing"))
    texts = {"a": "reservoir drought water shortage", "b": "reservoir drought rationing", "c": "drought rationing",
             "d": "football match results", "e": "shortage rationing"}
    # 25 more units: "water" is in 7 of the 30 (over 10%), the other words of a-e in at most 3
    texts |= {f"f{i}": f"unrelated{i} words{i}" + (" water" if i < 5 else "") for i in range(25)}
    index.update([Document(id=i, title=i, text=t) for i, t in texts.items()], embedder=hashing_embedder)
    lexical = index.lexical
    first = lexical.term_scores(["reservoir"])
    ids = [p.document_id for p in index.passages]
    score_a, score_b = float(first[ids.index("a")]), float(first[ids.index("b")])
    assert score_b > score_a > 0  # b is shorter

    rm3 = RM3Retriever(index, feedback_units=2, feedback_terms=3, original_weight=0.5)
    # water (in 7 of 30 units) is left out, so a keeps 3 terms; P(t|R) ~ sum of P(t|u) * score(u): reservoir
    # and drought a/3 + b/3, rationing b/3, shortage a/3 (the lightest, so not among the 3)
    heavy = score_a / 3 + score_b / 3
    total = 2 * heavy + score_b / 3
    expected = {"reservoir": 0.5 + 0.5 * heavy / total, "drought": 0.5 * heavy / total,
                "ration": 0.5 * (score_b / 3) / total}
    weights = rm3.expanded_query("reservoir")
    assert weights.keys() == expected.keys()
    for term, weight in expected.items():
        assert weights[term] == pytest.approx(weight, rel=1e-6)
    assert "water" not in RM3Retriever(index, feedback_units=2, feedback_terms=10).expanded_query("reservoir")

    scores = rm3.scores("reservoir")
    by_hand = sum(weight * lexical.term_scores([term]) for term, weight in expected.items())
    np.testing.assert_allclose(scores, by_hand, rtol=1e-5)
    # "c" and "e" lack the query word but share the feedback units' vocabulary; "d" and the fillers share none
    assert first[ids.index("c")] == 0 and scores[ids.index("c")] > 0 and scores[ids.index("e")] > 0
    assert scores[ids.index("d")] == 0 and all(scores[ids.index(f"f{i}")] == 0 for i in range(25))
    assert rm3.expanded_query("zeppelin") == {"zeppelin": 1.0} and not rm3.scores("zeppelin").any()
    # the query's own terms are scored through the first pass (a repeated term counts twice; an unknown term
    # scores nothing but takes its share of P(t | Q)): the scores are still those of the weighted query
    for query in ("reservoir reservoir drought zeppelin", "football", "shortage water"):
        weighted = rm3.expanded_query(query)
        by_hand = sum(weight * lexical.term_scores([term]) for term, weight in weighted.items())
        np.testing.assert_allclose(rm3.scores(query), by_hand, rtol=1e-5, atol=1e-7)


def test_dense_prf_moves_the_query_towards_the_feedback_centroid(haystack_index: Index) -> None:
    from citesum.retrieve.feedback import DensePRFRetriever

    plain = get_retriever("dense", haystack_index)
    feedback = DensePRFRetriever(haystack_index, feedback_units=5, beta=1.0)
    query = "water"
    first = plain.scores(query)
    top = np.argsort(-first)[:5]
    vectors = np.asarray(haystack_index.vectors)
    expected_query = plain.embedder.encode_query(query) + vectors[top].mean(axis=0)
    expected = vectors @ (expected_query / np.linalg.norm(expected_query))
    np.testing.assert_allclose(feedback.scores(query), expected, rtol=1e-5)


def test_hybrid_fuses_document_rankings_of_its_members(haystack_index: Index) -> None:
    from citesum.retrieve.fusion import reciprocal_rank_fusion

    assert get_retriever("hybrid", haystack_index).name == "hybrid(bm25-rm3+dense-prf)"
    hybrid = get_retriever("hybrid:bm25+dense", haystack_index)
    query = "electric buses"
    members = [[d for d, s in get_retriever(n, haystack_index).rank_documents(query, 1000) if n == "dense" or s > 0]
               for n in ("bm25", "dense")]
    fused = reciprocal_rank_fusion(members)
    expected = sorted(fused, key=lambda d: -fused[d])[:5]
    assert [d for d, _ in hybrid.rank_documents(query, 5)] == expected


def test_lexical_index_keeps_each_units_analysed_term_counts(tmp_path: Path) -> None:
    from collections import Counter

    from citesum.index.lexical import LexicalIndex, TermCounts, tokenize

    def unit_terms(lexical: LexicalIndex, unit: int) -> Counter[str] | None:
        kept = lexical.unit_term_counts(unit)
        return None if kept is None else Counter({lexical.terms[i]: int(n) for i, n in zip(*kept)})

    texts = ["Water rates rise; water bills rise too.", "The tram runs to the airport", "the the the"]
    built = LexicalIndex.build(texts)
    [(counts, _)] = built.segments
    counts.save(tmp_path / "segment")
    built.save(tmp_path / "bm25")
    loaded = LexicalIndex.load(tmp_path / "bm25", [(TermCounts.load(tmp_path / "segment"), None)])
    assert isinstance(loaded.segments[0][0].term_units, np.memmap)  # mapped, not read
    for unit, tokens in enumerate(tokenize(texts)):
        assert unit_terms(built, unit) == unit_terms(loaded, unit) == Counter(tokens)
    assert unit_terms(built, 0)["water"] == 2 and unit_terms(built, 2) == Counter()  # stop words only: nothing
    for query in ("water rates", "tram", "the"):
        assert np.array_equal(built.scores(query), loaded.scores(query))
    # a later segment: the units are numbered on from the first segment's
    updated = loaded.updated(np.array([True, False, True]), ["Water again"])
    assert unit_terms(updated, 1) == Counter() and unit_terms(updated, 2) == Counter({"water": 1, "again": 1})


def test_feedback_terms_leave_out_common_and_odd_terms() -> None:
    from citesum.index.lexical import LexicalIndex

    texts = [f"reservoir unit{i} water" if i < 3 else f"water x{i} {'a' * 25}" for i in range(10)]
    lexical = LexicalIndex.build(texts)
    allowed = {t for t, ok in zip(lexical.terms, lexical.feedback_terms(0.3 * 10).tolist()) if ok}
    assert allowed == {"reservoir", "unit0", "unit1", "unit2"} | {f"x{i}" for i in range(3, 10)}
    # water is in all 10 units, over the bound of 3; 25 letters is over the 20 Anserini takes
    assert "water" in lexical.terms and "a" * 25 in lexical.terms
    assert len(LexicalIndex.build([]).feedback_terms(1.0)) == 0


def test_rm3_expansion_matches_the_relevance_model_term_by_term(haystack_index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    """The array form of RM3 gives the weights the written-out model gives: per unit the most frequent
    eligible terms (ties alphabetical), P(t | R) summed in rank order, its heaviest terms (ties in the order
    met), interpolated with the query."""
    import re
    from collections import Counter

    from citesum.index.lexical import tokenize
    from citesum.retrieve.base import top_k
    from citesum.retrieve.feedback import RM3Retriever

    rm3 = RM3Retriever(haystack_index, feedback_units=6, feedback_terms=8)
    lexical = haystack_index.lexical
    passages = haystack_index.passages
    frequency = Counter(t for tokens in tokenize([p.text for p in passages]) for t in set(tokens))

    def written_out(query: str) -> dict[str, float]:
        query_terms = Counter(tokenize([query])[0])
        original = {t: n / sum(query_terms.values()) for t, n in query_terms.items()}
        first = lexical.term_scores(list(query_terms.elements()))
        relevance: Counter[str] = Counter()
        feedback_units = [i for i in top_k(first, 6) if first[i] > 0]
        if not feedback_units:
            return original
        for unit in feedback_units:
            counts = Counter(t for t in tokenize([passages[unit].text])[0]
                             if frequency[t] <= 0.1 * len(passages) and re.fullmatch("[a-z0-9]{2,20}", t))
            kept = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:8]
            for term, count in kept:
                relevance[term] += float(first[unit]) * count / sum(c for _, c in kept)
        heaviest = relevance.most_common(8)
        feedback = {t: w / sum(w for _, w in heaviest) for t, w in heaviest}
        return {t: 0.5 * original.get(t, 0.0) + 0.5 * feedback.get(t, 0.0) for t in original.keys() | feedback.keys()}

    for query in [*haystack.queries.values(), "tram airport", "reservoir levels in August", "zeppelin"]:
        expected, got = written_out(query), rm3.expanded_query(query)
        assert got.keys() == expected.keys(), query
        assert got == expected, query  # the same floating-point operations in the same order


@pytest.mark.parametrize("scipy_kernel", [True, False])
@pytest.mark.parametrize("texts_per_block", [20_000, 7])
def test_bm25_from_term_counts_scores_as_bm25s_and_updates_as_a_rebuild(haystack, monkeypatch,  # type: ignore[no-untyped-def]
                                                                        texts_per_block: int, scipy_kernel: bool) -> None:
    """The BM25 matrix computed from the units' term counts is bm25s's own (same float32 scores, bit for bit),
    and an index updated with some units removed and new ones added scores as one built from scratch; also when
    the texts are analysed a few at a time (a block's new terms numbered after the earlier blocks'), and when
    the postings are summed by NumPy (a SciPy without the kernel citesum.index.lexical.add_class_weights uses)."""
    import bm25s
    import Stemmer

    from citesum.index import lexical
    from citesum.index.lexical import LexicalIndex, tokenize

    monkeypatch.setattr(lexical, "TEXTS_PER_BLOCK", texts_per_block)
    if not scipy_kernel:
        monkeypatch.setattr(lexical, "_coo_matvec", lambda: None)
    else:
        assert lexical._coo_matvec() is not None  # the SciPy installed has it: the fast path is the one tested

    texts = [d.text for d in haystack.documents] + ["the the the", ""]
    reference = bm25s.BM25()
    reference.index(bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False),
                    show_progress=False)
    ours = LexicalIndex.build(texts)
    queries = [*haystack.queries.values(), "reservoir", "zeppelin airship"]
    for query in queries:
        terms = [t for t in tokenize([query])[0] if t in reference.vocab_dict]
        expected = reference.get_scores(terms) if terms else np.zeros(len(texts), dtype=np.float32)
        assert np.array_equal(ours.scores(query), expected), query
        assert np.array_equal(ours.scores(query), expected), query  # asked again: the weights kept

    keep = np.ones(len(texts), dtype=bool)
    keep[[0, 5, 6, len(texts) - 1]] = False
    added = ["Zeppelin airship rides over the reservoir.", "A brand new word: quokkas."]
    updated = ours.updated(keep, added)
    rebuilt = LexicalIndex.build([t for t, k in zip(texts, keep) if k] + added)
    assert updated is not None and updated.size == rebuilt.size
    for query in [*queries, "quokkas"]:
        assert np.array_equal(updated.scores(query), rebuilt.scores(query)), query
    assert updated.scores("quokkas")[-1] > 0
    # a weighted query over a segment holding only some of its units: term by term in float64, as a plain loop
    terms = tokenize(["reservoir levels rationing airship quokkas"])[0]
    ids = np.array(sorted(i for i in map(updated.term_id, terms) if i is not None), dtype=np.int64)
    assert len(ids) >= 3
    weights = np.linspace(0.9, 0.1, len(ids))
    expected = np.zeros(updated.size)
    for term_id, weight in zip(ids.tolist(), weights.tolist()):
        expected += updated.term_scores([updated.terms[term_id]]).astype(np.float64) * weight
    assert np.array_equal(updated.weighted_row_scores(ids, weights).by_unit(), expected.astype(np.float32))
    # ranked by row (a segment's rows of units not held at -inf), as by unit: the same units and scores, ties
    # (most units score 0) in position order, for any k
    from citesum.retrieve.base import top_rows, top_scores

    assert updated.rows > updated.size
    for query in [*queries, "quokkas"]:
        by_row = updated.term_row_scores(tokenize([query])[0])
        assert np.array_equal(by_row.by_unit(), updated.scores(query))
        for k in (1, 10, updated.size - 1, updated.size + 5):
            positions, scores = top_rows(by_row, k)
            expected_positions, expected_scores = top_scores(updated.scores(query), k)
            assert np.array_equal(positions, expected_positions), (query, k)
            assert np.array_equal(scores, expected_scores), (query, k)


@pytest.mark.parametrize("scipy_kernel", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_postings_are_summed_in_order_and_damaged_ones_refused(monkeypatch: pytest.MonkeyPatch, dtype: type,
                                                               scipy_kernel: bool) -> None:
    """add_class_weights adds each posting's class weight to its unit in the order given, as a plain loop does
    (the same sums, bit for bit), for lists longer than any before (its ones grow), with every stored type of unit
    and class, by SciPy's kernel or by NumPy; a posting naming a unit or a class past the arrays, or stored in
    another type (a damaged file), is refused with the index's error, and nothing is added."""
    from citesum.errors import IndexStoreError
    from citesum.index import lexical
    from citesum.index.lexical import add_class_weights

    monkeypatch.setattr(lexical, "_ONES", {})
    if not scipy_kernel:
        monkeypatch.setattr(lexical, "_coo_matvec", lambda: None)
    else:
        assert lexical._coo_matvec() is not None

    rng = np.random.default_rng(5)
    sums = np.zeros(500, dtype=dtype)
    expected = np.zeros(500, dtype=dtype)
    class_weights = rng.random(40).astype(dtype) * 7
    for length, unit_type, class_type in ((3, np.int32, np.uint16), (200, np.int32, np.int32),
                                          (450, np.int64, np.uint16), (0, np.int32, np.uint16),
                                          (120, np.int64, np.int32)):  # one term's units: distinct, ascending
        units = np.sort(rng.choice(500, length, replace=False)).astype(unit_type)
        classes = rng.integers(0, 40, length).astype(class_type)
        add_class_weights(sums, units, classes, class_weights)
        for unit, cls in zip(units.tolist(), classes.tolist()):
            expected[unit] = expected[unit] + class_weights[cls]
    assert np.array_equal(sums, expected)
    # in order: 1e8 + 1 is 1e8 in float32, so this unit's sum is 0, and 1 in any other order
    at_once = np.zeros(2, dtype=np.float32)
    add_class_weights(at_once, np.array([1, 1, 1], dtype=np.int32), np.array([0, 1, 2], dtype=np.uint16),
                      np.array([1e8, 1, -1e8], dtype=np.float32))
    assert at_once.tolist() == [0.0, 0.0]
    before = sums.copy()
    for units, classes in ((np.array([1, 500], np.int32), np.array([0, 0], np.uint16)),
                           (np.array([-1, 3], np.int32), np.array([0, 0], np.uint16)),
                           (np.array([-1, 3], np.int64), np.array([0, 0], np.uint16)),
                           (np.array([1, 2], np.int32), np.array([0, 40], np.uint16)),
                           (np.array([1, 2], np.int32), np.array([-3, 0], np.int32)),
                           (np.array([-1, 2], np.int16), np.array([0, 0], np.uint16)),
                           (np.array([1, 2], np.int32), np.array([0, 0], np.int64))):
        with pytest.raises(IndexStoreError, match="damaged"):
            add_class_weights(sums, units, classes, class_weights)
        assert np.array_equal(sums, before)
    with pytest.raises(TypeError):
        add_class_weights(sums, np.array([1], np.int32), np.array([0], np.uint16), class_weights.astype(np.float16))


@pytest.mark.filterwarnings("error::RuntimeWarning")  # no 0 * -inf on the way
def test_lexical_retrievers_rank_by_row_as_by_unit_after_updates(  # type: ignore[no-untyped-def]
        tmp_path: Path, haystack, hashing_embedder) -> None:
    """BM25's and RM3's best units, ranked over the rows of segments some of whose units were revised or deleted,
    are the best of their scores of every unit."""
    index = Index.create(tmp_path / "ix", IndexSettings(embedder="test-hashing"))
    index.update(haystack.documents, embedder=hashing_embedder)
    revised = [Document(id=d.id, title=d.title, text=d.text + " Revised: the reservoir is full.")
               for d in haystack.documents[::6]]  # under 30% of the units: the segment is kept, not rewritten
    index.update(revised, delete=[haystack.documents[1].id], embedder=hashing_embedder)
    assert index.lexical.rows > index.lexical.size  # the build's segment holds only some of its units now
    from citesum.retrieve.feedback import RM3Retriever

    for retriever in (get_retriever("bm25", index), get_retriever("bm25-rm3", index),
                      RM3Retriever(index, original_weight=0.0)):  # the feedback terms alone
        name = retriever.name
        for query in [*haystack.queries.values(), "reservoir full", "no such words here"]:
            for k in (1, 10, 1000):
                with index.pinned():
                    positions, scores = retriever._top(query, k)
                    expected = top_k(retriever.scores(query), k)
                    assert np.array_equal(positions, expected), (name, query, k)
                    assert np.array_equal(scores, retriever.scores(query)[expected]), (name, query, k)


@pytest.mark.parametrize("block", [3, 1 << 20])
@pytest.mark.parametrize("long_units", [False, True])
def test_posting_classes_are_the_distinct_count_and_length_pairs(monkeypatch: pytest.MonkeyPatch, block: int,
                                                                 long_units: bool) -> None:
    """Each posting's class is its (count, unit length) pair, in blocks or at once, through the table of every
    key or, for keys too many for one (long units), through sorting."""
    from citesum.index import lexical

    monkeypatch.setattr(lexical, "_CLASS_BLOCK", block)
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 40_000_000 if long_units else 50, 30)
    units = rng.integers(0, 30, 200).astype(np.int32)
    counts = rng.integers(1, 5, 200).astype(np.int32)
    classes, posting_classes = lexical._classes(counts, units, lengths)
    expected = sorted({(int(c), int(lengths[u])) for c, u in zip(counts, units)})
    assert [tuple(pair) for pair in classes.tolist()] == expected
    assert [tuple(pair) for pair in classes[posting_classes].tolist()] == list(zip(counts.tolist(), lengths[units].tolist()))
    assert posting_classes.dtype == np.uint16


def _waited(event) -> None:  # type: ignore[no-untyped-def]
    assert event.wait(10), "the other member never wrote"


class _Member(Retriever):
    """A fusion member that records the thread it ranked on and the generation it read, and runs ``step`` first."""

    def __init__(self, index: Index, name: str, step=None, *, ranks_from_arrays: bool = True,  # type: ignore[no-untyped-def]
                 reads_texts: bool = False) -> None:
        super().__init__(index)
        self.name, self.step, self.ranks_from_arrays, self.reads_texts = name, step, ranks_from_arrays, reads_texts
        self.seen: list[tuple[str, int, int]] = []

    def scores(self, query: str) -> np.ndarray:
        import threading

        if self.step is not None:
            self.step()
        if self.reads_texts:  # a member reading passage texts, as PromptRank does
            assert self.index.passages.take([0])[0].text
        self.seen.append((threading.current_thread().name, self.index.generation, len(self.index.vectors)))
        return np.linspace(1.0, 0.5, len(self.index), dtype=np.float32)


def _small_index(path: Path, hashing_embedder) -> Index:  # type: ignore[no-untyped-def]
    index = Index.create(path, IndexSettings(embedder="test-hashing"))
    index.add([Document(id=f"d{i}", title="t", text=f"Report {i} on reservoir levels and trams.") for i in range(6)],
              embedder=hashing_embedder)
    return index


def test_a_hybrids_members_rank_at_once_reading_the_generation_the_query_pinned(  # type: ignore[no-untyped-def]
    tmp_path: Path, hashing_embedder
) -> None:
    """The second member ranks on another thread while the first ranks on the caller's, and reads the caller's
    generation even though a newer one was committed before it read anything."""
    import threading

    index = _small_index(tmp_path / "ix", hashing_embedder)
    before = index.generation
    written = threading.Event()

    def write() -> None:  # on the caller's thread, through a writer of its own, before the other member reads
        Index.open(index.path).add([Document(id=f"new{len(first.seen)}", title="t", text="A new report.")],
                                   embedder=hashing_embedder)
        written.set()

    first = _Member(index, "first", write)
    second = _Member(index, "second", lambda: _waited(written))
    hits = HybridRetriever(index, [first, second], at_once=True).retrieve("reservoir", k=3)
    assert [h.passage.document_id for h in hits] == ["d0", "d1", "d2"]
    assert first.seen == [(threading.current_thread().name, before, 6)]
    assert second.seen[0][0].startswith("citesum-fusion") and second.seen[0][1:] == (before, 6)
    assert Index.open(index.path).generation > before  # the write did commit meanwhile
    # documents are ranked the same way: the query pins the generation written above, and the first member writes
    # another before the second reads
    assert HybridRetriever(index, [first, second], at_once=True).rank_documents("reservoir", 2)[0][0] == "d0"
    assert second.seen[-1][0].startswith("citesum-fusion") and second.seen[-1][1:] == first.seen[-1][1:] == (
        before + 1, 7)
    assert Index.open(index.path).generation == before + 2


def test_a_member_that_reads_the_database_ranks_on_the_callers_thread(  # type: ignore[no-untyped-def]
    tmp_path: Path, hashing_embedder
) -> None:
    """A member reading passage texts (the database: its read transaction is the caller's) ranks on the caller's
    thread, the others elsewhere; on another thread, the pinned generation's arrays are read and its database is
    refused with a clear error, not read outside the transaction."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from citesum.errors import IndexStoreError

    index = _small_index(tmp_path / "ix", hashing_embedder)
    texts = _Member(index, "texts", ranks_from_arrays=False, reads_texts=True)
    arrays = _Member(index, "arrays")
    assert len(HybridRetriever(index, [arrays, texts], at_once=True).retrieve("reservoir", k=3)) == 3
    assert texts.seen[0][0] == threading.current_thread().name
    assert arrays.seen[0][0].startswith("citesum-fusion")

    Index.open(index.path).add([Document(id="new", title="t", text="A new report.")], embedder=hashing_embedder)
    with index.read() as view, ThreadPoolExecutor(1) as pool:
        # the index as a retriever over it reads it, and the view a request's retrievers are made over
        for reader in (index, view):
            reading = reader.reading_elsewhere()

            def elsewhere(reader=reader, reading=reading) -> int:  # type: ignore[no-untyped-def]
                with reading():
                    assert reader.generation == view.generation
                    with pytest.raises(IndexStoreError, match="another thread pinned"):
                        reader.passages.take([0])
                    with pytest.raises(IndexStoreError, match="another thread pinned"):
                        reader.document("d0")
                    return len(reader.vectors)

            assert pool.submit(elsewhere).result() == 7
            # a view's database, asked for on another thread outside such a block, is refused too (its read
            # transaction is this thread's)
            if reader is view:
                with pytest.raises(IndexStoreError, match="another thread pinned"):
                    pool.submit(view.document, "d0").result()


def test_a_process_forked_after_a_fusion_fuses_on_threads_of_its_own(  # type: ignore[no-untyped-def]
    tmp_path: Path, hashing_embedder
) -> None:
    """The member threads a fusion started are not in a forked child: a pool that counted them would wait forever."""
    import os
    import time

    index = _small_index(tmp_path / "ix", hashing_embedder)
    def fused(on: Index) -> int:
        return len(HybridRetriever(on, [_Member(on, "a"), _Member(on, "b")], at_once=True).retrieve("reservoir", k=2))

    assert fused(index) == 2
    pid = os.fork()
    if pid == 0:  # the child: its own index object (the parent's connections are the parent's)
        status = 1
        try:
            status = 0 if fused(Index.open(index.path)) == 2 else 1
        finally:
            os._exit(status)
    deadline = time.monotonic() + 30
    while (waited := os.waitpid(pid, os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    if waited == (0, 0):
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child's fusion waited for threads it does not have")
    assert os.waitstatus_to_exitcode(waited[1]) == 0


def test_a_hybrid_ranks_its_members_at_once_where_the_generation_has_a_graph(  # type: ignore[no-untyped-def]
    tmp_path: Path, hashing_embedder
) -> None:
    """By default the members rank at once only over a generation with a nearest-neighbour graph (where their work
    is long and mostly outside Python's lock); over one without, in turn on the caller's thread."""
    import threading

    pytest.importorskip("usearch")
    for minimum, elsewhere in ((0, False), (1, True)):
        index = Index.create(tmp_path / f"ix{minimum}", IndexSettings(embedder="test-hashing"))
        index.set_ann_min_units(minimum)
        index.add([Document(id=f"d{i}", title="t", text=f"Report {i} on reservoir levels.") for i in range(6)],
                  embedder=hashing_embedder)
        assert (index.ann is not None) is elsewhere
        second = _Member(index, "second")
        HybridRetriever(index, [_Member(index, "first"), second]).retrieve("reservoir", k=2)
        assert (second.seen[0][0] != threading.current_thread().name) is elsewhere


def test_members_over_another_reader_and_fusions_inside_a_member_rank_on_their_callers_thread(  # type: ignore[no-untyped-def]
    tmp_path: Path, hashing_embedder
) -> None:
    """A member reading another reader than the fusion's is not pinned on a worker, so it ranks on the caller's
    thread; a fusion that is itself a member ranked on a worker ranks its members in turn there (handing them to
    its own pool could leave every pool thread waiting on the pool)."""
    import threading

    index = _small_index(tmp_path / "ix", hashing_embedder)
    with index.read() as view:
        over_the_view = _Member(view, "over the view")
        HybridRetriever(index, [_Member(index, "mine"), over_the_view], at_once=True).retrieve("reservoir", k=2)
        assert over_the_view.seen[0][0] == threading.current_thread().name
    inner_first, inner_second = _Member(index, "inner first"), _Member(index, "inner second")
    inner = HybridRetriever(index, [inner_first, inner_second], at_once=True)
    inner.ranks_from_arrays = True
    HybridRetriever(index, [_Member(index, "outer first"), inner], at_once=True).retrieve("reservoir", k=2)
    assert inner_first.seen[0][0] == inner_second.seen[0][0] and inner_first.seen[0][0].startswith("citesum-fusion")
