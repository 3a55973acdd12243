"""The output environment: streams, terminal detection and colour, decided in one place.

Tests build an :class:`Environment` around ``StringIO`` to get deterministic output whatever the
terminal; the CLI builds one from the real process (``NO_COLOR``, ``--color``, isatty, COLUMNS).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import IO, Literal

from rich.console import Console

ColorChoice = Literal["auto", "always", "never"]


@dataclass
class Environment:
    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    stderr: IO[str] = field(default_factory=lambda: sys.stderr)
    color: ColorChoice = "auto"
    width: int | None = None

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
            width=self.width or (None if colour else 200),
            highlight=False,
            soft_wrap=True,
        )

    @property
    def out(self) -> Console:
        return self.console(self.stdout)

    @property
    def err(self) -> Console:
        return self.console(self.stderr)
