"""The command line: parses options and calls the library. No analysis happens here."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Annotated, NoReturn, Optional

import typer
from rich.text import Text

from . import __version__
from .environment import Environment
from .status import ExitStatus

app = typer.Typer(
    name="rebalance-doctor",
    help="Log forensics for Apache Kafka consumer-group rebalance incidents.\n\n"
    "Reads broker and client logs (files, directories, globs, .gz, - for stdin) from many nodes at once "
    "and turns every rebalance-related line into one event table, merged across nodes in time order.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
)
patterns_app = typer.Typer(help="What the catalogs hold, and which pattern a line matches.", no_args_is_help=True)
app.add_typer(patterns_app, name="patterns")

ENV = Environment()


class EventFormat(str, Enum):
    table = "table"
    ndjson = "ndjson"
    csv = "csv"


class EngineName(str, Enum):
    polars = "polars"
    spark = "spark"


class ReportFormat(str, Enum):
    terminal = "terminal"
    json = "json"
    markdown = "markdown"
    html = "html"
    svg = "svg"
    png = "png"


# Options shared by every command that reads logs (defined once, like sqlite-utils' option groups).
Paths = Annotated[Optional[list[str]], typer.Argument(help="Log files, directories, globs, .gz files, or - for stdin.", show_default=False)]
PatternDirs = Annotated[list[str], typer.Option("--patterns", help="Extra catalog directory (overrides/extends the bundled patterns/).", metavar="DIR")]
TimeZones = Annotated[list[str], typer.Option("--tz", help="Zone of naive timestamps: UTC (default), +02:00, Europe/Paris, or GLOB=ZONE per file.", metavar="ZONE")]
Since = Annotated[Optional[str], typer.Option("--since", help="Only events at or after this time (ISO-8601; naive = UTC).", metavar="TIME")]
Until = Annotated[Optional[str], typer.Option("--until", help="Only events at or before this time (ISO-8601; naive = UTC).", metavar="TIME")]
Groups = Annotated[list[str], typer.Option("--group", "-g", help="Only this consumer group (repeatable; globs like orders-*).", metavar="GROUP")]
Members = Annotated[list[str], typer.Option("--member", "-m", help="Only events whose member id, client id or instance id contains this.", metavar="MEMBER")]
Kinds = Annotated[list[str], typer.Option("--kind", "-k", help="Only these event kinds (repeatable; see `patterns kinds`).", metavar="KIND")]
Unmatched = Annotated[bool, typer.Option("--unmatched", help="List relevant-looking lines no pattern matched (catalog gaps) on stderr.")]
Color = Annotated[str, typer.Option("--color", help="auto, always or never (NO_COLOR is honoured).", metavar="WHEN")]
Engine = Annotated[EngineName, typer.Option("--engine", envvar="REBALANCE_DOCTOR_ENGINE", help="polars (embedded) or spark (PySpark: local[*] or a cluster, Hadoop URIs such as s3a://, hdfs://).")]
Master = Annotated[Optional[str], typer.Option("--master", help="Spark master URL for --engine spark (default local[*]; spark://host:7077, yarn, k8s://…).", metavar="URL")]
SparkConf = Annotated[list[str], typer.Option("--spark-conf", help="A Spark setting for --engine spark (repeatable), e.g. spark.executor.memory=4g.", metavar="KEY=VALUE")]
EventStore = Annotated[Optional[str], typer.Option("--events", help="Read an event store written by `ingest` instead of logs (a directory, or a Hadoop URI with --engine spark).", metavar="DIR")]


@dataclass(frozen=True)
class LogOptions:
    """What every log-reading command shares: which logs, which events, how to read times, colour."""

    group: list[str]
    member: list[str]
    since: str | None
    until: str | None
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
        ("group", Groups, []), ("member", Members, []), ("since", Since, None), ("until", Until, None),
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
        _set_colour(options.color)
        try:
            return command(options=options, **kwargs)
        except KeyboardInterrupt:  # typer would exit 130 without a word
            raise _fail("interrupted", ExitStatus.INTERRUPTED) from None

    wrapper.__signature__ = inspect.Signature(own + _LOG_OPTIONS)
    return wrapper


def _fail(message: str, status: ExitStatus = ExitStatus.ERROR) -> typer.Exit:
    ENV.err.print(Text(f"rebalance-doctor: {message}", style="bold red"))
    return typer.Exit(int(status))


def _exit_1_when_nothing_found(events: int) -> None:
    """Like grep: status 1 when the logs (after the filters) hold no rebalance event; the output is still written."""
    if events == 0:
        raise typer.Exit(int(ExitStatus.NOTHING_FOUND))


def _parse_time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _fail(f"{option} {value!r} is not an ISO-8601 time (e.g. 2024-10-24T12:00:00Z)") from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _paths_or_stdin(paths: list[str] | None) -> list[str]:
    if paths:
        return paths
    if not sys.stdin.isatty():
        return ["-"]
    raise _fail("no input: give log files or directories, or pipe logs into stdin")


def _set_colour(color: str) -> None:
    if color not in ("auto", "always", "never"):
        raise _fail(f"--color must be auto, always or never, not {color!r}")
    ENV.color = color  # type: ignore[assignment]


def _spark(options: LogOptions):
    """The Spark session when --engine spark is chosen, else None (polars needs none)."""
    if options.engine is not EngineName.spark:
        return None
    from .spark_engine import SparkSettings, spark_session

    return spark_session(SparkSettings.parse(options.master, options.spark_conf))


def _load(paths, options: LogOptions):
    """Load logs (or an event store) through the library, report problems and line buckets on stderr.
    Modules that import polars are imported after this returns (here and in the commands): polars
    takes 0.2 s to import, which the scan processes spend starting up instead of waiting for it."""
    from .api import load
    from .catalog import CatalogError
    from .spark_engine import SparkEngineError, SparkSettings

    try:
        if options.events is not None:
            logs = _read_store(paths, options)
        else:
            with _progress_bar() as progress:
                logs = load(
                    _paths_or_stdin(paths),
                    patterns=tuple(options.patterns),
                    tz=tuple(options.tz),
                    since=_parse_time(options.since, "--since"),
                    until=_parse_time(options.until, "--until"),
                    groups=tuple(options.group),
                    members=tuple(options.member),
                    collect_unmatched=options.unmatched,
                    progress=progress,
                    engine=options.engine.value,
                    spark=SparkSettings.parse(options.master, options.spark_conf),
                )
    except CatalogError as exc:
        raise _fail(f"bad catalog entry: {exc}") from None
    except (ValueError, SparkEngineError) as exc:  # e.g. an unknown --tz zone, Spark not reachable
        raise _fail(str(exc)) from None

    from .printers import bucket_summary, print_unmatched

    err = ENV.err
    for problem in logs.problems:
        err.print(Text(f"rebalance-doctor: {problem}", style="yellow"))
    if options.unmatched:
        print_unmatched(logs.unmatched, err)
    err.print(bucket_summary(logs.buckets, logs.files_read))
    if logs.files_read == 0:
        raise _fail("nothing could be read")
    if logs.lines_read == 0:
        err.print(Text("rebalance-doctor: the input is empty (no lines to read)", style="yellow"))
    return logs


def _read_store(paths, options: LogOptions):
    """An event store instead of logs, with the same event filters."""
    from dataclasses import replace

    from .store import StoreError, read_events
    from .table import filter_table

    if paths:
        raise _fail("give log paths or --events, not both")
    try:
        logs = read_events(options.events, spark=_spark(options))
    except StoreError as exc:
        raise _fail(str(exc)) from None
    events = filter_table(logs.events, since=_parse_time(options.since, "--since"), until=_parse_time(options.until, "--until"),
                          groups=tuple(options.group), members=tuple(options.member))
    return replace(logs, events=events)


PROGRESS_MIN_BYTES = 64 * 1024 * 1024


@contextlib.contextmanager
def _progress_bar():
    """A progress bar on stderr when it is a terminal; the callback shows it once the input is large."""
    if not ENV.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    with Progress("reading logs", BarColumn(), DownloadColumn(), TimeRemainingColumn(), console=ENV.err, transient=True) as bar:
        task = None

        def update(done: int, total: int) -> None:
            nonlocal task
            if total >= PROGRESS_MIN_BYTES:
                task = task if task is not None else bar.add_task("scan", total=total)
                bar.update(task, completed=done)

        yield update


def _check_kinds(kinds: list[str]) -> None:
    from .schema import KINDS

    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise _fail(f"unknown kind {', '.join(unknown)}; known kinds: {', '.join(KINDS)}")


@app.command()
@reads_logs
def events(
    paths: Paths = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the table to a .parquet, .csv or .ndjson file.", metavar="FILE")] = None,
    format: Annotated[EventFormat, typer.Option("--format", "-f", help="Output format on stdout.")] = EventFormat.table,
    kind: Kinds = [],
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """The event table: every rebalance-related line of every input as one typed row.

    Examples:

        rebalance-doctor events sample_logs/heartbeat-expiry/

        rebalance-doctor events logs/*.log.gz --format ndjson | jq .kind

        rebalance-doctor events broker-*/server.log -o events.parquet --group orders
    """
    _check_kinds(kind)
    logs = _load(paths, options)

    from .printers import print_table, write_csv, write_file, write_ndjson
    from .table import filter_table

    table = filter_table(logs.events, kinds=tuple(kind))
    if output is not None:
        try:
            write_file(table, output)
        except (ValueError, OSError) as exc:
            raise _fail(str(exc)) from None
        ENV.err.print(Text(f"wrote {table.height:,} events to {output}", style="dim"))
    elif format is EventFormat.ndjson:
        write_ndjson(table, ENV.stdout)
    elif format is EventFormat.csv:
        write_csv(table, ENV.stdout)
    else:
        print_table(table, ENV.out)
    _exit_1_when_nothing_found(table.height)


@app.command()
@reads_logs
def ingest(
    paths: Paths = None,
    output: Annotated[str, typer.Option("--output", "-o", help="The event store to write: a directory (or, with --engine spark, a Hadoop URI such as s3a://bucket/events).", metavar="DIR", show_default=False)] = ...,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing event store.")] = False,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """Write the event table as an event store: Parquet partitioned by date and group, with the line accounting.

    The store is written next to its destination and moved into place at the end: a failed run leaves none.
    `report`, `check`, `grep`, `timeline` and `events` read it with --events DIR.

    Examples:

        rebalance-doctor ingest logs/ -o events/

        rebalance-doctor ingest 's3a://logs/kafka/2024-10-24/*' --engine spark --master spark://spark-master:7077 -o s3a://forensics/events/

        rebalance-doctor report --events events/ --group orders
    """
    logs = _load(paths, options)

    from .spark_engine import SparkEngineError
    from .store import StoreError, write_events

    try:
        write_events(logs, output, spark=_spark(options), overwrite=force)
    except (StoreError, SparkEngineError) as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"{output}: {exc.strerror or exc}") from None
    ENV.err.print(Text(f"wrote {logs.events.height:,} events from {logs.files_read:,} files to {output}", style="dim"))
    _exit_1_when_nothing_found(logs.events.height)


@app.command()
@reads_logs
def report(
    paths: Paths = None,
    format: Annotated[ReportFormat, typer.Option("--format", "-f", help="terminal (rich), json (documented in the README), markdown (a post-mortem document), html (one self-contained file with the timeline), svg or png (the timeline picture alone).")] = ReportFormat.terminal,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to a file instead of stdout.", metavar="FILE")] = None,
    probing_interval: Annotated[str, typer.Option("--probing-interval", help="Streams probing.rebalance.interval.ms of the application (600000, 10m, 90s).", metavar="DURATION")] = "10m",
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """Every rebalance of every group: generations, leaders, membership, pause time and root causes with evidence.

    Examples:

        rebalance-doctor report sample_logs/heartbeat-expiry/

        rebalance-doctor report logs/ --group orders --since 2024-10-24T12:00Z

        rebalance-doctor report logs/ --format json -o incident.json

        rebalance-doctor report logs/ --format markdown -o incident.md

        rebalance-doctor report logs/ --format html -o incident.html
    """
    analysis = _analyze(paths, options, probing_interval)

    from .printers import write_atomically

    if format is ReportFormat.png:
        from .picture import timeline_png

        if output is None and ENV.stdout.isatty():
            raise _fail("--format png writes binary data: give -o FILE or redirect stdout")
        _write_bytes(timeline_png(analysis), output)
    elif output is None:
        _write_report(analysis, format, ENV.stdout, ENV.out)
    else:
        try:
            with write_atomically(output) as stream:
                _write_report(analysis, format, stream, ENV.console(stream))
        except OSError as exc:
            raise _fail(f"{output}: {exc.strerror or exc}") from None
    if output is not None:
        ENV.err.print(Text(f"wrote the report to {output}", style="dim"))
    _exit_1_when_nothing_found(analysis.events)


def _write_bytes(data: bytes, output: Path | None) -> None:
    """Binary output to a file (atomically) or to stdout."""
    if output is None:
        sys.stdout.buffer.write(data)
        return
    temp = output.with_name(f".{output.name}.partial")
    try:
        temp.write_bytes(data)
        temp.replace(output)
    except OSError as exc:
        raise _fail(f"{output}: {exc.strerror or exc}") from None
    finally:
        temp.unlink(missing_ok=True)


def _write_report(analysis, format: ReportFormat, stream, console) -> None:
    from .report import print_report, write_json

    if format is ReportFormat.json:
        write_json(analysis, stream)
    elif format is ReportFormat.markdown:
        from .markdown import render

        stream.write(render(analysis))
    elif format is ReportFormat.html:
        from .html import render

        stream.write(render(analysis))
    elif format is ReportFormat.svg:
        from .picture import timeline_svg

        stream.write(timeline_svg(analysis))
    else:
        print_report(analysis, console)


@app.command()
@reads_logs
def timeline(
    paths: Paths = None,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """The incident at a glance: per group a row of rebalances coloured by cause, per member when it was in the
    group and when it was paused.

    Examples:

        rebalance-doctor timeline sample_logs/rolling-bounce-eager/

        rebalance-doctor timeline logs/ --group orders --since 2024-10-24T12:00Z
    """
    analysis = _analyze(paths, options)

    from .terminal_timeline import print_timeline

    print_timeline(analysis, ENV.out)
    _exit_1_when_nothing_found(analysis.events)


def _analyze(paths, options: LogOptions, probing_interval: str = "10m"):
    """Load the logs and analyze them with the catalog's version ranges (shared by report, timeline, check)."""
    interval_ms = _parse_duration(probing_interval, "--probing-interval")
    logs = _load(paths, options)

    from .analysis import analyze

    versions = {p.id: (p.since, p.until) for p in _catalog(options.patterns).patterns}
    return analyze(logs.events, probing_interval_ms=interval_ms, buckets=dict(logs.buckets), pattern_versions=versions)


