"""``citesum index``, ``info``, ``check``, ``delete``, ``graph``, ``summary-index`` and ``demo``: building and
looking after an index."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import click

from citesum.chunking import UNITS
from citesum.cli.common import (EXIT_ERROR, base_url_option, citation_marks, echo_json, progress_bar, ray_executor,
                                 ray_options)
from citesum.datasets import DATASETS
from citesum.errors import CitesumError


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False), help="Index directory.")
@click.option("--unit", type=click.Choice(UNITS), default="passage", show_default=True,
              help="Retrieval unit: sentence-aware passages, or whole documents truncated at a sentence.")
@click.option("--chunk-tokens", type=click.IntRange(min=1), default=None,
              help="Token cap of a unit (default 100 for passages, 1024 for documents).")
@click.option("--embedder", default=None, help="Embedder name (default wordllama; fixed when the index is created).")
@click.option("--dataset", type=click.Choice(DATASETS), default=None,
              help="Read PATHS as a dataset instead of files (beir: a folder with corpus.jsonl).")
@click.option("--include", multiple=True, help="Only files matching this glob (repeatable).")
@click.option("--exclude", multiple=True, help="Skip files matching this glob (repeatable).")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None, help="Skip files larger than this.")
@click.option("--json-id-field", default="id", show_default=True)
@click.option("--json-title-field", default="title", show_default=True)
@click.option("--json-text-field", default="text", show_default=True)
@click.option("--sync", is_flag=True, help="Also delete indexed documents that are no longer among PATHS.")
@click.option("--ann-min-units", type=click.IntRange(min=0), default=None,
              help="Give the index an approximate nearest-neighbour graph (extra ann) from this many units on "
                   "(0: never; kept for later runs). Default 200000.")
@click.option("--segment-units", type=click.IntRange(min=1), default=None,
              help="Add at most about this many units per generation (a larger update commits several; an "
                   "interrupted one run again resumes), read files in batches of about that many units' worth, and "
                   "merge no segments past it: a build's memory grows with it, not with the collection (kept for "
                   "later runs; on Ray, a generation per batch of files). Default 1100000.")
@click.option("--store", default=None, metavar="local|milvus:URI",
              help="Where searches run, fixed when the index is created: 'local' (default; files beside the "
                   "database) or Milvus (extra milvus): milvus:./vectors.db (milvus-lite), milvus alone (a "
                   "milvus-lite file in DIR; one process at a time), or milvus:http://HOST:19530 (a server, which "
                   "many processes share; token in CITESUM_MILVUS_TOKEN).")
@click.option("--milvus-index", type=click.Choice(["HNSW", "IVF_FLAT", "FLAT"], case_sensitive=False), default=None,
              help="The Milvus collection's dense index (default HNSW; with --store milvus, at creation).")
@ray_options("Parse, chunk and embed (a generation committed per batch of files; an interrupted build run "
             "again embeds only what it had not)")
@click.option("--json", "as_json", is_flag=True, help="Print the ingestion report and update stats as JSON.")
def index(
    paths: Sequence[str], index_dir: str, unit: str, chunk_tokens: int | None, embedder: str | None,
    dataset: str | None, include: Sequence[str], exclude: Sequence[str], max_bytes: int | None,
    json_id_field: str, json_title_field: str, json_text_field: str, sync: bool, ann_min_units: int | None,
    segment_units: int | None, store: str | None, milvus_index: str | None, use_ray: bool, ray_address: str | None,
    as_json: bool,
) -> None:
    """Index files, folders or a dataset into DIR (incremental: unchanged documents are not redone)."""
    with ray_executor(use_ray, ray_address) as executor:
        _index(paths, index_dir, unit, chunk_tokens, embedder, dataset, include, exclude, max_bytes, json_id_field,
               json_title_field, json_text_field, sync, ann_min_units, segment_units, store, milvus_index, executor,
               as_json)


def _index(
    paths: Sequence[str], index_dir: str, unit: str, chunk_tokens: int | None, embedder: str | None,
    dataset: str | None, include: Sequence[str], exclude: Sequence[str], max_bytes: int | None,
    json_id_field: str, json_title_field: str, json_text_field: str, sync: bool, ann_min_units: int | None,
    segment_units: int | None, store: str | None, milvus_index: str | None, executor: Any, as_json: bool,
) -> None:
    from citesum.indexing import IndexingOptions, NothingToIndex, index_paths
    from citesum.ingest import shown

    unit_given = click.get_current_context().get_parameter_source("unit") == click.core.ParameterSource.COMMANDLINE
    options = IndexingOptions(
        unit=unit if unit_given else None, chunk_tokens=chunk_tokens, embedder=embedder, dataset=dataset,
        include=tuple(include), exclude=tuple(exclude), max_bytes=max_bytes, json_id_field=json_id_field,
        json_title_field=json_title_field, json_text_field=json_text_field, sync=sync, ann_min_units=ann_min_units,
        segment_units=segment_units, store=store, milvus_index=milvus_index)
    try:
        with progress_bar(not as_json and sys.stderr.isatty()) as progress:
            run = index_paths(paths, index_dir, options, executor=executor, progress=progress)
    except NothingToIndex as nothing:
        for skipped in nothing.report.skipped:
            click.echo(f"skipped {shown(skipped.path)}: {shown(skipped.reason)}", err=True)
        raise
    except Exception as failed:
        for note in getattr(failed, "__notes__", ()):  # what became of the index (a first build leaves none)
            click.echo(note, err=True)
        raise
    if as_json:
        echo_json({"report": json.loads(run.report.to_json()), "stats": run.stats.__dict__,
                   "kept_unread": run.kept_unread, "seconds": round(run.seconds, 3)})
        return
    for skipped in run.report.skipped:
        click.echo(f"skipped {shown(skipped.path)}: {shown(skipped.reason)}", err=True)
    for ingested in run.report.ingested:
        if ingested.reason:
            click.echo(f"partly ingested {shown(ingested.path)}: {shown(ingested.reason)}", err=True)
    kept, stats = run.kept_unread, run.stats
    if kept:
        click.echo(f"kept the indexed version of {len(kept)} document(s) whose file could not be read this time: "
                   + ", ".join(shown(d) for d in kept[:5]) + (" ..." if len(kept) > 5 else ""), err=True)
    click.echo(f"{index_dir}: {stats.added} added, {stats.updated} updated, {stats.unchanged} unchanged, "
               f"{stats.deleted} deleted; {stats.passages_embedded} units embedded; "
               f"{len(run.report.skipped)} file(s) skipped ({run.seconds:.1f}s)")


@click.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True)
def info(index_dir: str, as_json: bool) -> None:
    """Show an index's settings and size."""
    from citesum.index.store import Index

    details = _typed(Index.open(index_dir).info())
    # the index's own files, each with its size and checksum (not the documents' files)
    files = details.pop("files", None)
    index_files = {path: {"bytes": entry[0], "checksum": entry[1]} for path, entry in (files or {}).items()
                   if isinstance(entry, list) and len(entry) >= 2}
    if as_json:
        echo_json({**details, "created_at": _when(details.get("created")), "index_files": index_files})
        return
    details["created"] = _when(details.get("created"))
    for key, value in details.items():
        click.echo(f"{key:>16}: {value}")
    if index_files:
        click.echo(f"{'index files':>16}: {len(index_files)} (their sizes and checksums: --json)")


