"""The Spark engine: the polars engine's scan on a Spark cluster, for logs that outgrow one machine.

Every task runs the polars engine's own block scan (:class:`~.local.BlockScanner`: prefilter, catalog
regexes, record extents, line accounting, rows), so both engines give the same event table. Files on a
path the executors share (local paths, ``file://``) are cut into the polars engine's units of work,
which the executors read themselves; files behind Hadoop connectors (``hdfs://``, ``s3a://`` …) are read
by Spark, and each task hands its splits' lines, as Arrow batches, to the scan. The rows stay on the
cluster, numbered from the first line of their piece of a file; only each piece's accounting comes back,
for the driver to merge in file order (:class:`SparkScan`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import pickle
import re
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import tzinfo
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from ..catalog import Catalog
from ..catalog.schema import arrow_schema, spark_schema
from ..reading.accounting import Accounting, FileScan
from ..reading.blocks import (
    BINARY_SNIFF,
    BLOCK_SIZE,
    looks_binary,
)
from ..reading.kernel import BlockFile, Collected, concat_records
from ..reading.rows import event_rows
from ..reading.sources import Source, expand
from .local import BlockScanner, Scanned, Unit
from .parallel import task_batches, work_units

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark import Broadcast
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_MASTER = "local[*]"
ARROW_EXCHANGE = (("pandas", "2.2"), ("pyarrow", "15"))  # what mapInArrow needs on the driver, and from which version
NEWLINE_BYTE = 10
_GLOB_CHARACTERS = set("\\*?[]{}")
_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")
LOG4J_CONFIG = Path(__file__).with_name("spark-log4j2.properties")
# Settings the engine relies on; --spark-conf may add to them (and override the harmless ones).
SESSION_DEFAULTS = {
    "spark.app.name": "rebalance-doctor",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",  # lines per batch to a task: fewer, larger hand-overs
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}",
}


class SparkEngineError(Exception):
    """Spark could not start, or one of its jobs failed: the message says what to check."""


@contextmanager
def spark_errors(doing: str) -> Iterator[None]:
    """Turn Spark's and the JVM's exceptions (py4j, pyspark) into one message naming what failed. A failure in
    a task's Python is named by its last line (the exception), not by Spark's preamble."""
    try:
        yield
    except ImportError as exc:
        if exc.name and not exc.name.startswith(("pyspark", "py4j")):
            raise SparkEngineError(f"the Spark engine needs {exc.name}: pip install 'rebalance-doctor[spark]'") from None
        raise SparkEngineError("the Spark engine needs pyspark: pip install 'rebalance-doctor[spark]'") from None
    except Exception as exc:
        if not type(exc).__module__.startswith(("py4j", "pyspark")):
            raise
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        missing = next((m.group(1) for line in lines if (m := _MISSING_MODULE.search(line))), None)
        if missing is not None:
            raise SparkEngineError(f"Spark {doing} failed: the executors' Python has no module {missing!r} (give the executors this "
                                   "package's environment: see 'Running on a cluster' in docs/spark.md)") from None
        if "Traceback (most recent call last):" in lines:  # a task's Python failed: its exception, not Spark's preamble
            lines = [next(line for line in reversed(lines) if not line.startswith(("at ", "...", "File ")))]
        raise SparkEngineError(f"Spark {doing} failed: {lines[0] if lines else type(exc).__name__}") from None


@dataclass(frozen=True)
class SparkSettings:
    """Where the Spark engine runs: ``local[*]`` or a cluster's master URL, and extra ``spark.*`` settings."""

    master: str = DEFAULT_MASTER
    conf: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, master: str | None, conf: list[str] | tuple[str, ...]) -> SparkSettings:
        pairs = []
        for item in conf:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"--spark-conf {item!r} is not KEY=VALUE (e.g. spark.executor.memory=4g)")
            pairs.append((key.strip(), value))
        return cls(master or DEFAULT_MASTER, tuple(pairs))


