"""Loading logs: inputs → the chosen engine → one event table with its line accounting (a :class:`LogSet`).

>>> import rebalance_doctor
>>> logs = rebalance_doctor.load(["sample_logs/heartbeat-expiry"])   # doctest: +SKIP
>>> logs.events.filter(pl.col("kind") == "rebalance_start")          # doctest: +SKIP
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from ..catalog import Catalog
from ..catalog.schema import BUCKETS
from ..engines.parallel import LocalScanner
from ..reading.accounting import LONG_LINE_READ, MAX_LINE_BYTES, FileScan
from ..reading.envelope import zones_for
from ..reading.examples import checked_catalog
from ..reading.kernel import Collected
from ..reading.search import TextSearch
from ..reading.sources import Expansion, expand
from ..times import TimeBound
from .event_table import TableBuilder, filter_table, missed_groups, time_extent, time_window
from .found_lines import filter_lines, found_lines

if TYPE_CHECKING:
    import polars as pl

    from ..engines.spark import SparkSettings
    from .cluster_rows import ClusterRows

ENGINES = ("polars", "spark")


@dataclass
class LogSet:
    """The event table of a set of inputs, with the line accounting that proves nothing was lost. The Spark
    engine leaves the table on the cluster (``cluster``) until ``events`` is first read: an event store is
    written from there by the executors."""

    scans: list[FileScan]
    problems: list[str] = field(default_factory=list)
    zoned_files: frozenset[str] = frozenset()  # files whose zone the user gave (--tz): their clocks are read as told
    table: pl.DataFrame | None = None
    cluster: ClusterRows | None = None
    found: Callable[[], pl.DataFrame] | None = field(default=None, repr=False)  # with a text search: what makes ``lines``
    found_table: pl.DataFrame | None = None

    @property
    def lines(self) -> pl.DataFrame | None:
        """With a text search: the lines it selected and their context (:func:`.found_lines.lines_schema`), made
        when first read (counting them per file needs none of it: :meth:`selected_per_file`)."""
        if self.found_table is None and self.found is not None:
            self.found_table, self.found = self.found(), None
        return self.found_table

    def selected_per_file(self) -> Counter:
        """With a text search: how many lines it selected in each file, before any filter."""
        return Counter({scan.source.display: count for scan in self.scans if (count := sum(chosen for *_, chosen in scan.found))})

    @property
    def events(self) -> pl.DataFrame:
        """The event table, in canonical order."""
        if self.table is None:
            self.table, self.cluster = self.cluster.collect(), None
        return self.table

    @property
    def buckets(self) -> Counter:
        """Lines per bucket over all inputs: matched + relevant_unmatched + irrelevant + unreadable."""
        total: Counter = Counter(dict.fromkeys(BUCKETS, 0))
        for scan in self.scans:
            total.update(scan.buckets)
        return total

    @property
    def lines_read(self) -> int:
        return sum(self.buckets.values())

    @property
    def files_read(self) -> int:
        return sum(1 for scan in self.scans if scan.problem is None)

    @property
    def unmatched(self) -> list[tuple[str, int, str]]:
        """Relevant-looking lines no catalog entry matched: (file, line, text)."""
        return [(scan.source.display, number, text) for scan in self.scans for number, text in scan.unmatched]


def load(
    paths: str | os.PathLike | list[str] | tuple[str, ...],
    *,
    patterns: tuple[str, ...] = (),
    tz: tuple[str, ...] = (),
    since: datetime | str | TimeBound | None = None,
    until: datetime | str | TimeBound | None = None,
    now: datetime | None = None,
    groups: tuple[str, ...] = (),
    members: tuple[str, ...] = (),
    collect_unmatched: bool = False,
    search: TextSearch | str | None = None,
    catalog: Catalog | None = None,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "polars",
    spark: SparkSettings | None = None,
    exclude: tuple[str | os.PathLike, ...] = (),
) -> LogSet:
    """Read broker and client logs into one event table, merged across files in time order.

    ``engine`` is ``polars`` (embedded, the default) or ``spark`` (``spark`` says where it runs); both
    give the same table. ``since`` and ``until`` take what the options take (``"2024-10-24T12:00Z"``,
    ``"30m"`` back from the newest event, or from ``now`` when given; ``"10:05"`` on the inputs' date).
    ``search``: also find the lines a text search (or a regex, smart case) selects in every line of every input,
    with their context, each marked with the event it is (``LogSet.lines``, in time order).
    ``exclude``: files never to read, though a directory or glob names them (the report being written into
    the logs' folder). ``progress(bytes_done, bytes_total)`` is called as files finish (sizes on disk; stdin
    counts as 0). Inputs over 32 MB are scanned by spawned processes: call from under
    ``if __name__ == "__main__":`` in a script.
    """
    if isinstance(paths, (str, os.PathLike)):  # one path, not the characters of one
        paths = [paths]
    patterns, tz, groups, members = (_one_or_many(value) for value in (patterns, tz, groups, members))
    search, bounds = checked_query(search, since, until)
    catalog = catalog or checked_catalog(patterns)
    collect = Collected(collect_unmatched, search)
    table = None
    if engine == "polars":
        expansion = _without(expand([os.fspath(path) for path in paths]), exclude)
        zones, told = zones_for(expansion.sources, tuple(tz))
        event_rows = TableBuilder(catalog, zones)
        scans = _scan_polars(expansion, catalog, collect, progress, event_rows)
        table = event_rows.build(_file_order(expansion), scans)
        extent, known_groups = (lambda: time_extent(table)), (lambda: table["group_id"].unique())
    elif engine == "spark":
        from ..engines.spark import SparkScanner, SparkSettings, spark_session
        from .cluster_rows import cluster_extent, cluster_groups, finished_rows

        scanner = SparkScanner(catalog, spark_session(spark or SparkSettings()), collect)
        expansion = scanner.expand([os.fspath(path) for path in paths])
        zones, told = zones_for(expansion.sources, tuple(tz))
        scan = scanner.scan(expansion.sources, zones)
        scans = scan.scans
        extent, known_groups = (lambda: cluster_extent(scan)), (lambda: cluster_groups(scan))
        if progress is not None:
            size = sum(source.size for source in expansion.sources)
            progress(size, size)
    else:
        raise ValueError(f"unknown engine {engine!r} (choose {' or '.join(ENGINES)})")
    since, until = time_window(*bounds, now, extent)
    notes = missed_groups(groups, known_groups)
    filters = {"since": since, "until": until, "groups": groups, "members": members}
    if engine == "spark":
        cluster = finished_rows(scan, catalog, zones, _file_order(expansion), **({} if search else filters))
        if search is None:  # the rows stay on the cluster until they are read
            logs = LogSet(scans, cluster=cluster)
        else:  # the found lines are marked with the events: all of them, before the filters
            table = cluster.collect()
    if table is not None:
        logs = LogSet(scans, table=filter_table(table, **filters))
        if search is not None:
            logs.found = functools.partial(_found, scans, table, catalog, zones, _file_order(expansion), search, filters)
    logs.problems = expansion.problems + [scan.problem for scan in logs.scans if scan.problem] + notes
    logs.problems += [f"{scan.source.display}:{line}: line of {'more than ' if size >= LONG_LINE_READ else ''}{size:,} bytes cut to "
                      f"{MAX_LINE_BYTES:,} for matching" for scan in logs.scans for line, size in scan.cut_lines]
    logs.zoned_files = told
    return logs


def checked_query(search: TextSearch | str | None, since: datetime | str | TimeBound | None,
                  until: datetime | str | TimeBound | None) -> tuple[TextSearch | None, tuple[TimeBound | None, TimeBound | None]]:
    """The search and the time bounds as given, checked before any log is read (ValueError: what is wrong)."""
    search = TextSearch(search) if isinstance(search, str) else search
    if search is not None:
        search.check()
    return search, tuple(None if bound is None else TimeBound.parse(bound, option) for bound, option in ((since, "since"), (until, "until")))


def _found(scans: list[FileScan], events: pl.DataFrame, catalog: Catalog, zones: dict[int, tzinfo], file_order: dict[str, int],
           search: TextSearch, filters: dict) -> pl.DataFrame:
    found = found_lines(scans, events, catalog, zones, file_order, search.context)
    return filter_lines(found, search.before, search.after, **filters)


def _file_order(expansion: Expansion) -> dict[str, int]:
    return {source.display: source.order for source in expansion.sources}


def _without(expansion: Expansion, exclude: tuple[str | os.PathLike, ...]) -> Expansion:
    """The expansion less the files ``exclude`` names (compared as resolved paths)."""
    if not exclude:
        return expansion
    excluded = {os.path.realpath(path) for path in exclude}
    kept = [s for s in expansion.sources if s.path is None or os.path.realpath(s.path) not in excluded]
    return Expansion(kept, expansion.problems)


def _one_or_many(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``tz="UTC"`` means one zone, not three letters."""
    return (value,) if isinstance(value, str) else tuple(value)


def _scan_polars(
    expansion: Expansion,
    catalog: Catalog,
    collect: Collected,
    progress: Callable[[int, int], None] | None,
    event_rows: TableBuilder,
) -> list[FileScan]:
    """Scan files on this machine (blocks on every core)."""
    scanner = LocalScanner(catalog, collect, zones=event_rows.zones)
    total, done = sum(source.size for source in expansion.sources), 0

    def file_done(size: int) -> None:
        nonlocal done
        done += size
        if progress is not None:
            progress(done, total)

    return scanner.scan(expansion.sources, event_rows.add, file_done, event_rows.add_rows)
