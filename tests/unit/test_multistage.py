"""RAPTOR's tree and collapsed-tree context, ReadAgent's pages, gists and look-up, and the statements both write."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from citesum.cli import main
from citesum.errors import BudgetError, ConfigError, LLMError
from citesum.index.store import Index, IndexSettings
from citesum.llm.fake import FakeLLM
from citesum.pack import STATEMENT_LABEL, pack_pieces
from citesum.raptor import REDUCTIONS, TREE_FILE, ClusterOptions, RaptorTree, build_tree, cluster, raptor_context
from citesum.readagent import MEMORY_FILE, Memory, ReadAgent, ReadReport
from citesum.summarize.statements import CentralStatements, LLMStatements, WriteReport, group_context
from citesum.tokens import get_tokenizer
from citesum.types import Document, Statement

QUERY = "What is happening with the city's water supply?"
#: three dimensions separate the test's three groups; the default ten make each mixture fit slower
FEW_DIMENSIONS = ClusterOptions(dimensions=3)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, haystack) -> Index:  # type: ignore[no-untyped-def]
    built = Index.create(tmp_path_factory.mktemp("multistage") / "ix", IndexSettings())
    built.add(haystack.documents)
    return built


def blobs(per_blob: int = 15, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three well-separated groups of unit vectors in 16 dimensions, and which group each row is in."""
    rng = np.random.default_rng(seed)
    centres = np.eye(16)[[0, 5, 10]] * 10
    rows = np.vstack([centre + rng.normal(size=(per_blob, 16)) for centre in centres])
    return rows / np.linalg.norm(rows, axis=1, keepdims=True), np.repeat(np.arange(3), per_blob)


def test_clustering_finds_separated_groups_and_covers_every_row() -> None:
    vectors, truth = blobs()
    clusters = cluster(vectors, np.full(len(vectors), 10), FEW_DIMENSIONS)
    assert all(len(set(truth[c])) == 1 for c in clusters)  # the local stage may split a group, never mix two
    assert set(np.concatenate(clusters).tolist()) == set(range(len(vectors)))
    again = cluster(vectors, np.full(len(vectors), 10), FEW_DIMENSIONS)
    assert [c.tolist() for c in again] == [c.tolist() for c in clusters]  # deterministic


def test_umap_reduction_as_raptor_runs_it_finds_the_same_groups() -> None:
    pytest.importorskip("umap")  # extra umap (installed by make test; CITESUM_NO_SKIPS=1 fails a skip in CI)
    vectors, truth = blobs()
    options = ClusterOptions(dimensions=3, reduction="umap")
    clusters = cluster(vectors, np.full(len(vectors), 10), options)
    assert all(len(set(truth[c])) == 1 for c in clusters)
    assert set(np.concatenate(clusters).tolist()) == set(range(len(vectors)))
    again = cluster(vectors, np.full(len(vectors), 10), options)
    assert [c.tolist() for c in again] == [c.tolist() for c in clusters]  # seeded: the same tree twice


def test_umap_runs_with_raptors_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict] = []

    class RecordingUMAP:  # stands in for umap.UMAP: records its settings and rows, keeps the first columns
        def __init__(self, **settings: object) -> None:
            calls.append(dict(settings))

        def fit_transform(self, rows: np.ndarray) -> np.ndarray:
            calls[-1]["rows"] = len(rows)
            return rows[:, : int(calls[-1]["n_components"])]

    umap = type(sys)("umap")
    umap.UMAP = RecordingUMAP  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "umap", umap)
    vectors, _ = blobs()  # 45 rows
    cluster(vectors, np.full(len(vectors), 10), ClusterOptions(dimensions=3, reduction="umap", seed=7))
    # the global stage: sqrt(n - 1) neighbours; then each global cluster's local stage: 10 (fewer rows: all)
    assert calls[0] == {"n_neighbors": 6, "n_components": 3, "metric": "cosine", "random_state": 7, "n_jobs": 1,
                        "rows": 45}
    assert len(calls) > 1
    for local in calls[1:]:
        assert local["n_neighbors"] == min(10, local["rows"] - 1) and local["rows"] < 45
        assert (local["metric"], local["random_state"]) == ("cosine", 7)


