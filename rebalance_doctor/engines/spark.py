"""The Spark engine: the polars engine's scan as JVM-native Spark expressions, for logs that outgrow one machine.

On the cluster, per line: the literal prefilter (``contains`` per catalog anchor), the winning catalog
pattern (priority order, ``rlike``) and its groups (``regexp_extract`` by group index), the flags of
the line accounting, and whether the line could continue a matched record. No Python runs there.
The cluster sends back per-block line counts and the few lines that matter; the driver numbers
them, decides record extents and hands the records to the polars engine's own row code
(:func:`..reading.rows.event_rows`, through the table builder), so both engines give the same event table.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from ..catalog import Catalog, MessagePattern
from ..catalog.schema import FIELD_BY_GROUP
from ..reading.accounting import REPLACEMENT_CHAR, FileScan
from ..reading.blocks import (
    BINARY_SNIFF,
    GZIP,
    PLAIN,
    looks_binary,
    raw_head,
    read_head,
    stored_form,
)
from ..reading.continuation import MAX_CONTINUATION_LINES, ContinuationHints, record_lines
from ..reading.sources import InputError, Source, expand

if TYPE_CHECKING:
    import polars as pl
    from pyspark.sql import DataFrame, SparkSession

DEFAULT_MASTER = "local[*]"
_GLOB_CHARACTERS = set("\\*?[]{}")
LOG4J_CONFIG = Path(__file__).with_name("spark-log4j2.properties")
# Settings the engine relies on; --spark-conf may add to them (and override the harmless ones).
SESSION_DEFAULTS = {
    "spark.app.name": "rebalance-doctor",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.codegen.wholeStage": "false",  # a 500-pattern catalog makes generated code too large to compile
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}",
}


class SparkEngineError(Exception):
    """Spark could not start, or one of its jobs failed: the message says what to check."""


@contextmanager
def spark_errors(doing: str) -> Iterator[None]:
    """Turn Spark's and the JVM's exceptions (py4j, pyspark) into one message naming what failed."""
    try:
        yield
    except ImportError:
        raise SparkEngineError("the Spark engine needs pyspark: pip install 'rebalance-doctor[spark]'") from None
    except Exception as exc:
        if not type(exc).__module__.startswith(("py4j", "pyspark")):
            raise
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise SparkEngineError(f"Spark {doing} failed: {first}") from None


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

        builder = SparkSession.builder.master(settings.master)
        for key, value in {**SESSION_DEFAULTS, **dict(settings.conf)}.items():
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
    """What to hand Spark's reader: it globs every path, so glob characters in file names are escaped."""
    location = source.uri or f"file://{os.path.abspath(source.path)}"
    return "".join("\\" + ch if ch in _GLOB_CHARACTERS else ch for ch in location)


def _numbered_groups(pattern: MessagePattern) -> list[tuple[str, int]]:
    """(group name, group number) in number order: Java numbers groups as Python does."""
    return sorted(pattern.compiled.groupindex.items(), key=lambda item: item[1])


