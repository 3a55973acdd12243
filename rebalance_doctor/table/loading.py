"""Loading logs: inputs → the chosen engine → one event table with its line accounting (a :class:`LogSet`).

>>> import rebalance_doctor
>>> logs = rebalance_doctor.load(["sample_logs/heartbeat-expiry"])   # doctest: +SKIP
>>> logs.events.filter(pl.col("kind") == "rebalance_start")          # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..catalog import Catalog
from ..catalog.schema import BUCKETS
from ..engines.parallel import LocalScanner
from ..reading.accounting import LONG_LINE_READ, MAX_LINE_BYTES, FileScan
from ..reading.envelope import zones_for
from ..reading.examples import checked_catalog
from ..reading.sources import Expansion, expand
from .event_table import TableBuilder, filter_table

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
    since: datetime | None = None,
    until: datetime | None = None,
    groups: tuple[str, ...] = (),
    members: tuple[str, ...] = (),
    collect_unmatched: bool = False,
    catalog: Catalog | None = None,
    progress: Callable[[int, int], None] | None = None,
    engine: str = "polars",
    spark: SparkSettings | None = None,
    exclude: tuple[str | os.PathLike, ...] = (),
) -> LogSet:
    """Read broker and client logs into one event table, merged across files in time order.

    ``engine`` is ``polars`` (embedded, the default) or ``spark`` (``spark`` says where it runs); both
    give the same table. ``exclude``: files never to read, though a directory or glob names them (the
    report being written into the logs' folder). ``progress(bytes_done, bytes_total)`` is called as files finish (sizes on
    disk; stdin counts as 0). Inputs over 32 MB are scanned by spawned processes: call from under
    ``if __name__ == "__main__":`` in a script.
    """
    if isinstance(paths, (str, os.PathLike)):  # one path, not the characters of one
        paths = [paths]
    patterns, tz, groups, members = (_one_or_many(value) for value in (patterns, tz, groups, members))
    catalog = catalog or checked_catalog(patterns)
    if engine == "polars":
        expansion = _without(expand([os.fspath(path) for path in paths]), exclude)
        zones, told = zones_for(expansion.sources, tuple(tz))
        event_rows = TableBuilder(catalog, zones)
        scans = _scan_polars(expansion, catalog, collect_unmatched, progress, event_rows)
        table = event_rows.build({s.display: s.order for s in expansion.sources}, scans)
        logs = LogSet(scans, table=filter_table(table, since=since, until=until, groups=groups, members=members))
    elif engine == "spark":
        from ..engines.spark import SparkScanner, SparkSettings, spark_session
        from .cluster_rows import finished_rows

        scanner = SparkScanner(catalog, spark_session(spark or SparkSettings()), collect_unmatched)
        expansion = scanner.expand([os.fspath(path) for path in paths])
        zones, told = zones_for(expansion.sources, tuple(tz))
        scan = scanner.scan(expansion.sources, zones)
        cluster = finished_rows(scan, catalog, zones, {s.display: s.order for s in expansion.sources},
                                since=since, until=until, groups=groups, members=members)
        logs = LogSet(scan.scans, cluster=cluster)
        if progress is not None:
            size = sum(source.size for source in expansion.sources)
            progress(size, size)
    else:
        raise ValueError(f"unknown engine {engine!r} (choose {' or '.join(ENGINES)})")
    logs.problems = expansion.problems + [scan.problem for scan in logs.scans if scan.problem]
    logs.problems += [f"{scan.source.display}:{line}: line of {'more than ' if size >= LONG_LINE_READ else ''}{size:,} bytes cut to "
                      f"{MAX_LINE_BYTES:,} for matching" for scan in logs.scans for line, size in scan.cut_lines]
    logs.zoned_files = told
    return logs


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
    collect_unmatched: bool,
    progress: Callable[[int, int], None] | None,
    event_rows: TableBuilder,
) -> list[FileScan]:
    """Scan files on this machine (blocks on every core)."""
    scanner = LocalScanner(catalog, collect_unmatched=collect_unmatched, zones=event_rows.zones)
    total, done = sum(source.size for source in expansion.sources), 0

    def file_done(size: int) -> None:
        nonlocal done
        done += size
        if progress is not None:
            progress(done, total)

    return scanner.scan(expansion.sources, event_rows.add, file_done, event_rows.add_rows)
