"""The event store: an event table on disk, so that report, check and grep can start from it instead of raw logs.

Layout: Parquet files partitioned Hive-style by ``date=YYYY-MM-DD`` (UTC) and ``group=<group id>`` —
the partition values are derived path-safe columns; every schema column, ``group_id`` included, stays
inside the files — and ``_rebalance-doctor.json`` beside them with the line accounting of the inputs.
Either engine writes it (Spark to any Hadoop URI), either reads it. A write goes to a hidden sibling
directory that is renamed into place at the end, so a failed run leaves no partial store.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

import polars as pl

from ..catalog.schema import COLUMN_NAMES, empty_table, polars_schema
from ..engines.spark import literal_location, spark_errors
from ..reading.accounting import FileScan
from ..reading.sources import Source, is_uri
from .event_table import canonical_sort, partitioned
from .loading import LogSet

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MANIFEST = "_rebalance-doctor.json"
STORE_VERSION = 2


class StoreError(Exception):
    """An event store that cannot be written or read (exists already, not a store, wrong version)."""


@contextlib.contextmanager
def _cluster_frame(logs: LogSet, spark: SparkSession) -> Iterator[tuple[DataFrame, int]]:
    """The rows to write from the cluster, with the partition columns, and how many there are: where the Spark
    engine left them (finished once, kept until written), else the table handed to the cluster."""
    if logs.cluster is None or logs.cluster.scan.rows is None:
        yield spark.createDataFrame(partitioned(logs.events).to_arrow()), logs.events.height
        return
    frame = logs.cluster.frame(with_partitions=True).persist()
    try:
        yield frame, frame.count()
    finally:
        frame.unpersist()
        logs.cluster.scan.close()


def _manifest(logs: LogSet, count: int) -> str:
    return json.dumps({
        "store_version": STORE_VERSION,
        "events": count,
        "files": [
            {"file": scan.source.display, "order": scan.source.order, "buckets": dict(scan.buckets), "problem": scan.problem}
            for scan in logs.scans
        ],
        "problems": logs.problems,
    }, indent=1)


def _files(location: str, spark: SparkSession | None) -> tuple[_LocalFiles | _HadoopFiles, str]:
    """Where a store lives and how to reach it: Hadoop's file systems with Spark, this machine's without."""
    if spark is not None:
        return _HadoopFiles(spark), location.rstrip("/")
    if is_uri(location):
        if not location.lower().startswith("file:"):
            raise StoreError(f"{location}: remote event stores are read and written by the Spark engine (--engine spark)")
        location = unquote(urlparse(location).path)
    return _LocalFiles(), location.rstrip("/")


def write_events(logs: LogSet, destination: str, *, spark: SparkSession | None = None, overwrite: bool = False) -> int:
    """Write the event table and its line accounting; with ``spark`` the cluster writes (any Hadoop URI): the
    executors that made the rows, when the Spark engine read the logs. Returns how many events were written.

    ``overwrite`` replaces an event store, never anything else: not a directory of logs, not a file. Without it
    the destination is claimed before the write, so of two runs writing the same store one fails."""
    files, destination = _files(destination, spark)
    claimed = False
    if files.exists(destination):
        if not overwrite:
            raise StoreError(f"{destination} exists (give --force to replace it)")
        if not files.exists(f"{destination}/{MANIFEST}"):
            raise StoreError(f"{destination} exists and is not an event store: --force replaces only event stores")
    else:
        claimed = files.claim(destination)
    parent, _, name = destination.rpartition("/")
    partial = f"{parent}/.{name}.partial-{uuid.uuid4().hex[:8]}" if parent else f".{name}.partial-{uuid.uuid4().hex[:8]}"
    try:
        if spark is not None:
            with spark_errors("write"), _cluster_frame(logs, spark) as (frame, count):
                frame.write.partitionBy("date", "group").parquet(files.location(partial))
        else:
            table = partitioned(logs.events)
            count = table.height
            Path(partial).mkdir(parents=True)
            if table.height:
                table.write_parquet(partial, partition_by=["date", "group"])
        files.write_text(f"{partial}/{MANIFEST}", _manifest(logs, count))
        files.replace(partial, destination)
        claimed = False
        return count
    finally:
        files.remove(partial)
        if claimed:  # the write failed: give the name back
            files.release(destination)


def read_events(location: str, *, spark: SparkSession | None = None) -> LogSet:
    """An event store as a :class:`LogSet` (events in canonical order, the inputs' line accounting)."""
    files, location = _files(location, spark)
    try:
        manifest = json.loads(files.read_text(f"{location}/{MANIFEST}"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"{location}: not an event store written by `rebalance-doctor ingest` ({exc})") from None
    if manifest.get("store_version") != STORE_VERSION:
        raise StoreError(f"{location}: event store version {manifest.get('store_version')} (this tool reads {STORE_VERSION})")
    if manifest["events"] == 0:
        events = empty_table()
    elif spark is not None:
        with spark_errors("read"):
            events = pl.from_arrow(spark.read.parquet(literal_location(files.location(location))).drop("date", "group").toArrow())
    else:
        events = pl.read_parquet(files.files_under(location, ".parquet"), hive_partitioning=False, glob=False)
    events = events.select([pl.col(name).cast(polars_schema()[name]) for name in COLUMN_NAMES])
    scans = [
        FileScan(Counter(entry["buckets"]), problem=entry["problem"], source=Source(entry["file"], None, entry["order"]))
        for entry in manifest["files"]
    ]
    return LogSet(scans, manifest["problems"], table=canonical_sort(events, {s.source.display: s.source.order for s in scans}))


class _LocalFiles:
    """Store file operations on this machine's file system."""

    def location(self, path: str) -> str:
        return path

    def exists(self, path: str) -> bool:
        return Path(path).exists() or Path(path).is_symlink()

    def claim(self, path: str) -> bool:
        """Make the destination ours before writing: an empty directory the finished store is renamed onto.
        Creating it fails when another run got there first."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        try:
            Path(path).mkdir()
        except FileExistsError:
            raise StoreError(f"{path} exists (another run is writing it, or give --force to replace it)") from None
        return True

    def release(self, path: str) -> None:
        with contextlib.suppress(OSError):  # only while still empty: nothing else is ever removed
            Path(path).rmdir()

    def files_under(self, path: str, suffix: str) -> list[str]:
        """The files of a store, by its literal path (never a glob: `st*x` is one directory, not a pattern)."""
        return sorted(str(p) for p in Path(path).rglob(f"*{suffix}") if p.is_file())

    def read_text(self, path: str) -> str:
        return Path(path).read_text(encoding="utf-8")

    def write_text(self, path: str, text: str) -> None:
        Path(path).write_text(text, encoding="utf-8")

    def replace(self, source: str, destination: str) -> None:
        """Rename into place (onto the empty directory claimed for it); an old store is moved aside first and
        deleted only once the new one is there."""
        old = Path(f"{source}.old")
        target = Path(destination)
        if target.exists() and not (target.is_dir() and not any(target.iterdir())):
            target.rename(old)
        Path(source).rename(destination)
        shutil.rmtree(old, ignore_errors=True)

    def remove(self, path: str) -> None:
        shutil.rmtree(path, ignore_errors=True)


class _HadoopFiles:
    """Store file operations through the cluster's Hadoop file system (hdfs://, s3a://, file://)."""

    def __init__(self, spark: SparkSession):
        self.jvm = spark.sparkContext._jvm
        self.conf = spark.sparkContext._jsc.hadoopConfiguration()

    def location(self, path: str) -> str:
        """A local path as a Hadoop location naming that very path: Hadoop reads it as it is, not percent-decoded."""
        return path if is_uri(path) else f"file://{os.path.abspath(path)}"

    def _path(self, path: str):
        hadoop_path = self.jvm.org.apache.hadoop.fs.Path(self.location(path))
        return hadoop_path.getFileSystem(self.conf), hadoop_path

    def exists(self, path: str) -> bool:
        fs, hadoop_path = self._path(path)
        return bool(fs.exists(hadoop_path))

    def claim(self, path: str) -> bool:
        """Object stores have no exclusive create: the exists check above is the claim there (see spark.md)."""
        return False

    def release(self, path: str) -> None:
        """Nothing was claimed."""

    def read_text(self, path: str) -> str:
        fs, hadoop_path = self._path(path)
        try:
            stream = fs.open(hadoop_path)
        except Exception as exc:  # py4j wraps FileNotFoundException
            raise OSError(str(exc).splitlines()[0]) from None
        try:
            return bytes(stream.readAllBytes()).decode("utf-8")
        finally:
            stream.close()

    def write_text(self, path: str, text: str) -> None:
        fs, hadoop_path = self._path(path)
        stream = fs.create(hadoop_path, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()

    def replace(self, source: str, destination: str) -> None:
        """Rename into place (atomic on HDFS and local disks; object stores copy, see the README)."""
        fs, target = self._path(destination)
        _, staged = self._path(source)
        _, old = self._path(f"{source}.old")
        if fs.exists(target):
            fs.rename(target, old)
        if not fs.rename(staged, target):
            raise StoreError(f"{destination}: could not move the new event store into place")
        fs.delete(old, True)

    def remove(self, path: str) -> None:
        fs, hadoop_path = self._path(path)
        if fs.exists(hadoop_path):
            fs.delete(hadoop_path, True)
