"""The Spark engine: fleet-wide audits run the same catalogs on PySpark and get the same event table.

One local Spark session serves the whole test run (the ``spark`` fixture); the standalone-cluster
tests start a real master and two workers on 127.0.0.1 and run the CLI against them in a subprocess.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from rebalance_doctor import TextSearch, load
from rebalance_doctor.engines.spark import SparkSettings, spark_session
from rebalance_doctor.table import store

from standalone_cluster import standalone_cluster
from support import FIXTURES, INCIDENTS, SAMPLES, TRACE_LINES, ExitStatus, expected_context, run_cli, text_lines

SAMPLE_LOGS = [SAMPLES / name for name in INCIDENTS]
CORPUS = sorted((FIXTURES / "corpus").glob("*.log"))
MINI = FIXTURES / "mini"
LOCAL = SparkSettings("local[2]")


@pytest.fixture(scope="session")
def spark():
    return spark_session(LOCAL)


class Reading:
    """How the Spark engine is given a file: a local path, which its executors read themselves, or a URI behind a
    Hadoop connector (hdfs://, s3a://), whose lines Spark reads. Here the connector is viewfs, HDFS federation's
    file system, mounting the local folder: Spark's own reader, as on HDFS, over the same bytes."""

    def __init__(self, spark, through_hadoop: bool):
        self.spark = spark
        self.through_hadoop = through_hadoop
        self.mounts: dict[str, str] = {}  # viewfs root → local folder

    def __repr__(self) -> str:
        return "through Hadoop" if self.through_hadoop else "local paths"

    def given(self, path: str) -> str:
        if not self.through_hadoop:
            return path
        folder = os.path.dirname(os.path.abspath(path))
        root = next((r for r, f in self.mounts.items() if f == folder), None)
        if root is None:
            table, name = f"rd{len(self.mounts)}{os.getpid()}{abs(hash(folder))}", os.path.basename(folder)  # an instance per mount
            self.spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{table}.link./{name}", f"file://{folder}")
            root = f"viewfs://{table}/{name}"  # the folder keeps its name: a file's node is named after it
            self.mounts[root] = folder
        return f"{root}/{os.path.basename(path)}"

    def local(self, text: str) -> str:
        """A file name as the polars engine, given the local path, names it."""
        for root, folder in self.mounts.items():
            text = text.replace(root, folder)
        return text


def both_engines(paths: list[str], reading: Reading | None = None, **options):
    spark_paths = [reading.given(path) for path in paths] if reading else paths
    return load(paths, **options), load(spark_paths, engine="spark", spark=LOCAL, **options)


def per_file(logs, reading: Reading | None = None) -> dict[str, Counter]:
    return {reading.local(scan.source.display) if reading else scan.source.display: +scan.buckets for scan in logs.scans}


def with_local_names(frame: pl.DataFrame, reading: Reading | None) -> pl.DataFrame:
    if reading is None or not reading.mounts:
        return frame
    named = pl.col("file")
    for root, folder in reading.mounts.items():
        named = named.str.replace(root, folder, literal=True)
    return frame.with_columns(named)


def assert_same(polars_logs, spark_logs, reading: Reading | None = None) -> None:
    assert_frame_equal(with_local_names(spark_logs.events, reading), polars_logs.events)  # same rows, dtypes and canonical order
    assert per_file(spark_logs, reading) == per_file(polars_logs)
    assert [reading.local(p) if reading else p for p in spark_logs.problems] == polars_logs.problems


@pytest.fixture(params=[False, True], ids=["local paths", "through Hadoop"])
def reading(spark, request) -> Reading:
    return Reading(spark, request.param)


@pytest.fixture(scope="module")
def everything(spark):
    """Every bundled incident and every real excerpt, read once by each engine."""
    paths = [str(p) for p in SAMPLE_LOGS] + [str(p) for p in CORPUS]
    return both_engines(paths)


@pytest.mark.parametrize("name", [p.name for p in SAMPLE_LOGS] + [p.name for p in CORPUS])
def test_spark_engine_gives_the_polars_event_table_on_every_incident_and_excerpt(everything, name):
    polars_logs, spark_logs = everything
    mine = pl.col("file").str.contains(f"/{name}", literal=True)
    polars_rows, spark_rows = polars_logs.events.filter(mine), spark_logs.events.filter(mine)
    assert_frame_equal(spark_rows, polars_rows)
    # every line is accounted for the same way (an excerpt in a wording no catalog knows yet has no event)
    polars_lines = {f: b for f, b in per_file(polars_logs).items() if f"/{name}" in f}
    assert polars_lines and sum(sum(b.values()) for b in polars_lines.values()) > 0
    assert {f: b for f, b in per_file(spark_logs).items() if f"/{name}" in f} == polars_lines


def test_the_whole_table_and_line_accounting_match(everything):
    assert_same(*everything)


@pytest.fixture(scope="module")
def awkward(tmp_path_factory):
    """Inputs where the engines could drift apart: file names Spark percent-encodes, CRLF, invalid UTF-8,
    gzip, binary, empty files, stack traces and multi-line records after matched lines, JUL headers."""
    folder = tmp_path_factory.mktemp("awkward")
    broker = (MINI / "broker-1.log").read_text()
    (folder / "broker 1 %41#x.log").write_text(broker)
    (folder / "crlf.log").write_bytes(broker.replace("\n", "\r\n").encode())
    (folder / "latin1.log").write_bytes(broker.encode() + "Préparation déjà\n".encode("latin-1") + broker.encode())
    (folder / "rotated.log.gz").write_bytes(gzip.compress((MINI / "client-a.log").read_bytes()))
    (folder / "picture.log").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    (folder / "empty.log").write_bytes(b"")
    (folder / "not-gzip.log.gz").write_text(broker)
    lines = broker.splitlines()
    trace = ["\tat org.example.A.run(A.java:1)", "\tat org.example.B.run(B.java:2)", "Caused by: java.io.IOException: x", "\t... 3 more"]
    (folder / "trace.log").write_text("\n".join([lines[1], *trace, *lines[2:4], *trace[1:], lines[4]]) + "\n")
    (folder / "jul.log").write_text(
        "Mar 05, 2024 10:00:00 AM org.apache.kafka.clients.consumer.internals.ConsumerCoordinator onJoinComplete\n"
        "INFO: [Consumer clientId=consumer-orders-1, groupId=orders] Successfully joined group with generation "
        "Generation{generationId=5, memberId='consumer-orders-1-a', protocol='range'}\n"
    )
    return folder


def test_awkward_inputs_give_the_same_table_buckets_and_problems(spark, awkward):
    polars_logs, spark_logs = both_engines([str(awkward)], collect_unmatched=True)
    assert_same(polars_logs, spark_logs)
    assert spark_logs.unmatched == polars_logs.unmatched
    problems = " ".join(spark_logs.problems)
    assert "picture.log: binary file skipped" in problems and "not-gzip.log.gz: named .gz but is not gzip data" in problems
    traced = spark_logs.events.filter(pl.col("file").str.ends_with("trace.log"))
    assert traced["raw"][0].count("\n") == 4  # the stack trace belongs to the record above it
    assert spark_logs.events.filter(pl.col("file").str.ends_with("jul.log"))["ts"][0] is not None  # header line read


@contextlib.contextmanager
def small_splits(spark, size: str):
    """Spark cuts files into splits of ``size`` (one task each) while the block runs."""
    spark.conf.set("spark.sql.files.maxPartitionBytes", size)
    try:
        yield
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def test_line_numbers_hold_when_spark_splits_a_file(spark, tmp_path, reading):
    """A big file is read by several tasks (one per split); lines are numbered across splits as in the file."""
    broker = (MINI / "broker-1.log").read_text()
    noise = "".join(f"[2024-03-05 09:{i // 60 % 60:02d}:{i % 60:02d},000] INFO Rolled segment {i} (kafka.log.Log)\n" for i in range(6000))
    (tmp_path / "big.log").write_text(noise + broker + noise + broker)
    with small_splits(spark, "64k"):
        polars_logs, spark_logs = both_engines([str(tmp_path / "big.log")], reading)
    assert_same(polars_logs, spark_logs, reading)
    assert spark_logs.events["line"][0] == 6002


def test_a_record_that_runs_across_spark_splits_is_whole(spark, traced_log, reading):
    """A consumer log whose every rebalance line carries a 90-line stack trace, read in 64 KB splits: every
    record keeps its whole trace, every line is counted once, as the polars engine reads it."""
    path = traced_log(600)
    with small_splits(spark, "64k"):
        polars_logs, spark_logs = both_engines([str(path)], reading)
    assert_same(polars_logs, spark_logs, reading)
    assert set(spark_logs.events["raw"].str.count_matches("\n").to_list()) == {TRACE_LINES}
    assert +spark_logs.buckets == {"matched": 600 * (TRACE_LINES + 1), "irrelevant": 600}


def jul_log(path, count: int = 3000) -> list[tuple[str, str]]:
    """A java.util.logging consumer log of ``count`` joins (a header line with the time, then the message); its
    (header, message) pairs."""
    pairs = [(f"Mar 05, 2024 10:{i // 60:02d}:{i % 60:02d} AM org.apache.kafka.clients.consumer.internals.ConsumerCoordinator onJoinComplete\n",
              f"INFO: [Consumer clientId=consumer-orders-1, groupId=orders] Successfully joined group with generation "
              f"Generation{{generationId={i}, memberId='consumer-orders-1-a', protocol='range'}}\n") for i in range(count)]
    path.write_text("".join(header + message for header, message in pairs))
    return pairs


def test_a_header_line_in_the_split_before_its_message_still_gives_its_time(spark, tmp_path, reading):
    """java.util.logging writes the time on the line before the message. Where a split ends between the two,
    the message's event still has its time."""
    pairs = jul_log(tmp_path / "jul.log")
    pair_starts = [0, *itertools.accumulate(len(header) + len(message) for header, message in pairs)]
    boundaries = range(16 * 1024, pair_starts[-1], 16 * 1024)
    # a line belongs to the split it starts in: a boundary inside a header line puts its message in the next split
    assert any(start < boundary < start + len(header) for start, (header, _) in zip(pair_starts, pairs, strict=False) for boundary in boundaries)
    with small_splits(spark, "16k"):
        polars_logs, spark_logs = both_engines([str(tmp_path / "jul.log")], reading)
    assert_same(polars_logs, spark_logs, reading)
    assert spark_logs.events.height == 3000 and spark_logs.events["ts"].null_count() == 0


def test_stdin_is_not_for_spark(spark):
    logs = load(["-"], engine="spark", spark=LOCAL)
    assert logs.problems == ["-: the Spark engine cannot read stdin (save it to a file, or use --engine polars)"]


def test_remote_uris_need_the_spark_engine():
    logs = load(["s3a://bucket/kafka/*.log"])
    assert logs.problems == ["s3a://bucket/kafka/*.log: s3a:// inputs are read by the Spark engine (--engine spark)"]


def test_file_uris_are_local_paths_for_both_engines(spark):
    uri = (MINI / "broker-1.log").as_uri()
    polars_logs, spark_logs = both_engines([uri])
    assert polars_logs.events.height > 0
    assert_same(polars_logs, spark_logs)


def test_grep_text_and_its_context_across_splits_as_the_polars_engine_finds_them(spark, tmp_path, reading):
    """`grep MARK -C 3` on a file cut into 64 KB splits: every selected line with its context lines from the
    neighbouring splits, once each, the same lines as the polars engine's."""
    lines = text_lines(20_000, marked_every=11)
    (tmp_path / "app.log").write_text("\n".join(lines) + "\n")
    with small_splits(spark, "64k"):
        polars_logs, spark_logs = both_engines([str(tmp_path / "app.log")], reading, search=TextSearch("MARK", before=3, after=3))
    assert spark_logs.lines["raw"].to_list() == [line for line in expected_context(lines, "MARK", 3) if line != "--"]
    assert_frame_equal(with_local_names(spark_logs.lines, reading), polars_logs.lines)


@pytest.mark.parametrize("command", [["events", "--format", "ndjson"], ["grep", "--json"], ["grep", "Generation", "-C", "1", "--json"],
                                     ["report", "--format", "json"], ["check", "--max-failed", "0"]])
def test_every_log_reading_command_takes_engine_spark(spark, command):
    """`--engine spark` (or REBALANCE_DOCTOR_ENGINE=spark) gives the same output as the default engine."""
    polars_result = run_cli(*command, str(MINI))
    spark_result = run_cli(*command, str(MINI), "--engine", "spark", "--master", "local[2]")
    assert spark_result.exit_code == polars_result.exit_code, spark_result.output
    assert spark_result.stdout == polars_result.stdout
    from_env = run_cli(*command, str(MINI), env={"REBALANCE_DOCTOR_ENGINE": "spark"})
    assert from_env.stdout == polars_result.stdout


@pytest.mark.parametrize(("module", "least"), [("pandas", "2.2"), ("pyarrow", "15")])
def test_without_pandas_or_pyarrow_the_spark_engine_says_what_to_install(spark, monkeypatch, module, least):
    """PySpark's Arrow exchange with the executors needs pandas and pyarrow on the driver; a user who installed
    pyspark alone is told to install the extra, not that pyspark is missing."""
    monkeypatch.setitem(sys.modules, module, None)  # what `import` meets where the module is not installed
    result = run_cli("events", str(MINI), "--engine", "spark", "--master", "local[2]")
    assert result.exit_code == ExitStatus.ERROR
    assert f"the Spark engine needs {module} >= {least} on the driver" in result.stderr
    assert "pip install 'rebalance-doctor[spark]'" in result.stderr


def test_bad_spark_conf_is_a_usage_error():
    result = run_cli("events", str(MINI), "--engine", "spark", "--spark-conf", "executor.memory")
    assert result.exit_code == ExitStatus.ERROR
    assert "--spark-conf 'executor.memory' is not KEY=VALUE" in result.stderr


@pytest.mark.parametrize("engine", ["polars", "spark"])
def test_ingest_writes_an_event_store_that_report_check_and_grep_read(spark, tmp_path, engine):
    """`ingest -o events/` then `report --events events/`: the same report as from the logs themselves."""
    destination = tmp_path / "events"
    result = run_cli("ingest", str(MINI), "-o", str(destination), "--engine", engine)
    assert result.exit_code == ExitStatus.OK, result.output
    assert f"wrote 13 events from 3 files to {destination}" in result.stderr
    partitions = sorted(str(p.relative_to(destination).parent) for p in destination.rglob("*.parquet"))
    assert set(partitions) == {"date=2024-03-05/group=orders", "date=unknown/group=orders"}
    for command in (["report", "--format", "json"], ["check", "--max-failed", "0"], ["grep", "--raw", "-k", "rebalance_start"]):
        from_logs = run_cli(*command, str(MINI))
        from_store = run_cli(*command, "--events", str(destination))
        assert from_store.exit_code == from_logs.exit_code
        assert from_store.stdout == from_logs.stdout
    assert json.loads(run_cli("report", "--format", "json", "--events", str(destination)).stdout)["stats"]["matched"] == 13


def test_the_executors_write_the_store_and_it_holds_the_polars_table(spark, traced_log, tmp_path, reading):
    """`ingest --engine spark --group orders --since …` on logs cut into 64 KB splits: the executors write the
    store (the driver never holds the table), with the records that ran across splits whole, the messages
    whose time is on the line before them dated, and the filters applied as the polars engine applies them."""
    jul_log(tmp_path / "jul.log")
    paths = [str(traced_log(600)), *(str(p) for p in sorted(MINI.glob("*.log"))), str(tmp_path / "jul.log")]
    filters = {"groups": ("orders",), "since": datetime(2024, 3, 5, 10, 0, 30, tzinfo=UTC)}
    with small_splits(spark, "64k"):
        logs = load([reading.given(path) for path in paths], engine="spark", spark=LOCAL, **filters)
        written = store.write_events(logs, str(tmp_path / "events"), spark=spark)
    assert logs.table is None  # never collected
    if reading.through_hadoop:  # Spark's splits start where they fall: some java.util.logging messages began one
        assert any(scan.remade for scan in logs.scans)  # and were made again with their time
    expected = load(paths, **filters).events
    assert written == expected.height > 500
    assert_frame_equal(with_local_names(store.read_events(str(tmp_path / "events")).events, reading), expected)


def test_stores_are_readable_by_the_other_engine(spark, tmp_path):
    logs = load([str(p) for p in SAMPLE_LOGS[:3]])
    store.write_events(logs, str(tmp_path / "by-spark"), spark=spark)
    store.write_events(logs, str(tmp_path / "by-polars"))
    for written in ("by-spark", "by-polars"):
        for reader in (spark, None):
            back = store.read_events(str(tmp_path / written), spark=reader)
            assert_frame_equal(back.events, logs.events)
            assert back.buckets == logs.buckets


def test_a_store_path_is_a_name_not_a_pattern_for_both_engines(spark, tmp_path):
    """A store written by Spark to `st*x` or `incident[1] 50%41` lands under that very name, and reading `st*x`
    reads that store, not its sibling `stAx`, with either engine."""
    logs = load([str(MINI)])
    store.write_events(load([str(MINI / "broker-1.log")]), str(tmp_path / "stAx"), spark=spark)
    for name in ("st*x", "incident[1] 50%41"):
        store.write_events(logs, str(tmp_path / name), spark=spark)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["incident[1] 50%41", "st*x", "stAx"]
    for name in ("st*x", "incident[1] 50%41"):
        for reader in (spark, None):
            assert_frame_equal(store.read_events(str(tmp_path / name), spark=reader).events, logs.events)


def test_ingest_refuses_to_overwrite_without_force(tmp_path):
    destination = tmp_path / "events"
    assert run_cli("ingest", str(MINI), "-o", str(destination)).exit_code == ExitStatus.OK
    again = run_cli("ingest", str(MINI), "-o", str(destination))
    assert again.exit_code == ExitStatus.ERROR and "exists (give --force to replace it)" in again.stderr
    assert run_cli("ingest", str(MINI), "-o", str(destination), "--force").exit_code == ExitStatus.OK
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events"]


@pytest.mark.parametrize("engine", ["polars", "spark"])
def test_a_failed_ingest_leaves_no_partial_store(spark, tmp_path, monkeypatch, engine):
    """The job dies after the Parquet files are written (here: while writing the manifest): nothing is left."""

    def disk_full(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "_manifest", disk_full)
    result = run_cli("ingest", str(MINI), "-o", str(tmp_path / "events"), "--engine", engine)
    assert result.exit_code == ExitStatus.ERROR and "No space left on device" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_reading_something_that_is_not_a_store_says_so(tmp_path):
    result = run_cli("report", "--events", str(tmp_path))
    assert result.exit_code == ExitStatus.ERROR
    assert "not an event store written by `rebalance-doctor ingest`" in result.stderr


# ------------------------------------------------------------------ a real standalone cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A master and two 1-core workers on 127.0.0.1: a job's tasks run on two executors."""
    with standalone_cluster(tmp_path_factory.mktemp("cluster"), workers=2) as running:
        yield running


def test_ingest_on_a_real_standalone_cluster_matches_the_polars_engine(cluster, tmp_path):
    """`ingest --master spark://…` against a master and two workers on 127.0.0.1, the logs cut into 64 KB splits:
    both workers' executors scan and write, and the store equals the polars table."""
    destination = tmp_path / "events"
    logs = [str(p) for p in SAMPLE_LOGS]
    confs = (*cluster.driver_conf, *cluster.python_conf, "spark.executor.memory=512m", "spark.app.name=rebalance-doctor-cluster-test",
             "spark.sql.files.maxPartitionBytes=64k")
    command = [
        sys.executable, "-m", "rebalance_doctor", "ingest", *logs, "-o", str(destination), "--engine", "spark", "--master", cluster.master,
        *[arg for conf in confs for arg in ("--spark-conf", conf)],
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == ExitStatus.OK, result.stderr
    assert_same(load(logs), store.read_events(str(destination)))
    (app,) = [app["id"] for app in cluster.state()["completedapps"] if app["name"] == "rebalance-doctor-cluster-test"]  # not local mode
    finished = cluster.tasks_finished(app)
    assert len(finished) == 2 and all(finished), finished  # both workers scanned
    shutil.rmtree(destination)


def test_executors_without_the_package_are_told_to_get_its_environment(cluster, tmp_path):
    """A cluster whose executors run a Python without this package (a worker's system python3): the run stops
    with a message saying what is missing and where shipping the environment is explained."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    confs = (*cluster.driver_conf, f"spark.pyspark.python={tmp_path / 'bare/bin/python'}", "spark.executor.memory=512m")
    command = [sys.executable, "-m", "rebalance_doctor", "events", str(MINI), "--engine", "spark", "--master", cluster.master,
               *[arg for conf in confs for arg in ("--spark-conf", conf)]]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == ExitStatus.ERROR
    assert "the executors' Python has no module" in result.stderr and "docs/spark.md" in result.stderr


def test_a_packed_environment_shipped_with_spark_archives_runs_the_scan(cluster, wheel, tmp_path):
    """docs/spark.md's way to a cluster: the package and its native dependencies packed with venv-pack and
    shipped with `spark.archives`; the executors run that environment's Python and give the polars table."""
    environment = tmp_path / "rd-env"
    subprocess.run([sys.executable, "-m", "venv", str(environment)], check=True)
    subprocess.run([environment / "bin/pip", "install", "--quiet", str(wheel), "pyarrow>=15", "pandas>=2.2,<3", "venv-pack"],
                   check=True, capture_output=True)
    subprocess.run([environment / "bin/venv-pack", "-p", str(environment), "-o", str(tmp_path / "rd-env.tar.gz"), "-q"],
                   check=True, capture_output=True)
    confs = (*cluster.driver_conf, f"spark.archives={tmp_path / 'rd-env.tar.gz'}#environment", "spark.pyspark.python=./environment/bin/python",
             "spark.executor.memory=512m")
    command = [sys.executable, "-m", "rebalance_doctor", "events", str(MINI), "--format", "ndjson", "--engine", "spark",
               "--master", cluster.master, *[arg for conf in confs for arg in ("--spark-conf", conf)]]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env={**os.environ, "NO_COLOR": "1"})
    assert result.returncode == ExitStatus.OK, result.stderr
    assert result.stdout == run_cli("events", str(MINI), "--format", "ndjson").stdout
