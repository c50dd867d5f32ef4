"""The ``citesum`` command line: index, search, info, delete, demo.

Errors print one line (``error: ...``) to stderr and exit with status 1; results go to stdout.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import click

from citesum.chunking import UNITS
from citesum.errors import CitesumError

if TYPE_CHECKING:
    from citesum.index.store import IndexReader

EXIT_ERROR = 1


def _empty_context() -> Any:
    from citesum.types import Context

    return Context(blocks=(), order="original", budget=1, token_count=0)


class CitesumCommand(click.Group):
    """Maps citesum's own errors (and OS errors) to a one-line message and a non-zero exit."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # The reader went away (`citesum ... | head`): not an error worth a message.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(0)
        except (CitesumError, OSError) as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
        except KeyboardInterrupt:
            click.echo("error: interrupted", err=True)
            sys.exit(130)


@click.group(cls=CitesumCommand)
@click.version_option(package_name="citesum")
@click.option("-v", "--verbose", is_flag=True, help="Show the libraries' informational log messages.")
def main(verbose: bool) -> None:
    """Query-focused summarization of document collections, with precise citations."""
    # Configure logging before any backend is imported: wordllama calls logging.basicConfig(INFO) on import,
    # which would otherwise print every library's INFO lines into the user's terminal.
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar on stderr, one task per stage, fed by the index's progress callback."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    tasks: dict[str, Any] = {}
    with Progress(TextColumn("{task.description:>10}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def _echo_json(payload: Any) -> None:
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))


def _echo_table(headers: Sequence[str], rows: Sequence[Sequence[object]], note: str = "") -> None:
    """A Markdown table on stdout (pastes into docs and issues as is)."""
    click.echo("| " + " | ".join(headers) + " |" + (f"  ({note})" if note else ""))
    click.echo("|" + "---|" * len(headers))
    for row in rows:
        click.echo("| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row) + " |")


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False), help="Index directory.")
@click.option("--unit", type=click.Choice(UNITS), default="passage", show_default=True,
              help="Retrieval unit: sentence-aware passages, or whole documents truncated at a sentence.")
@click.option("--chunk-tokens", type=click.IntRange(min=1), default=None,
              help="Token cap of a unit (default 100 for passages, 1024 for documents).")
@click.option("--embedder", default=None, help="Embedder name (default wordllama; fixed when the index is created).")
@click.option("--dataset", type=click.Choice(["summhay", "odsum-story", "odsum-meeting"]), default=None,
              help="Read PATHS as a dataset instead of files.")
@click.option("--include", multiple=True, help="Only files matching this glob (repeatable).")
@click.option("--exclude", multiple=True, help="Skip files matching this glob (repeatable).")
@click.option("--max-bytes", type=click.IntRange(min=1), default=None, help="Skip files larger than this.")
@click.option("--json-id-field", default="id", show_default=True)
@click.option("--json-title-field", default="title", show_default=True)
@click.option("--json-text-field", default="text", show_default=True)
@click.option("--sync", is_flag=True, help="Also delete indexed documents that are no longer among PATHS.")
@click.option("--json", "as_json", is_flag=True, help="Print the ingestion report and update stats as JSON.")
def index(
    paths: Sequence[str], index_dir: str, unit: str, chunk_tokens: int | None, embedder: str | None,
    dataset: str | None, include: Sequence[str], exclude: Sequence[str], max_bytes: int | None,
    json_id_field: str, json_title_field: str, json_text_field: str, sync: bool, as_json: bool,
) -> None:
    """Index files, folders or a dataset into DIR (incremental: unchanged documents are not redone)."""
    from citesum.index.store import DB_NAME, Index, IndexSettings
    from citesum.ingest import UPLOAD_KEY, IngestOptions, IngestReport, ingest_paths, is_missing, shown

    if dataset:
        from citesum.datasets import load_dataset

        documents = [d for path in paths for d in load_dataset(dataset, path).documents]
        report = IngestReport()
    else:
        missing = [path for path in paths if is_missing(path)]
        # A mistyped path must not cost the index its documents: with --sync they would all count as deleted.
        if sync and missing:
            raise CitesumError(f"--sync with a path that does not exist ({', '.join(missing)}): its documents "
                               "would be deleted from the index; nothing was changed")
        if len(missing) == len(paths):
            raise CitesumError(f"no such file or folder: {', '.join(missing)}")
        options = IngestOptions(json_id_field=json_id_field, json_title_field=json_title_field,
                                json_text_field=json_text_field,
                                **({"max_bytes": max_bytes} if max_bytes else {}))
        documents, report = ingest_paths(paths, include=include, exclude=exclude, options=options)
    exists = (Path(index_dir) / DB_NAME).exists()
    if not documents and not exists:
        # nothing to put in it: creating an empty index would only hide that every file was skipped
        for skipped in report.skipped:
            click.echo(f"skipped {shown(skipped.path)}: {shown(skipped.reason)}", err=True)
        raise CitesumError(f"nothing to index: {len(report.skipped)} file(s) skipped, none read; "
                           f"no index was created at {index_dir}")
    if exists:
        index_ = Index.open(index_dir, embedder=embedder)
        settings = index_.settings
        context = click.get_current_context()
        unit_given = context.get_parameter_source("unit") == click.core.ParameterSource.COMMANDLINE
        if (unit_given and unit != settings.unit) or (chunk_tokens and chunk_tokens != settings.max_tokens):
            raise CitesumError(
                f"index at {index_dir} uses unit={settings.unit}, chunk_tokens={settings.max_tokens}; "
                "build a new index to change them"
            )
    else:
        settings = IndexSettings.for_unit(unit, chunk_tokens, **({"embedder": embedder} if embedder else {}))  # type: ignore[arg-type]
        index_ = Index.create(index_dir, settings)
    stale: list[str] = []
    kept: list[str] = []
    if sync:
        wanted = {d.id for d in documents}
        # A file that is still there but could not be read this time keeps what it gave before; documents
        # uploaded through the service are not under PATHS and are kept (citesum delete removes them).
        unread = {f.document_id for f in report.skipped if f.unreadable and f.document_id}
        for document in index_.documents():
            if document.id in wanted or UPLOAD_KEY in document.metadata:
                continue
            if _from_file(document, unread):
                kept.append(document.id)
            else:
                stale.append(document.id)
    started = time.perf_counter()
    with _progress(not as_json and sys.stderr.isatty()) as progress:
        stats = index_.update(upsert=documents, delete=stale, progress=progress)
    elapsed = time.perf_counter() - started
    if as_json:
        _echo_json({"report": json.loads(report.to_json()), "stats": stats.__dict__, "kept_unread": kept,
                    "seconds": round(elapsed, 3)})
        return
    for skipped in report.skipped:
        click.echo(f"skipped {shown(skipped.path)}: {shown(skipped.reason)}", err=True)
    for ingested in report.ingested:
        if ingested.reason:
            click.echo(f"partly ingested {shown(ingested.path)}: {shown(ingested.reason)}", err=True)
    if kept:
        click.echo(f"kept the indexed version of {len(kept)} document(s) whose file could not be read this time: "
                   + ", ".join(shown(d) for d in kept[:5]) + (" ..." if len(kept) > 5 else ""), err=True)
    click.echo(
        f"{index_dir}: {stats.added} added, {stats.updated} updated, {stats.unchanged} unchanged, "
        f"{stats.deleted} deleted; {stats.passages_embedded} units embedded; "
        f"{len(report.skipped)} file(s) skipped ({elapsed:.1f}s)"
    )


