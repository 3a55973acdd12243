"""The event table: rows from any engine → one polars DataFrame in canonical order, then filters.

Canonical order is time, then the order the user gave the files, then line number. A line with no
timestamp sorts right after the previous timestamped line of its own file (it happened after it),
and a file with no timestamps at all keeps its own order after every timestamped event.

polars is imported where it is first used, not with this module: ``load`` collects rows while the
scan processes start, and they need not wait for polars' slow import.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from ..catalog import Catalog
from ..catalog.schema import empty_table
from ..near_misses import did_you_mean, listed
from ..reading.accounting import FileScan
from ..reading.kernel import concat_records
from ..reading.rows import event_rows
from ..times import TimeBound

if TYPE_CHECKING:
    import polars as pl


class TableBuilder:
    """Makes the event table of an engine's records (see :class:`~..reading.kernel.BlockScan`): their rows
    are made many blocks' records at a time, where each polars call costs little per row, and at most
    BATCH_ROWS at a time, so the records waiting take little memory."""

    BATCH_ROWS = 20_000

    def __init__(self, catalog: Catalog, zones: dict[int, tzinfo]) -> None:
        self.catalog, self.zones = catalog, zones
        self._frames: list[pl.DataFrame] = []
        self._pending: list[pl.DataFrame] = []
        self._pending_rows = 0

    def add(self, records: pl.DataFrame) -> None:
        self._pending.append(records)
        self._pending_rows += len(records)
        if self._pending_rows >= self.BATCH_ROWS:
            self._make_rows()

    def add_rows(self, rows: pl.DataFrame) -> None:
        """Rows an engine made itself (where it scanned many records)."""
        self._frames.append(rows)

    def _make_rows(self) -> None:
        records = concat_records(self._pending)
        if records is not None:
            self._frames.append(event_rows(records, self.catalog, self.zones))
            self._pending, self._pending_rows = [], 0

    def build(self, file_order: dict[str, int], scans: list[FileScan] = ()) -> pl.DataFrame:
        """One DataFrame with exactly the schema's columns and dtypes, sorted canonically; what merging the
        ``scans``' parts changed (:meth:`~..reading.accounting.FileScan.append_part`) applied."""
        self._make_rows()
        if not self._frames:
            return empty_table()
        remade = remade_rows(scans, self.catalog, self.zones)
        table = without_remade(self._take_frames(), remade)
        if remade is not None:
            import polars as pl

            table = pl.concat([table, remade])
        return canonical_sort(with_added_lines(table, added_lines(scans)), file_order)

    def _take_frames(self) -> pl.DataFrame:
        """The chunks as one table, no longer referenced here (so sorting can release them)."""
        import polars as pl

        table = pl.concat(self._frames, rechunk=False)
        self._frames = []
        return table


def remade_rows(scans: list[FileScan], catalog: Catalog, zones: dict[int, tzinfo]) -> pl.DataFrame | None:
    """The rows of records made again with the line before them, where a part of a file began with them."""
    remade = concat_records([record for scan in scans for record in scan.remade])
    return event_rows(remade, catalog, zones) if remade is not None else None


def added_lines(scans: list[FileScan]) -> pl.DataFrame | None:
    """Per record (``file``, ``line``) that ran on into the next part of its file, the lines it took there (``more``)."""
    import polars as pl

    tails = [(scan.source.display, line, text) for scan in scans for line, text in scan.raw_tails]
    if not tails:
        return None
    return pl.DataFrame(tails, schema={"file": pl.String, "line": pl.Int64, "more": pl.String}, orient="row").group_by(
        "file", "line", maintain_order=True).agg(pl.col("more").str.join("\n"))


def without_remade(table: pl.DataFrame, remade: pl.DataFrame | None) -> pl.DataFrame:
    """The rows less those ``remade`` makes again (by file and line)."""
    if remade is None:
        return table
    return table.join(remade.select("file", "line"), on=["file", "line"], how="anti", maintain_order="left")


def with_added_lines(table: pl.DataFrame, tails: pl.DataFrame | None) -> pl.DataFrame:
    """Each record's ``raw`` with the lines it took in the next part of its file (``tails``: :func:`added_lines`)."""
    import polars as pl

    if tails is None:
        return table
    return table.join(tails, on=["file", "line"], how="left", maintain_order="left").with_columns(
        raw=pl.when(pl.col("more").is_null()).then("raw").otherwise(pl.concat_str("raw", "more", separator="\n"))).drop("more")


NO_DATE, NO_GROUP = "unknown", "_none"  # the event store's partition values for events without a time or a group