def spark_session(settings: SparkSettings) -> SparkSession:
    """The process's Spark session (one per process: Spark allows no second one with another master)."""
    with spark_errors(f"start on {settings.master} (Java 17+ on PATH or JAVA_HOME? master reachable?)"):
        from pyspark.sql import SparkSession

        # The executors' Python. PySpark takes it from PYSPARK_PYTHON when the session starts (spark.pyspark.python
        # is only read by spark-submit); a local master's tasks run this Python, which has the package.
        conf = dict(settings.conf)
        python = conf.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON") or (sys.executable if settings.master.startswith("local") else None)
        if python:
            os.environ["PYSPARK_PYTHON"] = python
        builder = SparkSession.builder.master(settings.master)
        for key, value in {**SESSION_DEFAULTS, **conf}.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        return session


def list_remote(spark: SparkSession, uri: str) -> list[tuple[str, int]]:
    """Files under a Hadoop URI (file, directory or glob), through the cluster's own file system
    connectors: (URI, size) in name order, skipping hidden files and Markdown notes like ``expand``."""
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(uri)
    try:
        fs = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        statuses = fs.globStatus(hadoop_path) or []
        found = []
        for status in statuses:
            if status.isDirectory():
                files = fs.listFiles(status.getPath(), True)
                while files.hasNext():
                    found.append(files.next())
            else:
                found.append(status)
    except Exception as exc:  # py4j wraps the JVM's IOException (no connector, no credentials, …)
        raise OSError(f"cannot list ({str(exc).splitlines()[0]})") from None
    files = [(f.getPath().toString(), int(f.getLen())) for f in found]
    return sorted((u, n) for u, n in files if not u.rsplit("/", 1)[-1].startswith((".", "_")) and not u.lower().endswith((".md", ".markdown")))


def _remote_head(spark: SparkSession, uri: str) -> bytes:
    """The first bytes of a remote file, decompressed by the codec its name selects (as Spark will read it)."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path(uri)
    stream = path.getFileSystem(conf).open(path)
    try:
        codec = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(conf).getCodec(path)
        reader = codec.createInputStream(stream) if codec is not None else stream
        return bytes(reader.readNBytes(BINARY_SNIFF))
    finally:
        stream.close()


def _spark_key(file_path: str) -> tuple[str, str, str]:
    """A file as Spark's ``_metadata.file_path`` names it (``file:/x%20y``: a percent-encoded URI)."""
    parsed = urlparse(file_path)
    return (parsed.scheme, parsed.netloc, os.path.normpath(unquote(parsed.path)))


def _source_key(source: Source) -> tuple[str, str, str]:
    """The same key for a source (local path, or a Hadoop URI as Hadoop prints it: not encoded)."""
    if source.uri is None:
        return ("file", "", os.path.normpath(os.path.abspath(source.path)))
    scheme, _, rest = source.uri.partition("://")
    authority, _, path = rest.partition("/")
    return (scheme, authority, os.path.normpath("/" + path))


def _spark_location(source: Source) -> str:
    """What to hand Spark's reader for a source."""
    return literal_location(source.uri or f"file://{os.path.abspath(source.path)}")


def literal_location(location: str) -> str:
    """A Hadoop location as Spark's readers take it: they glob every path, so glob characters in names are escaped."""
    return "".join("\\" + ch if ch in _GLOB_CHARACTERS else ch for ch in location)


