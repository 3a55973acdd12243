"""The commands that read logs: events, ingest, report, timeline, check, grep and sql. Each parses its own
options and calls the library; the shared options and the loading live in :mod:`.options`."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from .app import app
from .console import ExitStatus, environment
from .options import (
    Follow,
    Kinds,
    LogOptions,
    Paths,
    analysis_of,
    analyze_logs,
    check_kinds,
    duration_option,
    exit_1_when_nothing_found,
    fail,
    follow_logs,
    load_logs,
    output_file,
    reads_logs,
    spark_session_for,
)


class EventFormat(StrEnum):
    table = "table"
    ndjson = "ndjson"
    csv = "csv"


class ReportFormat(StrEnum):
    terminal = "terminal"
    json = "json"
    markdown = "markdown"
    html = "html"
    svg = "svg"
    png = "png"


@app.command()
@reads_logs
def events(
    paths: Paths = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the table to a .parquet, .csv or .ndjson file.",
                                                metavar="FILE", parser=output_file)] = None,
    format: Annotated[EventFormat, typer.Option("--format", "-f", help="Output format on stdout.")] = EventFormat.table,
    kind: Kinds = [],
    follow: Follow = False,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """The event table: every rebalance-related line of every input as one typed row.

    Examples:

        rebalance-doctor events sample_logs/heartbeat-expiry/

        rebalance-doctor events logs/*.log.gz --format ndjson | jq .kind

        rebalance-doctor events broker-*/server.log -o events.parquet --group orders

        kubectl logs -f -l app=kafka --prefix | rebalance-doctor events --follow --format ndjson
    """
    check_kinds(kind)
    if follow:
        if output is not None:
            raise fail("--follow prints events as they come: not with -o")
        _follow_events(paths, options, kind, format)
    logs = load_logs(paths, options, outputs=(output,))

    from ..renderers.event_lines import print_table
    from ..table.event_table import filter_table

    table = filter_table(logs.events, kinds=tuple(kind))
    _write_table(table, output, format, print_table, "events")
    exit_1_when_nothing_found(table.height)


def _write_table(table, output: Path | None, format: EventFormat, print_aligned, rows: str) -> None:
    """A table to the -o file (its extension names the format), else to stdout as --format says."""
    from ..renderers.event_lines import write_csv, write_file, write_ndjson

    if output is not None:
        try:
            write_file(table, output)
        except (ValueError, OSError) as exc:
            raise fail(str(exc)) from None
        environment().err.print(Text(f"wrote {table.height:,} {rows} to {output}", style="dim"))
    elif format is EventFormat.ndjson:
        write_ndjson(table, environment().stdout)
    elif format is EventFormat.csv:
        write_csv(table, environment().stdout)
    else:
        print_aligned(table, environment().out)


def _follow_events(paths, options: LogOptions, kind: list[str], format: EventFormat) -> None:
    """`events --follow`: each round's new events as they come (the table's header and the CSV's once)."""
    from ..renderers.event_lines import print_table, write_csv, write_ndjson
    from ..table.event_table import filter_table

    found = 0
    for number, arrived in enumerate(follow_logs(paths, options)):
        table = filter_table(arrived.events, kinds=tuple(kind))
        if format is EventFormat.ndjson:
            write_ndjson(table, environment().stdout)
        elif format is EventFormat.csv:
            write_csv(table, environment().stdout, header=not number)
        elif table.height or not number:
            print_table(table, environment().out, header=not number)
        found += table.height
    raise typer.Exit(int(ExitStatus.OK if found else ExitStatus.NOTHING_FOUND))