def _parse_duration(value: str, option: str) -> int:
    """'600000' (ms), '10m', '90s', '1h' → milliseconds."""
    from .durations import parse_duration

    try:
        return parse_duration(value)
    except ValueError:
        raise _fail(f"{option} {value!r} is not a duration (e.g. 600000, 10m, 90s)") from None


@app.command()
@reads_logs
def check(
    paths: Paths = None,
    fail_on: Annotated[Optional[str], typer.Option("--fail-on", help="Fail when a rebalance has one of these causes (CAUSE,…; see `patterns kinds` for the vocabulary in the README).", metavar="CAUSES")] = None,
    max_rebalances: Annotated[Optional[int], typer.Option("--max-rebalances", min=0, help="At most N rebalances per group.", metavar="N")] = None,
    max_failed: Annotated[Optional[int], typer.Option("--max-failed", min=0, help="At most N failed rebalances per group.", metavar="N")] = None,
    max_pause: Annotated[Optional[str], typer.Option("--max-pause", help="At most this much total pause per group (600000, 90s, 10m).", metavar="DURATION")] = None,
    rules_file: Annotated[Optional[Path], typer.Option("--rules", help="A rules file (YAML; see examples/rebalance-rules.yaml).", metavar="FILE")] = None,
    junit: Annotated[Optional[Path], typer.Option("--junit", help="Write JUnit XML: one test case per rule and group.", metavar="FILE")] = None,
    github: Annotated[bool, typer.Option("--github", help="Print GitHub Actions ::error annotations at the evidence lines.")] = False,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """CI gate: evaluate rebalance rules per group. Exit 0 when all hold, 1 when one is violated, 2 on usage/input errors.

    Examples:

        rebalance-doctor check logs/ --fail-on heartbeat_expiry,poll_timeout --max-failed 0 --max-pause 30s

        rebalance-doctor check logs/ --rules examples/rebalance-rules.yaml --junit rebalance.xml --github
    """
    from .check import evaluate, github_annotations, junit_xml, load_rules, merge, print_check
    from .printers import write_atomically

    try:  # rules first: a bad rules file is a usage error before any log is read
        rules = merge(load_rules(rules_file) if rules_file else None,
                      {"fail_on": fail_on, "max_rebalances": max_rebalances, "max_failed": max_failed, "max_pause": max_pause})
    except ValueError as exc:
        raise _fail(str(exc)) from None
    result = evaluate(_analyze(paths, options), rules, tuple(options.group))
    print_check(result, ENV.out)
    if junit is not None:
        try:
            with write_atomically(junit) as stream:
                stream.write(junit_xml(result))
        except OSError as exc:
            raise _fail(f"{junit}: {exc.strerror or exc}") from None
    if github:
        ENV.stdout.write("".join(line + "\n" for line in github_annotations(result)))  # raw: never through rich
    raise typer.Exit(int(ExitStatus.OK if result.passed else ExitStatus.NOTHING_FOUND))


@app.command()
@reads_logs
def grep(
    args: Annotated[list[str], typer.Argument(help="[TEXT] PATH…: TEXT (a regex over the log line, smart case) is optional; "
                                                  "the first argument is TEXT unless it is (or looks like) a path; use -e TEXT to be explicit.", show_default=False)] = None,
    kind: Kinds = [],
    generation: Annotated[list[int], typer.Option("--generation", help="Only this generation (or KIP-848 epoch); repeatable.", metavar="N")] = [],
    text: Annotated[Optional[str], typer.Option("--regexp", "-e", help="TEXT given explicitly (when it could be mistaken for a path).", metavar="TEXT")] = None,
    count: Annotated[bool, typer.Option("--count", "-c", help="Print the number of matching events per file.")] = False,
    raw: Annotated[bool, typer.Option("--raw", help="Print only the original log lines (merged in time order).")] = False,
    json: Annotated[bool, typer.Option("--json", help="One JSON object per matching event (same fields as `events --format ndjson`).")] = False,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """Grep for incidents: rebalance events from every node, merged in time order.

    Exit status 0 when something matched, 1 when nothing did, 2 on error (like grep and rg).

    Examples:

        rebalance-doctor grep logs/                       # every rebalance event, all nodes

        rebalance-doctor grep -k rebalance_start -k member_expired logs/

        rebalance-doctor grep 'heartbeat' --group orders --generation 42 logs/ --raw

        kubectl logs -l app=orders --prefix | rebalance-doctor grep -k poll_timeout
    """
    _check_kinds(kind)
    args = list(args or [])
    if text is None and args and _is_text_not_path(args[0]):
        text, args = args[0], args[1:]
    logs = _load(args, options)

    import polars as pl

    from .printers import print_counts, print_grep, write_ndjson
    from .table import filter_table

    table = filter_table(logs.events, kinds=tuple(kind), generations=tuple(generation))
    if text is not None:
        smart_case = "" if any(ch.isupper() for ch in text) else "(?i)"
        try:
            table = table.filter(pl.col("raw").str.contains(smart_case + text))
        except pl.exceptions.ComputeError as exc:
            raise _fail(f"TEXT {text!r} is not a valid regex: {exc}") from None
    if count:
        print_counts(table, ENV.out)
    elif json:
        write_ndjson(table, ENV.stdout)
    else:
        print_grep(table, ENV.out, raw_only=raw)
    if table.height == 0:
        raise typer.Exit(int(ExitStatus.NOTHING_FOUND))


def _is_text_not_path(arg: str) -> bool:
    """The first argument of `grep` is TEXT unless it names a path: an existing one, a glob that
    matches, or something shaped like a path (a separator or a log-file suffix) — a typo in a path
    should say "no such file", not search for the typo."""
    import glob

    if arg == "-" or os.path.exists(arg) or (any(ch in arg for ch in "*?[") and glob.glob(arg, recursive=True)):
        return False
    return os.sep not in arg and not arg.endswith((".log", ".gz", ".txt", ".json", ".out", ".csv"))


@patterns_app.command("list")
def patterns_list(
    component: Annotated[Optional[str], typer.Option("--component", help="broker, consumer, streams, connect or librdkafka.")] = None,
    kind: Annotated[Optional[str], typer.Option("--kind", "-k", help="Only entries of this event kind.")] = None,
    patterns: PatternDirs = [],
    color: Color = "auto",
) -> None:
    """Every catalog entry: id, kind, component, versions and anchor."""
    from rich.table import Table

    _set_colour(color)
    catalog = _catalog(patterns)
    table = Table(header_style="bold")
    for header in ("id", "kind", "component", "versions", "anchor"):
        table.add_column(header, overflow="fold")
    shown = [p for p in catalog.patterns if (component in (None, p.component)) and (kind in (None, p.kind))]
    for p in shown:
        table.add_row(p.id, p.kind, p.component, p.versions, Text(repr(p.anchor)))
    ENV.out.print(table)
    ENV.err.print(Text(f"{len(shown)} of {len(catalog.patterns)} entries; {len(catalog.ignored)} reference wordings ignored with a reason", style="dim"))


@patterns_app.command("anchors")
def patterns_anchors(patterns: PatternDirs = []) -> None:
    """The prefilter's literals, one per line: `rg -F -f <(rebalance-doctor patterns anchors) logs/`."""
    catalog = _catalog(patterns)
    ENV.stdout.write("".join(anchor + "\n" for anchor in catalog.anchors))


@patterns_app.command("kinds")
def patterns_kinds(color: Color = "auto") -> None:
    """The event-kind vocabulary analyzers speak in."""
    from .schema import KINDS

    _set_colour(color)
    for name, doc in KINDS.items():
        ENV.out.print(Text.assemble((name, "bold"), f"  {doc}"))


@patterns_app.command("show")
def patterns_show(
    pattern_id: Annotated[str, typer.Argument(metavar="ID", help="Catalog entry id (see `patterns list`).")],
    patterns: PatternDirs = [],
    color: Color = "auto",
) -> None:
    """One entry in full: versions, anchor, regex, constants and its example lines."""
    _set_colour(color)
    catalog = _catalog(patterns)
    pattern = catalog.by_id.get(pattern_id)
    if pattern is None:
        close = [p.id for p in catalog.patterns if pattern_id.lower() in p.id.lower()][:10]
        hint = f"; did you mean {', '.join(close)}" if close else ""
        raise _fail(f"no catalog entry {pattern_id!r}{hint}")
    out = ENV.out
    for label, value in (
        ("id", pattern.id), ("kind", pattern.kind), ("component", pattern.component), ("level", pattern.level),
        ("versions", pattern.versions), ("anchor", repr(pattern.anchor)), ("regex", pattern.regex),
        ("constants", str(pattern.constants or "")), ("multiline", str(pattern.multiline)), ("defined at", pattern.where),
    ):
        out.print(Text.assemble((f"{label:>10}: ", "bold"), value))
    for example in pattern.examples:
        out.print(Text.assemble(("   example: ", "bold"), example.line))


@patterns_app.command("test")
def patterns_test(
    line: Annotated[str, typer.Argument(help="A log line (quote it), or - to read lines from stdin.")],
    patterns: PatternDirs = [],
    tz: TimeZones = [],
    color: Color = "auto",
) -> None:
    """Which pattern a line matches and what it extracts — or why nothing matches.

    Example:

        rebalance-doctor patterns test "$(sed -n 248p sample_logs/heartbeat-expiry/broker-1/server.log)"

        grep -h GroupCoordinator logs/*.log | rebalance-doctor patterns test -
    """
    from .explain import explain_line

    _set_colour(color)
    catalog = _catalog(patterns)
    lines = sys.stdin.read().splitlines() if line == "-" else [line]
    try:
        from .api import zone_for
        from .inputs import Source

        zone = zone_for(Source("-", None, 0), tuple(tz))
    except ValueError as exc:
        raise _fail(str(exc)) from None
    matched = [explain_line(text, catalog, zone, ENV.out) for text in lines]
    if not any(matched):
        raise typer.Exit(int(ExitStatus.NOTHING_FOUND))


def _catalog(patterns: list[str]):
    from .catalog import CatalogError, load_catalog

    try:
        return load_catalog(tuple(patterns))
    except CatalogError as exc:
        raise _fail(f"bad catalog entry: {exc}") from None


def _version(value: bool) -> None:
    if value:
        print(f"rebalance-doctor {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")] = False,
) -> None:
    """Log forensics for Apache Kafka consumer-group rebalance incidents."""