class SparkScanner:
    """Scans all sources in one Spark job: every task runs the polars engine's scan (:class:`~.local.BlockScanner`,
    the same kernel and row code) on its file splits' lines; the driver merges the accounting."""

    def __init__(self, catalog: Catalog, spark: SparkSession, collect: Collected = Collected()):
        self.catalog = catalog
        self.spark = spark
        self.collect = collect

    def expand(self, paths: list[str]):
        return expand(paths, lambda uri: list_remote(self.spark, uri))

    def scan(self, sources: list[Source], zones: dict[int, tzinfo]) -> SparkScan:
        """Every source scanned on the cluster: the rows stay there (see :class:`SparkScan`), the accounting comes
        back, merged file by file. ``zones``: the inputs' time zones (rows are made on the executors)."""
        scans = {source.order: FileScan(source=source) for source in sources}
        local = [source for source in sources if source.path is not None]  # read by the executors, as the polars engine reads them
        binary: set[int] = set()
        for source in sources:
            problem = None if source.path is not None else self._unreadable(source)
            if problem == "binary":
                binary.add(source.order)
                scans[source.order].problem = f"{source.display}: binary file skipped"
            elif problem:
                scans[source.order].problem = problem
        remote = [s for s in sources if s.path is None and (scans[s.order].problem is None or s.order in binary)]
        if not local and not remote:
            return SparkScan(None, {}, list(scans.values()))
        task_bytes = self._task_bytes(sum(source.size for source in local))
        units = task_batches(work_units(local, lambda *_: task_bytes), lambda _: task_bytes)
        task = _Task(self.catalog, self.collect, zones,
                     {_source_key(s): BlockFile(s.order, s.display, s.node) for s in remote}, frozenset(binary), units)
        with spark_errors("scan"):
            from pyspark import StorageLevel
            from pyspark.sql import functions as F

            _require_arrow_exchange()
            shipped = self.spark.sparkContext.broadcast(task)
            parts = []
            if units:
                parts.append(self.spark.range(0, len(units), 1, len(units)).mapInArrow(functools.partial(_scan_units, shipped), _SCANNED_SCHEMA))
            if remote:
                parts.append(self._lines(remote).mapInArrow(functools.partial(_scan_splits, shipped), _SCANNED_SCHEMA))
            scanned = functools.reduce(lambda a, b: a.union(b), parts)
            scanned = scanned.persist(StorageLevel.MEMORY_AND_DISK)  # read once: its accounting, then its rows
            parts = scanned.filter(F.col("payload").isNotNull()).select(*PIECE_KEYS, "payload").collect()
        pieces = sorted((tuple(row[key] for key in PIECE_KEYS), row["payload"]) for row in parts)  # each file's pieces in file order
        shifts = {key: scans[key[0]].append_part(pickle.loads(payload), self.catalog) for key, payload in pieces}
        rows = scanned.filter(F.col("payload").isNull()).drop("payload")
        return SparkScan(rows, shifts, list(scans.values()), lambda: (scanned.unpersist(), shipped.destroy()))

    def _task_bytes(self, total: int) -> int:
        """How much of the local files a task reads: what Spark puts in a split of the files it reads itself
        (``spark.sql.files.maxPartitionBytes``, less where the input spread over the cores is smaller), so that
        both ways of reading cut the input alike and the same settings tune them."""
        conf = self.spark.conf
        sizes = self.spark.sparkContext._jvm.org.apache.spark.network.util.JavaUtils
        most = sizes.byteStringAsBytes(conf.get("spark.sql.files.maxPartitionBytes", "128m"))
        least = sizes.byteStringAsBytes(conf.get("spark.sql.files.openCostInBytes", "4m"))
        return min(most, max(least, total // max(1, self.spark.sparkContext.defaultParallelism)))

    def _unreadable(self, source: Source) -> str | None:
        """Why a source Spark reads cannot be scanned ("binary" when it is to be counted, not read), checked on the
        driver so that both engines report the same problems."""
        if source.uri is None:
            return f"{source.display}: the Spark engine cannot read stdin (save it to a file, or use --engine polars)"
        try:
            head = _remote_head(self.spark, source.uri)
        except Exception as exc:  # py4j errors: no connector, no credentials, …
            return f"{source.display}: cannot read ({str(exc).splitlines()[0] if str(exc) else exc})"
        return "binary" if looks_binary(head) else None

    def _lines(self, sources: list[Source]) -> DataFrame:
        """Every line as its bytes (as the polars engine reads them: undecoded, a CR before the LF kept), with
        its file and the byte offset of its file split (the split a task reads, in line order)."""
        from pyspark.sql import functions as F

        return self.spark.read.option("lineSep", "\n").text([_spark_location(s) for s in sources]).select(
            F.col("_metadata.file_path").alias("file_path"),
            F.col("_metadata.file_block_start").alias("split"),
            F.col("value").alias("line"),  # Spark's strings are the bytes as read (not validated): the scan decodes them
        )


@dataclass
class SparkScan:
    """A scan on the cluster: its ``rows`` (a Spark DataFrame with the schema's columns, and the piece of its file
    each came from, its line numbered from the piece's first line), the line to add to each piece's numbers
    (by PIECE_KEYS), and the files' accounting, merged (records that ran from a piece into the next included:
    :meth:`~..reading.accounting.FileScan.append_part`). ``close()`` lets the cluster forget it."""

    rows: DataFrame | None
    shifts: dict[tuple[int, int, int], int]
    scans: list[FileScan]
    close: Callable[[], object] = lambda: None


@dataclass(frozen=True)
class _Task:
    """What every task of a scan needs, broadcast once: the catalog, the inputs' zones (rows are made on the
    executors), each file Spark reads (by its key, see :func:`_spark_key`; binary ones only counted) and the
    units of work of the files the executors read themselves, a list per task."""

    catalog: Catalog
    collect: Collected
    zones: dict[int, tzinfo] | None
    files: dict[tuple[str, str, str], BlockFile]
    binary: frozenset[int]
    units: list[list[Unit]]
    token: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)  # tells this scan from earlier ones


# a piece of a file: its input order, where in the file its Spark split (or its task, among the tasks in file order)
# starts, and its number there
PIECE_KEYS = ("piece_order", "piece_split", "piece_number")
_SCANNED_SCHEMA = f"{spark_schema()}, {', '.join(f'{key} bigint' for key in PIECE_KEYS)}, payload binary"
_scanners: dict[str, BlockScanner] = {}  # per Python worker (Spark reuses them): the scanner of the current scan


def _scanner(task: _Task) -> BlockScanner:
    if task.token not in _scanners:
        _scanners.clear()
        _scanners[task.token] = BlockScanner(task.catalog, task.collect, zones=task.zones)
    return _scanners[task.token]


def _scan_units(shipped: Broadcast[_Task], batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Spark tasks (on an executor) that read local files themselves: each task's units of work (whole files, or
    spans of large ones), read and scanned as a polars engine's scan process does. Its parts, in the order they
    come, are numbered per file."""
    task = shipped.value
    scanner = _scanner(task)
    for batch in batches:
        for index in batch.column(0).to_pylist():
            pieces = list(scanner.scan_task(task.units[index]))
            numbers: Counter[int] = Counter()
            keys = []
            for order, *_ in (part for piece in pieces for part in piece.parts):
                keys.append((order, index, numbers[order]))
                numbers[order] += 1
            yield from _handed_back(task, keys, pieces)


def _scan_splits(shipped: Broadcast[_Task], batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One Spark task (on an executor): its splits' lines, a block at a time, through the polars engine's scan."""
    task = shipped.value
    scanner = _scanner(task)
    keys: list[tuple[int, int, int]] = []
    pieces: list[Scanned] = []
    for (file_path, split), number, lines in _split_blocks(batches):
        file = task.files[_spark_key(file_path)]
        keys.append((file.order, split, number))
        if file.order in task.binary:
            pieces.append(Scanned(parts=[(file.order, Accounting(Counter(unreadable=len(lines))), 0)]))
        else:
            pieces.append(scanner.scan_block(_block_of(lines), [file]))
    yield from _handed_back(task, keys, pieces)


def _handed_back(task: _Task, keys: list[tuple[int, int, int]], pieces: list[Scanned]) -> Iterator[pa.RecordBatch]:
    """What a task hands back: its rows, each with the key (PIECE_KEYS) of its part, and a row per part (``keys``:
    one per part of ``pieces``, in order) with the part's pickled accounting."""
    import numpy as np
    import pyarrow as pa

    if not pieces:
        return
    schema = arrow_schema()
    counts = [count for piece in pieces for *_, count in piece.parts]
    records = concat_records([piece.records for piece in pieces])
    if records is not None:
        rows = event_rows(records, task.catalog, task.zones).to_arrow().cast(schema)
        pieces_of_rows = [pa.array(np.repeat([key[i] for key in keys], counts), pa.int64()) for i in range(len(PIECE_KEYS))]
        yield from pa.Table.from_arrays([*rows.columns, *pieces_of_rows, pa.nulls(rows.num_rows, pa.binary())],
                                        names=[*schema.names, *PIECE_KEYS, "payload"]).to_batches()
    accounting = [pickle.dumps(accounting, protocol=pickle.HIGHEST_PROTOCOL) for piece in pieces for _, accounting, _ in piece.parts]
    yield pa.RecordBatch.from_arrays(
        [*(pa.nulls(len(keys), field.type) for field in schema), *(pa.array([key[i] for key in keys], pa.int64()) for i in range(len(PIECE_KEYS))),
         pa.array(accounting, pa.binary())], names=[*schema.names, *PIECE_KEYS, "payload"])


def _split_blocks(batches: Iterator[pa.RecordBatch]) -> Iterator[tuple[tuple[str, int], int, pa.Array]]:
    """A task's lines cut into blocks of about BLOCK_SIZE bytes, never across a file split: (the split's file
    and offset, the block's number in the split, its lines). A task reads its splits one after the other."""
    import numpy as np
    import pyarrow as pa

    current: tuple[str, int] | None = None
    number, pending, size = 0, [], 0
    for batch in batches:
        paths, splits, lines = batch.column(0), batch.column(1).to_numpy(), batch.column(2)
        codes = paths.dictionary_encode().indices.to_numpy()
        cuts = np.flatnonzero((codes[1:] != codes[:-1]) | (splits[1:] != splits[:-1])) + 1
        for start, stop in pairwise([0, *cuts.tolist(), batch.num_rows]):
            key = (paths[start].as_py(), int(splits[start]))
            if key != current:
                if pending:
                    yield current, number, pa.concat_arrays(pending)
                current, number, pending, size = key, 0, [], 0
            piece = lines.slice(start, stop - start)
            pending.append(piece)
            size += piece.nbytes
            if size >= BLOCK_SIZE:
                yield current, number, pa.concat_arrays(pending)
                number, pending, size = number + 1, [], 0
    if pending:
        yield current, number, pa.concat_arrays(pending)


def _block_of(lines: pa.Array) -> bytes:
    """Lines (an Arrow string array, its bytes as read) as the block of bytes they were read from: each line and
    its newline."""
    import numpy as np

    _, offsets, data = lines.buffers()
    ends = np.frombuffer(offsets, np.int32, len(lines) + 1, lines.offset * 4)
    text = np.frombuffer(data, np.uint8, ends[-1] - ends[0], ends[0]) if data is not None else np.zeros(0, np.uint8)
    return np.insert(text, ends[1:] - ends[0], NEWLINE_BYTE).tobytes()


def _require_arrow_exchange() -> None:
    """PySpark's Arrow exchange with the executors (``mapInArrow``) will not run without pandas and pyarrow on
    the driver; each missing or old one is named (PySpark's own error would read as pyspark missing)."""
    import importlib

    for name, least in ARROW_EXCHANGE:
        try:
            version = importlib.import_module(name).__version__
        except ImportError:
            raise SparkEngineError(f"the Spark engine needs {name} >= {least} on the driver (PySpark's Arrow exchange requires it): "
                                   "pip install 'rebalance-doctor[spark]'") from None
        if tuple(int(part) for part in version.split(".")[:2] if part.isdigit()) < tuple(map(int, least.split("."))):
            raise SparkEngineError(f"the Spark engine needs {name} >= {least} on the driver (found {version}): "
                                   "pip install 'rebalance-doctor[spark]'")