def _query(argument: str | None, query_file: Any) -> str:
    """The query of a command: its argument, or the text of --query-file (a file, or '-' for stdin)."""
    if (argument is None) == (query_file is None):
        raise CitesumError("give the query as an argument or with --query-file (one of them)")
    query = argument if argument is not None else query_file.read()
    if not query.strip():
        raise CitesumError("the query is empty")
    return query


def _from_file(document: Any, files: set[str]) -> bool:
    """Whether ``document`` came from one of ``files`` (ids given to files by ingestion)."""
    from citesum.ingest import FILE_KEY

    recorded = document.metadata.get(FILE_KEY)
    if isinstance(recorded, str):
        return recorded in files
    return any(document.id == f or document.id.startswith(f + "#") for f in files)  # indexed before "file"


def _load_qrels(path: str | None) -> dict[str, float] | None:
    if path is None:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in data.items()}
    except (ValueError, AttributeError) as exc:
        raise CitesumError(f"{path}: qrels must be a JSON object {{document_id: grade}} ({exc})") from exc


def _no_results(index_: IndexReader) -> str:
    return "(no results: the index has no units)" if not index_.passages else "(no results)"


def _search_index(index_dir: str, query: str, retriever: str, k: int, by_document: bool, qrels: str | None,
                  seed: int) -> tuple[dict[str, Any], str]:
    """``citesum search`` on the index itself: the response, and what to say when it holds no result."""
    from citesum.index.store import Index
    from citesum.responses import search_response
    from citesum.retrieve import get_retriever

    with Index.open(index_dir).read() as view:
        ranker = get_retriever(retriever, view, relevance=_load_qrels(qrels), seed=seed)
        return search_response(ranker, view, query, k, documents=by_document), _no_results(view)


@main.command()
@click.argument("query", required=False)
@click.option("--query-file", type=click.File("r", encoding="utf-8", errors="replace"), default=None,
              help="Read the query from this file ('-' for standard input): for a query too long for the shell.")
@click.option("--index", "index_dir", default=None, type=click.Path(file_okay=False),
              help="Index directory (or --server).")
@click.option("--server", default=None, envvar="CITESUM_SERVER",
              help="Ask a running `citesum serve` at this URL instead of loading an index: it has the index and "
                   "the models loaded, so a search costs a round trip, not a start-up [env CITESUM_SERVER].")
@click.option("--token-file", type=click.Path(dir_okay=False), default=None,
              help="With --server: file whose first line is the service's bearer token (else $CITESUM_TOKEN).")
@click.option("--retriever", default="hybrid", show_default=True,
              help="bm25, dense, hybrid, hybrid:<a>+<b>..., keywords, random, oracle, lightpal[:<base>].")
@click.option("-k", "--top-k", "k", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--documents", "by_document", is_flag=True, help="Rank documents (best unit) instead of units.")
@click.option("--qrels", default=None, help="JSON {document_id: grade} for the oracle retriever.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random retriever.")
@click.option("--json", "as_json", is_flag=True)
def search(query: str | None, query_file: Any, index_dir: str | None, server: str | None, token_file: str | None,
           retriever: str, k: int, by_document: bool, qrels: str | None, seed: int, as_json: bool) -> None:
    """Search the index for QUERY (or --query-file); prints ranked units (or documents) with scores."""
    query = _query(query, query_file)
    if index_dir is not None:
        payload, empty = _search_index(index_dir, query, retriever, k, by_document, qrels, seed)
    elif server:
        if qrels is not None or seed != 0:
            raise click.UsageError("--qrels and --seed need the index itself (--index): a service has neither")
        from citesum.client import post_json
        from citesum.service.config import read_token

        payload = post_json(server, "/search", {"query": query, "retriever": retriever, "k": k,
                                                "documents": by_document}, token=read_token(token_file))
        empty = "(no results)"
    else:
        raise click.UsageError("give the index to search (--index DIR) or a running service (--server URL)")
    if as_json:
        _echo_json(payload)
        return
    if by_document:
        for entry in payload["documents"]:
            click.echo(f"{entry['rank']:>3}. {entry['score']:8.4f}  {entry['document_id']}  {entry['title']}")
    else:
        for hit in payload["hits"]:
            snippet = " ".join(hit["text"].split())
            click.echo(f"{hit['rank']:>3}. {hit['score']:8.4f}  {hit['document_id']} [{hit['ordinal']}]  "
                       f"{snippet[:160]}")
    if not payload.get("documents", payload.get("hits")):
        click.echo(empty)


@main.command()
@click.argument("query", required=False)
@click.option("--query-file", type=click.File("r", encoding="utf-8", errors="replace"), default=None,
              help="Read the query from this file ('-' for standard input): for a query too long for the shell.")
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--retriever", default="hybrid", show_default=True)
@click.option("--budget", type=click.IntRange(min=1), default=15_000, show_default=True,
              help="Context budget in tokens.")
@click.option("--order", type=click.Choice(["original", "score", "full"]), default="original", show_default=True,
              help="original = DOS RAG, score = Vanilla RAG, full = whole collection.")
@click.option("--stop-at-first-overflow", is_flag=True, help="Stop packing at the first unit that does not fit.")
@click.option("--top-k", type=click.IntRange(min=1), default=None, help="Pre-cap on retrieved units.")
@click.option("--summarizer", type=click.Choice(["extractive", "llm"]), default="extractive", show_default=True)
@click.option("--llm", "backend", type=click.Choice(["openai", "llamacpp"]), default="openai", show_default=True)
@click.option("--model", default=None, help="Model name (openai) or GGUF path (llamacpp; default: packaged SmolLM2).")
@click.option("--base-url", default=None, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True)
@click.option("--template", default="summhay", show_default=True, help="summhay, answer, long, or a template file.")
@click.option("--bullets", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--words", type=click.IntRange(min=1), default=250, show_default=True, help="Word limit.")
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=1024, show_default=True, help="Answer tokens.")
@click.option("--tokenizer", default=None,
              help="Summarizer's tokenizer for the budget: cl100k, or hf:<tokenizer.json> (default: the index's).")
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="Model context window: the budget shrinks to leave room for the prompt and the answer.")
@click.option("--timeout", type=float, default=120.0, show_default=True)
@click.option("--no-cache", is_flag=True, help="Do not read or write the LLM response cache.")
@click.option("--verify-citations", is_flag=True, help="Check every citation against the context, with evidence.")
@click.option("--repair-citations/--no-repair-citations", default=None,
              help="Replace each bullet's citations by the context documents that support it "
                   "(default: on for --summarizer llm, off for extractive).")