@app.command()
@reads_logs
def ingest(
    paths: Paths = None,
    output: Annotated[str, typer.Option(
        "--output", "-o", help=("The event store to write: a directory (or, with --engine spark, a Hadoop URI such as "
        "s3a://bucket/events)."), metavar="DIR", show_default=False)] = ...,
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
    logs = load_logs(paths, options)

    from ..engines.spark import SparkEngineError
    from ..table.store import StoreError, write_events

    try:
        written = write_events(logs, output, spark=spark_session_for(options), overwrite=force)
    except (StoreError, SparkEngineError) as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        raise fail(f"{output}: {exc.strerror or exc}") from None
    environment().err.print(Text(f"wrote {written:,} events from {logs.files_read:,} files to {output}", style="dim"))
    exit_1_when_nothing_found(written)


@app.command()
@reads_logs
def report(
    paths: Paths = None,
    format: Annotated[ReportFormat | None, typer.Option(
        "--format", "-f", help=("terminal (rich; the default on stdout), json (docs/json-report.md), markdown (a post-mortem "
        "document), html (one self-contained file with the timeline), svg or png (the timeline picture alone). With -o, "
        "the file's extension chooses it (.txt .json .md .html .svg .png)."), show_default=False)] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report to a file instead of stdout.",
                                                metavar="FILE", parser=output_file)] = None,
    probing_interval: Annotated[str, typer.Option(
        "--probing-interval", help=("Streams probing.rebalance.interval.ms of the application (600000, 10m, 90s)."), metavar="DURATION")] = "10m",
    follow: Annotated[bool, typer.Option(
        "--follow", help="Keep reading as the logs grow and redraw the summary (verdict, totals, each group's last rebalances).")] = False,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """Every rebalance of every group: generations, leaders, membership, pause time and root causes with evidence.

    Examples:

        rebalance-doctor report sample_logs/heartbeat-expiry/

        rebalance-doctor report logs/ --group orders --since 2024-10-24T12:00Z

        rebalance-doctor report logs/ -o incident.json

        rebalance-doctor report logs/ -o incident.md

        rebalance-doctor report logs/ -o incident.html
    """
    from .. import render
    from ..renderers import format_for
    from ..renderers.files import write_atomically

    if follow:
        if output is not None or format not in (None, ReportFormat.terminal):
            raise fail("--follow redraws the summary in the terminal: not with -o or --format")
        from ..renderers.terminal import print_live_summary

        _redraw(paths, options, duration_option(probing_interval, "--probing-interval"), print_live_summary)
    if format is None:  # before any log is read: a file name that names no format is a usage error
        try:
            format = ReportFormat(format_for(output)) if output is not None else ReportFormat.terminal
        except ValueError as exc:
            raise fail(str(exc)) from None
    analysis = analyze_logs(paths, options, probing_interval, outputs=(output,))

    env = environment()
    binary = format is ReportFormat.png
    if output is None:
        if binary and env.stdout.isatty():
            raise fail("--format png writes binary data: give -o FILE or redirect stdout")
        render(analysis, format.value, env.stdout.buffer if binary else env.stdout, console=env.out)
    else:
        try:
            with write_atomically(output, binary=binary) as stream:
                render(analysis, format.value, stream, console=None if binary else env.console(stream))
        except OSError as exc:
            raise fail(f"{output}: {exc.strerror or exc}") from None
        env.err.print(Text(f"wrote the report to {output}", style="dim"))
    exit_1_when_nothing_found(analysis.events)


