"""Options every log-reading command shares (defined once, like sqlite-utils' option groups), and what
those commands do alike: load the logs or an event store through the library, report problems and the
line accounting on stderr, and fail with a message and an exit status."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from .console import ExitStatus, environment, is_broken_pipe, silence_stdout


def output_file(text: str) -> Path:
    """An output option's value: a file name. ``-o reports/`` (a directory) would otherwise become a file named ``reports``."""
    path = Path(text)
    if text.endswith(("/", os.sep)) or path.is_dir():
        raise typer.BadParameter(f"{text!r} is a directory: give a file name in it (e.g. {path / 'incident.html'})")
    return path


class EngineName(StrEnum):
    polars = "polars"
    spark = "spark"


# Options shared by every command that reads logs (defined once, like sqlite-utils' option groups).
Paths = Annotated[list[str] | None, typer.Argument(help="Log files, directories, globs, .gz files, or - for stdin.", show_default=False)]
PatternDirs = Annotated[list[str], typer.Option("--patterns", help="Extra catalog directory (overrides/extends the bundled patterns/).", metavar="DIR")]
TimeZones = Annotated[list[str], typer.Option(
    "--tz", help=("Zone of naive timestamps: UTC (default), +02:00, Europe/Paris, or GLOB=ZONE per file."), metavar="ZONE")]
_TIMES = "ISO-8601 (naive = UTC), 30m/2h/1d back from the newest event (or from now with --now), or a time of day such as 10:05"
Since = Annotated[str | None, typer.Option("--since", help=f"Only events at or after this time: {_TIMES}.", metavar="TIME")]
Until = Annotated[str | None, typer.Option("--until", help=f"Only events at or before this time: {_TIMES}.", metavar="TIME")]
Now = Annotated[bool, typer.Option("--now", help="Count --since/--until spans (30m, 2h) back from now instead of the newest event.")]
Groups = Annotated[list[str], typer.Option("--group", "-g", help="Only this consumer group (repeatable; globs like orders-*).", metavar="GROUP")]
Members = Annotated[list[str], typer.Option("--member", "-m", help="Only events whose member id, client id or instance id contains this.", metavar="MEMBER")]
Kinds = Annotated[list[str], typer.Option("--kind", "-k", help="Only these event kinds (repeatable; see `patterns kinds`).", metavar="KIND")]
Unmatched = Annotated[bool, typer.Option("--unmatched", help="List relevant-looking lines no pattern matched (catalog gaps) on stderr.")]
Color = Annotated[str, typer.Option("--color", help="auto, always or never (NO_COLOR is honoured).", metavar="WHEN")]
Engine = Annotated[EngineName, typer.Option(
    "--engine", envvar="REBALANCE_DOCTOR_ENGINE", help=("polars (embedded) or spark (PySpark: local[*] or a cluster, Hadoop URIs such as s3a://, hdfs://)."))]
Master = Annotated[str | None, typer.Option(
    "--master", help=("Spark master URL for --engine spark (default local[*]; spark://host:7077, yarn, k8s://…)."), metavar="URL")]
SparkConf = Annotated[list[str], typer.Option(
    "--spark-conf", help=("A Spark setting for --engine spark (repeatable), e.g. spark.executor.memory=4g."), metavar="KEY=VALUE")]
Follow = Annotated[bool, typer.Option(
    "--follow", help="Keep reading as the logs grow (files across rotations, stdin until it closes); Ctrl-C ends it.")]
EventStore = Annotated[str | None, typer.Option(
    "--events", help=("Read an event store written by `ingest` instead of logs (a directory, or a Hadoop URI with --engine "
    "spark)."), metavar="DIR")]


@dataclass(frozen=True)
class LogOptions:
    """What every log-reading command shares: which logs, which events, how to read times, colour."""

    group: list[str]
    member: list[str]
    since: str | None
    until: str | None
    now: bool
    tz: list[str]
    patterns: list[str]
    unmatched: bool
    color: str
    engine: EngineName
    master: str | None
    spark_conf: list[str]
    events: str | None


_LOG_OPTIONS = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
    for name, annotation, default in (
        ("group", Groups, []), ("member", Members, []), ("since", Since, None), ("until", Until, None), ("now", Now, False),
        ("tz", TimeZones, []), ("patterns", PatternDirs, []), ("unmatched", Unmatched, False), ("color", Color, "auto"),
        ("engine", Engine, EngineName.polars), ("master", Master, None), ("spark_conf", SparkConf, []), ("events", EventStore, None),
    )
]