@click.option("--confirm-model", default=None,
              help="Let this OpenAI-compatible model (at --base-url) decide borderline citations.")
@click.option("--summary-index", "summary_dir", default=None, type=click.Path(exists=True, file_okay=False),
              help="Summary RAG: retrieve over this summary index (citesum summary-index) and give each of the top "
                   "--summary-documents documents' summary and full text (--budget and --order do not apply).")
@click.option("--summary-documents", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--char-limit", type=click.IntRange(min=1), default=12_000, show_default=True,
              help="Summary RAG: from the first document whose full text would pass this many characters, "
                   "documents give their summary only.")
@click.option("--json", "as_json", is_flag=True)
def summarize(
    query: str | None, query_file: Any, index_dir: str, retriever: str, budget: int, order: str,
    stop_at_first_overflow: bool,
    top_k: int | None, summarizer: str, backend: str, model: str | None, base_url: str | None, api_key_env: str,
    template: str, bullets: int, words: int, temperature: float, seed: int, max_tokens: int,
    tokenizer: str | None, window: int | None, timeout: float, no_cache: bool, verify_citations: bool,
    repair_citations: bool | None, confirm_model: str | None, summary_dir: str | None, summary_documents: int,
    char_limit: int, as_json: bool,
) -> None:
    """Answer QUERY (or --query-file) with a short bullet summary whose bullets cite the documents that support
    them."""
    from citesum.index.store import Index
    from citesum.pack import PackOptions
    from citesum.responses import summary_response
    from citesum.summarize import fit_budget, summarize_context, summarize_query, summarizer_for
    from citesum.tokens import get_tokenizer

    query = _query(query, query_file)
    index_ = Index.open(index_dir)
    budget_tokenizer = get_tokenizer(tokenizer or index_.settings.tokenizer)
    llm = None
    if summarizer == "llm":
        from citesum.llm import ResponseCache, get_llm

        options: dict[str, object] = {"api_key_env": api_key_env, "timeout": timeout} if backend == "openai" else {}
        llm = get_llm(backend, model, base_url=base_url, cache=None if no_cache else ResponseCache(), **options) \
            if backend == "openai" else get_llm(backend, model)
    llm_options = {"template": template, "temperature": temperature, "seed": seed, "max_tokens": max_tokens}
    engine = summarizer_for(llm, bullets=bullets, words=words, **(llm_options if llm else {}))
    if llm is not None:
        prompt_tokens = budget_tokenizer.count(engine.prompt(query, _empty_context()))  # type: ignore[attr-defined]
        budget = fit_budget(budget, window, prompt_tokens, max_tokens)
    repair_citations = _repair_by_default(summarizer, repair_citations)
    with index_.read() as view:
        if summary_dir is not None:
            from citesum.summary_rag import summaries_for, summary_rag_context

            started = time.perf_counter()
            context = summary_rag_context(query, summaries_for(view, summary_dir), view, retriever=retriever,
                                          documents=summary_documents, char_limit=char_limit,
                                          tokenizer=budget_tokenizer)
            result = summarize_context(query, context, engine, retrieve_pack_s=time.perf_counter() - started)
        else:
            pack_options = PackOptions(budget=budget, order=order,  # type: ignore[arg-type]
                                       stop_at_first_overflow=stop_at_first_overflow, top_k=top_k)
            result = summarize_query(query, view, engine, retriever=retriever, options=pack_options,
                                     tokenizer=budget_tokenizer)
        checks: list[Any] = []
        if verify_citations or repair_citations:
            from citesum.summarize.verify import check_summary

            result, checks = check_summary(result, repair=repair_citations,
                                           confirm=_openai_llm(confirm_model, base_url, no_cache))
        payload = summary_response(result, view, query=query, checks=checks)
    if as_json:
        _echo_json(payload)
        return
    if not result.bullets:
        click.echo("(no bullets: " + "; ".join(result.notes or ("no relevant content found",)) + ")")
    elif result.notes:
        click.echo("note: " + "; ".join(result.notes), err=True)
    cited: dict[int, str] = {}
    for bullet in result.bullets:
        marks = "".join(f"[{n}]" for n in bullet.numbers)
        click.echo(f"- {bullet.text} {marks}".rstrip())
        cited.update(zip(bullet.numbers, bullet.citations))
    if cited:
        click.echo("")
        for number in sorted(cited):
            source = payload["sources"][str(number)]
            click.echo(f"[{number}] {source['title'] or source['document_id']} — "
                       f"{source['source'] or source['document_id']}")
    if result.dropped_citations:
        click.echo(f"note: removed citations to documents not in the context: {list(result.dropped_citations)}",
                   err=True)
    for number, check in enumerate(checks, start=1):
        unsupported = [c.document_id for c in check.checks if not c.supported]
        if unsupported and not repair_citations:
            click.echo(f"note: bullet {number} cites documents that do not state it: {unsupported}", err=True)


def _openai_llm(model: str | None, base_url: str | None, no_cache: bool = False) -> Any:
    """An OpenAI-compatible backend with the response cache, or None without a model name."""
    if not model:
        return None
    from citesum.llm import ResponseCache, get_llm

    return get_llm("openai", model, base_url=base_url, cache=None if no_cache else ResponseCache())


def _summarizer_factory(summarizer: str, model: str | None, base_url: str | None,
                        max_tokens: int = 1024) -> Callable[[int], Any]:
    """Bullets -> summarizer, for the SummHay runs (one bullet per insight)."""
    from citesum.evaluate.runner import extractive_factory

    if summarizer == "extractive":
        return extractive_factory
    from citesum.summarize.llm import LLMSummarizer

    llm = _openai_llm(model, base_url)
    if llm is None:
        raise CitesumError("--summarizer llm needs --summarizer-model (and --summarizer-base-url)")
    return lambda bullets: LLMSummarizer(llm, "summhay", bullets=bullets, max_tokens=max_tokens)


def _judge_columns(judge: Any) -> dict[str, Any]:
    """A report's columns for its judge: the name and, for an LLM judge, how many replies it could not read
    (counted as NO coverage), with a warning that shows the first one."""
    from citesum.evaluate.llm_judge import LLMJudge

    if not isinstance(judge, LLMJudge):
        return {"judge": judge.name}
    if judge.unparsed:
        click.echo(f"warning: {len(judge.unparsed)} judge replies were not the expected JSON after "
                   f"{judge.retries_on_bad_output} retry(ies) and count as NO coverage; first: {judge.unparsed[0]}",
                   err=True)
    return {"judge": judge.name, "unparsed_judge_replies": len(judge.unparsed)}


