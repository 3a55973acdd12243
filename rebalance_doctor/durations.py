"""Durations as people write them (``600000``, ``250ms``, ``90s``, ``10m``, ``1h``) → milliseconds: the
options and the rules file use them. A module of its own so that the CLI can check an option before it
reads any log without importing what renders reports (polars among it)."""

from __future__ import annotations

import re


def parse_duration(value: str | int) -> int:
    """Milliseconds from ``600000`` (ms), ``'250ms'``, ``'90s'``, ``'10m'``, ``'1h'``."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*", value) if isinstance(value, str) else None
    if not match:
        raise ValueError(f"{value!r} is not a duration (e.g. 600000, 250ms, 90s, 10m, 1h)")
    factor = {None: 1, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000}[match.group(2)]
    return int(float(match.group(1)) * factor)
