"""The HTML report: one self-contained file (inline CSS, JS and SVG; nothing fetched) to attach to an incident ticket.

Log text reaches the page only escaped (markup) or as JSON that the script writes with ``textContent``. A
Content-Security-Policy lets only the report's own script run, so even a missed escape could not execute. Big tables
ship their rows as JSON and show one page at a time (the first page is also in the markup, for readers without JS).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

from ..analysis.model import Analysis, Evidence, GroupAnalysis, Rebalance
from ..catalog.schema import BUCKETS
from .picture import AGGREGATE_ABOVE, evidence_ref, plain_text, timeline_svg, xml_text
from .words import (
    CONFIRM_BELOW,
    OTHER_GROUP_HEADERS,
    clock,
    delta_label,
    duration,
    generation_label,
    group_kind_text,
    group_versions_text,
    impact_text,
    in_full,
    member_label,
    other_groups,
    plural,
    short_names,
    zone_sentence,
)

PAGE_ROWS = 100
TIMELINE_WIDTH = 1200
MAX_EVIDENCE = 3  # lines per cell; the JSON report has them all
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}
STYLE = Path(__file__).with_name("html_report.css")
SCRIPT = Path(__file__).with_name("html_report.js")

Cell = str | list[str]
Key = str | int | float | None


@dataclass(frozen=True)
class Column:
    name: str
    css: str = ""  # number (right-aligned), evidence (monospace), nowrap, prose (a column of sentences: kept wide)


@dataclass(frozen=True)
class Row:
    cells: list[Cell]
    keys: list[Key]  # what the column sorts by (None sorts last)
    css: str = ""


def render(analysis: Analysis) -> str:
    """The whole report as one HTML document."""
    script = SCRIPT.read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    with_date = _spans_days(analysis)
    files = short_names(analysis.files)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>rebalance-doctor report {xml_text(clock(analysis.started_at, True))}</title>",
        f"<style>\n{STYLE.read_text(encoding='utf-8')}</style>",
        "</head>",
        "<body>",
        "<h1>rebalance-doctor report</h1>",
        _verdict(analysis),
        _summary(analysis, files),
        _timeline(in_full(analysis)),
    ]
    if not analysis.groups:
        parts.append("<p>No consumer group events found.</p>")
    for index, group in enumerate(in_full(analysis).groups, 1):
        parts.append(_group(group, f"group-{index}", with_date, files))
    parts.append(_other_groups(analysis))
    parts += [f"<footer>rebalance-doctor {xml_text(version('rebalance-doctor'))} · times in UTC</footer>",
              f"<script>{script}</script>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _spans_days(analysis: Analysis) -> bool:
    return bool(analysis.started_at and analysis.ended_at and analysis.started_at.date() != analysis.ended_at.date())


def _verdict(analysis: Analysis) -> str:
    """The first block of the page: what happened, the chain that shows it, the impact and what to do."""
    verdict = analysis.verdict
    if verdict is None:
        return ""
    parts = [f'<p class="verdict-title"><strong class="{xml_text(verdict.severity)}">{xml_text(verdict.severity)}</strong> '
             f"{xml_text(verdict.title)}</p>"]
    if verdict.chain:
        parts.append(f'<p class="chain">{xml_text(" → ".join(verdict.chain))}</p>')
    if verdict.impact["rebalances"]:
        parts.append(f'<p class="impact">impact: {xml_text(impact_text(verdict))}</p>')
    if verdict.actions:
        parts.append("<ul>" + "".join(f"<li>{xml_text(action)}</li>" for action in verdict.actions) + "</ul>")
    return '<section class="verdict">' + "".join(parts) + "</section>"


def _summary(analysis: Analysis, files: dict[str, str]) -> str:
    rebalances = sum(len(g.rebalances) for g in analysis.groups)
    failed = sum(g.failed_rebalances for g in analysis.groups)
    span = f"{clock(analysis.started_at, True)} → {clock(analysis.ended_at, True)}"
    if analysis.started_at and analysis.ended_at:
        span += f" ({duration(int((analysis.ended_at - analysis.started_at).total_seconds() * 1000))})"
    facts = [
        ("span", span),
        ("inputs", " · ".join((plural(len(analysis.files), "file"), plural(len(analysis.nodes), "node"),
                               plural(len(analysis.groups), "group"), plural(analysis.events, "event")))),
        ("rebalances", (f"{rebalances:,} ({failed:,} failed) · total pause "
                       f"{duration(sum(g.total_pause_ms for g in analysis.groups))}")),
    ]
    if analysis.buckets:
        facts.append(("lines", f"{sum(analysis.buckets.values()):,} read · " + " · ".join(
            f"{analysis.buckets.get(b, 0):,} {b.replace('_', ' ')}" for b in BUCKETS)))
    if analysis.versions:
        facts.append(("Kafka versions", ", ".join(analysis.versions) + " (from the wordings)"))
    if analysis.files:
        many = len(analysis.files) > 1
        directory = os.path.commonpath(analysis.files) if many else os.path.dirname(analysis.files[0])
        in_directory = f" (in {directory})" if directory else ""
        facts.append(("files", ", ".join(files[f] for f in analysis.files) + in_directory))
    for zone in analysis.clock_zones:
        facts.append(("clock", zone_sentence(zone, files)))
    if analysis.clock_skew:
        by_reference: dict[str, list[str]] = {}
        for skew in analysis.clock_skew:
            by_reference.setdefault(files.get(skew.reference, skew.reference), []).append(
                f"{files.get(skew.file, skew.file)} {skew.skew_ms:+d} ms")
        facts.append(("clock skew", "; ".join(f"vs {ref}: {', '.join(items)}" for ref, items in by_reference.items())))
    items = "".join(f"<dt>{xml_text(name)}</dt><dd>{xml_text(value)}</dd>" for name, value in facts)
    links = "".join(
        f'<li><a href="#group-{i}">{xml_text(g.group_id)}</a> — {xml_text(_group_facts(g))}</li>'
        for i, g in enumerate(in_full(analysis).groups, 1))
    nav = f'<nav class="groups"><strong>Groups</strong><ul>{links}</ul></nav>' if links else ""
    return f'<dl class="summary">{items}</dl>\n{nav}'


def _group_facts(group: GroupAnalysis) -> str:
    worst = min((f.severity for f in group.findings), key=SEVERITY_ORDER.__getitem__, default=None)
    shared = plural(len(group.membership_changes), "membership change") + ", no rebalance" if group.membership_changes else ""
    facts = [group_kind_text(group) or "", f"coordinator broker {group.coordinator}" if group.coordinator else "",
             shared or plural(len(group.rebalances), "rebalance"), group_versions_text(group) or "",
             f"{group.failed_rebalances} failed" if group.failed_rebalances else "",
             f"pause {duration(group.total_pause_ms)}", f"worst finding: {worst}" if worst else ""]
    return " · ".join(f for f in facts if f)


def _timeline(analysis: Analysis) -> str:
    aggregated = any(len(g.rebalances) > AGGREGATE_ABOVE for g in analysis.groups)
    caption = "Hover a bar or marker for its cause and evidence (file:line)."
    if aggregated:
        caption += (f" Groups with more than {AGGREGATE_ABOVE} rebalances are drawn in bins of a few pixels, "
                    "each with its count.")
    return (f'<h2 id="timeline">Timeline</h2>\n<figure class="timeline">\n{timeline_svg(analysis, TIMELINE_WIDTH)}'
            f"<figcaption>{xml_text(caption)}</figcaption>\n</figure>")


def _group(group: GroupAnalysis, anchor: str, with_date: bool, files: dict[str, str]) -> str:
    parts = [f'<section class="group" id="{anchor}">', f"<h2>group {xml_text(group.group_id)}</h2>",
             f'<p class="facts">{xml_text(_group_facts(group))}</p>']
    if group.probing:
        p = group.probing
        parts.append(f'<p class="facts">{xml_text(plural(p.count, "probing rebalance"))}, median interval '
                     f"{xml_text(duration(p.interval_ms))} (expected {xml_text(duration(p.expected_interval_ms))})</p>")
    if group.findings:
        parts += ["<h3>Findings</h3>", _findings_table(group, f"{anchor}-findings", files)]
    if group.rebalances:
        parts += ["<h3>Generations</h3>", _generations_table(group, f"{anchor}-generations", with_date, files)]
    if group.leader_changes:
        parts += ["<h3>Leader changes</h3>", _leader_table(group, f"{anchor}-leaders", with_date)]
    if group.pause_by_member:
        parts += ["<h3>Pause by member</h3>", _pause_table(group, f"{anchor}-pauses")]
    parts.append("</section>")
    return "\n".join(parts)


def _evidence_lines(evidence: list[Evidence], files: dict[str, str]) -> list[str]:
    lines = [f"{evidence_ref(e, files)}  {e.text}" for e in evidence[:MAX_EVIDENCE]]
    if len(evidence) > MAX_EVIDENCE:
        lines.append(f"… {plural(len(evidence) - MAX_EVIDENCE, 'more line')}")
    return lines


def _epoch_ms(ts: datetime | None) -> int | None:
    return None if ts is None else int(ts.timestamp() * 1000)


def _findings_table(group: GroupAnalysis, table_id: str, files: dict[str, str]) -> str:
    columns = [Column("severity", "nowrap"), Column("finding", "nowrap"), Column("summary", "prose"),
               Column("evidence", "evidence"), Column("recommendation", "prose")]
    rows = [Row([f.severity, f.kind, f.summary, _evidence_lines(f.evidence, files), f.recommendation],
                [SEVERITY_ORDER.get(f.severity, 9), f.kind, f.summary, len(f.evidence), f.recommendation], f.severity)
            for f in group.findings]
    return _table(table_id, "findings", columns, rows)


def _generations_table(group: GroupAnalysis, table_id: str, with_date: bool, files: dict[str, str]) -> str:
    columns = [Column("generation", "nowrap"), Column("start (UTC)", "nowrap"), Column("duration", "number"),
               Column("members", "number"), Column("Δ members"), Column("leader", "nowrap"), Column("cause", "prose"),
               Column("evidence", "evidence"), Column("pause", "number")]
    rows = [_generation_row(r, group, with_date, files) for r in group.rebalances]
    return _table(table_id, "generations", columns, rows)


def _generation_row(rebalance: Rebalance, group: GroupAnalysis, with_date: bool, files: dict[str, str]) -> Row:
    cause = rebalance.cause
    explained = [f"{cause.kind} {cause.confidence:.0%}", cause.summary]
    if cause.confirm and cause.confidence < CONFIRM_BELOW:
        explained.append(f"to confirm: {cause.confirm}")
    first = cause.evidence[0] if cause.evidence else None
    generation = rebalance.to_generation if rebalance.to_generation is not None else rebalance.from_generation
    cells: list[Cell] = [
        generation_label(rebalance), clock(rebalance.started_at, with_date), duration(rebalance.duration_ms),
        "–" if rebalance.member_count is None else str(rebalance.member_count), delta_label(rebalance),
        member_label(rebalance.leader, group), explained,
        [evidence_ref(e, files) for e in cause.evidence], duration(rebalance.pause_ms) if rebalance.pauses else "–"]
    keys: list[Key] = [
        generation, _epoch_ms(rebalance.started_at), rebalance.duration_ms, rebalance.member_count,
        len(rebalance.joined) - len(rebalance.left),
        member_label(rebalance.leader, group) if rebalance.leader else None,
        cause.kind, f"{files.get(first.file, first.file)}:{first.line:012d}" if first else None,
        rebalance.pause_ms if rebalance.pauses else None]
    return Row(cells, keys, "failed" if rebalance.failed else "")


def _leader_table(group: GroupAnalysis, table_id: str, with_date: bool) -> str:
    columns = [Column("generation", "number"), Column("at (UTC)"), Column("previous leader"), Column("new leader"),
               Column("previous leader stayed")]
    rows = [Row([str(c.generation) if c.generation is not None else "–", clock(c.at, with_date),
                 member_label(c.previous, group), member_label(c.leader, group), "yes" if c.previous_stayed else "no"],
                [c.generation, _epoch_ms(c.at), member_label(c.previous, group), member_label(c.leader, group),
                 int(c.previous_stayed)])
            for c in group.leader_changes]
    return _table(table_id, "leader changes", columns, rows)


def _other_groups(analysis: Analysis) -> str:
    """The groups past the detailed ones, one row each (none when every group is detailed)."""
    rows, note = other_groups(analysis)
    if note is None:
        return ""
    numeric = ("rebalances", "failed")
    columns = [Column(name, "number" if name in numeric else "") for name in OTHER_GROUP_HEADERS]
    table = _table("other-groups", "groups", columns,
                   [Row(list(row), [int(cell.replace(",", "")) if name in numeric else cell for name, cell in zip(OTHER_GROUP_HEADERS, row,
                                                                                                            strict=True)])
                    for row in rows])
    return (f'<section class="group" id="other-groups"><h2>Other groups</h2>\n{table}\n'
            f"<p>{xml_text(note)}</p></section>")


def _pause_table(group: GroupAnalysis, table_id: str) -> str:
    pauses = Counter(p.member for r in group.rebalances for p in r.pauses)
    columns = [Column("member"), Column("member id", "evidence"), Column("total pause", "number"),
               Column("rebalances paused", "number")]
    rows = [Row([member_label(member, group), member, duration(ms), str(pauses[member])],
                [member_label(member, group), member, ms, pauses[member]])
            for member, ms in group.pause_by_member.items()]
    return _table(table_id, "pause by member", columns, rows)


def _table(table_id: str, what: str, columns: list[Column], rows: list[Row]) -> str:
    """A table the script sorts, filters and pages; its rows as JSON, the first page also as markup."""
    head = "".join(f'<th{_class(c.css)} aria-sort="none" scope="col"><button type="button" class="sort">'
                   f"{xml_text(c.name)}</button></th>" for c in columns)
    body = "".join(_row_markup(row, columns) for row in rows[:PAGE_ROWS])
    data = [{"c": [_plain(cell) for cell in row.cells], "k": row.keys, "x": row.css} for row in rows]
    # ASCII JSON (any lone surrogate stays an escape) with no "<": nothing in it can close the script element
    payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    hidden = "" if len(rows) > PAGE_ROWS else " hidden"
    count = f"rows 1–{min(len(rows), PAGE_ROWS)} of {len(rows):,}"
    return (f'<div class="data-table" id="{table_id}" data-page="{PAGE_ROWS}">\n'
            f'<div class="controls"><input type="search" class="filter" placeholder="filter {xml_text(what)}…" '
            f'aria-label="filter {xml_text(what)}"><span class="count">{count}</span>'
            f'<button type="button" class="previous"{hidden}>‹ previous</button>'
            f'<button type="button" class="next"{hidden}>next ›</button></div>\n'
            f"<table><thead><tr>{head}</tr></thead>\n<tbody>{body}</tbody></table>\n"
            f'<script type="application/json" class="rows">{payload}</script>\n</div>')


def _plain(cell: Cell) -> Cell:
    return [plain_text(line) for line in cell] if isinstance(cell, list) else plain_text(cell)


def _row_markup(row: Row, columns: list[Column]) -> str:
    cells = []
    for cell, column in zip(row.cells, columns, strict=True):
        content = "".join(f"<div>{xml_text(line)}</div>" for line in cell) if isinstance(cell, list) else xml_text(cell)
        cells.append(f"<td{_class(column.css)}>{content}</td>")
    return f"<tr{_class(row.css)}>{''.join(cells)}</tr>"


def _class(css: str) -> str:
    return f' class="{css}"' if css else ""
