"""``citesum serve``: the web page and the HTTP API."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import click

from citesum.cli.common import base_url_option
from citesum.errors import CitesumError


@click.command()
@click.option("--index", "index_dirs", required=True, multiple=True, metavar="DIR | NAME=DIR",
              help="The index to serve; repeat as NAME=DIR to serve several collections (the first is the default).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any non-loopback address needs a token.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--token-file", type=click.Path(dir_okay=False), default=None,
              help="File whose first line is the bearer token clients must send (else $CITESUM_TOKEN).")
@click.option("--tokens", "tokens_file", type=click.Path(dir_okay=False, exists=True), default=None,
              help="JSON file of tokens, each with a name, a role (read or write) and its collections; read "
                   "again on SIGHUP (see the service guide).")
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
                   "LLM-bound summarizer (default with --llm) and a milvus-lite index (its only choice).")
@click.option("--queue", type=click.IntRange(min=0), default=64, show_default=True,
              help="Requests that may wait for a worker; past that: 503 with Retry-After.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds a request may take before it is answered 504.")
@click.option("--llm-timeout", type=click.FloatRange(min=0, min_open=True), default=180.0, show_default=True,
              help="Seconds a summary written by the LLM, or a request with promptrank, may take (a server's "
                   "model call is then cancelled; an in-process model finishes its call); a model too slow for "
                   "the default budget gets a smaller one, said in /health and on the page.")
@click.option("--max-upload-mb", type=click.FloatRange(min=0, min_open=True), default=25.0, show_default=True)
@click.option("--uploads", "uploads_dir", type=click.Path(file_okay=False), default=None,
              help="Where uploaded files are kept (default: INDEX/uploads; with several collections, DIR/NAME "
                   "for each).")
@click.option("--max-budget", type=click.IntRange(min=1), default=None,
              help="Largest context budget a request may ask (default: what the summarizer can use).")
@click.option("--llm", "backend", type=click.Choice(["openai", "llamacpp"]), default=None,
              help="Write summaries with an LLM (default: the offline extractive summarizer).")
@click.option("--model", default=None, help="Model name (openai) or GGUF path (llamacpp; default: packaged SmolLM2).")
@base_url_option(of="the LLM server (with --llm openai)")
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="The LLM's context window, when its server does not say (llama.cpp, vLLM and Ollama are asked; "
                   "a smaller --window caps what they say): budgets leave room in it for the prompt and the answer.")
@click.option("--summary-index", "summary_dir", default=None, type=click.Path(exists=True, file_okay=False),
              help="Offer Summary RAG over this summary index of the served index (citesum summary-index): a "
                   "request asks for it with summary_index.")
@click.option("--relevance-embedder", default=None,
              help="Extractive summaries: score the first candidate sentences against the question again with this "
                   "embedder (e.g. minilm, extra minilm; default: wordllama alone). Loaded before the server starts.")
@click.option("--max-connections", type=click.IntRange(min=1), default=4096, show_default=True,
              help="Open connections in all (kept below the open-file limit); past it, the oldest one still "
                   "waiting for its request is closed to make room.")
@click.option("--max-connections-per-client", type=click.IntRange(min=1), default=256, show_default=True,
              help="Open connections from one address (a reverse proxy is one address: raise it behind one).")
def serve(index_dirs: Sequence[str], host: str, port: int, token_file: str | None, tokens_file: str | None,
          allowed_hosts: Sequence[str], docs: bool,
          workers: int | None, search_workers: int | None, worker_kind: str | None, queue: int, timeout: float,
          llm_timeout: float,
          max_upload_mb: float, uploads_dir: str | None, max_budget: int | None, backend: str | None,
          model: str | None, base_url: Sequence[str], window: int | None, summary_dir: str | None,
          relevance_embedder: str | None, max_connections: int, max_connections_per_client: int) -> None:
    """Serve the web page and the HTTP API (extra 'service'): open http://HOST:PORT/ in a browser."""
    from citesum.service.config import ServiceConfig, read_token

    if backend is None and window is not None:
        raise CitesumError("--window is the LLM's context window: give it with --llm")
    if tokens_file and token_file:
        raise CitesumError("give either --token-file (one token for everything) or --tokens (tokens by role and "
                           "collection)")
    indexes = _collections(index_dirs)
    worker_kind = _worker_kind(indexes, worker_kind)
    config = ServiceConfig(
        host=host, token=None if tokens_file else read_token(token_file),
        tokens_file=Path(tokens_file) if tokens_file else None,
        allowed_hosts=tuple(allowed_hosts) or None, docs=docs, queue=queue,
        timeout_s=timeout, llm_timeout_s=llm_timeout, max_upload_bytes=int(max_upload_mb * 1024 * 1024),
        worker_kind=worker_kind or ("thread" if backend else "process"),  # type: ignore[arg-type]
        uploads_dir=Path(uploads_dir) if uploads_dir else None, max_connections=max_connections,
        summary_index=Path(summary_dir).resolve() if summary_dir else None, relevance_embedder=relevance_embedder,
        max_connections_per_client=max_connections_per_client, **({"max_budget": max_budget} if max_budget else {}),
        **({"workers": workers} if workers else {}), **({"search_workers": search_workers} if search_workers else {}))
    if relevance_embedder is not None:
        # an unknown name or a missing extra: one clear error now, not a 503 on every request
        from citesum.embed import get_embedder

        try:
            get_embedder(relevance_embedder)
        except CitesumError:
            raise
        except Exception as exc:  # a model folder that cannot be read: its library's own error, said plainly
            raise CitesumError(f"--relevance-embedder {relevance_embedder}: the model cannot be loaded "
                               f"({exc})") from exc
    listener = _listen(host, port)  # before anything is said or started: a busy port is one clear error
    llm = None if backend is None else _model(backend, model, base_url, llm_timeout, window)
    from citesum.service.app import create_app

    app = create_app(indexes, config, llm=llm)
    if tokens_file:
        _reload_on_hangup(app.access)
    from citesum.service.connections import limit_repeated_logs, uvicorn_server

    where = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    served = indexes if isinstance(indexes, str) else ", ".join(f"{name}={path}" for name, path in indexes.items())
    click.echo(f"serving {served} at {where}" + (" (token required)" if app.access.required else ""), err=True)
    try:
        server = uvicorn_server(app, config)  # configures uvicorn's logging, whose handlers are then limited
        limit_repeated_logs()
        server.run(sockets=[listener])
    except KeyboardInterrupt:
        pass  # Ctrl+C: uvicorn has shut down gracefully and raises it again on the way out
    click.echo("stopped", err=True)


