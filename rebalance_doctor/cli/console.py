"""The console: the output environment (streams, terminal detection, colour) and the exit statuses, each
decided in one place.

Tests build an :class:`Environment` around ``StringIO`` (or let typer's CliRunner swap
``sys.stdout``) to get deterministic output whatever the terminal; the CLI uses the real process
streams, ``NO_COLOR``, ``--color`` and isatty.
"""

from __future__ import annotations

import errno
import os
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from enum import IntEnum
from typing import IO, Literal

from rich.console import Console

ColorChoice = Literal["auto", "always", "never"]
PIPE_WIDTH = 200  # width when output is not a terminal: wide enough that tables rarely wrap


@dataclass
class Environment:
    stdout_override: IO[str] | None = None
    stderr_override: IO[str] | None = None
    color: ColorChoice = "auto"
    width: int | None = None

    @property
    def stdout(self) -> IO[str]:
        return self.stdout_override or sys.stdout

    @property
    def stderr(self) -> IO[str]:
        return self.stderr_override or sys.stderr

    def colour_wanted(self, stream: IO[str]) -> bool:
        if self.color == "always":
            return True
        if self.color == "never" or os.environ.get("NO_COLOR"):
            return False
        return bool(getattr(stream, "isatty", lambda: False)())

    def console(self, stream: IO[str]) -> Console:
        colour = self.colour_wanted(stream)
        return Console(
            file=stream,
            color_system="standard" if colour else None,
            force_terminal=colour,
            no_color=not colour,
            width=self.width or (None if colour else PIPE_WIDTH),
            highlight=False,
            soft_wrap=True,
        )

    @property
    def out(self) -> Console:
        return self.console(self.stdout)

    @property
    def err(self) -> Console:
        return self.console(self.stderr)


class ExitStatus(IntEnum):
    OK = 0  # something matched / every rule holds
    NOTHING_FOUND = 1  # nothing matched / a rule is violated
    ERROR = 2  # usage error, or no input could be read
    INTERRUPTED = 130  # Ctrl-C


_CURRENT: ContextVar[Environment] = ContextVar("environment")


def use_environment(environment: Environment) -> None:
    """Make ``environment`` the one the running command writes to (the application's callback does, per run)."""
    _CURRENT.set(environment)


def environment() -> Environment:
    """The environment of the command being run."""
    return _CURRENT.get()


def is_broken_pipe(exc: BaseException) -> bool:
    """The reader of stdout went away (``| head -1``): polars reports it as a plain OSError naming EPIPE."""
    return isinstance(exc, BrokenPipeError) or (isinstance(exc, OSError) and (
        exc.errno == errno.EPIPE or f"os error {errno.EPIPE})" in str(exc)))


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that nothing more fails on the pipe nobody reads (grep's and rg's behaviour)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no descriptor behind it (a test's stream): nothing to silence
        pass
    finally:
        os.close(devnull)