@app.command()
@reads_logs
def timeline(
    paths: Paths = None,
    follow: Annotated[bool, typer.Option("--follow", help="Keep reading as the logs grow and redraw the timeline.")] = False,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """The incident at a glance: per group a row of rebalances coloured by cause, per member when it was in the
    group and when it was paused.

    Examples:

        rebalance-doctor timeline sample_logs/rolling-bounce-eager/

        rebalance-doctor timeline logs/ --group orders --since 2024-10-24T12:00Z
    """
    from ..renderers.timeline import print_timeline

    if follow:
        _redraw(paths, options, duration_option("10m", "--probing-interval"), print_timeline)
    analysis = analyze_logs(paths, options)

    print_timeline(analysis, environment().out)
    exit_1_when_nothing_found(analysis.events)


@app.command()
@reads_logs
def check(
    paths: Paths = None,
    fail_on: Annotated[str | None, typer.Option(
        "--fail-on", help=("Fail when a rebalance has one of these causes (CAUSE,…; see `patterns kinds` for the vocabulary in "
        "the README)."), metavar="CAUSES")] = None,
    max_rebalances: Annotated[int | None, typer.Option("--max-rebalances", min=0, help="At most N rebalances per group.", metavar="N")] = None,
    max_failed: Annotated[int | None, typer.Option("--max-failed", min=0, help="At most N failed rebalances per group.", metavar="N")] = None,
    max_pause: Annotated[str | None, typer.Option(
        "--max-pause", help=("At most this much total pause per group (600000, 90s, 10m)."), metavar="DURATION")] = None,
    rules_file: Annotated[Path | None, typer.Option("--rules", help="A rules file (YAML; see examples/rebalance-rules.yaml).", metavar="FILE")] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML: one test case per rule and group.", metavar="FILE",
                                               parser=output_file)] = None,
    github: Annotated[bool, typer.Option("--github", help="Print GitHub Actions ::error annotations at the evidence lines.")] = False,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """CI gate: evaluate rebalance rules per group. Exit 0 when all hold, 1 when one is violated, 2 on usage/input errors.

    Examples:

        rebalance-doctor check logs/ --fail-on heartbeat_expiry,poll_timeout --max-failed 0 --max-pause 30s

        rebalance-doctor check logs/ --rules examples/rebalance-rules.yaml --junit rebalance.xml --github
    """
    from ..renderers.files import write_atomically
    from ..renderers.verdict import github_annotations, junit_xml, print_check
    from ..rules import evaluate, load_rules, merge

    try:  # rules first: a bad rules file is a usage error before any log is read
        rules = merge(load_rules(rules_file) if rules_file else None,
                      {"fail_on": fail_on, "max_rebalances": max_rebalances, "max_failed": max_failed, "max_pause": max_pause})
    except ValueError as exc:
        raise fail(str(exc)) from None
    analysis = analyze_logs(paths, options, outputs=(junit,))
    if not analysis.buckets.get("matched"):  # a gate over the wrong folder (or a broken log collection) must not pass
        raise fail("no Kafka rebalance line in the inputs: nothing to check (are these the broker and client logs?)")
    result = evaluate(analysis, rules, tuple(options.group))
    print_check(result, environment().out)
    if junit is not None:
        try:
            with write_atomically(junit) as stream:
                stream.write(junit_xml(result))
        except OSError as exc:
            raise fail(f"{junit}: {exc.strerror or exc}") from None
    if github:
        environment().stdout.write("".join(line + "\n" for line in github_annotations(result)))  # raw: never through rich
    raise typer.Exit(int(ExitStatus.OK if result.passed else ExitStatus.NOTHING_FOUND))


