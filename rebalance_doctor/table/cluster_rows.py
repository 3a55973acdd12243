"""The event table where the Spark engine made it: on the cluster.

The executors' rows are numbered from the first line of their piece of a file. Once the driver has merged the
pieces' accounting (and joined the records that ran from one piece into the next), the executors finish their
rows in place: line numbers final, the joined records' lines added, the filters applied. The rows are then
either collected for analysis or written to an event store by the executors themselves.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from ..catalog import Catalog
from ..catalog.schema import arrow_schema, empty_table, polars_schema, spark_schema
from ..engines.spark import PIECE_KEYS, SparkScan
from .event_table import added_lines, canonical_sort, filter_table, partitioned, remade_rows, with_added_lines, without_remade

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa
    from pyspark import Broadcast
    from pyspark.sql import DataFrame


@dataclass(frozen=True)
class _Finish:
    """What the executors need to finish their rows: the line to add per piece, the rows the driver made again,
    the joined records' added lines, the filters (keywords of :func:`.event_table.filter_table`) and whether to
    add the store's partition columns."""

    shifts: pl.DataFrame
    remade: pl.DataFrame | None
    tails: pl.DataFrame | None
    filters: dict[str, Any]
    with_partitions: bool = False


@dataclass
class ClusterRows:
    """The rows of a Spark scan, finished on the cluster, and the few the driver made again (``remade``)."""

    scan: SparkScan
    finish: _Finish
    remade: pl.DataFrame | None
    file_order: dict[str, int]

    def frame(self, with_partitions: bool = False) -> DataFrame | None:
        """The whole table as a Spark DataFrame, the rows the driver made again included, with the store's
        partition columns when ``with_partitions``."""
        if self.scan.rows is None:
            return None
        spark = self.scan.rows.sparkSession
        finish = spark.sparkContext.broadcast(_Finish(self.finish.shifts, self.finish.remade, self.finish.tails, self.finish.filters, with_partitions))
        schema = spark_schema() + (", date string, `group` string" if with_partitions else "")
        frame = self.scan.rows.mapInArrow(functools.partial(_finished, finish), schema)
        if self.remade is None:
            return frame
        remade = partitioned(self.remade) if with_partitions else self.remade
        return frame.unionByName(spark.createDataFrame(remade.to_arrow(), frame.schema))

    def collect(self) -> pl.DataFrame:
        """The whole table on the driver, in canonical order; the cluster forgets the rows."""
        import polars as pl

        frame = self.frame()
        table = empty_table() if frame is None else pl.from_arrow(frame.toArrow()).cast(polars_schema())
        self.scan.close()
        return canonical_sort(table, self.file_order)


def finished_rows(scan: SparkScan, catalog: Catalog, zones: dict[int, tzinfo], file_order: dict[str, int], **filters: Any) -> ClusterRows:
    """The rows of ``scan`` as they will be finished on the cluster (see the module's description)."""
    import polars as pl

    shifts = pl.DataFrame([[*key, shift] for key, shift in scan.shifts.items()], schema=[*PIECE_KEYS, "shift"], orient="row",
                          schema_overrides=dict.fromkeys([*PIECE_KEYS, "shift"], pl.Int64))
    remade, tails = remade_rows(scan.scans, catalog, zones), added_lines(scan.scans)
    finished_remade = None if remade is None else filter_table(with_added_lines(remade, tails), **filters)
    return ClusterRows(scan, _Finish(shifts, remade, tails, filters), finished_remade, file_order)


def _finished(shipped: Broadcast[_Finish], batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A task on an executor: its rows with final line numbers, the joined records whole, filtered."""
    import polars as pl

    finish = shipped.value
    schema = arrow_schema()
    for batch in batches:
        rows = pl.from_arrow(batch).join(finish.shifts, on=list(PIECE_KEYS), how="left", maintain_order="left")
        rows = rows.with_columns(pl.col("line") + pl.col("shift")).drop(*PIECE_KEYS, "shift")
        rows = filter_table(with_added_lines(without_remade(rows, finish.remade), finish.tails), **finish.filters)
        table = rows.to_arrow().cast(schema)
        if finish.with_partitions:
            parts = partitioned(rows).select("date", "group").to_arrow()
            table = table.append_column("date", parts["date"].cast("string")).append_column("group", parts["group"].cast("string"))
        yield from table.to_batches()


def cluster_extent(scan: SparkScan) -> tuple[datetime | None, datetime | None]:
    """The first and last event times of a scan's rows, worked out on the cluster."""
    import polars as pl
    from pyspark.sql import functions

    if scan.rows is None:
        return None, None
    extent = pl.from_arrow(scan.rows.agg(functions.min("ts").alias("first"), functions.max("ts").alias("last")).toArrow())
    return extent["first"][0], extent["last"][0]


def cluster_groups(scan: SparkScan) -> list[str]:
    """The group ids of a scan's rows, gathered on the cluster."""
    if scan.rows is None:
        return []
    return [row.group_id for row in scan.rows.select("group_id").distinct().collect()]