def _repair_by_default(summarizer: str, repair_citations: bool | None) -> bool:
    """The --repair-citations default: on for an LLM summarizer. Measured: repair lifts every stored LLM system
    of SummHay (benchmarks/citation_repair.py). The extractive summarizer cites by construction, at most 5
    documents a bullet; repair lifts its SummHay joint too (26.8 -> 30.2) but drops that limit, so it is asked
    for."""
    return summarizer == "llm" if repair_citations is None else repair_citations


def _repair_and_label(summarizer: str, model: str | None, repair_citations: bool | None) -> tuple[bool, str]:
    """Whether a SummHay run repairs citations and its label in reports."""
    repair = _repair_by_default(summarizer, repair_citations)
    return repair, (model if summarizer == "llm" else "extractive") + (" + repair" if repair else "")


@main.command()
@click.argument("summary_file", type=click.Path(dir_okay=False))
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--verify-only", is_flag=True, help="Annotate the citations; do not change them.")
@click.option("--confirm-model", default=None, help="Let this OpenAI-compatible model decide borderline citations.")
@click.option("--base-url", default=None, help="Base URL of the --confirm-model server.")
@click.option("--json", "as_json", is_flag=True)
def repair(summary_file: str, index_dir: str, verify_only: bool, confirm_model: str | None, base_url: str | None,
           as_json: bool) -> None:
    """Verify and repair the citations of an existing summary against the whole index.

    SUMMARY_FILE is our `summarize --json` output (citations as document ids) or plain lines with [n]
    citations, where n is the 1-based position of a document in the index's collection order (SummHay's
    convention).
    """
    from citesum.index.store import Index
    from citesum.responses import verification_json
    from citesum.summarize.citations import bullet_lines, citation_numbers
    from citesum.summarize.verify import CitationVerifier

    raw = Path(summary_file).read_text(encoding="utf-8", errors="replace")
    index_ = Index.open(index_dir)
    documents = list(index_.documents())
    if not documents:
        raise CitesumError(f"index at {index_dir} holds no documents to check citations against")
    by_position = {number: d.id for number, d in enumerate(documents, start=1)}
    position_of = {d: n for n, d in by_position.items()}
    try:
        parsed = json.loads(raw)
        bullets = [(b["text"], list(b.get("citations", []))) for b in parsed["bullets"]]
    except (ValueError, KeyError, TypeError):
        bullets = [(line, [by_position.get(n, f"#{n}") for n in citation_numbers(line)])
                   for line in bullet_lines(raw)]
    if not bullets:
        raise CitesumError(f"{summary_file}: no bullets found (expected summarize --json output or lines of text)")
    verifier = CitationVerifier(documents, confirm=_openai_llm(confirm_model, base_url))
    checked = [verifier.verify(text, cited) for text, cited in bullets]
    if as_json:
        _echo_json({"bullets": [verification_json(v) for v in checked]})
        return
    for (_, cited), result in zip(bullets, checked):
        citations = sorted(position_of[d] for d in (cited if verify_only else result.citations) if d in position_of)
        click.echo(f"{result.text} " + "".join(f"[{n}]" for n in citations))
        for check in result.checks:
            if not check.supported:
                reason = "not in the index" if check.evidence is None else "does not state it"
                click.echo(f"  unsupported: {check.document_id} ({reason})", err=True)


@main.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True)
def info(index_dir: str, as_json: bool) -> None:
    """Show an index's settings and size."""
    from citesum.index.store import Index

    details = Index.open(index_dir).info()
    if as_json:
        _echo_json(details)
        return
    details["created"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(str(details["created"]))))
    for key, value in details.items():
        click.echo(f"{key:>16}: {value}")


@main.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--repair", is_flag=True, help="Rewrite the generation files from the database; remove leftovers.")
@click.option("--json", "as_json", is_flag=True)
def check(index_dir: str, repair: bool, as_json: bool) -> None:
    """Check an index (an fsck): the database's integrity, the checksums of its files, leftovers, counts.
    Exits 1 when something is wrong."""
    from citesum.index.check import check_index, repair_index

    report = repair_index(index_dir) if repair else check_index(index_dir)
    if as_json:
        _echo_json({**report.__dict__, "ok": report.ok})
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


@main.command()
@click.argument("document_ids", nargs=-1, required=True)
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
def delete(document_ids: Sequence[str], index_dir: str) -> None:
    """Delete documents from the index by id."""
    from citesum.index.store import Index

    stats = Index.open(index_dir).delete(document_ids)
    click.echo(f"{stats.deleted} document(s) deleted")


@main.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any non-loopback address needs a token.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--token-file", type=click.Path(dir_okay=False), default=None,
              help="File whose first line is the bearer token clients must send (else $CITESUM_TOKEN).")
@click.option("--allowed-host", "allowed_hosts", multiple=True,
              help="Host name clients use to reach the service (repeatable; '*' for any). Default: the loopback "
                   "names, plus this machine's names and addresses when --host is not loopback.")
@click.option("--docs", is_flag=True, help="Serve the API documentation at /docs and /openapi.json.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Workers writing summaries (default: one per CPU core).")
@click.option("--search-workers", type=click.IntRange(min=1), default=None,
              help="Workers answering searches and document reads, apart from the summaries (default: one per "
                   "CPU core).")
@click.option("--worker-kind", type=click.Choice(["process", "thread"]), default=None,
              help="Processes use every core for the offline pipeline (default without --llm); threads suit an "
                   "LLM-bound summarizer (default with --llm).")
@click.option("--queue", type=click.IntRange(min=0), default=64, show_default=True,
              help="Requests that may wait for a worker; past that: 503 with Retry-After.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds a request may take before it is answered 504.")
@click.option("--max-upload-mb", type=click.FloatRange(min=0, min_open=True), default=25.0, show_default=True)
@click.option("--uploads", "uploads_dir", type=click.Path(file_okay=False), default=None,
              help="Where uploaded files are kept (default: INDEX/uploads).")
@click.option("--max-budget", type=click.IntRange(min=1), default=None,
              help="Largest context budget a request may ask (default: what the summarizer can use).")
@click.option("--llm", "backend", type=click.Choice(["openai", "llamacpp"]), default=None,
              help="Write summaries with an LLM (default: the offline extractive summarizer).")
