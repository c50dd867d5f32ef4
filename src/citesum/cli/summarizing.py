"""``citesum summarize``, ``repair`` and ``estimate-budget``: cited summaries, their citations, their budget."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

import click

from citesum.cli.common import (base_url_option, citation_marks, echo_json, echo_table, openai_llm, ray_executor,
                                 ray_options, read_query, retriever_option)
from citesum.cli.searching import rank_likelihood, rank_options
from citesum.errors import CitesumError
from citesum.defaults import DEFAULT_BUDGET, DEFAULT_BULLETS, DEFAULT_WORDS


@click.command()
@click.argument("query", required=False)
@click.option("--query-file", type=click.File("r", encoding="utf-8", errors="replace"), default=None,
              help="Read the query from this file ('-' for standard input): for a query too long for the shell.")
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@retriever_option(also=("raptor",))  # RAPTOR's tree (citesum tree), read by the pipeline
@click.option("--budget", type=click.IntRange(min=1), default=DEFAULT_BUDGET, show_default=True,
              help="Context budget in tokens.")
@click.option("--order", type=click.Choice(["original", "score", "full"]), default="original", show_default=True,
              help="original = DOS RAG, score = Vanilla RAG, full = whole collection.")
@click.option("--stop-at-first-overflow", is_flag=True, help="Stop packing at the first unit that does not fit.")
@click.option("--top-k", type=click.IntRange(min=1), default=None, help="Pre-cap on retrieved units.")
@click.option("--summarizer", type=click.Choice(["extractive", "llm", "readagent"]), default="extractive",
              show_default=True, help="readagent: read the index into gists, look pages up, answer (with the LLM "
                                      "of --llm/--model, else offline).")
@click.option("--llm", "backend", type=click.Choice(["openai", "llamacpp"]), default="openai", show_default=True)
@click.option("--model", default=None, help="Model name (openai) or GGUF path (llamacpp; default: packaged SmolLM2).")
@base_url_option()
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True)
@click.option("--template", default="cited", show_default=True,
              help="cited (at most --bullets bullets that answer, or NO ANSWER), summhay (exactly --bullets, the "
                   "evaluation's), answer, long, or a template file.")
@click.option("--bullets", type=click.IntRange(min=1), default=DEFAULT_BULLETS, show_default=True,
              help="At most this many bullets: fewer when fewer facts answer, none when nothing does.")
@click.option("--words", type=click.IntRange(min=1), default=DEFAULT_WORDS, show_default=True, help="Word limit.")
@click.option("--relevance-embedder", default=None,
              help="Extractive: score the first candidate sentences against the query again with this embedder "
                   "(e.g. minilm, extra minilm; default: wordllama alone, which also groups them).")
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=None,
              help="LLM: answer tokens (default: what --bullets and --words take, 2 a word and 24 a bullet, at "
                   "most 1024). An answer cut off there loses its last, cut bullet.")
@click.option("--tokenizer", default=None,
              help="Summarizer's tokenizer for the budget: cl100k, or hf:<tokenizer.json> (default: the index's).")
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="Model context window, when its server does not say (llama.cpp, vLLM and Ollama are asked; a "
                   "smaller --window caps what they say): the budget shrinks to leave room for the prompt and the "
                   "answer.")
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
@rank_options
@click.option("--stream", is_flag=True,
              help="Print each bullet as soon as it is written and its citations checked (with --json: one JSON "
                   "event a line: context, bullet..., done).")
@click.option("--json", "as_json", is_flag=True)
def summarize(
    query: str | None, query_file: Any, index_dir: str, retriever: str, budget: int, order: str,
    stop_at_first_overflow: bool,
    top_k: int | None, summarizer: str, backend: str, model: str | None, base_url: Sequence[str], api_key_env: str,
    template: str, bullets: int, words: int, relevance_embedder: str | None, temperature: float, seed: int,
    max_tokens: int | None, tokenizer: str | None, window: int | None, timeout: float, no_cache: bool,
    verify_citations: bool, repair_citations: bool | None, confirm_model: str | None, summary_dir: str | None, summary_documents: int,
    char_limit: int, rank_model: str | None, rank_url: str | None, stream: bool, as_json: bool,
) -> None:
    """Answer QUERY (or --query-file) with a short bullet summary whose bullets cite the documents that support
    them."""
    from citesum.llm.options import LLMOptions
    from citesum.pipeline import Pipeline, PipelineOptions

    query = read_query(query, query_file)
    likelihood = rank_likelihood(retriever, rank_model, rank_url)
    if likelihood is not None and summary_dir is not None:
        raise click.UsageError("--rank-model and --rank-url apply to the index, not to --summary-index")
    model_options = LLMOptions(backend=backend, model=model, base_url=tuple(base_url),  # type: ignore[arg-type]
                               api_key_env=api_key_env, timeout=timeout, cache=not no_cache, window=window)
    options = PipelineOptions(
        retriever=retriever, budget=budget, order=order, stop_at_first_overflow=stop_at_first_overflow,  # type: ignore[arg-type]
        top_k=top_k, summarizer=summarizer, bullets=bullets, words=words, relevance_embedder=relevance_embedder,
        tokenizer=tokenizer, template=template, temperature=temperature, seed=seed, max_tokens=max_tokens,
        verify=verify_citations, repair=repair_citations, summary_index=summary_dir,
        summary_documents=summary_documents, char_limit=char_limit, llm=model_options, confirm_model=confirm_model)
    pipeline = Pipeline(index_dir, options, likelihood=likelihood)
    if stream:
        _echo_stream(pipeline, query, as_json, repaired=options.repairs)
        return
    answer = pipeline.summarize(query).to_json(include_context=as_json)
    if as_json:
        echo_json(answer)
    else:
        _echo_answer(answer, repaired=options.repairs)


def _echo_stream(pipeline: Any, query: str, as_json: bool, *, repaired: bool) -> None:
    """The answer as it is written: each bullet printed once checked, then the sources and the notes (or, with
    ``as_json``, each event as a line of JSON)."""
    shown: dict[int, int] = {}
    sources: dict[str, Any] = {}  # the context's, as the stream began: a bullet printed may cite any of them
    for event in pipeline.stream(query, include_context=as_json):
        if as_json:
            click.echo(json.dumps({"event": event.kind, **event.data}, ensure_ascii=False, default=str))
        elif event.kind == "context":
            sources = event.data["sources"]
        elif event.kind == "bullet":
            _echo_bullet(event.data, citation_marks(event.data["numbers"], shown, _pages(event.data)))
        elif event.kind == "done":
            # the answer's sources, and those of the context the printed bullets were checked against (a model's
            # window may have cut the context the answer was checked against at the end)
            event.data["sources"] = {**sources, **event.data["sources"]}
            _echo_answer(event.data, repaired=repaired, bullets_printed=True, shown=shown)


#: how the text output indents the code under a bullet (:func:`_echo_bullet`)
_CODE_INDENT = " " * 6


def _echo_bullet(bullet: dict[str, Any], marks: str, opening: str = "-") -> None:
    """A bullet (or a lead) on its line after ``opening`` (none: the line is its text) with its citation marks,
    and the code its sentence introduces below it, indented as a block of code."""
    click.echo(" ".join(part for part in (opening, bullet["text"], marks) if part))
    for line in bullet.get("code", "").splitlines():
        click.echo(f"{_CODE_INDENT}{line}")


def _pages(item: dict[str, Any]) -> dict[int, int | str]:
    """The page each citation's evidence is on, by context number (a PDF's, when the citations are verified):
    the number printed on it, when print numbers the pages otherwise than their order."""
    return {e["number"]: e.get("page_label") or e["page"] for e in item.get("evidence", ()) if e.get("page")}


def _echo_answer(answer: dict[str, Any], *, repaired: bool, bullets_printed: bool = False,
                 shown: dict[int, int] | None = None) -> None:
    """An answer (its JSON) as a person reads it: the bullets (unless already printed as they came, numbered
    in ``shown``) or the leads of an abstention, the sources they cite in the order they are first cited, and
    the notes on stderr."""
    shown = {} if shown is None else shown
    if not answer["bullets"]:
        click.echo("(no bullets: " + "; ".join(answer["notes"] or ("no relevant content found",)) + ")")
    elif answer["notes"]:
        click.echo("note: " + "; ".join(answer["notes"]), err=True)
    for bullet in answer["bullets"]:
        marks = citation_marks(bullet["numbers"], shown, _pages(bullet))
        if not bullets_printed:
            _echo_bullet(bullet, marks)
    for lead in answer["leads"]:  # nothing answers: the closest sentences, to follow up, not as an answer
        _echo_bullet(lead, citation_marks(lead["numbers"], shown), opening="lead:")
    if shown:
        click.echo("")
        for number, reader_number in shown.items():
            source = answer["sources"].get(str(number), {"title": "", "document_id": f"context document {number}",
                                                          "source": ""})
            click.echo(f"[{reader_number}] {source['title'] or source['document_id']} — "
                       f"{source['source'] or source['document_id']}")
    if answer["dropped_citations"]:
        click.echo(f"note: removed citations to documents not in the context: {answer['dropped_citations']}",
                   err=True)
    for number, bullet in enumerate(answer["bullets"], start=1):
        unsupported = [e["document_id"] for e in bullet.get("evidence", ()) if not e["supported"]]
        if unsupported and not repaired:
            click.echo(f"note: bullet {number} cites documents that do not state it: {unsupported}", err=True)


@click.command()
@click.argument("summary_file", type=click.Path(dir_okay=False))
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--verify-only", is_flag=True, help="Annotate the citations; do not change them.")
@click.option("--confirm-model", default=None, help="Let this OpenAI-compatible model decide borderline citations.")
@base_url_option(of="the --confirm-model server")
@click.option("--json", "as_json", is_flag=True)
def repair(summary_file: str, index_dir: str, verify_only: bool, confirm_model: str | None, base_url: Sequence[str],
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
        # the code each bullet's sentence introduces (summarize --json's "code"), kept as given
        codes = [code if isinstance(code := b.get("code"), str) else "" for b in parsed["bullets"]]
    except (ValueError, KeyError, TypeError):
        lines, code_after = _code_set_apart(raw)
        bullets, codes = [], []
        for line in bullet_lines("\n".join(lines)):
            bullets.append((line, [by_position.get(n, f"#{n}") for n in citation_numbers(line)]))
            codes.append(next((code for text, code in code_after.items() if line.strip() in text), ""))
    if not bullets:
        raise CitesumError(f"{summary_file}: no bullets found (expected summarize --json output or lines of text)")
    verifier = CitationVerifier(documents, confirm=openai_llm(confirm_model, base_url))
    checked = [verifier.verify(text, cited) for text, cited in bullets]
    if as_json:
        echo_json({"bullets": [{**verification_json(v), **({"code": code} if code else {})}
                               for v, code in zip(checked, codes)]})
        return
    for (_, cited), result, code in zip(bullets, checked, codes):
        citations = sorted(position_of[d] for d in (cited if verify_only else result.citations) if d in position_of)
        _echo_bullet({"text": result.text, "code": code}, "".join(f"[{n}]" for n in citations), opening="")
        for check in result.checks:
            if not check.supported:
                reason = "not in the index" if check.evidence is None else "does not state it"
                click.echo(f"  unsupported: {check.document_id} ({reason})", err=True)


def _code_set_apart(text: str) -> tuple[list[str], dict[str, str]]:
    """The lines of a text answer without the code indented under them (as ``repair`` and ``summarize`` print
    it), and that code by the line it is under: read back, its lines are no claims to check."""
    lines: list[str] = []
    code: dict[str, list[str]] = {}
    for line in text.splitlines():
        if lines and line.startswith(_CODE_INDENT) and line.strip() and lines[-1].strip():
            code.setdefault(lines[-1], []).append(line[len(_CODE_INDENT):])
        else:
            lines.append(line)
    return lines, {line: "\n".join(block) for line, block in code.items()}


@click.command(name="estimate-budget")
@click.argument("queries_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--panel-model", "panel_models", multiple=True, required=True,
              help="OpenAI-compatible model that writes silver references from the full context (repeatable).")
@base_url_option(of="the panel (and of --model)")
@click.option("--window", type=click.IntRange(min=1), default=32_768, show_default=True,
              help="Context window of the panel models: the full context is cut to fit it.")
@click.option("--budgets", default="2000,4000,8000,16000,24000,32000", show_default=True,
              help="Comma-separated context budgets (tokens) to compare, or 'paper' for the paper's grid "
                   "(8192 to 81920 in steps of 8192; the panel's --window must hold them).")
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
@click.option("--baseline-model", "baseline_models", multiple=True,
              help="Compare the estimate with this model's published effective context length (RULER, HELMET) "
                   "used as the budget, and with the full context (repeatable; 'citesum budgets' lists the models).")
@click.option("--effective-length", "effective_lengths", multiple=True, metavar="NAME=TOKENS",
              help="A model's effective length (e.g. my-model=32K), replacing the published one or adding a model; "
                   "it is compared too (repeatable).")
@click.option("--effective-lengths-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="More NAME=TOKENS values: a JSON object {\"model\": tokens} or CSV rows model,tokens.")
@ray_options("Spread the panel's sampling (a query a task) and the pipeline runs (a query, budget and sample a "
             "task)")
@click.option("--json", "as_json", is_flag=True)
def estimate_budget_command(queries_file: str, index_dir: str, panel_models: Sequence[str], base_url: Sequence[str],
                            window: int, budgets: str, fraction: float, seed: int, samples: int, retriever: str,
                            order: str, summarizer: str, model: str | None, words: int,
                            baseline_models: Sequence[str], effective_lengths: Sequence[str],
                            effective_lengths_file: str | None, use_ray: bool, ray_address: str | None,
                            as_json: bool) -> None:
    """Estimate the context budget of a pipeline without gold summaries (Pratapa & Mitamura): silver
    references from a panel of LMs given the full context, the pipeline run at each budget against them. LLM
    answers are cached: a run interrupted half-way and run again asks only what it had not.

    With --baseline-model or --effective-length, the estimate is compared with each model's effective context
    length used as a fixed budget (cut to --window) and with the full context (the whole collection cut to
    --window), all scored on the same queries against the same silver references."""
    from citesum.budget import estimate_for_index, parse_budgets
    from citesum.effective_context import fixed_budgets, parse_user_length, read_user_lengths
    from citesum.llm.options import LLMOptions

    queries = [line.strip() for line in Path(queries_file).read_text(encoding="utf-8").splitlines() if line.strip()]
    if not queries:
        raise CitesumError(f"{queries_file}: no queries (one per line)")
    grid = parse_budgets(budgets)
    if grid[-1] > window:
        raise CitesumError(f"--budgets go up to {grid[-1]:,} tokens, more than the panel's --window of {window:,}: "
                           "raise --window (the paper's grid needs 81,920) or give smaller budgets")
    if summarizer == "llm" and not model:
        raise CitesumError("--summarizer llm needs --model")
    user = [parse_user_length(pair) for pair in effective_lengths]
    user += read_user_lengths(effective_lengths_file) if effective_lengths_file else []
    # the models of the user's values are compared too: giving a length says which budget to try
    fixed = fixed_budgets([*baseline_models, *(u.model for u in user)], user, window)
    with ray_executor(use_ray, ray_address) as executor:
        result, compared = estimate_for_index(
            queries, index_dir, [LLMOptions(model=name, base_url=base_url).build() for name in panel_models],  # type: ignore[misc]
            grid, window=window, fraction=fraction, seed=seed, samples=samples, retriever=retriever, order=order,
            words=words, llm=LLMOptions(model=model, base_url=base_url).build() if summarizer == "llm" else None,  # type: ignore[arg-type]
            fixed={f.label: f.budget for f in fixed}, executor=executor)
    _echo_estimate(result, compared, fixed, grid, queries, panel_models, window, as_json)


def _echo_estimate(result: Any, compared: Sequence[Any], fixed: Sequence[Any], grid: Sequence[int],
                   queries: Sequence[str], panel_models: Sequence[str], window: int, as_json: bool) -> None:
    from citesum.budget import ROUGE_UTILITY

    if as_json:
        echo_json({"estimate": result.budget, "best_budget": result.best_budget, "queries": len(result.examples),
                    "means": result.means, "stds": result.stds, "panel": list(panel_models), "utility": ROUGE_UTILITY,
                    "compared": [asdict(row) for row in compared],
                    "baselines": [{**asdict(f.length), "budget": f.budget, "capped": f.capped} for f in fixed]})
        return
    echo_table(["budget", "silver-reference utility", "std"],
                [[b, f"{result.means[b]:.4f}", f"{result.stds[b]:.4f}"] for b in grid])
    click.echo(f"estimate: {result.budget} tokens (best mean at {result.best_budget}; "
               f"{len(result.examples)} of {len(queries)} queries)")
    if compared:
        click.echo("")
        sources = {f.label: f.length.source + (f" (cut to --window {window:,})" if f.capped else "") for f in fixed}
        echo_table(["compared with", "budget", "silver-reference utility", "std", "source"],
                    [[row.label, row.budget, f"{row.mean:.4f}", f"{row.std:.4f}", sources.get(row.label, "")]
                     for row in compared], note=f"utility: {ROUGE_UTILITY}")


@click.command()
@click.option("--model", "models", multiple=True,
              help="Show only this model's rows (any common spelling, e.g. llama-3.1-8b; repeatable).")
@click.option("--json", "as_json", is_flag=True)
def budgets(models: Sequence[str], as_json: bool) -> None:
    """The published effective context lengths that 'estimate-budget --baseline-model' compares with: per model
    and benchmark (RULER, and HELMET as the hybrid-RAG paper derived it), in tokens (K = 1,024), with sources."""
    from citesum.effective_context import TABLE, lookup

    rows = [row for name in models for row in lookup(name)] if models else list(TABLE)
    if as_json:
        echo_json([asdict(row) for row in rows])
        return
    sources = list(dict.fromkeys(row.source for row in rows))
    echo_table(["model", "benchmark", "effective", "tokens", "claimed window", "source"],
               [[row.model, row.benchmark, row.published, row.tokens, row.window or "",
                 f"[{sources.index(row.source) + 1}]"] for row in rows])
    click.echo("")
    for number, source in enumerate(sources, start=1):
        click.echo(f"[{number}] {source}")
