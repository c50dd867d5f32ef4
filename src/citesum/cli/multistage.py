"""``citesum tree``: RAPTOR's tree of cluster summaries."""

from __future__ import annotations

from typing import Sequence

import click

from citesum.cli.common import base_url_option, echo_json, progress_bar


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
    from citesum.llm.options import LLMOptions
    from citesum.raptor import ClusterOptions, build_tree, tree_summary
    from citesum.summarize.statements import RAPTOR_INSTRUCTION, WriteReport, statement_writer

    index = Index.open(index_dir)
    llm = LLMOptions(backend=backend, model=model, base_url=tuple(base_url), api_key_env=api_key_env,  # type: ignore[arg-type]
                     timeout=timeout, cache=not no_cache).build()
    writer = statement_writer(llm, RAPTOR_INSTRUCTION)
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
