"""``rebalance-doctor patterns …``: what the catalogs hold, and which entry a line matches."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from .app import patterns_app
from .console import ExitStatus, environment
from .options import Color, LogOptions, Paths, PatternDirs, TimeZones, catalog_or_fail, fail, load_logs, output_file, reads_logs, set_colour


@patterns_app.command("list")
def patterns_list(
    component: Annotated[str | None, typer.Option("--component", help=(
        "broker, consumer, streams, connect, librdkafka, or a client library (kafka-python, kafkajs, sarama, franz-go, kafka-go, "
        "ruby-kafka, streamiz)."))] = None,
    kind: Annotated[str | None, typer.Option("--kind", "-k", help="Only entries of this event kind.")] = None,
    patterns: PatternDirs = [],
    color: Color = "auto",
) -> None:
    """Every catalog entry: id, kind, component, versions and anchor."""
    from rich.table import Table

    set_colour(color)
    catalog = catalog_or_fail(patterns)
    table = Table(header_style="bold")
    for header in ("id", "kind", "component", "versions", "anchor"):
        table.add_column(header, overflow="fold")
    shown = [p for p in catalog.patterns if (component in (None, p.component)) and (kind in (None, p.kind))]
    for p in shown:
        table.add_row(p.id, p.kind, p.component, p.versions, Text(repr(p.anchor)))
    environment().out.print(table)
    summary = f"{len(shown)} of {len(catalog.patterns)} entries; {len(catalog.ignored)} reference wordings ignored with a reason"
    environment().err.print(Text(summary, style="dim"))


@patterns_app.command("anchors")
def patterns_anchors(patterns: PatternDirs = []) -> None:
    """The prefilter's literals, one per line: `rg -F -f <(rebalance-doctor patterns anchors) logs/`."""
    catalog = catalog_or_fail(patterns)
    environment().stdout.write("".join(anchor + "\n" for anchor in catalog.anchors))


@patterns_app.command("kinds")
def patterns_kinds(color: Color = "auto") -> None:
    """The event-kind vocabulary analyzers speak in."""
    from ..catalog.schema import KINDS

    set_colour(color)
    for name, doc in KINDS.items():
        environment().out.print(Text.assemble((name, "bold"), f"  {doc}"))


@patterns_app.command("show")
def patterns_show(
    pattern_id: Annotated[str, typer.Argument(metavar="ID", help="Catalog entry id (see `patterns list`).")],
    patterns: PatternDirs = [],
    color: Color = "auto",
) -> None:
    """One entry in full: versions, anchor, regex, constants and its example lines."""
    set_colour(color)
    catalog = catalog_or_fail(patterns)
    pattern = catalog.by_id.get(pattern_id)
    if pattern is None:
        close = [p.id for p in catalog.patterns if pattern_id.lower() in p.id.lower()][:10]
        hint = f"; did you mean {', '.join(close)}" if close else ""
        raise fail(f"no catalog entry {pattern_id!r}{hint}")
    out = environment().out
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
    from ..renderers.line_explanation import explain_line

    set_colour(color)
    catalog = catalog_or_fail(patterns)
    lines = sys.stdin.read().splitlines() if line == "-" else [line]
    try:
        from ..reading.envelope import zone_for
        from ..reading.sources import Source

        zone = zone_for(Source("-", None, 0), tuple(tz))
    except ValueError as exc:
        raise fail(str(exc)) from None
    matched = [explain_line(text, catalog, zone, environment().out) for text in lines]
    if not any(matched):
        raise typer.Exit(int(ExitStatus.NOTHING_FOUND))


@patterns_app.command("suggest")
@reads_logs
def patterns_suggest(
    paths: Paths = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the catalog file here (in the DIR you give --patterns).",
                                                metavar="FILE", parser=output_file)] = None,
    component: Annotated[str | None, typer.Option("--component", help="The component of the entries (default: that of the nearest "
                                                  "bundled entries).")] = None,
    limit: Annotated[int, typer.Option("--limit", help="At most this many entries, most frequent templates first.", min=1)] = 50,
    options: LogOptions = None,  # filled by @reads_logs
) -> None:
    """Catalog entries for the relevant lines no entry matched: templates mined with Drain3, as YAML to edit.

    Example:

        rebalance-doctor patterns suggest logs/ -o my-patterns/suggested.yaml

        rebalance-doctor report logs/ --patterns my-patterns/
    """
    from collections import Counter

    from ..catalog.schema import COMPONENTS
    from ..reading.suggestions import suggest, suggestions_yaml
    from ..renderers.files import write_atomically

    if component is not None and component not in COMPONENTS:
        raise fail(f"--component must be one of {', '.join(COMPONENTS)}")
    logs = load_logs(paths, options, (output,), collect_unmatched=True)
    catalog = catalog_or_fail(options.patterns)
    suggestions = suggest(logs.unmatched, catalog, limit)
    if not suggestions:
        environment().err.print(Text("no relevant unmatched line to suggest an entry for", style="dim"))
        raise typer.Exit(int(ExitStatus.NOTHING_FOUND))
    nearest = Counter(s.nearest[0][1].component for s in suggestions if s.nearest)
    text = suggestions_yaml(suggestions, component or (nearest.most_common(1)[0][0] if nearest else "consumer"))
    if output is None:
        environment().stdout.write(text)
    else:
        with write_atomically(output) as stream:
            stream.write(text)
    covered = sum(len(s.lines) for s in suggestions)
    where = f"; load it with --patterns {output.parent}" if output else ""
    environment().err.print(Text(f"{len(suggestions)} entries for {covered} of {len(logs.unmatched)} relevant unmatched lines{where}",
                                 style="dim"))