@click.option("--model", default=None, help="Model name (openai) or GGUF path (llamacpp; default: packaged SmolLM2).")
@click.option("--base-url", default=None, help="OpenAI-compatible base URL (with --llm openai).")
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="The LLM's context window: requests' budgets are capped to leave room for prompt and answer.")
def serve(index_dir: str, host: str, port: int, token_file: str | None, allowed_hosts: Sequence[str], docs: bool,
          workers: int | None, search_workers: int | None, worker_kind: str | None, queue: int, timeout: float,
          max_upload_mb: float, uploads_dir: str | None, max_budget: int | None, backend: str | None,
          model: str | None, base_url: str | None, window: int | None) -> None:
    """Serve the web page and the HTTP API (extra 'service'): open http://HOST:PORT/ in a browser."""
    from citesum.service.config import ServiceConfig, read_token

    if backend is None and window is not None:
        raise CitesumError("--window is the LLM's context window: give it with --llm")
    config = ServiceConfig(
        host=host, token=read_token(token_file), allowed_hosts=tuple(allowed_hosts) or None, docs=docs, queue=queue,
        timeout_s=timeout, max_upload_bytes=int(max_upload_mb * 1024 * 1024),
        worker_kind=worker_kind or ("thread" if backend else "process"),  # type: ignore[arg-type]
        uploads_dir=Path(uploads_dir) if uploads_dir else None, **({"max_budget": max_budget} if max_budget else {}),
        **({"workers": workers} if workers else {}), **({"search_workers": search_workers} if search_workers else {}))
    llm = None
    if backend is not None:
        from citesum.llm import ResponseCache, get_llm

        llm = get_llm(backend, model, base_url=base_url, cache=ResponseCache(), context_window=window) \
            if backend == "openai" else get_llm(backend, model, **({"n_ctx": window} if window else {}))
    listener = _listen(host, port)  # before anything is said or started: a busy port is one clear error
    from citesum.service.app import create_app

    app = create_app(index_dir, config, llm=llm)
    import uvicorn

    where = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    click.echo(f"serving {index_dir} at {where}" + (" (token required)" if config.token else ""), err=True)
    try:
        uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5)).run(sockets=[listener])
    except KeyboardInterrupt:
        pass  # Ctrl+C: uvicorn has shut down gracefully and raises it again on the way out
    click.echo("stopped", err=True)


