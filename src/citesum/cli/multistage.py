"""``citesum tree``: RAPTOR's tree of cluster summaries, and the backends the multi-stage readers write with."""

from __future__ import annotations

from typing import Any, Sequence

import click

from citesum.cli.common import base_url_option, echo_json, progress_bar


def chat_backend(backend: str, model: str | None, base_url: Sequence[str], api_key_env: str, timeout: float,
                 no_cache: bool) -> Any:
    """The LLM a multi-stage reader writes with: in-process llama.cpp (``--llm llamacpp``, the packaged SmolLM2
    without ``--model``), an OpenAI-compatible server when a model is named, else None (offline)."""
    from citesum.llm import ResponseCache, get_llm

    if backend == "llamacpp":
        return get_llm("llamacpp", model)
    if not model:
        return None
    return get_llm("openai", model, base_url=base_url, cache=None if no_cache else ResponseCache(),
                   api_key_env=api_key_env, timeout=timeout)


def statement_writer(llm: Any, instruction: str) -> Any:
    """Cited bullets by ``llm`` (offline statements for what it fails on), or offline statements alone."""
    from citesum.summarize.statements import CentralStatements, LLMStatements

    return CentralStatements() if llm is None else LLMStatements(llm, instruction)


def multistage_context(query: str, index: Any, reader: str, *, llm: Any, budget: int, tokenizer: Any
                       ) -> tuple[Any, list[str]]:
    """The context of RAPTOR's collapsed tree (``raptor``: the tree ``citesum tree`` built), or of ReadAgent
    (``readagent``: its memory of the index, built and stored on first use, written by ``llm`` or offline), and
    notes for the reader."""
    if reader == "raptor":
        from citesum.raptor import raptor_context

        return raptor_context(query, index, budget=budget, tokenizer=tokenizer), []
    from citesum.readagent import ReadAgent, ReadReport
    from citesum.summarize.statements import GIST_INSTRUCTION

    agent = ReadAgent(statement_writer(llm, GIST_INSTRUCTION), llm)
    report = ReadReport()
    memory = agent.memory(index, tokenizer=tokenizer, report=report)
    context, notes = agent.context(query, index, memory, budget=budget, tokenizer=tokenizer)
    if report.gists.fallbacks or report.pagination_fallbacks:
        notes.insert(0, f"reading the index: {len(report.pagination_fallbacks)} page break(s) and "
                        f"{len(report.gists.fallbacks)} gist(s) of {report.pages} pages fell back to the offline way")
    return context, notes


@click.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False))
@click.option("--llm", "backend", type=click.Choice(["openai", "llamacpp"]), default="openai", show_default=True,
              help="Who writes the node summaries: an OpenAI-compatible server (with --model), or llama.cpp in "
                   "this process. Without --model and with openai, the offline central sentences.")
@click.option("--model", default=None, help="Model name (openai) or GGUF path (llamacpp; default: packaged SmolLM2).")
@base_url_option()
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True)
@click.option("--timeout", type=float, default=120.0, show_default=True)
@click.option("--no-cache", is_flag=True, help="Do not read or write the LLM response cache.")
@click.option("--levels", type=click.IntRange(min=1), default=3, show_default=True, help="Summary levels at most.")
@click.option("--summary-tokens", type=click.IntRange(min=8), default=100, show_default=True,
              help="About how long each node's summary is.")
@click.option("--cluster-tokens", type=click.IntRange(min=100), default=3_500, show_default=True,
              help="A cluster whose texts are longer is clustered again (the summarizer's input limit).")
@click.option("--reduction", type=click.Choice(["pca", "umap"]), default="pca", show_default=True,  # raptor.REDUCTIONS
              help="How the embeddings are reduced before the Gaussian mixtures: PCA, or UMAP as RAPTOR does "
                   "(extra umap).")
@click.option("--progress/--no-progress", default=True, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def tree(index_dir: str, backend: str, model: str | None, base_url: Sequence[str], api_key_env: str, timeout: float,
         no_cache: bool, levels: int, summary_tokens: int, cluster_tokens: int, reduction: str, progress: bool,
         as_json: bool) -> None:
    """Build RAPTOR's tree of cluster summaries for an index (used by --retriever raptor)."""
    from citesum.index.store import Index
    from citesum.raptor import ClusterOptions, build_tree, tree_summary
    from citesum.summarize.statements import RAPTOR_INSTRUCTION, WriteReport

    index = Index.open(index_dir)
    writer = statement_writer(chat_backend(backend, model, base_url, api_key_env, timeout, no_cache),
                              RAPTOR_INSTRUCTION)
    report = WriteReport()
    with progress_bar(progress and not as_json) as update:
        built = build_tree(index, writer, levels=levels, summary_tokens=summary_tokens,
                           options=ClusterOptions(max_tokens=cluster_tokens, reduction=reduction), progress=update,
                           report=report)
    path = built.save(index_dir)
    payload = {**tree_summary(built), "path": str(path),
               "fallbacks": [{"cluster": number, "reason": reason} for number, reason in report.fallbacks]}
    if as_json:
        echo_json(payload)
        return
    levels_text = ", ".join(f"level {level}: {info['nodes']} nodes"  # type: ignore[index]
                            for level, info in payload["levels"].items())  # type: ignore[attr-defined]
    click.echo(f"tree of {payload['nodes']} summary nodes ({levels_text}) by {built.writer} -> {path}")
    for number, reason in report.fallbacks:
        click.echo(f"note: cluster {number} was summarized offline: {reason}", err=True)
