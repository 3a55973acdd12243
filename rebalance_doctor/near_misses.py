"""Near misses of names the user typed (an event kind, a cause, a group): "did you mean", with the known values."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

SHOWN_AT_MOST = 30  # known values listed in a message; more would bury it


def did_you_mean(typed: str, known: Iterable[str]) -> str:
    """``"; did you mean 'orders'?"`` when ``typed`` is close to known values, else ``""``."""
    close = [repr(name) for name in difflib.get_close_matches(typed, list(known), n=3, cutoff=0.8)]
    return f"; did you mean {' or '.join([', '.join(close[:-1]), close[-1]] if len(close) > 1 else close)}?" if close else ""


def listed(known: Iterable[str]) -> str:
    """The known values for a message, at most SHOWN_AT_MOST of them."""
    values = sorted(set(known))
    more = len(values) - SHOWN_AT_MOST
    return ", ".join(values[:SHOWN_AT_MOST]) + (f" and {more:,} more" if more > 0 else "")
