from __future__ import annotations

import pytest

from citesum.errors import BudgetError, ConfigError
from citesum.index.store import Index, IndexSettings
from citesum.pack import PackOptions, pack, pack_full, within_budget
from citesum.retrieve import get_retriever
from citesum.tokens import get_tokenizer
from citesum.types import Document

TOKENIZER = get_tokenizer()


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, haystack) -> Index:  # type: ignore[no-untyped-def]
    built = Index.create(tmp_path_factory.mktemp("pack") / "ix", IndexSettings(max_tokens=40))
    built.add(haystack.documents)
    return built


def test_score_and_original_orders_select_the_same_units(index: Index) -> None:
    hits = get_retriever("bm25", index).retrieve("water rates reservoir", k=200)
    by_score = pack(index, hits, PackOptions(budget=600, order="score"))
    original = pack(index, hits, PackOptions(budget=600, order="original"))
    units = lambda c: sorted(p.id for b in c.blocks for p in b.passages)  # noqa: E731
    assert units(by_score) == units(original) and units(by_score)
    # score order: blocks follow the best hit; original: collection order, then position in the document
    assert by_score.blocks[0].passages[0].id == hits[0].passage.id
    keys = [(index.document_position(p.document_id), p.ordinal) for b in original.blocks for p in b.passages]
    assert keys == sorted(keys)
    for context in (by_score, original):
        assert context.token_count <= 600
        assert context.token_count == TOKENIZER.count(context.render())
        # numbers are 1..n by first appearance and map back to the documents exactly
        assert sorted(context.numbers) == list(range(1, len(context.numbers) + 1))
        assert all(context.numbers[b.number] == b.document_id for b in context.blocks)
        assert all(b.text.startswith(b.passages[0].text) for b in context.blocks)


def test_skip_versus_stop_at_first_overflow(index: Index) -> None:
    hits = get_retriever("dense", index).retrieve("housing rents", k=200)
    skip = pack(index, hits, PackOptions(budget=500, order="score"))
    stop = pack(index, hits, PackOptions(budget=500, order="score", stop_at_first_overflow=True))
    chosen = lambda c: {p.id for b in c.blocks for p in b.passages}  # noqa: E731
    count = lambda c: sum(len(b.passages) for b in c.blocks)  # noqa: E731
    # stopping keeps exactly a prefix of the ranking; skipping keeps that prefix and fills on past it
    prefix = [h.passage.id for h in hits[: count(stop)]]
    assert chosen(stop) == set(prefix) and count(stop) >= 1
    assert chosen(skip) > chosen(stop) and skip.token_count > stop.token_count
    assert stop.token_count <= 500 and skip.token_count <= 500
    capped = pack(index, hits, PackOptions(budget=100_000, order="score", top_k=3))
    assert count(capped) == 3


def test_within_budget_skips_or_stops_and_prices_each_item_after_the_last_choice() -> None:
    sizes = {"a": 4, "b": 7, "c": 3, "d": 2}
    assert list(within_budget("abcd", sizes.__getitem__, 10, stop_at_first_overflow=True)) == ["a"]
    assert list(within_budget("abcd", sizes.__getitem__, 10, stop_at_first_overflow=False)) == ["a", "c", "d"]
    # a cost that depends on what was chosen (the first unit of a document pays its header)
    seen: set[str] = set()
    units = ["x1", "x2", "y1"]
    picked = []
    for unit in within_budget(units, lambda u: 1 + (5 if u[0] not in seen else 0), 8, stop_at_first_overflow=False):
        picked.append(unit)
        seen.add(unit[0])
    assert picked == ["x1", "x2"]  # 6 + 1; y1 would cost 6 more


def test_full_context_truncates_the_longest_documents_first() -> None:
    documents = [Document("short", "Short", "A short note. " * 5), Document("mid", "Mid", "Medium text here. " * 60),
                 Document("long", "Long", "A much longer report sentence. " * 400)]
    whole = pack_full(documents, 100_000, TOKENIZER)
    assert [b.text for b in whole.blocks] == [d.text for d in documents]
    roomy = {b.document_id: b.text for b in pack_full(documents, 700, TOKENIZER).blocks}
    assert roomy["mid"] == documents[1].text and len(roomy["long"]) < len(documents[2].text)
    tight = pack_full(documents, 400, TOKENIZER)
    assert tight.token_count <= 400
    texts = {b.document_id: b.text for b in tight.blocks}
    assert texts["short"] == documents[0].text  # short documents stay whole
    assert len(texts["long"]) < len(documents[2].text)
    assert abs(TOKENIZER.count(texts["long"]) - TOKENIZER.count(texts["mid"])) <= 1  # one common cap
    with pytest.raises(BudgetError, match="cannot hold"):
        pack_full(documents, 10, TOKENIZER)
    # counts given by the caller (the position experiment counts each document once) give the same context
    counts = {d.id: TOKENIZER.count(d.text) for d in documents}
    assert pack_full(documents, 400, TOKENIZER, counts) == tight


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="score, original, full"):
        PackOptions(order="random")  # type: ignore[arg-type]
    with pytest.raises(BudgetError):
        PackOptions(budget=0)