def _listen(host: str, port: int) -> Any:
    """A TCP socket bound to ``host:port`` for the service."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio turns Nagle off only on sockets that say they are TCP, and with it on,
    # each keep-alive request waited ~40 ms for a delayed ACK
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise CitesumError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return listener


@main.command(name="estimate-budget")
@click.argument("queries_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--panel-model", "panel_models", multiple=True, required=True,
              help="OpenAI-compatible model that writes silver references from the full context (repeatable).")
@click.option("--base-url", default=None, help="OpenAI-compatible base URL of the panel (and of --model).")
@click.option("--window", type=click.IntRange(min=1), default=32_768, show_default=True,
              help="Context window of the panel models: the full context is cut to fit it.")
@click.option("--budgets", default="2000,4000,8000,16000,24000,32000", show_default=True,
              help="Comma-separated context budgets (tokens) to compare, or 'paper' for the paper's grid "
                   "(8000 to 80000 in steps of 8000; the panel's --window must hold them).")
@click.option("--fraction", type=click.FloatRange(0, 1, min_open=True), default=0.25, show_default=True,
              help="Share of the queries used.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--samples", type=click.IntRange(min=1), default=3, show_default=True,
              help="Summaries per panel model and per budget (temperature 0.5; 1 for the extractive summarizer).")
@click.option("--retriever", default="hybrid", show_default=True)
@click.option("--order", type=click.Choice(["original", "score"]), default="original", show_default=True)
@click.option("--summarizer", type=click.Choice(["extractive", "llm"]), default="extractive", show_default=True)
@click.option("--model", default=None, help="The pipeline's OpenAI-compatible model (with --summarizer llm).")
@click.option("--words", type=click.IntRange(min=1), default=250, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def estimate_budget_command(queries_file: str, index_dir: str, panel_models: Sequence[str], base_url: str | None,
                            window: int, budgets: str, fraction: float, seed: int, samples: int, retriever: str,
                            order: str, summarizer: str, model: str | None, words: int, as_json: bool) -> None:
    """Estimate the context budget of a pipeline without gold summaries (Pratapa & Mitamura): silver
    references from a panel of LMs given the full context, the pipeline run at each budget against them."""
    from citesum.budget import estimate_budget, panel_candidates, parse_budgets, sample_examples
    from citesum.index.store import Index
    from citesum.llm import ResponseCache, get_llm
    from citesum.pack import PackOptions, pack_full
    from citesum.summarize import fit_budget, summarize_query
    from citesum.summarize.citations import strip_citations
    from citesum.summarize.prompts import get_template
    from citesum.tokens import get_tokenizer

    queries = [line.strip() for line in Path(queries_file).read_text(encoding="utf-8").splitlines() if line.strip()]
    if not queries:
        raise CitesumError(f"{queries_file}: no queries (one per line)")
    grid = parse_budgets(budgets)
    if grid[-1] > window:
        raise CitesumError(f"--budgets go up to {grid[-1]:,} tokens, more than the panel's --window of {window:,}: "
                           "raise --window (the paper's grid needs 80,000) or give smaller budgets")
    if summarizer == "llm" and not model:
        raise CitesumError("--summarizer llm needs --model")
    index_ = Index.open(index_dir)
    tokenizer = get_tokenizer(index_.settings.tokenizer)
    answer = get_template("answer")
    cache = ResponseCache()
    panel = [get_llm("openai", name, base_url=base_url, cache=cache) for name in panel_models]
    documents = list(index_.documents())
    chosen = sample_examples([str(i) for i in range(len(queries))], fraction, seed)
    candidates: dict[str, list[str]] = {}
    for example in chosen:
        query = queries[int(example)]
        room = fit_budget(window, window, tokenizer.count(answer.render(context="", query=query, num_words=words)),
                          1024)
        prompt = answer.render(context=pack_full(documents, room, tokenizer).render(), query=query, num_words=words)
        candidates[example] = [strip_citations(t) for t in panel_candidates(prompt, panel, samples=samples)]
        if not candidates[example]:
            raise CitesumError(f"the panel wrote nothing for the query '{query}'")
    pipeline_llm = get_llm("openai", model, base_url=base_url, cache=cache) if summarizer == "llm" else None
    runs = 1 if pipeline_llm is None else samples  # the extractive summarizer is deterministic

    def run(example: str, budget: int, sample: int) -> str:
        engine: Any
        if pipeline_llm is not None:
            from citesum.summarize.llm import LLMSummarizer

            engine = LLMSummarizer(pipeline_llm, "answer", num_words=words, temperature=0.5, seed=sample)
        else:
            from citesum.summarize.extractive import ExtractiveOptions, ExtractiveSummarizer

            engine = ExtractiveSummarizer(ExtractiveOptions(bullets=None, max_words=words))
        summary = summarize_query(queries[int(example)], index_, engine, retriever=retriever,
                                  options=PackOptions(budget=budget, order=order))  # type: ignore[arg-type]
        return strip_citations(summary.raw_output or " ".join(b.text for b in summary.bullets))

    result = estimate_budget(candidates, run, grid, samples=runs, fraction=1.0)
    if as_json:
        _echo_json({"estimate": result.budget, "best_budget": result.best_budget, "queries": len(result.examples),
                    "means": result.means, "stds": result.stds, "panel": list(panel_models)})
        return
    _echo_table(["budget", "silver-reference utility", "std"],
                [[b, f"{result.means[b]:.4f}", f"{result.stds[b]:.4f}"] for b in grid])
    click.echo(f"estimate: {result.budget} tokens (best mean at {result.best_budget}; "
               f"{len(result.examples)} of {len(queries)} queries)")


@main.command(name="summary-index")
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False), help="The content index.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Where the summary index lives (created, or brought up to date).")
@click.option("--summarizer", type=click.Choice(["central", "llm"]), default="central", show_default=True,
              help="central = the document's most central sentences (offline); llm = the paper's LLM summary.")
@click.option("--llm", "backend", type=click.Choice(["openai", "llamacpp"]), default="openai", show_default=True)
@click.option("--model", default=None, help="Model name (openai) or GGUF path (llamacpp).")
@click.option("--base-url", default=None, help="OpenAI-compatible base URL.")
@click.option("--summary-tokens", type=click.IntRange(min=10), default=200, show_default=True,
              help="Length of the offline summaries (also the fallback when the LLM fails on a document).")
def summary_index(index_dir: str, out_dir: str, summarizer: str, backend: str, model: str | None,
                  base_url: str | None, summary_tokens: int) -> None:
    """Build (or update) the Summary RAG index of an index: one summary per document, same ids."""
    from citesum.index.store import Index
    from citesum.summary_rag import CentralSentences, LLMSummaries, build_summary_index

    content = Index.open(index_dir)
    central = CentralSentences(max_tokens=summary_tokens)
    if summarizer == "llm":
        from citesum.llm import ResponseCache, get_llm

        llm = get_llm(backend, model, base_url=base_url, cache=ResponseCache()) if backend == "openai" \
            else get_llm(backend, model)
        engine: Any = LLMSummaries(llm)
    else:
        engine = central
    started = time.perf_counter()
    with _progress(sys.stderr.isatty()) as progress:
        _, report = build_summary_index(content, out_dir, engine, fallback=central, progress=progress)
    click.echo(f"{report.summarized} summarized, {report.unchanged} unchanged, {report.deleted} deleted "
               f"in {time.perf_counter() - started:.1f}s: {out_dir}")
    for document_id, reason in report.fallbacks:
        click.echo(f"{document_id}: the LLM failed ({reason}); its summary is the central sentences", err=True)


@main.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
# cosine is the default: with the packaged SmolLM2-135M, the paper's LM score linked fewer same-story sections
# than the cosine and lowered BM25's precision on ODSum Story (benchmarks/lightpal_odsum.py, README).
@click.option("--scorer", type=click.Choice(["cosine", "lm"]), default="cosine", show_default=True,
              help="Rank each unit's candidates by embedding cosine, or by P_LM(candidate | unit) as the "
                   "LightPAL paper does (give a capable --model: the packaged 135M one is worse than cosine).")
@click.option("--model", default=None, type=click.Path(exists=True, dir_okay=False),
              help="GGUF file of the scoring LM (default: the packaged SmolLM2-135M; extra 'llamacpp').")
@click.option("--candidates", type=click.IntRange(min=1), default=100, show_default=True,
              help="Nearest units (by embedding) the scorer ranks for each unit.")
@click.option("--edges", type=click.IntRange(min=1), default=5, show_default=True, help="Edges kept per unit.")
@click.option("--lm-tokens", type=click.IntRange(min=2), default=256, show_default=True,
              help="Tokens of each text the LM sees.")
def graph(index_dir: str, scorer: str, model: str | None, candidates: int, edges: int, lm_tokens: int) -> None:
    """Build the LightPAL passage graph of an index (used by --retriever lightpal[:<base>])."""
    from citesum.index.store import Index
    from citesum.retrieve.lightpal import LanguageModelContextScorer, build_passage_graph

    index_ = Index.open(index_dir)
    if not index_.passages:
        raise CitesumError(f"the index {index_dir} has no units: nothing to link")
    context_scorer = LanguageModelContextScorer(model, max_tokens=lm_tokens) if scorer == "lm" else None
    started = time.perf_counter()
    with _progress(sys.stderr.isatty()) as progress:
        built = build_passage_graph(index_, context_scorer, candidates=candidates, edges=edges, progress=progress)
    path = built.save(index_.path)
    click.echo(f"linked {len(built.neighbors)} units ({built.neighbors.shape[1]} edges each, scorer {built.scorer}) "
               f"in {time.perf_counter() - started:.1f}s: {path}")


@main.command()
@click.option("--dir", "folder", default="demo-data", show_default=True, type=click.Path(file_okay=False),
              help="Where to write the corpus and the index.")
@click.option("--documents", type=click.IntRange(min=5), default=60, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def demo(folder: str, documents: int, seed: int) -> None:
    """Generate our synthetic haystack, index it offline, and answer its questions with cited bullet summaries."""
    from citesum.demo import answer_questions
    from citesum.demo.haystack import generate_haystack
    from citesum.index.store import Index
    from citesum.ingest import ingest_paths

    haystack = generate_haystack(documents=documents, seed=seed)
    corpus = haystack.write(Path(folder) / "corpus")
    loaded, report = ingest_paths([corpus], exclude=["gold.json"])
    index_ = Index.create(Path(folder) / "index")
    with _progress(sys.stderr.isatty()) as progress:
        stats = index_.update(upsert=loaded, progress=progress)
    click.echo(f"indexed {len(loaded)} documents from {corpus} ({stats.passages_embedded} passages embedded, "
               f"{len(report.skipped)} skipped)")
    for subtopic, query, summary in answer_questions(haystack, index_):
        click.echo(f"\nQ: {query}")
        for bullet in summary.bullets:
            click.echo(f"  - {bullet.text} " + "".join(f"[{n}]" for n in bullet.numbers))
        # The generator knows which documents state which fact: show how many citations are right.
        check = haystack.check(subtopic, summary)
        click.echo(f"  ({check.supported}/{check.citations} citations point to a document that states the "
                   f"bullet's fact; {summary.timings['total_s']:.2f}s)")
    click.echo(f"\nTo ask your own questions in a browser: citesum serve --index {Path(folder) / 'index'} "
               "(extra 'service'; `make serve`), then open http://127.0.0.1:8000/")


@main.group(name="eval")
def eval_group() -> None:
    """Evaluate summaries and retrieval with the papers' protocols."""


@eval_group.command(name="summhay")
@click.option("--haystack", "haystack_files", multiple=True, required=True,
              type=click.Path(exists=True, dir_okay=False),
              help="A SummHay topic_*.json (repeatable; scores are pooled over all insights).")
@click.option("--system", "systems", multiple=True,
              help="Stored system key(s), e.g. summary_subtopic_rerank3_gpt-4o, or systems of --summaries "
                   "(default: every one).")