def _model(backend: str, model: str | None, base_url: Sequence[str], llm_timeout: float, window: int | None) -> Any:
    """The LLM writing summaries, its window said."""
    from citesum.llm.options import LLMOptions

    # the model call may take the whole --llm-timeout (the request's deadline cancels it then)
    llm = LLMOptions(backend=backend, model=model, base_url=tuple(base_url), timeout=llm_timeout,  # type: ignore[arg-type]
                     window=window).build_fitted()
    if llm is None:
        raise CitesumError("--llm openai needs the server's model name: give --model")
    click.echo(f"the model's window: {llm.context_window:,} tokens ({llm.context_window_source})", err=True)
    return llm


def _collections(values: Sequence[str]) -> str | dict[str, str]:
    """``--index`` values: one folder, or collections by name (NAME=DIR each)."""
    if len(values) == 1 and ("=" not in values[0] or Path(values[0]).is_dir()):  # a folder may have "=" in its name
        return values[0]
    named: dict[str, str] = {}
    for value in values:
        name, equals, path = value.partition("=")
        if not equals or not name or not path:
            raise CitesumError(f"--index {value!r}: to serve several indexes, name each one: --index NAME=DIR")
        if name in named:
            raise CitesumError(f"--index: the collection name '{name}' is given twice")
        named[name] = path
    return named


def _worker_kind(indexes: str | dict[str, str], asked: str | None) -> str | None:
    """Threads for an index whose store serves one process at a time (a milvus-lite file)."""
    from citesum.index.store import Index

    for path in [indexes] if isinstance(indexes, str) else list(indexes.values()):
        if Index.open(path).store.one_process_at_a_time:  # worker processes cannot share it
            if asked == "process":
                raise CitesumError(f"the index {path} keeps its searches in a milvus-lite file, which serves one "
                                   "process at a time: serve it with --worker-kind thread (the default for it), or "
                                   "move it to a Milvus server")
            return "thread"
    return asked


def _reload_on_hangup(access: Any) -> None:
    """``kill -HUP`` reads the tokens file again (a revoked token is refused from then on); the reload catches
    every error itself, so the signal never breaks the code it interrupts."""
    import signal

    signal.signal(signal.SIGHUP, lambda *_: access.reload())


def _listen(host: str, port: int) -> Any:
    """A TCP socket bound to ``host:port`` for the service."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio turns Nagle off only on sockets that say they are TCP, and with it on,
    # each keep-alive request waited for a delayed ACK
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise CitesumError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return listener
