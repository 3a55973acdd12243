"""Following logs as they are written (``--follow``): each round's new lines → new event rows and, with a text
search, new found lines, through the same kernel and row code as a whole scan.

Each round's lines are one more part of their file, joined to the parts before as a whole scan joins its
blocks (:meth:`~..reading.accounting.FileScan.append_part`): a selected line's context lines come when they
are written, in the round that brings them. What a record gains in a later round is counted, not shown again.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..catalog import Catalog
from ..engines.local import BlockScanner
from ..reading.accounting import FileScan
from ..reading.envelope import zones_for
from ..reading.examples import checked_catalog
from ..reading.follow import POLL_SECONDS, Tail
from ..reading.kernel import BlockFile, Collected
from ..reading.rows import event_rows
from ..reading.search import TextSearch
from ..reading.sources import expand
from ..times import TimeBound
from .event_table import canonical_sort, filter_table, missed_groups, time_extent, time_window
from .found_lines import filter_lines, found_lines
from .loading import checked_query

if TYPE_CHECKING:
    import polars as pl


@dataclass
class Round:
    """What one round of following brought: new events (after the filters, in time order) and, with a search,
    the new lines it selected. ``problems``: inputs that cannot be followed, and notes on the filters (in the
    first round)."""

    events: pl.DataFrame
    lines: pl.DataFrame | None = None
    problems: list[str] = field(default_factory=list)


def follow(
    paths: list[str],
    *,
    patterns: tuple[str, ...] = (),
    tz: tuple[str, ...] = (),
    since: datetime | str | TimeBound | None = None,
    until: datetime | str | TimeBound | None = None,
    now: datetime | None = None,
    groups: tuple[str, ...] = (),
    members: tuple[str, ...] = (),
    search: TextSearch | str | None = None,
    catalog: Catalog | None = None,
    poll_seconds: float = POLL_SECONDS,
) -> Iterator[Round]:
    """Rounds of new events of the inputs (files, directories and globs as listed at the start, ``-`` for
    stdin): the first round holds what they already hold. It ends when no input can grow (stdin closed);
    a caller stops it by closing the generator (Ctrl-C)."""
    search, bounds = checked_query(search, since, until)
    catalog = catalog or checked_catalog(patterns)
    expansion = expand([os.fspath(path) for path in paths])
    zones, _ = zones_for(expansion.sources, tuple(tz))
    scanner = BlockScanner(catalog, Collected(search=search), zones=zones)
    file_order = {source.display: source.order for source in expansion.sources}
    tail = Tail(expansion.sources, poll_seconds)
    window: tuple[datetime | None, datetime | None] | None = None
    problems = list(expansion.problems)
    files: dict[int, FileScan] = {}
    for arrivals in tail.rounds():
        scans, tables = [], []
        for arrival in arrivals:
            source = arrival.source
            scanned = scanner.scan_block(arrival.data, [BlockFile(source.order, source.display, source.node)])
            if arrival.first_line == 1:  # the file from its start: the first round, or after a rotation
                files[source.order] = FileScan(source=source)
            scan = files[source.order]
            shift = [scan.append_part(part, catalog) for _, part, _ in scanned.parts][-1]
            if scanned.records is not None:
                rows = event_rows(scanned.records, catalog, zones)
                tables.append(rows.with_columns(line=rows["line"] + shift))
            found = FileScan(source=source)
            found.found, scan.found, scan.raw_tails, scan.remade = scan.found, [], [], []  # the file keeps what joins its parts
            scans.append(found)
        events = canonical_sort(_concat(tables), file_order)
        if window is None:  # spans and times of day count from what the inputs held when following began
            window = time_window(*bounds, now, lambda events=events: time_extent(events))
            problems += missed_groups(groups, lambda events=events: events["group_id"].unique())
        filters = {"since": window[0], "until": window[1], "groups": groups, "members": members}
        lines = None
        if search is not None:
            lines = filter_lines(found_lines(scans, events, catalog, zones, file_order, search.context), search.before, search.after, **filters)
        yield Round(filter_table(events, **filters), lines, problems + tail.problems)
        problems = []


def _concat(tables: list[pl.DataFrame]) -> pl.DataFrame:
    import polars as pl

    from ..catalog.schema import empty_table

    return pl.concat(tables) if tables else empty_table()
