"""The event table: rows from any engine → one polars DataFrame in canonical order, then filters.

Canonical order is time, then the order the user gave the files, then line number. A line with no
timestamp sorts right after the previous timestamped line of its own file (it happened after it),
and a file with no timestamps at all keeps its own order after every timestamped event.
"""

from __future__ import annotations

import fnmatch
from datetime import datetime
from typing import Any

import polars as pl

from .schema import COLUMN_NAMES, empty_table, polars_schema


def build_table(rows: list[dict[str, Any]], file_order: dict[str, int]) -> pl.DataFrame:
    """One DataFrame with exactly the schema's columns and dtypes, sorted canonically."""
    if not rows:
        return empty_table()
    table = pl.DataFrame(rows, schema=polars_schema(), orient="row")
    return canonical_sort(table, file_order)


def canonical_sort(table: pl.DataFrame, file_order: dict[str, int]) -> pl.DataFrame:
    order = pl.col("file").replace_strict(file_order, default=len(file_order), return_dtype=pl.Int64)
    return (
        table.with_columns(_file_order=order)
        .sort("_file_order", "line")
        .with_columns(_sort_ts=pl.col("ts").forward_fill().over("_file_order"))
        .sort("_sort_ts", "_file_order", "line", nulls_last=True, maintain_order=True)
        .select(COLUMN_NAMES)
    )


def _matches_any(column: str, patterns: tuple[str, ...]) -> pl.Expr:
    """Exact or glob (``orders-*``) match of a text column against any of ``patterns``."""
    exprs = []
    for pattern in patterns:
        if any(ch in pattern for ch in "*?["):
            exprs.append(pl.col(column).str.contains("^" + fnmatch.translate(pattern).removesuffix(r"\Z") + "$"))
        else:
            exprs.append(pl.col(column) == pattern)
    return pl.any_horizontal(exprs).fill_null(False)


def filter_table(
    table: pl.DataFrame,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    groups: tuple[str, ...] = (),
    members: tuple[str, ...] = (),
    kinds: tuple[str, ...] = (),
    generations: tuple[int, ...] = (),
) -> pl.DataFrame:
    """Keep the events inside the window, of the given groups, members, kinds and generations.

    A time window drops events that have no timestamp (they cannot be placed in it). Members are
    matched as substrings of the member id, client id or group instance id.
    """
    if since is not None:
        table = table.filter(pl.col("ts") >= since)
    if until is not None:
        table = table.filter(pl.col("ts") <= until)
    if groups:
        table = table.filter(_matches_any("group_id", groups))
    if members:
        any_member = pl.any_horizontal(
            [pl.col(c).str.contains(m, literal=True) for m in members for c in ("member_id", "client_id", "instance_id")]
        ).fill_null(False)
        table = table.filter(any_member)
    if kinds:
        table = table.filter(pl.col("kind").is_in(list(kinds)))
    if generations:
        epochs = list(generations)
        table = table.filter(
            pl.col("generation").is_in(epochs) | pl.col("group_epoch").is_in(epochs) | pl.col("member_epoch").is_in(epochs)
        )
    return table