class SparkScanner:
    """Scans all sources in one Spark job per step, with the catalog's anchors and regexes in Java."""

    def __init__(self, catalog: Catalog, spark: SparkSession, collect_unmatched: bool = False):
        self.catalog = catalog
        self.spark = spark
        self.collect_unmatched = collect_unmatched
        self.hints = ContinuationHints.of(catalog)

    def expand(self, paths: list[str]):
        return expand(paths, lambda uri: list_remote(self.spark, uri))

    def scan(self, sources: list[Source], take_records: Callable[[pl.DataFrame], None]) -> list[FileScan]:
        """Every source's accounting; ``take_records`` receives the records of each file (line numbers final;
        see :class:`~..reading.kernel.BlockScan`)."""
        scans = {source.order: FileScan(source=source) for source in sources}
        binary: set[int] = set()
        for source in sources:
            problem = self._unreadable(source)
            if problem == "binary":
                binary.add(source.order)
                scans[source.order].problem = f"{source.display}: binary file skipped"
            elif problem:
                scans[source.order].problem = problem
        readable = [s for s in sources if scans[s.order].problem is None or s.order in binary]
        if not readable:
            return list(scans.values())
        by_key = {_source_key(s): s for s in readable}
        with spark_errors("scan"):
            lines = self._lines([_spark_location(s) for s in readable])
            blocks = self._block_counts(lines)
            spark_paths = {path: by_key[_spark_key(path)] for path in {b["file_path"] for b in blocks}}
            skipped = [path for path, source in spark_paths.items() if source.order in binary]
            kept = self._kept_lines(lines, skipped)
        numbered = _number_lines(blocks, kept)
        for path, source in spark_paths.items():
            scan = scans[source.order]
            counts = Counter()
            for block in blocks:
                if block["file_path"] == path:
                    counts.update(lines=block["lines"], relevant=block["relevant"], unreadable=block["unreadable"])
            if source.order in binary:
                scan.buckets["unreadable"] += counts["lines"]
                continue
            records = self._assemble(scan, numbered.get(path, {}), counts)
            if records is not None:
                take_records(records)
        return list(scans.values())

    def _unreadable(self, source: Source) -> str | None:
        """Why a source cannot be scanned ("binary" when it is to be counted, not read), checked on the driver
        so that both engines report the same problems."""
        if source.path is None and source.uri is None:
            return f"{source.display}: the Spark engine cannot read stdin (save it to a file, or use --engine polars)"
        try:
            if source.uri:
                head = _remote_head(self.spark, source.uri)
            else:
                head = read_head(source)
                form = stored_form(raw_head(source))
                if form == GZIP and not source.display.endswith(".gz"):
                    return f"{source.display}: gzip data without a .gz name (rename it for the Spark engine)"
                if form not in (GZIP, PLAIN):
                    return f"{source.display}: {form} text: Spark reads UTF-8 lines (use --engine polars, which converts it)"
        except InputError as exc:
            return str(exc)
        except Exception as exc:  # OSError locally, py4j errors remotely
            return f"{source.display}: cannot read ({str(exc).splitlines()[0] if str(exc) else exc})"
        return "binary" if looks_binary(head) else None

    def _lines(self, locations: list[str]) -> DataFrame:
        """Every line with its file, its split's byte offset and a row id that is consecutive within a split
        (taken before any filter), from which the driver derives line numbers."""
        from pyspark.sql import functions as F

        return self.spark.read.option("lineSep", "\n").text(locations).select(
            F.col("_metadata.file_path").alias("file_path"),
            F.col("_metadata.file_block_start").alias("block"),
            F.monotonically_increasing_id().alias("id"),
            # as polars reads lines: invalid UTF-8 → U+FFFD, and a CR before the LF is part of the line end
            F.regexp_replace(F.expr("make_valid_utf8(value)"), "\\r\\z", "").alias("text"),
        )

    def _flags(self, lines: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F

        candidate = _contains_any("text", self.catalog.anchors)
        keyword = _contains_any("lower(text)", [word.lower() for word in self.catalog.relevance_words])
        unreadable = f"contains(text, {_literal(REPLACEMENT_CHAR)})"
        # two steps, so that the (costly) anchor test runs once per line (Spark does not inline a costly
        # expression that is used twice)
        flagged = lines.select("*", F.expr(candidate).alias("candidate"), F.expr(unreadable).alias("unreadable"))
        return flagged.withColumn("relevant", F.expr(f"(candidate OR {keyword}) AND NOT unreadable"))

    def _block_counts(self, lines: DataFrame) -> list[dict[str, Any]]:
        """Per file split: lines, the first row id, and the relevant/unreadable line counts for the accounting."""
        from pyspark.sql import functions as F

        counts = self._flags(lines).groupBy("file_path", "block").agg(
            F.count(F.lit(1)).alias("lines"),
            F.min("id").alias("first_id"),
            F.sum(F.col("relevant").cast("long")).alias("relevant"),
            F.sum(F.col("unreadable").cast("long")).alias("unreadable"),
        )
        return counts.toArrow().to_pylist()

    def _kept_lines(self, lines: DataFrame, skipped: list[str]) -> list[dict[str, Any]]:
        """Matched lines with their pattern and groups, the lines that may continue or head them, and (with
        --unmatched) the relevant lines no pattern matched."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        flagged = self._flags(lines).withColumn("message", F.regexp_replace("text", "\\r\\z", ""))
        if skipped:
            flagged = flagged.filter(~F.col("file_path").isin(skipped))
        may_continue = f"text RLIKE {_literal(self.hints.may_continue)}"
        if self.hints.starts_record:
            may_continue += f" OR NOT text RLIKE {_literal(self.hints.starts_record)}"
        may_head = f"text RLIKE {_literal(self.hints.may_head)}" if self.hints.may_head else "false"
        wanted = f"candidate OR {may_continue} OR {may_head}" + (" OR relevant" if self.collect_unmatched else "")
        rows = flagged.filter(F.expr(wanted)).select(
            "file_path", "block", "id", "text", "message", "unreadable", "relevant",
            F.expr(f"CASE WHEN candidate THEN {_winner(self.catalog.patterns)} END").alias("pattern_id"),
            F.expr(may_continue).alias("may_continue"),
            F.expr(may_head).alias("may_head"),
        )
        # runs of consecutive kept lines; keep an event, what follows it in its run, and the header above it
        split = Window.partitionBy("file_path", "block").orderBy("id")
        rows = rows.withColumn("run", F.col("id") - F.row_number().over(split))
        run = Window.partitionBy("file_path", "block", "run").orderBy("id")
        event = F.col("pattern_id").isNotNull()
        last_event = F.max(F.when(event, F.col("id"))).over(run.rowsBetween(Window.unboundedPreceding, Window.currentRow))
        follows_event = F.col("may_continue") & (F.col("id") - last_event <= MAX_CONTINUATION_LINES)
        heads_event = F.col("may_head") & F.lead(event, 1, False).over(run)
        keep = event | follows_event | heads_event
        if self.collect_unmatched:
            keep = keep | F.col("relevant")
        rows = rows.withColumn("keep", keep).filter("keep")
        # groups only for the kept rows, after the window
        rows = rows.select("file_path", "block", "id", "text", "pattern_id", F.expr(_groups(self.catalog.patterns)).alias("groups"),
                           "unreadable", "relevant")
        return rows.toArrow().to_pylist()

    def _assemble(self, scan: FileScan, lines: dict[int, dict[str, Any]], counts: Counter) -> pl.DataFrame | None:
        """One file's line buckets from its numbered kept lines, and its events."""
        events = sorted(number for number, row in lines.items() if row["pattern_id"] is not None)
        in_records: set[int] = set()
        rows = []
        for number, next_event in pairwise([*events, None]):
            row = lines[number]
            pattern = self.catalog.by_id[row["pattern_id"]]
            if pattern.housekeeping:  # counted as matched, never a row (as the polars engine)
                in_records.add(number)
                continue
            last = next_event - 1 if next_event is not None else number + MAX_CONTINUATION_LINES + 1
            followers = (lines[n]["text"] if n in lines else None for n in range(number + 1, last + 1))
            raw_lines = record_lines(row["text"], followers, pattern.multiline, self.catalog)
            in_records.update(range(number, number + len(raw_lines)))
            previous = lines.get(number - 1)
            groups = {FIELD_BY_GROUP[name]: value for name, value in _group_values(pattern, row["groups"], row["text"]).items()}
            rows.append(groups | {
                "pattern": self.catalog.priority[pattern.id], "text": row["text"], "previous": previous["text"] if previous else None,
                "raw": "\n".join(raw_lines), "line": number,
            })
        unreadable = counts["unreadable"] - sum(1 for n in in_records if lines[n]["unreadable"])
        relevant = counts["relevant"] - sum(1 for n in in_records if lines[n]["relevant"])
        scan.buckets.update(matched=len(in_records), unreadable=unreadable, relevant_unmatched=relevant,
                            irrelevant=counts["lines"] - len(in_records) - unreadable - relevant)
        if self.collect_unmatched:
            scan.unmatched.extend(
                (n, row["text"]) for n, row in sorted(lines.items()) if row["relevant"] and n not in in_records
            )
        if not rows:
            return None
        import polars as pl

        return pl.DataFrame(rows, schema_overrides={"pattern": pl.Int32, "line": pl.Int64}, infer_schema_length=None).with_columns(
            file=pl.lit(scan.source.display), file_node=pl.lit(scan.source.node), reader=pl.lit(scan.source.order, pl.Int64),
        )


def _literal(text: str) -> str:
    """A Spark SQL string literal (the engine builds its expressions as SQL text: one parse instead of
    thousands of py4j calls to assemble a 500-pattern expression)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _contains_any(column: str, literals: list[str]) -> str:
    """Whether the column contains one of many literals, as one compact expression (an OR of 500
    ``contains`` overflows the JVM's 64 KB method limit in Spark's generated code)."""
    return f"exists(array({', '.join(map(_literal, literals))}), literal -> contains({column}, literal))"


def _winner(patterns: list[MessagePattern]) -> str:
    """The first pattern (catalog priority) whose anchor the line contains and whose regex matches it."""
    branches = " ".join(
        f"WHEN contains(text, {_literal(p.anchor)}) AND message RLIKE {_literal(p.regex)} THEN {_literal(p.id)}" for p in patterns
    )
    return f"CASE {branches} END"


def _groups(patterns: list[MessagePattern]) -> str:
    """The winning pattern's groups by number (``regexp_extract`` gives '' for a group that took no part)."""
    branches = []
    for pattern in patterns:
        regex = _literal(pattern.regex)
        values = ", ".join(f"regexp_extract(message, {regex}, {number})" for _, number in _numbered_groups(pattern))
        if values:
            branches.append(f"WHEN {_literal(pattern.id)} THEN array({values})")
    return f"CASE pattern_id {' '.join(branches)} END" if branches else "CAST(NULL AS ARRAY<STRING>)"


def _group_values(pattern: MessagePattern, values: list[str] | None, text: str) -> dict[str, str]:
    """Groups by name. Java's regexp_extract gives '' both for an empty capture and for a group that took
    no part; only the regex itself can tell, so such lines are re-read here (the polars engine's way)."""
    names = [name for name, _ in _numbered_groups(pattern)]
    values = values or []
    if "" in values:
        m = pattern.compiled.search(text.removesuffix("\r"))
        if m is not None:
            return {k: v for k, v in m.groupdict().items() if v is not None}
    return dict(zip(names, values, strict=True))


def _number_lines(blocks: list[dict[str, Any]], kept: list[dict[str, Any]]) -> dict[str, dict[int, dict[str, Any]]]:
    """1-based line numbers: lines of the file's earlier splits, plus the row's position in its own split."""
    first_line: dict[tuple[str, int], int] = {}
    seen: Counter = Counter()
    for block in sorted(blocks, key=lambda b: (b["file_path"], b["block"])):
        first_line[(block["file_path"], block["block"])] = seen[block["file_path"]] + 1
        seen[block["file_path"]] += block["lines"]
    first_id = {(b["file_path"], b["block"]): b["first_id"] for b in blocks}
    numbered: dict[str, dict[int, dict[str, Any]]] = {}
    for row in kept:
        key = (row["file_path"], row["block"])
        numbered.setdefault(row["file_path"], {})[first_line[key] + row["id"] - first_id[key]] = row
    return numbered
