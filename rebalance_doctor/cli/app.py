"""The typer application: the command groups and the options of the program itself (--version)."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import __version__
from .console import Environment, use_environment

app = typer.Typer(
    name="rebalance-doctor",
    help="Log forensics for Apache Kafka consumer-group rebalance incidents.\n\n"
    "Reads broker and client logs (files, directories, globs, .gz, - for stdin) from many nodes at once "
    "and turns every rebalance-related line into one event table, merged across nodes in time order.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
)
patterns_app = typer.Typer(help="What the catalogs hold, and which pattern a line matches.", no_args_is_help=True)
app.add_typer(patterns_app, name="patterns")


def _version(value: bool) -> None:
    if value:
        print(f"rebalance-doctor {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    context: typer.Context,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")] = False,
) -> None:
    """Log forensics for Apache Kafka consumer-group rebalance incidents."""
    use_environment(context.ensure_object(Environment))  # the process's streams, unless a caller (a test) passed its own as obj
