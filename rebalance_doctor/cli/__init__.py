"""The command line: a thin layer over the library API (``load``, ``analyze``, ``render``). :mod:`.app`
is the typer application, :mod:`.options` the options every log-reading command shares,
:mod:`.commands` and :mod:`.patterns` the commands, :mod:`.console` the output environment and exit
statuses, :mod:`.process` the process set-up. No analysis happens here."""

from . import commands, patterns  # noqa: F401 - registers the commands on the application
from .app import app
from .process import main

__all__ = ["app", "main"]
