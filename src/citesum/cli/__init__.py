"""The ``citesum`` command line: index, search, summarize, serve, eval and the rest.

Errors print one line (``error: ...``) to stderr and exit with status 1; results go to stdout. Each command
lives in the module of its job and is imported when it is run, so a command pays only for its own imports
(``citesum search --server`` starts without loading the index or a model).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from typing import Any

import click

from citesum.cli.common import EXIT_ERROR
from citesum.errors import CitesumError

#: command name -> (module of this package, attribute)
COMMANDS = {
    "index": ("indexing", "index"),
    "info": ("indexing", "info"),
    "check": ("indexing", "check"),
    "delete": ("indexing", "delete"),
    "graph": ("indexing", "graph"),
    "tree": ("multistage", "tree"),
    "summary-index": ("indexing", "summary_index"),
    "demo": ("indexing", "demo"),
    "search": ("searching", "search"),
    "summarize": ("summarizing", "summarize"),
    "repair": ("summarizing", "repair"),
    "estimate-budget": ("summarizing", "estimate_budget_command"),
    "budgets": ("summarizing", "budgets"),
    "serve": ("serving", "serve"),
    "doctor": ("doctor", "doctor"),
    "eval": ("evaluating", "eval_group"),
}


class CitesumCommand(click.Group):
    """Loads each command from its module when it is asked for, and maps citesum's own errors (and OS errors)
    to a one-line message and a non-zero exit."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        return command

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