@click.option("--retriever", default=None,
              help="Run OUR pipeline with this retriever (instead of scoring stored summaries) and judge it.")
@click.option("--summaries", "summary_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Judge the summaries in this file with --judge: a SummHay topic file with subtopic "
                   "'summaries', or JSON {system: {subtopic_id: lines or text}} or {subtopic_id: lines or text}; "
                   "citations [n] are haystack positions (repeatable).")
@click.option("--budget", type=click.IntRange(min=1), default=15_000, show_default=True)
@click.option("--order", type=click.Choice(["original", "score", "full"]), default="original", show_default=True)
@click.option("--unit", type=click.Choice(["document", "passage"]), default="document", show_default=True)
@click.option("--summarizer", type=click.Choice(["extractive", "llm"]), default="extractive", show_default=True)
@click.option("--summarizer-model", default=None, help="OpenAI-compatible model for --summarizer llm.")
@click.option("--summarizer-base-url", default=None)
@click.option("--summarizer-max-tokens", type=click.IntRange(min=1), default=1024, show_default=True,
              help="Answer tokens of the LLM summarizer.")
@click.option("--repair-citations/--no-repair-citations", default=None,
              help="Repair citations against the context (default: on for --summarizer llm).")
@click.option("--judge", "judge_name", default="offline", show_default=True,
              help="Judge for pipeline runs: offline, offline:<embedder>, lexical, llm (with --model/--base-url).")
@click.option("--model", default=None, help="LLM judge model (OpenAI-compatible).")
@click.option("--base-url", default=None)
@click.option("--index-dir", default=None, type=click.Path(file_okay=False),
              help="Keep the haystack indexes here (reused when unchanged).")
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Write every per-insight decision to this JSON file.")
@click.option("--json", "as_json", is_flag=True)
def eval_summhay(haystack_files: Sequence[str], systems: Sequence[str], retriever: str | None,
                 summary_files: Sequence[str], budget: int,
                 order: str, unit: str, summarizer: str, summarizer_model: str | None,
                 summarizer_base_url: str | None, summarizer_max_tokens: int, repair_citations: bool | None,
                 judge_name: str, model: str | None, base_url: str | None, index_dir: str | None,
                 report: str | None, as_json: bool) -> None:
    """SummHay coverage / citation / joint (paper protocol). By default: the stored summaries with their stored
    GPT-4o judgments. With --retriever: our pipeline (bullets = number of insights), judged by --judge. With
    --summaries: the summaries in those files, judged by --judge."""
    import tempfile
    from dataclasses import asdict

    from citesum.datasets.summhay import load_haystack
    from citesum.evaluate.summhay import score_stored, stored_systems, system_label

    if retriever and summary_files:
        raise CitesumError("--retriever runs our pipeline and --summaries judges given summaries: use one of them")
    haystacks = [load_haystack(f) for f in haystack_files]
    rows = []
    decisions = {}
    if summary_files:
        from citesum.evaluate.judges import get_judge
        from citesum.evaluate.runner import judge_summaries, load_summaries

        given = load_summaries(summary_files, haystacks)
        if unknown := [s for s in systems if s not in given]:
            raise CitesumError(f"no system {unknown[0]!r} in {', '.join(summary_files)}; it has "
                               f"{', '.join(sorted(given)[:5])}{' ...' if len(given) > 5 else ''}")
        judge = get_judge(judge_name, llm=_openai_llm(model, base_url))
        for system in systems or sorted(given):
            scores, insights = judge_summaries(haystacks, given[system], judge)
            system_retriever, system_model = (system_label(system) if system.startswith("summary_subtopic_")
                                              else ("-", system))
            rows.append({"system": system, "retriever": system_retriever, "model": system_model, **scores.as_dict()})
            decisions[system] = [asdict(i) for i in insights]
        judge_columns = _judge_columns(judge)  # once: an LLM judge's unread replies are counted over the run
        rows = [{**row, **judge_columns} for row in rows]
    elif retriever:
        from citesum.evaluate.judges import get_judge
        from citesum.evaluate.runner import PipelineConfig, judge_summaries, run_on_haystacks

        make_summarizer = _summarizer_factory(summarizer, summarizer_model, summarizer_base_url,
                                              summarizer_max_tokens)
        judge = get_judge(judge_name, llm=_openai_llm(model, base_url))
        repair, label = _repair_and_label(summarizer, summarizer_model, repair_citations)
        config = PipelineConfig(retriever=retriever, budget=budget, order=order, unit=unit)
        with tempfile.TemporaryDirectory() as temporary:
            folder = Path(index_dir or temporary)
            summaries = run_on_haystacks(haystacks, [folder / f"{Path(f).stem}-{unit}" for f in haystack_files],
                                         config, make_summarizer, repair_citations=repair)
        scores, insights = judge_summaries(haystacks, summaries, judge)
        name = f"citesum:{retriever}:{order}:{budget}+{label}"
        rows.append({"system": name, "retriever": retriever, "model": label, **_judge_columns(judge),
                     **scores.as_dict()})
        decisions[name] = [asdict(i) for i in insights]
    else:
        available = stored_systems(haystacks)
        unknown = [s for s in systems if s not in available]
        if unknown:
            raise CitesumError(f"no stored summaries and judgments for {unknown[0]!r} in every haystack; "
                               f"{len(available)} systems are available, e.g. {', '.join(available[:3])}")
        for system in systems or available:
            scores, insights = score_stored(haystacks, system)
            stored_retriever, stored_model = system_label(system)
            rows.append({"system": system, "retriever": stored_retriever, "model": stored_model,
                         "judge": "stored GPT-4o", **scores.as_dict()})
            decisions[system] = [asdict(i) for i in insights]
    rows.sort(key=lambda r: -r["joint"])
    if report:
        Path(report).write_text(json.dumps({"haystacks": list(haystack_files), "systems": rows,
                                            "insights": decisions}, indent=1), encoding="utf-8")
    if as_json:
        _echo_json(rows)
        return
    _echo_table(["retriever", "model", "judge", "coverage", "citation", "joint"],
                [[r["retriever"], r["model"], r["judge"], float(r["coverage"]), float(r["citation"]),
                  float(r["joint"])] for r in rows], f"{rows[0]['insights']} insights")


@eval_group.command(name="position")
@click.option("--haystack", "haystack_files", multiple=True, required=True,
              type=click.Path(exists=True, dir_okay=False))
@click.option("--model", "models", multiple=True, default=("claude3-opus", "gemini-1.5-pro", "gpt-4o"),
              show_default=True, help="Stored full-context runs to score (when --summarizer is not given).")
@click.option("--summarizer", type=click.Choice(["extractive", "llm"]), default=None,
              help="Run the experiment with OUR summarizer instead of scoring the stored runs.")