# polars' allocator (jemalloc) keeps freed pages for seconds; a command that builds one large table and
# exits gains nothing from that (measured: 160 MB less peak RSS on 5 GB of logs when pages go back at once).
POLARS_ALLOCATOR = ("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
# numpy's OpenBLAS starts a thread per core on import that spins while idle; nothing here multiplies
# matrices (measured: 0.1 s of CPU per process on 1 GB, taken from the scan on a 2-core machine).
SINGLE_BLAS_THREAD = ("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    for setting in (POLARS_ALLOCATOR, SINGLE_BLAS_THREAD):  # before polars and numpy are first imported; the scan processes inherit them
        os.environ.setdefault(*setting)
    try:
        app()  # typer ends with sys.exit
    except KeyboardInterrupt:
        sys.stderr.write("rebalance-doctor: interrupted\n")
        _leave(int(ExitStatus.INTERRUPTED))
    except SystemExit as done:
        if done.code is not None and not isinstance(done.code, int):
            raise
        _leave(done.code or 0)


def _leave(status: int) -> NoReturn:
    """Exit once the output is out, without the interpreter's teardown: freeing the event table, the
    catalog and the modules object by object took 0.17 s after a 1 GB run. A run that started Spark
    gets the ordinary exit, so that PySpark's own exit handlers run."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (| head) or stream
            stream.flush()
    if "pyspark" in sys.modules:
        sys.exit(status)
    os._exit(status)