def test_an_unknown_reduction_or_a_missing_umap_is_an_error_that_says_what_to_do(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from citesum.errors import MissingExtraError

    with pytest.raises(ConfigError, match="pca, umap"):
        ClusterOptions(reduction="tsne")
    monkeypatch.setitem(sys.modules, "umap", None)
    vectors, _ = blobs()
    with pytest.raises(MissingExtraError, match=r"citesum\[umap\]"):
        cluster(vectors, np.full(len(vectors), 10), ClusterOptions(dimensions=3, reduction="umap"))


def test_a_cluster_over_the_token_limit_is_clustered_again() -> None:
    vectors, _ = blobs()
    clusters = cluster(vectors, np.full(len(vectors), 100), ClusterOptions(dimensions=3, max_tokens=700))
    assert all(len(c) * 100 <= 700 for c in clusters)
    assert set(np.concatenate(clusters).tolist()) == set(range(len(vectors)))


def test_too_few_rows_to_cluster_are_one_cluster_or_runs_within_the_limit() -> None:
    vectors, _ = blobs(per_blob=2)
    assert [c.tolist() for c in cluster(vectors[:5], np.full(5, 10))] == [[0, 1, 2, 3, 4]]
    assert [c.tolist() for c in cluster(vectors[:5], np.full(5, 10), ClusterOptions(max_tokens=25))] == \
        [[0, 1], [2, 3], [4]]
    assert cluster(np.zeros((0, 16)), np.zeros(0)) == []


def test_tree_levels_link_to_units_then_nodes_and_survive_a_reload(index: Index) -> None:
    tree = build_tree(index, CentralStatements(), levels=3)
    level1 = [n for n in tree.nodes if n.level == 1]
    level2 = [n for n in tree.nodes if n.level == 2]
    assert level1 and level2 and len(tree.vectors) == len(tree.nodes)
    assert set().union(*(n.children for n in level1)) == set(range(len(index.passages)))
    assert set().union(*(n.children for n in level2)) <= set(range(len(level1)))
    documents = {p.document_id for p in index.passages}
    for node in tree.nodes:
        assert node.statements and all(set(s.documents) <= documents for s in node.statements)
    tree.save(index.path)
    again = RaptorTree.load(index)
    assert again.nodes == tree.nodes and np.allclose(again.vectors, tree.vectors)


def test_collapsed_tree_context_fits_the_budget_and_cites_documents(index: Index) -> None:
    tree = build_tree(index, CentralStatements())
    context = raptor_context(QUERY, index, tree, budget=1200)
    assert 0 < context.token_count <= 1200 and context.order == "raptor"
    titles = {d.id: d.title for d in index.documents()}
    for block in context.blocks:
        assert block.title == titles[block.document_id]
        assert block.passages and all(p.document_id == block.document_id for p in block.passages)
        statements = block.text.split(STATEMENT_LABEL + "\n")[1:]
        units = block.text.split(STATEMENT_LABEL + "\n")[0]
        for line in "".join(statements).splitlines():  # never a repetition of a unit of its block
            assert line.strip() and " ".join(line.split()) not in " ".join(units.split())
    with pytest.raises(BudgetError):
        raptor_context(QUERY, index, tree, budget=3)


def test_a_statement_goes_to_its_first_document_and_is_not_repeated(index: Index) -> None:
    passage = index.passages[0]
    sentence = passage.text.split(". ")[0].strip()
    pieces = [(Statement(sentence, (passage.document_id, "other")), 0.9), (passage, 0.8),
              (Statement("A statement of no known document.", ("nowhere",)), 0.7)]
    context = pack_pieces(index, pieces, 10_000, "test", get_tokenizer())
    assert [b.document_id for b in context.blocks] == [passage.document_id]
    assert STATEMENT_LABEL not in context.blocks[0].text  # the unit holds the statement: no repetition
    only = pack_pieces(index, pieces[:1], 10_000, "test", get_tokenizer())
    assert only.blocks[0].text == f"{STATEMENT_LABEL}\n{sentence}"
    assert only.blocks[0].passages[0].text == index.document(passage.document_id).text  # evidence: the document


def test_a_stale_damaged_or_missing_tree_is_refused_with_the_fix(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents[:20])
    with pytest.raises(ConfigError, match="citesum tree --index"):
        RaptorTree.load(index)
    build_tree(index, CentralStatements()).save(index.path)
    index.add([Document("new.txt", "New", "The reservoir reopened on Monday after repairs to its dam.")])
    with pytest.raises(ConfigError, match="generation"):
        raptor_context(QUERY, index, budget=1000)
    (tmp_path / "ix" / TREE_FILE).write_bytes(b"not a tree")
    with pytest.raises(ConfigError, match="unreadable RAPTOR tree"):
        RaptorTree.load(index)


def test_llm_statements_cite_the_documents_of_the_group_and_fall_back_when_the_model_fails() -> None:
    group = [Statement("Rates rise 7.5 percent on January 1.", ("a",)),
             Statement("A desalination plant will open by 2029.", ("b",))]
    llm = FakeLLM(["- Water rates rise 7.5 percent [1]\n- A plant opens in 2029 [2][1]",
                   "", "   ", LLMError("server down")])
    writer = LLMStatements(llm, workers=1)
    report = WriteReport()
    said = writer.write([group, group, group], [50, 50, 50], report)
    assert said[0] == (Statement("Water rates rise 7.5 percent", ("a",)),
                       Statement("A plant opens in 2029", ("b", "a")))
    assert "Document [1]" in llm.prompts[0] and "Rates rise 7.5 percent" in llm.prompts[0]
    assert [number for number, _ in report.fallbacks] == [1, 2] and report.groups == 3
    assert "no usable bullets" in report.fallbacks[0][1] and "server down" in report.fallbacks[1][1]
    assert said[1] and all(s.documents[0] in {"a", "b"} for s in said[1])  # the offline statements
    assert [b.document_id for b in group_context(group).blocks] == ["a", "b"]


def test_offline_pages_are_within_the_word_limit_and_never_cross_documents(index: Index) -> None:
    agent = ReadAgent(CentralStatements(), page_words=120, min_page_words=60)
    memory = agent.read(index)
    passages = index.passages
    assert [p.start for p in memory.pages] == sorted(p.start for p in memory.pages)
    assert memory.pages[0].start == 0 and memory.pages[-1].end == len(passages)
    for page, following in zip(memory.pages, memory.pages[1:]):
        assert page.end == following.start
    for page in memory.pages:
        units = passages[page.start : page.end]
        assert len({u.document_id for u in units}) == 1
        assert len(units) == 1 or sum(len(u.text.split()) for u in units) <= 120
        assert page.gist and sum(len(s.text.split()) for s in page.gist) <= sum(len(u.text.split()) for u in units)


def test_memory_is_stored_reused_and_rebuilt_for_a_new_generation(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents[:10])
    first = ReadAgent(CentralStatements()).memory(index)
    assert (tmp_path / "ix" / MEMORY_FILE).exists()
    report = ReadReport()
    assert ReadAgent(CentralStatements()).memory(index, report=report).pages == first.pages
    assert report.pages == 0  # read from the file, not again
    index.add([Document("new.txt", "New", "The reservoir reopened on Monday after repairs to its dam.")])
    assert Memory.load(index) is None
    assert len(ReadAgent(CentralStatements()).memory(index).pages) == len(first.pages) + 1


def test_lookup_reads_the_pages_the_model_names_in_place_of_their_gists(index: Index) -> None:
    memory = ReadAgent(CentralStatements()).read(index)
    agent = ReadAgent(CentralStatements(), FakeLLM(["Pages: 2"]))
    context, notes = agent.context(QUERY, index, memory, budget=4000)
    assert not [n for n in notes if "look-up" in n]
    prompt = agent.llm.prompts[0]  # type: ignore[union-attr]
    assert "Question: " + QUERY in prompt and "<Page 1>" in prompt
    shown = [int(line[6:-1]) for line in prompt.splitlines() if line.startswith("<Page ")]
    assert len(shown) >= 2
    assert context.token_count <= 4000


def test_a_lookup_answer_naming_no_shown_page_falls_back_to_closeness(index: Index) -> None:
    memory = ReadAgent(CentralStatements()).read(index)
    offline, _ = ReadAgent(CentralStatements()).context(QUERY, index, memory, budget=3000)
    agent = ReadAgent(CentralStatements(), FakeLLM(["Pages: 999"]))
    context, notes = agent.context(QUERY, index, memory, budget=3000)
    assert any("named no page" in n for n in notes)
    assert context.render() == offline.render()
    failing = ReadAgent(CentralStatements(), FakeLLM([LLMError("timeout after 3 retries")]))
    _, notes = failing.context(QUERY, index, memory, budget=3000)
    assert any("look-up failed" in n for n in notes)


def test_expanded_pages_bring_their_units_into_the_context(index: Index) -> None:
    memory = ReadAgent(CentralStatements()).read(index)
    context, _ = ReadAgent(CentralStatements()).context(QUERY, index, memory, budget=3000)
    units = [p for b in context.blocks for p in b.passages if not p.id.endswith("#document")]
    assert units  # some pages were read again in full
    gists_only, _ = ReadAgent(CentralStatements(), memory_share=1.0).context(QUERY, index, memory, budget=300)
    assert gists_only.token_count <= 300


def test_model_pagination_cuts_where_the_model_says_and_reports_unusable_answers(tmp_path: Path) -> None:
    sentences = [f"Sentence number {i} of the long report talks about the reservoir and its dam." for i in range(40)]
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add([Document("long.txt", "Long", " ".join(sentences))])
    units = len(index.passages)
    assert units >= 4
    agent = ReadAgent(CentralStatements(), FakeLLM(["Break point: <1>"] + ["no idea"] * 20),
                      page_words=80, min_page_words=20, workers=1)
    report = ReadReport()
    memory = agent.read(index, report=report)
    first = memory.pages[0]
    assert first.end - first.start >= 1 and memory.pages[-1].end == units
    assert report.pagination_fallbacks and all(doc == "long.txt" for doc, _ in report.pagination_fallbacks)
    assert "Break point" in agent.llm.prompts[0] and "<1>" in agent.llm.prompts[0]  # type: ignore[union-attr]


def test_cli_tree_then_raptor_and_readagent_summaries(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents)
    runner = CliRunner()
    missing = runner.invoke(main, ["summarize", QUERY, "--index", str(tmp_path / "ix"), "--retriever", "raptor"])
    assert missing.exit_code == 1 and "citesum tree --index" in missing.output
    built = runner.invoke(main, ["tree", "--index", str(tmp_path / "ix"), "--no-progress", "--json"])
    assert built.exit_code == 0, built.output
    assert '"nodes"' in built.output and (tmp_path / "ix" / TREE_FILE).exists()
    for options in (["--retriever", "raptor"], ["--summarizer", "readagent"]):
        result = runner.invoke(main, ["summarize", QUERY, "--index", str(tmp_path / "ix"), "--budget", "1500",
                                      *options])
        assert result.exit_code == 0, result.output
        assert re.search(r"^- .*\[\d+\]", result.output, re.MULTILINE)
        # without a model, ReadAgent says the answer is the documents' sentences (its note, on stderr)
        assert ("note: ReadAgent without a model" in result.output) == (options[-1] == "readagent")


def test_cli_tree_reduction_reaches_the_clustering(tmp_path: Path, haystack,  # type: ignore[no-untyped-def]
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents[:12])
    monkeypatch.setitem(sys.modules, "umap", None)  # UMAP asked for and missing: the error names the extra
    result = CliRunner().invoke(main, ["tree", "--index", str(tmp_path / "ix"), "--reduction", "umap", "--no-progress"])
    assert result.exit_code == 1 and "citesum[umap]" in result.output
    assert not (tmp_path / "ix" / TREE_FILE).exists()
    result = CliRunner().invoke(main, ["tree", "--index", str(tmp_path / "ix"), "--reduction", "tsne"])
    assert result.exit_code == 2 and ", ".join(f"'{r}'" for r in REDUCTIONS) in result.output  # the CLI's choices


def test_clustering_without_scikit_learn_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from citesum.errors import MissingExtraError

    for module in ("sklearn", "sklearn.decomposition", "sklearn.mixture"):
        monkeypatch.setitem(sys.modules, module, None)
    vectors, _ = blobs()
    with pytest.raises(MissingExtraError, match=r"citesum\[raptor\]"):
        cluster(vectors, np.full(len(vectors), 10))


def test_an_interrupted_tree_write_keeps_the_previous_tree(tmp_path: Path, haystack,  # type: ignore[no-untyped-def]
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    index = Index.create(tmp_path / "ix", IndexSettings())
    index.add(haystack.documents[:12])
    first = build_tree(index, CentralStatements(), levels=1)
    first.save(index.path)

    def killed(fd: int) -> None:
        raise KeyboardInterrupt  # the process dies after writing, before the rename

    monkeypatch.setattr("citesum.index.artifacts.os.fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        RaptorTree(first.nodes[:1], first.vectors[:1], first.generation, "other").save(index.path)
    monkeypatch.undo()
    assert RaptorTree.load(index).nodes == first.nodes