def reads_logs(command):
    """Give a command the shared log options, defined once (sqlite-utils' option groups): typer sees them in the
    wrapper's signature; the command receives them as one ``options: LogOptions`` and the colour is already set."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.name != "options"]

    @functools.wraps(command)
    def wrapper(**kwargs):
        options = LogOptions(**{p.name: kwargs.pop(p.name) for p in _LOG_OPTIONS})
        set_colour(options.color)
        try:
            return command(options=options, **kwargs)
        except KeyboardInterrupt:  # typer would exit 130 without a word
            raise fail("interrupted", ExitStatus.INTERRUPTED) from None
        except OSError as exc:
            if not is_broken_pipe(exc):
                raise
            silence_stdout()  # `| head`: the reader has what it wanted
            raise typer.Exit(int(ExitStatus.OK)) from None

    wrapper.__signature__ = inspect.Signature(own + _LOG_OPTIONS)
    return wrapper


def fail(message: str, status: ExitStatus = ExitStatus.ERROR) -> typer.Exit:
    environment().err.print(Text(f"rebalance-doctor: {message}", style="bold red"))
    return typer.Exit(int(status))


def exit_1_when_nothing_found(events: int) -> None:
    """Like grep: status 1 when the logs (after the filters) hold no rebalance event; the output is still written."""
    if events == 0:
        raise typer.Exit(int(ExitStatus.NOTHING_FOUND))


def time_bounds(options: LogOptions) -> dict:
    """``since``, ``until`` and ``now`` for :func:`rebalance_doctor.load`, checked before any log is read."""
    from ..times import TimeBound

    try:
        bounds = {name: None if value is None else TimeBound.parse(value, f"--{name}")
                  for name, value in (("since", options.since), ("until", options.until))}
    except ValueError as exc:
        raise fail(str(exc)) from None
    return {**bounds, "now": datetime.now(UTC) if options.now else None}


def paths_or_stdin(paths: list[str] | None) -> list[str]:
    if paths:
        return paths
    if not sys.stdin.isatty():
        return ["-"]
    raise fail("no input: give log files or directories, or pipe logs into stdin")


def set_colour(color: str) -> None:
    if color not in ("auto", "always", "never"):
        raise fail(f"--color must be auto, always or never, not {color!r}")
    environment().color = color  # type: ignore[assignment]


def spark_session_for(options: LogOptions):
    """The Spark session when --engine spark is chosen, else None (polars needs none)."""
    if options.engine is not EngineName.spark:
        return None
    from ..engines.spark import SparkSettings, spark_session

    return spark_session(SparkSettings.parse(options.master, options.spark_conf))


def load_logs(paths, options: LogOptions, outputs: tuple[Path | None, ...] = (), collect_unmatched: bool = False, search=None):
    """Load logs (or an event store) through the library, report problems and line buckets on stderr.
    ``outputs``: the files the command writes; never read as input (a report written into the logs' folder),
    and never an input named on the command line (it would be destroyed).
    Modules that import polars are imported after this returns (here and in the commands): polars
    is slow to import, and the scan processes spend that time starting up instead of waiting for it."""
    from .. import load
    from ..catalog import CatalogError
    from ..engines.spark import SparkEngineError, SparkSettings

    written = tuple(path for path in outputs if path is not None)
    named = {os.path.realpath(p) for p in (paths or []) if os.path.isfile(p)}
    for path in written:
        if os.path.realpath(path) in named:
            raise fail(f"{path} is one of the inputs: writing there would destroy it; choose another file name")
    try:
        if options.events is not None:
            logs = read_store(paths, options)
        else:
            catalog = catalog_or_fail(options.patterns) if options.patterns else None  # says which bundled entries it replaces
            with progress_bar() as progress:
                logs = load(
                    paths_or_stdin(paths),
                    patterns=tuple(options.patterns),
                    catalog=catalog,
                    tz=tuple(options.tz),
                    **time_bounds(options),
                    groups=tuple(options.group),
                    members=tuple(options.member),
                    collect_unmatched=options.unmatched or collect_unmatched,
                    search=search,
                    progress=progress,
                    engine=options.engine.value,
                    spark=SparkSettings.parse(options.master, options.spark_conf),
                    exclude=written,
                )
    except CatalogError as exc:
        raise fail(f"bad catalog entry: {exc}") from None
    except (ValueError, SparkEngineError) as exc:  # e.g. an unknown --tz zone, Spark not reachable
        raise fail(str(exc)) from None

    from ..renderers.event_lines import bucket_summary, print_unmatched

    err = environment().err
    for problem in logs.problems:
        err.print(Text(f"rebalance-doctor: {problem}", style="yellow"))
    if options.unmatched:
        print_unmatched(logs.unmatched, err)
    err.print(bucket_summary(logs.buckets, logs.files_read))
    if logs.files_read == 0:
        raise fail("nothing could be read")
    if logs.lines_read == 0:
        err.print(Text("rebalance-doctor: the input is empty (no lines to read)", style="yellow"))
    return logs


def follow_logs(paths, options: LogOptions, search=None):
    """Rounds of new events as the logs grow (:func:`rebalance_doctor.table.following.follow`), their
    problems on stderr as they come."""
    if options.events is not None:
        raise fail("--follow reads logs as they are written, not an event store (--events)")
    if options.engine is EngineName.spark:
        raise fail("--follow reads files and stdin on this machine: not with --engine spark")
    from ..catalog import CatalogError
    from ..table.following import follow

    err = environment().err
    try:
        catalog = catalog_or_fail(options.patterns) if options.patterns else None
        for arrived in follow(paths_or_stdin(paths), patterns=tuple(options.patterns), catalog=catalog, tz=tuple(options.tz),
                            **time_bounds(options), groups=tuple(options.group), members=tuple(options.member), search=search):
            for problem in arrived.problems:
                err.print(Text(f"rebalance-doctor: {problem}", style="yellow"))
            yield arrived
    except CatalogError as exc:
        raise fail(f"bad catalog entry: {exc}") from None
    except ValueError as exc:
        raise fail(str(exc)) from None


def read_store(paths, options: LogOptions):
    """An event store instead of logs, with the same event filters."""
    from dataclasses import replace

    from ..table.event_table import filter_table, missed_groups, time_extent, time_window
    from ..table.store import StoreError, read_events

    if paths:
        raise fail("give log paths or --events, not both")
    bounds = time_bounds(options)
    try:
        logs = read_events(options.events, spark=spark_session_for(options))
    except StoreError as exc:
        raise fail(str(exc)) from None
    table = logs.events
    since, until = time_window(bounds["since"], bounds["until"], bounds["now"], lambda: time_extent(table))
    notes = missed_groups(tuple(options.group), lambda: table["group_id"].unique())
    events = filter_table(table, since=since, until=until, groups=tuple(options.group), members=tuple(options.member))
    return replace(logs, table=events, problems=logs.problems + notes)


PROGRESS_MIN_BYTES = 64 * 1024 * 1024


@contextlib.contextmanager
def progress_bar():
    """A progress bar on stderr when it is a terminal; the callback shows it once the input is large."""
    if not environment().stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    with Progress("reading logs", BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=environment().err, transient=True) as bar:
        task = None

        def update(done: int, total: int) -> None:
            nonlocal task
            if total >= PROGRESS_MIN_BYTES:
                task = task if task is not None else bar.add_task("scan", total=total)
                bar.update(task, completed=done)

        yield update


def check_kinds(kinds: list[str]) -> None:
    from ..catalog.schema import CAUSES, KINDS
    from ..near_misses import did_you_mean

    for kind in kinds:
        if kind in KINDS:
            continue
        if kind in CAUSES:
            raise fail(f"{kind} is a root cause, not an event kind: `report` shows the rebalances it caused and "
                       f"`check --fail-on {kind}` gates on it; known kinds: {', '.join(KINDS)}")
        raise fail(f"unknown kind {kind!r}{did_you_mean(kind, KINDS)}; known kinds: {', '.join(KINDS)}")


def analyze_logs(paths, options: LogOptions, probing_interval: str = "10m", outputs: tuple[Path | None, ...] = ()):
    """Load the logs and analyze them with the catalog's version ranges (shared by report, timeline, check)."""
    return analysis_of(load_logs(paths, options, outputs), options, duration_option(probing_interval, "--probing-interval"))


def analysis_of(logs, options: LogOptions, probing_interval_ms: int):
    """The analysis of loaded logs, with the catalog's version ranges."""
    from .. import analyze
    from ..catalog import CatalogError

    try:
        return analyze(logs.events, patterns=tuple(options.patterns), probing_interval_ms=probing_interval_ms, buckets=dict(logs.buckets),
                       zoned_files=logs.zoned_files)
    except CatalogError as exc:
        raise fail(f"bad catalog entry: {exc}") from None


def duration_option(value: str, option: str) -> int:
    """'600000' (ms), '10m', '90s', '1h' → milliseconds."""
    from ..durations import parse_duration

    try:
        return parse_duration(value)
    except ValueError:
        raise fail(f"{option} {value!r} is not a duration (e.g. 600000, 10m, 90s)") from None


def catalog_or_fail(patterns: list[str]):
    from ..catalog import CatalogError
    from ..reading.examples import checked_catalog

    try:
        catalog = checked_catalog(tuple(patterns))
    except CatalogError as exc:
        raise fail(f"bad catalog entry: {exc}") from None
    for note in catalog.replaced:
        environment().err.print(Text(f"note: {note}", style="dim"))
    return catalog