@app.command()
@reads_logs
def grep(
    args: Annotated[list[str] | None, typer.Argument(
        help=("[TEXT] PATH…: TEXT (a regex, searched in every line; smart case) is optional; the first argument is TEXT "
              "unless it is (or looks like) a path; use -e TEXT to be explicit."), show_default=False)] = None,
    kind: Kinds = [],
    generation: Annotated[list[int], typer.Option("--generation", help="Only this generation (or KIP-848 epoch); repeatable.", metavar="N")] = [],
    node: Annotated[list[str], typer.Option("--node", help="Only lines of this node (repeatable; globs like broker-*).", metavar="GLOB")] = [],
    text: Annotated[str | None, typer.Option("--regexp", "-e", help="TEXT given explicitly (when it could be mistaken for a path).", metavar="TEXT")] = None,
    ignore_case: Annotated[bool, typer.Option("--ignore-case", "-i", help="TEXT ignores case.")] = False,
    case_sensitive: Annotated[bool, typer.Option("--case-sensitive", "-s", help="TEXT respects case (by default only a TEXT with a capital does).")] = False,
    invert: Annotated[bool, typer.Option("--invert-match", "-v", help="Select the lines TEXT does not match.")] = False,
    after: Annotated[int, typer.Option("--after-context", "-A", min=0, help="Show N lines after each selected line.", metavar="N")] = 0,
    before: Annotated[int, typer.Option("--before-context", "-B", min=0, help="Show N lines before each selected line.", metavar="N")] = 0,
    context: Annotated[int | None, typer.Option("--context", "-C", min=0, help="Show N lines before and after.", metavar="N")] = None,
    count: Annotated[bool, typer.Option("--count", "-c", help="Print the number of selected lines per file.")] = False,
    files_with_matches: Annotated[bool, typer.Option("--files-with-matches", "-l", help="Print only the files with a selected line.")] = False,
    raw: Annotated[bool, typer.Option("--raw", help="Print only the original log lines (merged in time order).")] = False,
    json: Annotated[bool, typer.Option("--json", help=("ripgrep's JSON Lines (begin, match, context, end, summary), each line with "
                                                        "its time, node and event."))] = False,
    follow: Follow = False,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """Grep for incidents: TEXT in every line of every input, merged across nodes in time order; each line that
    is a rebalance event is marked with its kind, group and generation. Without TEXT: every rebalance event.

    Exit status 0 when a line was selected, 1 when none was, 2 on error (like grep and rg).

    Examples:

        rebalance-doctor grep logs/                       # every rebalance event, all nodes

        rebalance-doctor grep 'Detected pause' -C 2 logs/

        rebalance-doctor grep -k rebalance_start -k member_expired logs/

        rebalance-doctor grep 'heartbeat' --group orders --generation 42 logs/ --raw

        kubectl logs -l app=orders --prefix | rebalance-doctor grep -k poll_timeout

        kubectl logs -f -l app=orders --prefix | rebalance-doctor grep --follow -k member_expired
    """
    check_kinds(kind)
    if follow and (count or files_with_matches):
        raise fail("--follow prints lines as they come: not with -c or -l")
    args = list(args or [])
    if text is None and args and _is_text_not_path(args[0]):
        text, args = args[0], args[1:]
    if context is not None:
        before, after = before or context, after or context
    from ..reading.search import TextSearch

    search = None
    if text is not None or invert or before or after:
        search = TextSearch(text, True if ignore_case else False if case_sensitive else None, invert, before, after)
        try:
            search.check()
        except ValueError as exc:
            raise fail(str(exc)) from None
    logs = None if follow else load_logs(args, options, search=search)  # before polars is imported: the scan processes start first

    from ..renderers.event_lines import print_counts, print_files, print_grep, selected_per_file, write_rg_json
    from ..table.event_table import filter_table
    from ..table.found_lines import event_lines, filter_lines

    filters = {"kinds": tuple(kind), "generations": tuple(generation), "nodes": tuple(node)}
    regex = None if search is None or search.invert else search.regex

    def selected(found, events):
        if found is not None:
            return filter_lines(found, before, after, **filters)
        if (before or after) and options.events is not None:
            environment().err.print(Text("rebalance-doctor: an event store holds only events: no context lines", style="yellow"))
        return event_lines(filter_table(events, **filters), search)  # no text, or an event store: its events are all there is

    if follow:
        anything = False
        for arrived in follow_logs(args, options, search):
            lines = selected(arrived.lines, arrived.events)
            if lines.height:
                (write_rg_json(lines, environment().stdout, regex) if json
                 else print_grep(lines, environment().out, raw_only=raw, highlight=regex, separated=bool(before or after)))
            anything = anything or bool(lines["selected"].any())
        raise typer.Exit(int(ExitStatus.OK if anything else ExitStatus.NOTHING_FOUND))
    filtered = any(filters.values()) or options.group or options.member or options.since or options.until
    if (count or files_with_matches) and logs.found is not None and not filtered:  # counted as scanned: no line is made
        counts = logs.selected_per_file()
    else:
        lines = selected(logs.lines, logs.events)
        counts = selected_per_file(lines)
    if files_with_matches:
        print_files(counts, environment().out)
    elif count:
        print_counts(counts, environment().out)
    elif json:
        write_rg_json(lines, environment().stdout, regex)
    else:
        print_grep(lines, environment().out, raw_only=raw, highlight=regex, separated=bool(before or after))
    if not counts:
        raise typer.Exit(int(ExitStatus.NOTHING_FOUND))


@app.command()
@reads_logs
def sql(
    query: Annotated[str, typer.Argument(help="A SQL query over the tables events, rebalances, members and findings (docs/sql.md).",
                                         show_default=False)],
    paths: Paths = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the result to a .parquet, .csv or .ndjson file.",
                                                metavar="FILE", parser=output_file)] = None,
    format: Annotated[EventFormat, typer.Option("--format", "-f", help="Output format on stdout.")] = EventFormat.table,
    probing_interval: Annotated[str, typer.Option(
        "--probing-interval", help=("Streams probing.rebalance.interval.ms of the application (600000, 10m, 90s)."), metavar="DURATION")] = "10m",
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """SQL over the incident: the event table and, from the analysis, one row per rebalance, per member of a
    rebalance and per finding. Exit status 0 when the result has rows, 1 when it has none.

    Examples:

        rebalance-doctor sql "SELECT cause, count(*) AS n, sum(pause_ms) AS pause FROM rebalances GROUP BY cause" logs/

        rebalance-doctor sql "SELECT node, kind, count(*) FROM events GROUP BY node, kind ORDER BY 3 DESC" logs/ -f csv

        rebalance-doctor sql "SELECT * FROM members WHERE paused_ms > 10000" --events events/ -o long-pauses.parquet
    """
    interval_ms = duration_option(probing_interval, "--probing-interval")
    logs = load_logs(paths, options, outputs=(output,))
    analysis = analysis_of(logs, options, interval_ms)

    from ..analysis.tables import incident_tables
    from ..analysis.tables import query as run_query
    from ..renderers.event_lines import print_frame

    try:
        result = run_query(query, {"events": logs.events, **incident_tables(analysis)})
    except ValueError as exc:
        raise fail(str(exc)) from None
    _write_table(result, output, format, print_frame, "rows")
    exit_1_when_nothing_found(result.height)


