"""RAPTOR and ReadAgent end to end with a real LLM: the packaged SmolLM2-135M GGUF in llama.cpp writes the
tree's summaries, the pages' breaks and gists, the look-up and the answer."""

from __future__ import annotations


import pytest

from citesum.index.store import Index, IndexSettings
from citesum.raptor import build_tree, raptor_context
from citesum.readagent import ReadAgent, ReadReport
from citesum.summarize import summarize_context
from citesum.summarize.llm import LLMSummarizer
from citesum.summarize.statements import GIST_INSTRUCTION, LLMStatements, WriteReport

QUERY = "What is happening with the city's water supply?"


@pytest.fixture(scope="module")
def smollm2(packaged_smollm2: str):  # type: ignore[no-untyped-def]
    from citesum.llm import get_llm

    return get_llm("llamacpp", packaged_smollm2)


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory, haystack) -> Index:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path_factory.mktemp("smollm2") / "ix", IndexSettings())
    water = [d for d in haystack.documents if "water" in d.text.lower()][:3]
    index.add(water)
    return index


def test_raptor_tree_written_by_smollm2_is_read_as_a_collapsed_tree(smollm2, small_index: Index) -> None:  # type: ignore[no-untyped-def]
    report = WriteReport()
    tree = build_tree(small_index, LLMStatements(smollm2, workers=1, max_tokens=160), levels=1, report=report)
    documents = {p.document_id for p in small_index.passages}
    assert tree.nodes and report.groups == len(tree.nodes)
    for node in tree.nodes:  # the model's bullets, or the offline statements where it failed (reported)
        assert node.statements and all(set(s.documents) <= documents for s in node.statements)
    assert smollm2.usage.requests >= 1
    context = raptor_context(QUERY, small_index, tree, budget=600)
    assert 0 < context.token_count <= 600 and {b.document_id for b in context.blocks} <= documents


def test_readagent_with_smollm2_pages_gists_looks_up_and_answers_with_citations(smollm2, small_index: Index) -> None:  # type: ignore[no-untyped-def]
    agent = ReadAgent(LLMStatements(smollm2, GIST_INSTRUCTION, workers=1, max_tokens=120), smollm2,
                      page_words=200, min_page_words=80, workers=1)
    report = ReadReport()
    before = smollm2.usage.requests
    memory = agent.read(small_index, report=report)
    assert memory.pages and report.pages == len(memory.pages) and report.gists.groups == len(memory.pages)
    assert memory.pages[-1].end == len(small_index.passages)
    context, notes = agent.context(QUERY, small_index, memory, budget=700)
    assert smollm2.usage.requests > before + len(memory.pages)  # gists, breaks and the look-up were asked
    assert 0 < context.token_count <= 700
    summary = summarize_context(QUERY, context, LLMSummarizer(smollm2, bullets=3, max_tokens=160))
    assert summary.bullets
    in_context = set(context.numbers.values())
    assert all(set(b.citations) <= in_context for b in summary.bullets)  # never a document outside the context
    assert isinstance(notes, list)
