"""`report --format markdown`: the incident as a post-mortem document, in the Google SRE template's order.

Reads :class:`~rebalance_doctor.analysis.model.Analysis` only. Log text is attacker-influenced, and the document
gets pasted into wikis and trackers that render Markdown and HTML: outside code, every log-derived string is escaped
(so ``<script>`` or ``](javascript:…)`` stays text, ``|`` cannot split a table cell); quoted lines sit in a fence
longer than any backtick run they contain. Control characters are made visible. No current time: the same logs give
the same text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from ..analysis.model import Analysis, Evidence, GroupAnalysis, Rebalance
from ..catalog.schema import BUCKETS, CAUSES
from .words import (
    MAX_DETAILED_REBALANCES,
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
    moves_text,
    other_groups,
    plural,
    short_names,
    visible,
    zone_sentence,
)

TIMELINE_EDGE = 50  # a longer timeline keeps its first and last 50 rows: a storm must not become a 10k-row document
MAX_MEMBER_ROWS = 25  # per group in the pause table, the members that paused longest
MAX_LISTED = 5  # names in one sentence or cell before "and N more"
FINDING_QUOTES = 4
CAUSE_QUOTES = 3

_TEMPLATE_OPENING = re.compile(r"\{[{%#]")
_MARKDOWN_SPECIAL = re.compile(r"[\\`*_\[\]()<>#!|~&${}]")  # braces too: wikis that run Liquid or Jinja see no {{ }}
_LINE_BREAKS = str.maketrans({"\t": "^I", "\n": "^J"})  # visible() keeps them: they break a cell or a paragraph here
_BACKTICK_RUN = re.compile(r"`+")


def escape(value: object) -> str:
    """Log text for a paragraph or a table cell: one line, control characters visible, Markdown and HTML inert."""
    flat = visible(str(value)).translate(_LINE_BREAKS)
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(), flat)


def code(value: object) -> str:
    """An inline code span (outside tables: there GFM splits cells on `|` even inside code)."""
    flat = visible(str(value)).translate(_LINE_BREAKS)
    ticks = "`" * (_longest_backtick_run(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def fenced(value: str) -> str:
    """A quoted log record: its fence is longer than any backtick run inside, so the text cannot close it, and a
    template opening (``{{``, ``{%``) gets a space, since wikis that run Liquid or Jinja evaluate code blocks too."""
    body = _TEMPLATE_OPENING.sub(lambda m: m.group()[0] + " " + m.group()[1], visible(value).rstrip("\n"))
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return f"{fence}text\n{body}\n{fence}"


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)


def render(analysis: Analysis) -> str:
    """The whole document: title, summary, impact, root causes, timeline, evidence, action items, appendix."""
    files = short_names(analysis.files)
    detailed = in_full(analysis)  # the totals are the whole incident's; the details, its first groups'
    blocks = [
        _title(analysis),
        *_verdict(analysis),
        *_summary(analysis),
        *_impact(detailed),
        *_root_causes(detailed),
        *_timeline(detailed),
        *_evidence(detailed, files),
        *_action_items(detailed, files),
        *_appendix(detailed, files),
        *_other_groups(analysis),
    ]
    return "\n\n".join(blocks) + "\n"


def _other_groups(analysis: Analysis) -> list[str]:
    rows, note = other_groups(analysis)
    if note is None:
        return []
    return ["## Other groups", _table(OTHER_GROUP_HEADERS, ([escape(cell) for cell in row] for row in rows), right=(2, 3, 4)),
            escape(note)]


def _title(analysis: Analysis) -> str:
    if not analysis.groups:
        return "# Incident report: no consumer group activity"
    return "# Incident report: " + _listing([escape(g.group_id) for g in analysis.groups], "group")


def _listing(items: list[str], noun: str, limit: int = MAX_LISTED, separator: str = ", ") -> str:
    """`a, b, c and 4 more groups`: long lists shortened for a sentence or a cell."""
    if len(items) <= limit:
        return separator.join(items)
    return separator.join(items[:limit]) + f" and {plural(len(items) - limit, 'more ' + noun)}"


def _span(analysis: Analysis) -> str:
    span = f"{clock(analysis.started_at, True)} → {clock(analysis.ended_at, True)}"
    if analysis.started_at and analysis.ended_at:
        span += f" ({duration(int((analysis.ended_at - analysis.started_at).total_seconds() * 1000))})"
    return span


def _log_directory(analysis: Analysis) -> str | None:
    """The directory evidence file names are relative to (see report.short_names)."""
    if len(analysis.files) > 1:
        return os.path.commonpath(analysis.files)
    return (os.path.dirname(analysis.files[0]) or None) if analysis.files else None


def _verdict(analysis: Analysis) -> list[str]:
    """The first section: what happened, the chain that shows it, the impact and what to do."""
    verdict = analysis.verdict
    if verdict is None:
        return []
    lines = [f"**{escape(verdict.severity)}: {escape(verdict.title)}.**"]
    if verdict.chain:
        lines[0] += " " + escape(" → ".join(verdict.chain)) + "."
    if verdict.impact["rebalances"]:
        lines.append(f"Impact: {escape(impact_text(verdict))}.")
    lines += [f"- {escape(action)}." for action in verdict.actions]
    return ["## Verdict", "\n\n".join(lines[:2]) + ("\n\n" + "\n".join(lines[2:]) if lines[2:] else "")]


def _summary(analysis: Analysis) -> list[str]:
    rebalances = sum(len(g.rebalances) for g in analysis.groups)
    failed = sum(g.failed_rebalances for g in analysis.groups)
    pause = sum(g.total_pause_ms for g in analysis.groups)
    directory = _log_directory(analysis)
    logs = f"{plural(len(analysis.files), 'file')} from {plural(len(analysis.nodes), 'node')}"
    if analysis.nodes:
        logs += ": " + _listing([escape(n) for n in analysis.nodes], "node", limit=10)
    if directory:
        logs += f" (under {code(directory)})"
    items = [
        f"- **Time span (UTC):** {_span(analysis)}",
        f"- **Logs:** {logs}",
        f"- **Groups ({len(analysis.groups)}):** " + (_listing([escape(g.group_id) for g in analysis.groups], "group")
                                                      if analysis.groups else "none"),
        f"- **Rebalances:** {rebalances:,}, {plural(failed, 'failed rebalance')}, total pause {duration(pause)}",
        *(f"- **Clock:** {escape(zone_sentence(zone, short_names(analysis.files)))}" for zone in analysis.clock_zones),
        _top_finding(analysis),
    ]
    return ["## Summary", "\n".join(items)]


def _top_finding(analysis: Analysis) -> str:
    """The model ranks groups and findings by severity: the first finding is the one to read first."""
    for group in analysis.groups:
        if group.findings:
            finding = group.findings[0]
            return (f"- **Top finding ({finding.severity}):** {escape(finding.kind)} in group "
                    f"{escape(group.group_id)}, {escape(finding.summary)}.")
    return "- **Top finding:** none, the logs show no rebalance problem."


def _table(headers: Iterable[str], rows: Iterable[Iterable[str]], right: Iterable[int] = ()) -> str:
    """A GFM table; cells are already escaped (or generated by this module)."""
    headers, right = list(headers), set(right)
    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _impact(analysis: Analysis) -> list[str]:
    blocks = ["## Impact"]
    if not analysis.groups:
        return [*blocks, "No consumer group rebalanced in these logs."]
    blocks.append(_table(
        ("group", "rebalances", "failed", "total pause", "longest rebalance"),
        ([escape(g.group_id), f"{len(g.rebalances):,}", f"{g.failed_rebalances:,}", duration(g.total_pause_ms),
          duration(max((r.duration_ms for r in g.rebalances if r.duration_ms is not None), default=None))]
         for g in analysis.groups),
        right=(1, 2, 3, 4)))
    blocks += [f"Group {escape(g.group_id)}: {escape(moved)}." for g in analysis.groups if (moved := moves_text(g))]
    rows = [row for g in analysis.groups for row in _pause_rows(g)]
    if rows:
        blocks += ["Pause by member (time each member stopped processing, longest first):",
                   _table(("group", "member", "node", "total pause"), rows, right=(3,))]
    else:
        blocks.append("The logs show no member pause (no client log of a paused member).")
    return blocks


def _pause_rows(group: GroupAnalysis) -> list[list[str]]:
    members = list(group.pause_by_member.items())
    rows = [[escape(group.group_id), escape(member), escape(group.member_nodes.get(member, "–")), duration(ms)]
            for member, ms in members[:MAX_MEMBER_ROWS]]
    rest = members[MAX_MEMBER_ROWS:]
    if rest:
        rows.append([escape(group.group_id), f"*… and {plural(len(rest), 'more member')}*", "–",
                     duration(sum(ms for _, ms in rest))])
    return rows


def _root_causes(analysis: Analysis) -> list[str]:
    blocks = ["## Root causes and trigger"]
    if not any(g.rebalances for g in analysis.groups):
        return [*blocks, "No rebalance to explain."]
    for group in analysis.groups:
        if not group.rebalances:
            continue
        blocks += [f"### {escape(group.group_id)}", _group_facts(group)]
        by_cause: dict[str, list[Rebalance]] = {}
        for rebalance in group.rebalances:
            by_cause.setdefault(rebalance.cause.kind, []).append(rebalance)
        blocks.append(_table(
            ("cause", "rebalances", "confidence", "started by"),
            ([f"**{escape(kind)}**: {escape(CAUSES.get(kind, ''))}", f"{len(hits):,}", _confidence(hits),
              _starters(hits, group)] for kind, hits in by_cause.items()),
            right=(1,)))
        confirm = _to_confirm(by_cause)
        if confirm:
            blocks += ["What the logs at hand do not show, and which log would confirm it:", confirm]
    return blocks


def _group_facts(group: GroupAnalysis) -> str:
    kind, versions = group_kind_text(group), group_versions_text(group)
    facts = [escape(kind) if kind else None,
             f"coordinator broker {escape(group.coordinator)}" if group.coordinator else None,
             escape(versions) if versions else None,
             plural(len(group.membership_changes), "membership change") + " without a rebalance" if group.membership_changes else None,
             f"generations {group.generations[0]} → {group.generations[-1]}" if group.generations else None,
             plural(len(group.leader_changes), "leader change") if group.leader_changes else None]
    line = "Group facts: " + " · ".join(f for f in facts if f) + "."
    if group.probing:
        p = group.probing
        line += (f" Streams probing: {plural(p.count, 'probing rebalance')}, median interval {duration(p.interval_ms)} "
                 f"(expected {duration(p.expected_interval_ms)}).")
    return line


def _confidence(rebalances: list[Rebalance]) -> str:
    low = min(r.cause.confidence for r in rebalances)
    high = max(r.cause.confidence for r in rebalances)
    return f"{high:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low:.0%}–{high:.0%}"


def _starters(rebalances: list[Rebalance], group: GroupAnalysis) -> str:
    """Who started these rebalances, each with the generations they started (unknown when the logs do not say)."""
    by_member: dict[str | None, list[str]] = {}
    for rebalance in rebalances:
        by_member.setdefault(rebalance.cause.member, []).append(generation_label(rebalance))
    parts = [f"{escape(member_label(member, group)) if member else 'unknown'} at "
             + _listing([escape(g) for g in generations], "rebalance", limit=3)
             for member, generations in by_member.items()]
    return _listing(parts, "member", separator="; ")


def _to_confirm(by_cause: dict[str, list[Rebalance]]) -> str:
    items: dict[tuple[str, str], list[str]] = {}
    for kind, rebalances in by_cause.items():
        for rebalance in rebalances:
            if rebalance.cause.confirm:
                items.setdefault((kind, rebalance.cause.confirm), []).append(generation_label(rebalance))
    return "\n".join(f"- **{escape(kind)}** ({_listing([escape(g) for g in generations], 'rebalance', limit=3)}): "
                     f"{escape(text)}" for (kind, text), generations in items.items())


def _timeline(analysis: Analysis) -> list[str]:
    blocks = ["## Timeline (UTC)"]
    if not any(g.rebalances for g in analysis.groups):
        return [*blocks, "No rebalance."]
    start, end = analysis.started_at, analysis.ended_at
    with_date = bool(start and end and start.date() != end.date())
    day = f" on {start:%Y-%m-%d}" if start and not with_date else ""
    blocks.append(f"One row per rebalance, times{day} in UTC; ✗ marks a failed rebalance (it never reached a stable "
                  "generation).")
    for group in analysis.groups:
        if not group.rebalances:
            continue
        blocks.append(f"### {escape(group.group_id)}")
        rebalances = group.rebalances
        if len(rebalances) <= 2 * TIMELINE_EDGE:
            blocks.append(_timeline_table(rebalances, group, with_date))
            continue
        hidden = rebalances[TIMELINE_EDGE:-TIMELINE_EDGE]
        note = (f"*… {plural(len(hidden), 'more rebalance')} between {clock(hidden[0].started_at, with_date)} and "
                f"{clock(hidden[-1].started_at, with_date)} are left out here (every one is in `--format json`) …*")
        blocks += [_timeline_table(rebalances[:TIMELINE_EDGE], group, with_date), note,
                   _timeline_table(rebalances[-TIMELINE_EDGE:], group, with_date)]
    return blocks


def _timeline_table(rebalances: list[Rebalance], group: GroupAnalysis, with_date: bool) -> str:
    return _table(
        ("start", "generation", "duration", "cause", "started by", "members", "Δ members", "leader"),
        ([clock(r.started_at, with_date),
          escape(generation_label(r)),
          duration(r.duration_ms),
          f"{escape(r.cause.kind)} {r.cause.confidence:.0%}",
          escape(member_label(r.cause.member, group)),
          str(r.member_count) if r.member_count is not None else "–",
          escape(delta_label(r)) or "–",
          escape(member_label(r.leader, group))] for r in rebalances),
        right=(2, 5))


def _evidence(analysis: Analysis, files: dict[str, str]) -> list[str]:
    blocks = ["## Evidence"]
    directory = _log_directory(analysis)
    if directory:
        blocks.append(f"Log lines as `file:line`, file names relative to {code(directory)}.")
    quoted: set[tuple[str, int]] = set()  # a line cited twice is quoted once
    for group in analysis.groups:
        if not (group.findings or group.rebalances):
            continue
        blocks.append(f"### {escape(group.group_id)}")
        for finding in group.findings:
            blocks.append(f"**Finding {escape(finding.kind)}** ({finding.severity}): {escape(finding.summary)}")
            blocks += _quotes(finding.evidence[:FINDING_QUOTES], files, quoted)
        shown = group.rebalances[:MAX_DETAILED_REBALANCES]
        for rebalance in shown:
            cause = rebalance.cause
            blocks.append(f"**Rebalance {escape(generation_label(rebalance))}** {escape(cause.kind)} "
                          f"({cause.confidence:.0%}): {escape(cause.summary)}")
            blocks += _quotes(cause.evidence[:CAUSE_QUOTES], files, quoted)
        if len(group.rebalances) > len(shown):
            blocks.append(f"*… the evidence of {plural(len(group.rebalances) - len(shown), 'more rebalance')} is in "
                          "`--format json`.*")
    return blocks


def _quotes(evidence: list[Evidence], files: dict[str, str], quoted: set[tuple[str, int]]) -> list[str]:
    blocks = []
    for item in evidence:
        where = code(f"{files.get(item.file, item.file)}:{item.line}")
        if (item.file, item.line) in quoted:
            blocks.append(f"{where} (quoted above)")
            continue
        quoted.add((item.file, item.line))
        context = [escape(item.node) if item.node else None, clock(item.ts, True) if item.ts else None]
        blocks.append(" · ".join([where] + [c for c in context if c]) + "\n" + fenced(item.text))
    return blocks


def _action_items(analysis: Analysis, files: dict[str, str]) -> list[str]:
    items = []
    for group in analysis.groups:
        for finding in group.findings:
            refs = ", ".join(code(f"{files.get(e.file, e.file)}:{e.line}") for e in finding.evidence[:FINDING_QUOTES])
            items.append(f"- [ ] **{escape(finding.kind)}** ({finding.severity}, group {escape(group.group_id)}): "
                         f"{escape(finding.recommendation)}\\\n"  # a hard line break inside the item
                         f"  Why: {escape(finding.summary)}" + (f" ({refs})" if refs else ""))
    return ["## Recommendations / action items", "\n".join(items) if items else "No findings: nothing to follow up."]


def _appendix(analysis: Analysis, files: dict[str, str]) -> list[str]:
    blocks = ["## Appendix: line accounting and clock skew"]
    if analysis.buckets:
        blocks.append(_table(
            ["lines read"] + [b.replace("_", " ") for b in BUCKETS],
            [[f"{sum(analysis.buckets.values()):,}"] + [f"{analysis.buckets.get(b, 0):,}" for b in BUCKETS]],
            right=range(len(BUCKETS) + 1)))
    facts = plural(analysis.events, "event")
    if analysis.versions:
        facts += " · Kafka versions (from the wordings): " + ", ".join(escape(v) for v in analysis.versions)
    blocks.append(facts + ".")
    if analysis.clock_skew:
        blocks += ["Clock skew (positive: the file's clock runs ahead of the reference):", _table(
            ("file", "reference", "skew", "samples"),
            ([escape(files.get(s.file, s.file)), escape(files.get(s.reference, s.reference)), f"{s.skew_ms:+d} ms",
              str(s.samples)] for s in analysis.clock_skew),
            right=(2, 3))]
    else:
        blocks.append("Clock skew: not measurable (no broker and client lines of the same rebalance).")
    return blocks