@click.option("--summarizer-model", default=None, help="OpenAI-compatible model for --summarizer llm.")
@click.option("--summarizer-base-url", default=None)
@click.option("--summarizer-max-tokens", type=click.IntRange(min=1), default=1024, show_default=True,
              help="Answer tokens of the LLM summarizer.")
@click.option("--budget", type=click.IntRange(min=1), default=120_000, show_default=True,
              help="Context tokens; over it every document is cut to a common length (placement is kept).")
@click.option("--tokenizer", "tokenizer_name", default="cl100k", show_default=True,
              help="Count the budget with the summarizer's tokenizer: cl100k or hf:<tokenizer.json>.")
@click.option("--repair-citations/--no-repair-citations", default=None,
              help="Repair citations against the context (default: on for --summarizer llm).")
@click.option("--judge", "judge_name", default="offline", show_default=True,
              help="Judge for our runs: offline, offline:<embedder>, lexical, llm (with --judge-model/--judge-base-url).")
@click.option("--judge-model", default=None)
@click.option("--judge-base-url", default=None)
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Write every per-insight decision of our run, per placement, to this JSON file.")
@click.option("--json", "as_json", is_flag=True)
def eval_position(haystack_files: Sequence[str], models: Sequence[str], summarizer: str | None,
                  summarizer_model: str | None, summarizer_base_url: str | None, summarizer_max_tokens: int,
                  budget: int, tokenizer_name: str,
                  repair_citations: bool | None, judge_name: str, judge_model: str | None,
                  judge_base_url: str | None, report: str | None, as_json: bool) -> None:
    """Position bias: the whole haystack as context with the relevant documents at the top / bottom / middle /
    in random order; sensitivity = largest |joint - joint(random)|. Without --summarizer: the stored runs with
    their stored judgments; with it: our summarizer, judged by --judge."""
    from citesum.datasets.summhay import load_haystack
    from citesum.evaluate.position import STORED_PLACEMENT_KEYS, sensitivity
    from citesum.evaluate.summhay import score_stored, stored_systems

    haystacks = [load_haystack(f) for f in haystack_files]
    rows = []
    if summarizer:
        from citesum.evaluate.judges import get_judge
        from citesum.evaluate.runner import position_experiment
        from citesum.tokens import get_tokenizer

        make_summarizer = _summarizer_factory(summarizer, summarizer_model, summarizer_base_url,
                                              summarizer_max_tokens)
        judge = get_judge(judge_name, llm=_openai_llm(judge_model, judge_base_url))
        repair, label = _repair_and_label(summarizer, summarizer_model, repair_citations)
        result = position_experiment(haystacks, make_summarizer, judge, budget, get_tokenizer(tokenizer_name),
                                     repair_citations=repair)
        rows.append({"model": f"citesum {label} ({budget} tokens)", **_judge_columns(judge),
                     **{p: round(s.joint, 1) for p, s in result.scores.items()},
                     "sensitivity": round(result.sensitivity, 1)})
        if report:
            from dataclasses import asdict

            Path(report).write_text(json.dumps({
                "haystacks": list(haystack_files), "run": rows[0],
                "scores": {p: s.as_dict() for p, s in result.scores.items()},
                "insights": {p: [asdict(i) for i in decisions] for p, decisions in result.insights.items()},
            }, indent=1), encoding="utf-8")
    else:
        available = set(stored_systems(haystacks))
        for model in models:
            keys = {p: k.format(model=model) for p, k in STORED_PLACEMENT_KEYS.items()}
            if not set(keys.values()) <= available:
                raise CitesumError(f"the haystacks hold no position-bias runs for model '{model}'")
            joint = {p: score_stored(haystacks, key)[0].joint for p, key in keys.items()}
            rows.append({"model": model, "judge": "stored GPT-4o", **{p: round(v, 1) for p, v in joint.items()},
                         "sensitivity": round(sensitivity(joint), 1)})
    if as_json:
        _echo_json(rows)
        return
    _echo_table(["model", "judge", "top", "bottom", "middle", "random", "sensitivity"],
                [[r["model"], r["judge"], r["top"], r["bottom"], r["middle"], r["random"], r["sensitivity"]]
                 for r in rows])


@eval_group.command(name="judge")
@click.option("--annotations", required=True, type=click.Path(exists=True, dir_okay=False),
              help="Human-annotated judge benchmark, e.g. summhay/eval_benchmark_dev.json.")
@click.option("--judge", "judge_name", default="offline", show_default=True,
              help="offline, offline:<embedder>, lexical, or llm (with --model/--base-url).")
@click.option("--model", default=None)
@click.option("--base-url", default=None)
@click.option("--json", "as_json", is_flag=True)
def eval_judge(annotations: str, judge_name: str, model: str | None, base_url: str | None, as_json: bool) -> None:
    """Meta-evaluate a coverage judge against human labels (Pearson r, linking accuracy), beside the stored
    LLM judges, with 95% bootstrap intervals (resampling summaries) for each r and for our r minus theirs."""
    from citesum.evaluate.judges import get_judge
    from citesum.evaluate.meta import (
        by_subtopic, judgments_by_summary, label_values, load_annotations, pearson_interval, quality_with_interval,
        stored_judge_names,
    )

    samples = load_annotations(annotations)
    judge = get_judge(judge_name, llm=_openai_llm(model, base_url))
    # before _judge_columns: it reports the replies this run left unread
    ours = by_subtopic(samples, judgments_by_summary(samples, judge))
    rows = []
    for name in stored_judge_names(samples):
        theirs = by_subtopic(samples, judgments_by_summary(samples, name))
        rows.append({"judge": name, **quality_with_interval(theirs),
                     "ours_minus_this_r_ci95": pearson_interval(label_values(ours, theirs))})
    rows.append({**_judge_columns(judge), **quality_with_interval(ours)})
    if as_json:
        _echo_json(rows)
        return

    def interval(bounds: tuple[float, float] | None) -> str:
        return f"[{bounds[0]:+.3f}, {bounds[1]:+.3f}]" if bounds else "n/a (one subtopic)"

    _echo_table(["judge", "Pearson r", "95% CI", "linking accuracy", "ours - this r (95% CI)"],
                [[r["judge"], f"{r['pearson']:.3f}", interval(r["pearson_ci95"]), f"{r['linking_accuracy']:.3f}",
                  interval(r["ours_minus_this_r_ci95"]) if "ours_minus_this_r_ci95" in r else ""] for r in rows],
                f"{rows[-1]['judgments']} insight judgments in {len(samples)} "
                f"{'summary' if len(samples) == 1 else 'summaries'}")
    if judge.name.startswith("offline") or judge.name == "lexical":
        click.echo("note: the offline judges' thresholds are fit on eval_benchmark_dev.json and the news haystacks' "
                   "stored GPT-4o labels, so on that file this row is in-sample; leave-one-domain-out numbers: "
                   "benchmarks/results/offline_judge.json", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
