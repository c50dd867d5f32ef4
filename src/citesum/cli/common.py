"""What the ``citesum`` commands share: reading a query, progress bars, JSON and table output, an LLM backend."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import click

from citesum.errors import CitesumError
from citesum.tokens import holds_words

#: the exit status of a command that failed (its error is one line on stderr)
EXIT_ERROR = 1


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
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


def citation_marks(numbers: Iterable[int], shown: dict[int, int], pages: Mapping[int, int | str] | None = None) -> str:
    """Citations as a reader reads them: each document numbered in the order the answer first cites it
    (``shown``, the context's number to the reader's, grows as they come: the context's numbers may start at
    4), with the page a PDF's evidence is on ("[1, p. 177]")."""
    marks = []
    for number in numbers:
        shown.setdefault(number, len(shown) + 1)
        page = (pages or {}).get(number)
        marks.append(f"[{shown[number]}, p. {page}]" if page else f"[{shown[number]}]")
    return "".join(marks)


def echo_json(payload: Any) -> None:
    click.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))


def echo_table(headers: Sequence[str], rows: Sequence[Sequence[object]], note: str = "") -> None:
    """A Markdown table on stdout (pastes into docs and issues as is)."""
    click.echo("| " + " | ".join(headers) + " |" + (f"  ({note})" if note else ""))
    click.echo("|" + "---|" * len(headers))
    for row in rows:
        click.echo("| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row) + " |")


def read_query(argument: str | None, query_file: Any) -> str:
    """The query of a command: its argument, or the text of --query-file (a file, or '-' for stdin)."""
    if (argument is None) == (query_file is None):
        raise CitesumError("give the query as an argument or with --query-file (one of them)")
    query = argument if argument is not None else query_file.read()
    if not query.strip():
        raise CitesumError("the query is empty")
    if not holds_words(query):
        raise CitesumError("the query has no words to look for (only punctuation or symbols)")
    return query


def load_qrels(path: str | None) -> dict[str, float] | None:
    if path is None:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return {str(k): float(v) for k, v in data.items()}
    except (ValueError, AttributeError) as exc:
        raise CitesumError(f"{path}: qrels must be a JSON object {{document_id: grade}} ({exc})") from exc


def base_url_option(name: str = "--base-url", of: str = "the LLM server") -> Callable[[Any], Any]:
    """A repeatable option naming the OpenAI-compatible endpoint(s) of ``of``: several (or a pool file) make a
    pool of replicas of the same model."""
    return click.option(name, multiple=True, metavar="URL|@FILE",
                        help=f"OpenAI-compatible base URL of {of}, e.g. http://127.0.0.1:8080/v1 (default "
                             "$OPENAI_BASE_URL). Repeat it, or give @FILE (one 'URL [max_concurrency]' a line), "
                             "for a pool of replicas of the same model.")


class RetrieverOption(click.Option):
    """``--retriever``, whose help lists the retrievers of :mod:`citesum.retrieve` (its ``RETRIEVER_NAMES``) and
    the ``also`` names a command reads besides. The list is made when help is shown, not when the command is
    loaded: importing the retrievers would import numpy and the index into every command's start-up."""

    def __init__(self, *args: Any, also: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.also = tuple(also)

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        if self.help is None:
            from citesum.retrieve import RETRIEVER_NAMES

            self.help = (", ".join([*RETRIEVER_NAMES, *self.also]) + ". hybrid:<a>+<b>... fuses the retrievers "
                         "named; lightpal[:<base>] and promptrank[:<base>] pick their base.")
        return super().get_help_record(ctx)


def retriever_option(also: Sequence[str] = ()) -> Callable[[Any], Any]:
    """The ``--retriever`` option (default hybrid), its help listing every retriever (see
    :class:`RetrieverOption`)."""
    return click.option("--retriever", default="hybrid", show_default=True, cls=RetrieverOption, also=also)


def openai_llm(model: str | None, base_url: Sequence[str], no_cache: bool = False) -> Any:
    """An OpenAI-compatible model (a judge's, a confirming model's) with the response cache, or None without a
    model name."""
    from citesum.llm.options import LLMOptions

    return LLMOptions(model=model, base_url=base_url, cache=not no_cache).build()  # type: ignore[arg-type]


def ray_options(work: str) -> Callable[[Any], Any]:
    """``--ray`` and ``--ray-address`` for a command whose ``work`` can be spread over a Ray cluster."""
    def decorate(command: Any) -> Any:
        command = click.option(
            "--ray-address", default=None, metavar="ADDRESS",
            help="The Ray cluster of --ray: 'auto' (the cluster this machine joined with ray start) or "
                 "ray://HOST:10001. Workers open files and indexes by path: use a folder every node shares.")(command)
        return click.option("--ray", "use_ray", is_flag=True,
                            help=f"{work} on Ray (extra ray): a Ray instance started on this machine, or the "
                                 "cluster of --ray-address. The result is the same as without --ray.")(command)
    return decorate


@contextmanager
def ray_executor(use_ray: bool, ray_address: str | None) -> Iterator[Any]:
    """The executor of ``--ray`` (None without it), stopped at the end when this command started it."""
    if ray_address and not use_ray:
        raise CitesumError("--ray-address names the cluster of --ray; add --ray")
    if not use_ray:
        yield None
        return
    from citesum.parallel import RayExecutor

    executor = RayExecutor(ray_address)
    try:
        yield executor
    finally:
        executor.shutdown()