def partitioned(events: pl.DataFrame) -> pl.DataFrame:
    """The rows with the event store's partition columns: ``date`` (UTC) and ``group`` (the group id made path-safe)."""
    import polars as pl

    safe_group = pl.col("group_id").str.replace_all(r"[^A-Za-z0-9._-]", "_").str.slice(0, 120)
    return events.with_columns(
        date=pl.col("ts").dt.strftime("%Y-%m-%d").fill_null(NO_DATE),
        group=pl.when(safe_group.str.len_chars() > 0).then(safe_group).otherwise(pl.lit(NO_GROUP)),
    )


def canonical_sort(table: pl.DataFrame, file_order: dict[str, int]) -> pl.DataFrame:
    """Sorted by the small key columns only, then the table gathered in that order a column at a
    time, each column released once gathered (when the caller holds no other reference to the
    table): the peak is the table plus one column. Sorting the table itself copied it at every
    step, the peak memory of a 5 GB input."""
    import polars as pl

    order = pl.col("file").replace_strict(file_order, default=len(file_order), return_dtype=pl.Int64)
    rows = (
        table.select(order.alias("file_order"), "line", "ts")
        .with_row_index("row")
        .sort("file_order", "line")
        .with_columns(sort_ts=pl.col("ts").forward_fill().over("file_order"))
        .sort("sort_ts", "file_order", "line", nulls_last=True, maintain_order=True)
    )["row"]
    gathered = []
    for name in table.columns:
        gathered.append(table.get_column(name).rechunk().gather(rows))  # a gather across chunks is slower
        table = table.drop(name)
    return pl.DataFrame(gathered)


def _matches_any(column: str, patterns: tuple[str, ...]) -> pl.Expr:
    """Exact or glob (``orders-*``) match of a text column against any of ``patterns``."""
    import polars as pl

    exprs = []
    for pattern in patterns:
        if any(ch in pattern for ch in "*?["):  # a glob, unless it names a group exactly (ids may hold brackets)
            glob = "^" + fnmatch.translate(pattern).removesuffix(r"\Z") + "$"
            exprs.append((pl.col(column) == pattern) | pl.col(column).str.contains(glob))
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
    nodes: tuple[str, ...] = (),
    kinds: tuple[str, ...] = (),
    generations: tuple[int, ...] = (),
) -> pl.DataFrame:
    """Keep the events inside the window, of the given groups, members, nodes (globs, as groups), kinds and
    generations.

    A time window drops events that have no timestamp (they cannot be placed in it). Members are
    matched as substrings of the member id, client id or group instance id.
    """
    import polars as pl

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
    if nodes:
        table = table.filter(_matches_any("node", nodes))
    if kinds:
        table = table.filter(pl.col("kind").is_in(list(kinds)))
    if generations:
        epochs = list(generations)
        table = table.filter(
            pl.col("generation").is_in(epochs) | pl.col("group_epoch").is_in(epochs) | pl.col("member_epoch").is_in(epochs)
        )
    return table


Extent = tuple[datetime | None, datetime | None]


def time_extent(table: pl.DataFrame) -> Extent:
    """The first and last event times of a table (None, None when no event has a time)."""
    times = table["ts"].drop_nulls()
    return (times.min(), times.max()) if len(times) else (None, None)


def time_window(since: TimeBound | None, until: TimeBound | None, now: datetime | None, extent: Callable[[], Extent]) -> Extent:
    """The instants the bounds name; ``extent`` (the unfiltered events' first and last times) is asked only when
    a bound counts back from the newest event or is a time of day."""
    bounds = (since, until)
    known = extent() if any(bound is not None and bound.needs_inputs for bound in bounds) else (None, None)
    return tuple(None if bound is None else bound.resolve(*known, now=now) for bound in bounds)  # type: ignore[return-value]


def missed_groups(patterns: tuple[str, ...], known: Callable[[], Iterable[str]]) -> list[str]:
    """A note for each ``--group`` pattern that names no group of the inputs, with the near misses and the
    groups there are."""
    if not patterns:
        return []
    import polars as pl

    groups = pl.Series("group_id", sorted(set(known()) - {None}), dtype=pl.String)
    frame = groups.to_frame()
    notes = []
    for pattern in patterns:
        if not frame.filter(_matches_any("group_id", (pattern,))).height:
            shown = f"the groups in them: {listed(groups)}" if len(groups) else "they name no group"
            notes.append(f"--group {pattern!r} matches no group in the inputs{did_you_mean(pattern, groups)} ({shown})")
    return notes
