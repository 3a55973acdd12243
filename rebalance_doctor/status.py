"""Exit statuses, named once and used by every command (like grep/rg)."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0  # something matched / every rule holds
    NOTHING_FOUND = 1  # nothing matched / a rule is violated
    ERROR = 2  # usage error, or no input could be read
    INTERRUPTED = 130  # Ctrl-C