def _redraw(paths, options: LogOptions, probing_interval_ms: int, draw) -> None:
    """Follow the logs and draw their analysis each time new events came: over the last drawing on a terminal,
    after a rule naming the time elsewhere. Ends as grep does, when no input can grow (stdin closed)."""
    import polars as pl

    from .. import analyze

    console = environment().out
    events = None
    for arrived in follow_logs(paths, options):
        if events is not None and not arrived.events.height:
            continue
        events = arrived.events if events is None else pl.concat([events, arrived.events]).sort("ts", nulls_last=True, maintain_order=True)
        analysis = analyze(events, patterns=tuple(options.patterns), probing_interval_ms=probing_interval_ms)
        if console.is_terminal:
            console.clear()
        else:
            console.rule(f"as of {datetime.now(UTC):%H:%M:%S}Z", style="dim")
        draw(analysis, console)
    raise typer.Exit(int(ExitStatus.OK if events is not None and events.height else ExitStatus.NOTHING_FOUND))


def _is_text_not_path(arg: str) -> bool:
    """The first argument of `grep` is TEXT unless it names a path: an existing one, a glob that
    matches, or something shaped like a path (a separator or a log-file suffix) — a typo in a path
    should say "no such file", not search for the typo."""
    import glob

    if arg == "-" or os.path.exists(arg) or (any(ch in arg for ch in "*?[") and glob.glob(arg, recursive=True)):
        return False
    return os.sep not in arg and not arg.endswith((".log", ".gz", ".txt", ".json", ".out", ".csv"))


