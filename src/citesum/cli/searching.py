"""``citesum search``: on the index itself, or through a running ``citesum serve`` (--server)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import click

from citesum.cli.common import echo_json, load_qrels, read_query, retriever_option

if TYPE_CHECKING:
    from citesum.index.store import IndexReader
    from citesum.llm.likelihood import Likelihood


def _no_results(index_: IndexReader) -> str:
    return "(no results: the index has no units)" if not index_.passages else "(no results)"


def rank_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--rank-model and --rank-url: the language model of --retriever promptrank (`citesum summarize` has them
    too)."""
    command = click.option(
        "--rank-url", default=None,
        help="PromptRank: score with the model at this OpenAI-compatible base URL instead of in this process (its "
             "/v1/completions must echo the prompt's log-probabilities, as vLLM's does).")(command)
    return click.option(
        "--rank-model", default=None,
        help="PromptRank: a GGUF file run in this process (default: the packaged SmolLM2, extra llamacpp), or with "
             "--rank-url the model name the server serves.")(command)


def rank_likelihood(retriever: str, rank_model: str | None, rank_url: str | None) -> Likelihood | None:
    """The language model --rank-model / --rank-url choose; None when neither is given (PromptRank's default)."""
    if rank_model is None and rank_url is None:
        return None
    if "promptrank" not in retriever:
        raise click.UsageError("--rank-model and --rank-url choose the language model of PromptRank: give them "
                               "with --retriever promptrank[:<base>]")
    from citesum.llm.likelihood import likelihood_for

    return likelihood_for(rank_model, rank_url)


def _search_index(index_dir: str, query: str, retriever: str, k: int, by_document: bool, qrels: str | None,
                  seed: int, likelihood: Likelihood | None) -> tuple[dict[str, Any], str]:
    """``citesum search`` on the index itself: the response, and what to say when it holds no result."""
    from citesum.index.store import Index
    from citesum.responses import search_response
    from citesum.retrieve import get_retriever

    with Index.open(index_dir).read() as view:
        ranker = get_retriever(retriever, view, relevance=load_qrels(qrels), seed=seed, likelihood=likelihood)
        return search_response(ranker, view, query, k, documents=by_document), _no_results(view)


@click.command()
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
@retriever_option()
@click.option("-k", "--top-k", "k", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--documents", "by_document", is_flag=True, help="Rank documents (best unit) instead of units.")
@click.option("--qrels", default=None, help="JSON {document_id: grade} for the oracle retriever.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random retriever.")
@rank_options
@click.option("--json", "as_json", is_flag=True)
def search(query: str | None, query_file: Any, index_dir: str | None, server: str | None, token_file: str | None,
           retriever: str, k: int, by_document: bool, qrels: str | None, seed: int, rank_model: str | None,
           rank_url: str | None, as_json: bool) -> None:
    """Search the index for QUERY (or --query-file); prints ranked units (or documents) with scores."""
    query = read_query(query, query_file)
    if index_dir is not None:
        payload, empty = _search_index(index_dir, query, retriever, k, by_document, qrels, seed,
                                       rank_likelihood(retriever, rank_model, rank_url))
    elif server:
        if qrels is not None or seed != 0 or rank_model or rank_url:
            raise click.UsageError("--qrels, --seed, --rank-model and --rank-url need the index itself (--index): "
                                   "a service has none of them")
        from citesum.client import post_json
        from citesum.service.config import read_token

        payload = post_json(server, "/search", {"query": query, "retriever": retriever, "k": k,
                                                "documents": by_document}, token=read_token(token_file))
        empty = "(no results)"
    else:
        raise click.UsageError("give the index to search (--index DIR) or a running service (--server URL)")
    if as_json:
        echo_json(payload)
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