def _typed(manifest: dict[str, object]) -> dict[str, object]:
    """An index's manifest with its numbers as numbers and its list of files read (the store keeps text)."""
    typed: dict[str, object] = {}
    for key, value in manifest.items():
        if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
            value = int(value)
        elif isinstance(value, str) and re.fullmatch(r"-?\d+\.\d+", value):
            value = float(value)
        elif key == "files" and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = {}
        typed[key] = value
    return typed


def _when(created: object) -> str:
    """When an index was created (seconds since the epoch), as local time; "" when unknown."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(created)) if isinstance(created, (int, float)) else ""


@click.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--repair", is_flag=True, help="Rewrite the generation files from the database; remove leftovers.")
@click.option("--json", "as_json", is_flag=True)
def check(index_dir: str, repair: bool, as_json: bool) -> None:
    """Check an index (an fsck): the database's integrity, the checksums of its files, leftovers, counts.
    Exits 1 when something is wrong."""
    from citesum.index.check import check_index, repair_index

    report = repair_index(index_dir) if repair else check_index(index_dir)
    if as_json:
        echo_json({**report.__dict__, "ok": report.ok})
    else:
        counts = ", ".join(f"{value:,} {key}" for key, value in report.counts.items())
        click.echo(f"{report.path}: {'ok' if report.ok else 'problems found'}" + (f" ({counts})" if counts else ""))
        for problem in report.problems:
            click.echo(f"  problem: {problem}")
        for note in report.notes:
            click.echo(f"  note: {note}")
        if not report.ok:
            click.echo("  (citesum check --repair rewrites what can be rewritten)" if report.repairable else
                       "  (the database itself is damaged: rebuild the index from its sources into a new folder)")
    if not report.ok:
        sys.exit(EXIT_ERROR)


@click.command()
@click.argument("document_ids", nargs=-1, required=True)
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
def delete(document_ids: Sequence[str], index_dir: str) -> None:
    """Delete documents from the index by id."""
    from citesum.index.store import Index

    stats = Index.open(index_dir).delete(document_ids)
    click.echo(f"{stats.deleted} document(s) deleted")


@click.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
# bm25 is the default where the store keeps term counts: on ODSum Story's held-out questions its walk added more
# precision and recall to BM25 than the cosine graph's, and the packaged SmolLM2-135M's LM score lowered them
# (benchmarks/lightpal_odsum.py; docs/measurements.md has the table).
@click.option("--scorer", type=click.Choice(["bm25", "cosine", "lm"]), default=None,
              help="Link each unit to its nearest units by BM25 (the unit's 32 heaviest terms as the query; the "
                   "default, or cosine on a Milvus index) or by embedding cosine; lm: the nearest by cosine ranked "
                   "by P_LM(candidate | unit), as the LightPAL paper does (give a capable --model: the packaged "
                   "135M one is worse than either).")
@click.option("--model", default=None, type=click.Path(exists=True, dir_okay=False),
              help="GGUF file of the scoring LM (default: the packaged SmolLM2-135M; extra 'llamacpp').")
@click.option("--candidates", type=click.IntRange(min=1), default=100, show_default=True,
              help="Nearest units the LM scorer ranks for each unit (with bm25 / cosine: the edges are the "
                   "nearest, so only --edges matters).")
@click.option("--edges", type=click.IntRange(min=1), default=5, show_default=True, help="Edges kept per unit.")
@click.option("--lm-tokens", type=click.IntRange(min=2), default=256, show_default=True,
              help="Tokens of each text the LM sees.")
@ray_options("Link the units a block at a time")
def graph(index_dir: str, scorer: str | None, model: str | None, candidates: int, edges: int, lm_tokens: int,
          use_ray: bool, ray_address: str | None) -> None:
    """Build the LightPAL passage graph of an index (used by --retriever lightpal[:<base>]). An interrupted build
    run again links only the blocks of units it had not."""
    from citesum.index.store import Index
    from citesum.retrieve.lightpal import LanguageModelContextScorer, Neighbours, build_passage_graph

    index_ = Index.open(index_dir)
    if not index_.passages:
        raise CitesumError(f"the index {index_dir} has no units: nothing to link")
    context_scorer = LanguageModelContextScorer(model, max_tokens=lm_tokens) if scorer == "lm" else None
    # bm25 / cosine as asked; without --scorer the index's default; lm: the paper's cosine candidates
    neighbours: Neighbours | None = "bm25" if scorer == "bm25" else "cosine" if scorer == "cosine" else None
    started = time.perf_counter()
    with ray_executor(use_ray, ray_address) as executor, progress_bar(sys.stderr.isatty()) as progress:
        built = build_passage_graph(index_, context_scorer, candidates=candidates, edges=edges,
                                    neighbours=neighbours, progress=progress,
                                    executor=executor, resumable=True)
    path = built.save(index_.path)
    click.echo(f"linked {len(built.neighbors)} units ({built.neighbors.shape[1]} edges each, scorer {built.scorer}) "
               f"in {time.perf_counter() - started:.1f}s: {path}")


@click.command(name="summary-index")
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False), help="The content index.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Where the summary index lives (created, or brought up to date).")
@click.option("--summarizer", type=click.Choice(["central", "llm"]), default="central", show_default=True,
              help="central = the document's most central sentences (offline); llm = the paper's LLM summary.")
@click.option("--llm", "backend", type=click.Choice(["openai", "llamacpp"]), default="openai", show_default=True)
@click.option("--model", default=None, help="Model name (openai) or GGUF path (llamacpp).")
@base_url_option()
@click.option("--summary-tokens", type=click.IntRange(min=10), default=200, show_default=True,
              help="Length of the offline summaries (also the fallback when the LLM fails on a document).")
@ray_options("Summarize the documents a batch at a time")
def summary_index(index_dir: str, out_dir: str, summarizer: str, backend: str, model: str | None,
                  base_url: Sequence[str], summary_tokens: int, use_ray: bool, ray_address: str | None) -> None:
    """Build (or update) the Summary RAG index of an index: one summary per document, same ids. An interrupted
    build run again summarizes only the documents it had not."""
    from citesum.index.store import Index
    from citesum.summary_rag import CentralSentences, LLMSummaries, build_summary_index

    content = Index.open(index_dir)
    central = CentralSentences(max_tokens=summary_tokens)
    if summarizer == "llm":
        from citesum.llm.options import LLMOptions

        llm = LLMOptions(backend=backend, model=model, base_url=base_url).build()  # type: ignore[arg-type]
        if llm is None:
            raise CitesumError("--summarizer llm with --llm openai needs the server's model name: give --model")
        engine: Any = LLMSummaries(llm)
    else:
        engine = central
    started = time.perf_counter()
    with ray_executor(use_ray, ray_address) as executor, progress_bar(sys.stderr.isatty()) as progress:
        _, report = build_summary_index(content, out_dir, engine, fallback=central, progress=progress,
                                        executor=executor)
    click.echo(f"{report.summarized} summarized, {report.unchanged} unchanged, {report.deleted} deleted "
               f"in {time.perf_counter() - started:.1f}s: {out_dir}")
    for document_id, reason in report.fallbacks:
        click.echo(f"{document_id}: the LLM failed ({reason}); its summary is the central sentences", err=True)


@click.command()
@click.option("--dir", "folder", default="demo-data", show_default=True, type=click.Path(file_okay=False),
              help="Where to write the corpus and the index.")
@click.option("--documents", type=click.IntRange(min=5), default=60, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def demo(folder: str, documents: int, seed: int) -> None:
    """Generate our synthetic haystack, index it offline, and answer its questions with cited bullet summaries."""
    from citesum.defaults import DEFAULT_BULLETS
    from citesum.demo import answer_questions
    from citesum.pack import PackOptions
    from citesum.demo.haystack import generate_haystack
    from citesum.index.store import Index
    from citesum.ingest import ingest_paths

    haystack = generate_haystack(documents=documents, seed=seed)
    corpus = haystack.write(Path(folder) / "corpus")
    loaded, report = ingest_paths([corpus], exclude=["gold.json"])
    index_ = Index.create(Path(folder) / "index")
    with progress_bar(sys.stderr.isatty()) as progress:
        stats = index_.update(upsert=loaded, progress=progress)
    click.echo(f"indexed {len(loaded)} documents from {corpus} ({stats.passages_embedded} passages embedded, "
               f"{len(report.skipped)} skipped)")
    click.echo(f"answering with the defaults of `citesum summarize`: hybrid retrieval, a {PackOptions().budget:,}-token "
               f"context, the offline extractive summarizer, at most {DEFAULT_BULLETS} bullets")
    for subtopic, query, summary in answer_questions(haystack, index_):
        click.echo(f"\nQ: {query}")
        shown: dict[int, int] = {}
        for bullet in summary.bullets:
            click.echo(f"  - {bullet.text} {citation_marks(bullet.numbers, shown)}")
        for note in summary.notes:
            click.echo(f"  ({note})")
        for lead in summary.leads:
            click.echo(f"  lead: {lead.text} {citation_marks(lead.numbers, shown)}")
        # The generator knows which fact each sentence states and which documents state it: say how many bullets
        # answer the question asked, and how many citations name a document that states the bullet's fact.
        check = haystack.check(subtopic, summary)
        click.echo(f"  (checked against the generator's gold: {check.on_topic}/{check.bullets} bullets answer the "
                   f"question; {check.supported}/{check.citations} citations name a document that states the "
                   f"bullet's fact; {summary.timings['total_s']:.2f}s)")
    click.echo(f"\nTo ask your own questions in a browser: citesum serve --index {Path(folder) / 'index'} "
               "(extra 'service'; `make serve`), then open http://127.0.0.1:8000/")
