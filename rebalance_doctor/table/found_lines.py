"""The lines a text search selected (``grep TEXT``) and their context, as one table merged across files in
time order, each line that is an event marked with it (kind, group, generation).

A line that is no event still gets what its own text says: its time, node and message from its envelope,
and the group, member and client ids its log-context prefix names (so ``--group`` and ``--member`` select
lines as they select events). A line with no time of its own (a stack trace's) takes the time of the line
above it that has one.
"""

from __future__ import annotations

from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from ..catalog import Catalog
from ..catalog.schema import polars_schema
from ..reading.accounting import FileScan
from ..reading.envelope import envelopes
from ..reading.rows import context_fields, thread_fields
from ..reading.search import TextSearch
from .event_table import filter_table

if TYPE_CHECKING:
    import polars as pl

IDENTITIES = ("group_id", "member_id", "client_id", "instance_id")  # what a log-context prefix can name
OWN = ("ts", "node", "message", *IDENTITIES)  # what a line that is no event says of itself


def lines_schema() -> dict[str, pl.DataType]:
    """The event table's columns (null but for ``OWN`` on a line that is no event; ``raw`` the line itself),
    and ``selected`` (false for a context line)."""
    import polars as pl

    return {**polars_schema(), "selected": pl.Boolean}


def found_lines(scans: list[FileScan], events: pl.DataFrame, catalog: Catalog, zones: dict[int, tzinfo],
                file_order: dict[str, int], with_context: bool = False) -> pl.DataFrame:
    """The found lines of every input, marked with the events of ``events`` that start on them, deduplicated,
    in time order; ``with_context``: a selected line's context stays beside it."""
    import polars as pl

    schema = lines_schema()
    rows = [(scan.source.display, scan.source.order, scan.source.node, number, text, selected)
            for scan in scans for number, text, selected in scan.found]
    if not rows:
        return pl.DataFrame(schema=schema)
    frame = pl.DataFrame(rows, schema={"file": pl.String, "reader": pl.Int64, "file_node": pl.String, "line": pl.Int64,
                                       "raw": pl.String, "selected": pl.Boolean}, orient="row")
    frame = frame.sort("file", "line", "selected", descending=[False, False, True]).unique(["file", "line"], keep="first", maintain_order=True)
    marks = events.select("file", "line", *(pl.col(name).alias(f"event_{name}") for name in schema if name not in ("file", "line", "raw", "selected")))
    frame = frame.join(marks, on=["file", "line"], how="left", maintain_order="left")
    own = _own_words(frame.filter(pl.col("event_kind").is_null()), catalog, zones)  # an event's row says it already
    frame = frame.join(own, on=["file", "line"], how="left", maintain_order="left")
    marked = frame.select(
        "file", "line", "raw", "selected",
        *(pl.coalesce(f"event_{name}", name).alias(name) if name in OWN else pl.col(f"event_{name}").alias(name)
          for name in schema if name not in ("file", "line", "raw", "selected")),
    )
    timed = _times_from_above(marked, events)
    return _in_time_order(timed, file_order, with_context).select(pl.col(name).cast(dtype) for name, dtype in schema.items())


def _own_words(lines: pl.DataFrame, catalog: Catalog, zones: dict[int, tzinfo]) -> pl.DataFrame:
    """What lines that are no event say of themselves (``OWN``), by file and line: time, node and message from
    their envelope, ids from their log-context prefix."""
    import polars as pl

    envelope = envelopes(lines.select(text="raw", previous=pl.lit(None, pl.String), reader="reader"), catalog, zones)
    named = context_fields(envelope["message"], catalog.context_prefixes)
    for name, series in thread_fields(envelope["thread"], catalog).items():
        named[name] = named[name].fill_null(series) if name in named else series
    return lines.select("file", "line").with_columns(
        ts=envelope["ts"].cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
        node=pl.coalesce(pl.when(envelope["node"] != "").then(envelope["node"]), lines["file_node"]),
        message=envelope["message"],
        **{name: named.get(name, pl.lit(None, pl.String)) for name in IDENTITIES},
    )


def _times_from_above(lines: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """A line with no time takes that of the nearest line above it, in its file, that has one (a found line or
    an event)."""
    import polars as pl

    if lines["ts"].null_count() == 0:
        return lines
    timed = pl.concat([lines.filter(pl.col("ts").is_not_null()).select("file", "line", "ts"),
                       events.filter(pl.col("ts").is_not_null() & pl.col("file").is_in(lines["file"].unique().implode())).select("file", "line", "ts")])
    above = lines.select("file", "line").join_asof(timed.sort("line").rename({"ts": "above"}), on="line", by="file", strategy="backward",
                                                   check_sortedness=False)
    return lines.with_columns(ts=pl.coalesce(pl.col("ts"), above["above"]))


def _in_time_order(lines: pl.DataFrame, file_order: dict[str, int], runs_together: bool) -> pl.DataFrame:
    """Lines of all files in time order, then in input and line order; with ``runs_together``, runs of
    consecutive lines of a file (a selected line and its context) stay together, at the time of their first
    timed line."""
    import polars as pl

    lines = lines.sort("file", "line").with_columns(order=pl.col("file").replace_strict(file_order, default=len(file_order)))
    if not runs_together:
        return lines.sort("ts", "order", "line", nulls_last=True, maintain_order=True)
    return (
        lines.with_columns(run=((pl.col("line") - pl.col("line").shift(1).over("file")) != 1).fill_null(True).cum_sum())
        .with_columns(run_ts=pl.col("ts").drop_nulls().first().over("run"))
        .sort("run_ts", "order", "line", nulls_last=True, maintain_order=True)
    )


def filter_lines(lines: pl.DataFrame, before: int = 0, after: int = 0, **filters: Any) -> pl.DataFrame:
    """The selected lines that pass the filters (keywords of :func:`.event_table.filter_table`; kinds and
    generations keep only events), and as context the other lines at most ``before`` lines above or ``after``
    lines below one of them, in the order of ``lines``."""
    import polars as pl

    if not any(value for value in filters.values()):
        return lines
    kept = filter_table(lines.filter("selected"), **filters)
    if not (before or after):
        return kept
    rest = lines.join(kept.select("file", "line"), on=["file", "line"], how="anti").sort("line")
    anchors = kept.select("file", "line", anchor="line").sort("line")
    above = rest.join_asof(anchors, on="line", by="file", strategy="backward", check_sortedness=False)["anchor"]
    below = rest.join_asof(anchors, on="line", by="file", strategy="forward", check_sortedness=False)["anchor"]
    near = rest.filter(((rest["line"] - above) <= after).fill_null(False) | ((below - rest["line"]) <= before).fill_null(False))
    shown = pl.concat([kept, near.with_columns(selected=pl.lit(False))])
    return shown.join(lines.select("file", "line").with_row_index("position"), on=["file", "line"]).sort("position").drop("position")


def event_lines(events: pl.DataFrame, search: TextSearch | None = None) -> pl.DataFrame:
    """The events as found lines (``raw`` the whole record), all of them or those whose record the search
    selects: ``grep`` with no text, or over an event store (which holds no other line)."""
    import polars as pl

    if search is not None and search.pattern is not None:
        events = events.filter(pl.col("raw").str.contains(search.regex) != search.invert)
    return events.with_columns(selected=pl.lit(True))
