"""Renderers of the incident model: the terminal report (rich) and the JSON document.

Both read :class:`~rebalance_doctor.analysis.model.Analysis`; neither derives anything. Log text
reaches the terminal as rich Text or as painted lines (never markup), with control characters made
visible.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..analysis.model import Analysis, Evidence, GroupAnalysis, Verdict
from ..catalog.schema import BUCKETS
from .text_tables import Palette, ruled_table, write_lines
from .words import (
    CAUSE_STYLE,
    CONFIRM_BELOW,
    MAX_DETAILED_REBALANCES,
    OTHER_GROUP_HEADERS,
    SEVERITY_STYLE,
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


def print_report(analysis: Analysis, console: Console) -> None:
    if analysis.verdict is not None:
        console.print(_verdict(analysis.verdict))
    console.print(_summary(analysis))
    if not analysis.groups:
        console.print(Text("No consumer group events found.", style="yellow"))
    palette = Palette(console)
    for group in in_full(analysis).groups:
        console.print()
        console.print(_group_header(group))
        if group.rebalances:
            write_lines(_generation_table(group, console.width, palette), console)
        console.print(_group_details(group))
    rows, note = other_groups(analysis)
    if note:
        console.print()
        write_lines(ruled_table([(h, "right" if h in ("rebalances", "failed", "pause") else "left") for h in OTHER_GROUP_HEADERS],
                                [[(visible(cell), "") for cell in row] for row in rows], console.width,
                                [True, False, False, False, False, True], palette), console)
        console.print(Text(note, style="dim"))


LIVE_REBALANCES = 5  # the last rebalances of each group a live summary shows


def print_live_summary(analysis: Analysis, console: Console) -> None:
    """`report --follow`: the verdict, the totals and each group's last rebalances, one line each; a rebalance
    still under way is shown open."""
    if analysis.verdict is not None:
        console.print(_verdict(analysis.verdict))
    console.print(_summary(analysis))
    for group in analysis.groups:
        for rebalance in group.rebalances[-LIVE_REBALANCES:]:
            state = ("failed" if rebalance.failed else f"open since {clock(rebalance.started_at)}" if rebalance.ended_at is None
                     else duration(rebalance.duration_ms))
            generations = f"gen {rebalance.from_generation if rebalance.from_generation is not None else '?'} → {rebalance.to_generation or '?'}"
            console.print(Text(f"{visible(group.group_id)}  {generations}  {rebalance.cause.kind}  {state}"))


def _verdict(verdict: Verdict) -> Group:
    """At most five lines, first: what happened, the chain that shows it, the impact, what to do."""
    lines = [Text.assemble(("verdict ", "bold"), (verdict.severity, SEVERITY_STYLE.get(verdict.severity, "bold")), " · ",
                           (visible(verdict.title), "bold"))]
    if verdict.chain:
        lines.append(Text("  " + visible(" → ".join(verdict.chain))))
    if verdict.impact["rebalances"]:
        lines.append(Text("  impact: " + impact_text(verdict), style="dim"))
    lines += [Text.assemble(("  → ", "bold"), visible(action)) for action in verdict.actions]
    for line in lines:  # read first, so folded to the screen rather than run off it
        line.no_wrap, line.overflow = False, "fold"
    return Group(*lines, Text(""))


def _summary(analysis: Analysis) -> Panel:
    rebalances = sum(len(g.rebalances) for g in analysis.groups)
    failed = sum(g.failed_rebalances for g in analysis.groups)
    pause = sum(g.total_pause_ms for g in analysis.groups)
    span = f"{clock(analysis.started_at, True)} → {clock(analysis.ended_at, True)}"
    if analysis.started_at and analysis.ended_at:
        span += f" ({duration(int((analysis.ended_at - analysis.started_at).total_seconds() * 1000))})"
    lines = [
        Text(span),
        Text(" · ".join((plural(len(analysis.files), "file"), plural(len(analysis.nodes), "node"),
                         plural(len(analysis.groups), "group"), plural(analysis.events, "event")))),
        Text.assemble(("rebalances ", "bold"), str(rebalances), ("  failed ", "bold"), str(failed),
                      ("  total pause ", "bold"), duration(pause)),
    ]
    if analysis.buckets:
        total = sum(analysis.buckets.values())
        lines.append(Text(f"lines: {total:,} read · " + " · ".join(
            f"{analysis.buckets.get(b, 0):,} {b.replace('_', ' ')}" for b in BUCKETS), style="dim"))
    if analysis.versions:
        lines.append(Text("Kafka versions (from the wordings): " + ", ".join(analysis.versions), style="dim"))
    short = short_names(analysis.files)
    for zone in analysis.clock_zones:  # the tool changed how it reads a file: said where it cannot be missed
        lines.append(Text("clock: " + visible(zone_sentence(zone, short)), style="yellow"))
    skews = [s for s in analysis.clock_skew if abs(s.skew_ms) >= 50]
    if skews:
        lines.append(Text("clock skew vs " + visible(short.get(skews[0].reference, skews[0].reference)) + ": " + ", ".join(
            f"{visible(short.get(s.file, s.file))} {s.skew_ms:+d} ms" for s in skews), style="dim"))
    for line in lines:  # a narrow terminal folds the summary's lines instead of cutting them at the panel's edge
        line.no_wrap, line.overflow = False, "fold"
    return Panel(Group(*lines), title="rebalance-doctor report", title_align="left", expand=False)


def _group_header(group: GroupAnalysis) -> Text:
    header = Text.assemble(("group ", "bold"), (visible(group.group_id), "bold cyan"))
    shared = plural(len(group.membership_changes), "membership change") + ", no rebalance" if group.membership_changes else None
    facts = [group_kind_text(group), f"coordinator broker {group.coordinator}" if group.coordinator else None,
             shared or plural(len(group.rebalances), "rebalance"),
             f"{group.failed_rebalances} failed" if group.failed_rebalances else None,
             f"pause {duration(group.total_pause_ms)}"]
    header.append("  " + " · ".join(f for f in facts if f), style="dim")
    return header


def _group_details(group: GroupAnalysis) -> Group:
    """What follows a group's generation table, rendered in one print (rich's per-call overhead is most of the time)."""
    out: list[RenderableType] = []
    versions = group_versions_text(group)
    if versions:
        out.append(Text(f"  {versions}", style="dim"))
    if any(f.kind == "unstable_leader" for f in group.findings):
        for change in group.leader_changes:
            stayed = " (it stayed in the group)" if change.previous_stayed else ""
            out.append(Text(f"  leader change at generation {change.generation}: {member_label(change.previous, group)}{stayed} → "
                               f"{member_label(change.leader, group)}", style="yellow"))
    elif group.leader_changes:
        out.append(Text(f"  leader changed {plural(len(group.leader_changes), 'time')}, each time after the previous leader "
                           "left or failed", style="dim"))
    if group.probing:
        p = group.probing
        out.append(Text(f"  probing: {p.count} probing rebalances, median interval {duration(p.interval_ms)} "
                           f"(expected {duration(p.expected_interval_ms)})", style="yellow"))
    moved = moves_text(group)
    if moved:
        out.append(Text(f"  {moved}", style="dim"))
    printed: set[tuple[str, int]] = set()  # each log line once per group; later mentions point back to it
    out += _causes(group, printed)
    for finding in group.findings:
        out.append(Text.assemble(("  ● ", SEVERITY_STYLE[finding.severity]), (finding.severity, SEVERITY_STYLE[finding.severity]),
                                    " ", (finding.kind, "bold"), ": ", visible(finding.summary)))
        out += _evidence_lines(finding.evidence[:4], printed)
        out.append(Text("    → " + finding.recommendation, style="green"))
    if group.pause_by_member:
        table = Table(title="pause by member", title_justify="left", header_style="bold", pad_edge=False)
        table.add_column("member")
        table.add_column("total pause", justify="right")
        for member, ms in group.pause_by_member.items():
            table.add_row(Text(visible(member_label(member, group))), duration(ms))
        out.append(table)
    return Group(*out)


GENERATION_COLUMNS = (("generation", "left"), ("start (UTC)", "left"), ("duration", "right"), ("members", "right"),
                      ("Δ members", "left"), ("leader", "left"), ("cause", "left"), ("pause", "right"))
GENERATION_FOLDABLE = [False, False, False, False, True, True, True, False]  # narrow screens fold the member columns and the cause


def _generation_table(group: GroupAnalysis, width: int, palette: Palette) -> list[str]:
    rows = [
        [
            (generation_label(rebalance), "bold magenta" if rebalance.failed else ""),
            (clock(rebalance.started_at), ""),
            (duration(rebalance.duration_ms), ""),
            (str(rebalance.member_count) if rebalance.member_count is not None else "–", ""),
            (visible(delta_label(rebalance)), ""),
            (visible(member_label(rebalance.leader, group)), ""),
            (f"{rebalance.cause.kind} {rebalance.cause.confidence:.0%}", CAUSE_STYLE.get(rebalance.cause.kind, "")),
            (duration(rebalance.pause_ms) if rebalance.pauses else "–", ""),
        ]
        for rebalance in group.rebalances
    ]
    return ruled_table(GENERATION_COLUMNS, rows, width, GENERATION_FOLDABLE, palette)


def _evidence_lines(evidence: list[Evidence], printed: set[tuple[str, int]]) -> list[Text]:
    """Evidence lines with their text the first time, as ``file:line (above)`` after that."""
    lines = []
    for item in evidence:
        where = (item.file, item.line)
        if where in printed:
            lines.append(Text(f"      {visible(item.file)}:{item.line} (above)", style="dim"))
        else:
            printed.add(where)
            lines.append(evidence_line(item, "      "))
    return lines


def _causes(group: GroupAnalysis, printed: set[tuple[str, int]]) -> list[RenderableType]:
    """Why each rebalance happened, with its evidence (the first rebalances of a storm stand for the rest)."""
    out: list[RenderableType] = []
    shown = group.rebalances[:MAX_DETAILED_REBALANCES]
    for rebalance in shown:
        cause = rebalance.cause
        out.append(Text.assemble(("  ", ""), (generation_label(rebalance), "bold"), ": ",
                                    (cause.kind, CAUSE_STYLE.get(cause.kind, "bold")), f" ({cause.confidence:.0%}) — ",
                                    visible(cause.summary)))
        out += _evidence_lines(cause.evidence[:3], printed)
        if cause.confirm and cause.confidence < CONFIRM_BELOW:
            out.append(Text(f"      to confirm: {cause.confirm}", style="dim"))
    if len(group.rebalances) > len(shown):
        out.append(Text(f"  … and {len(group.rebalances) - len(shown)} more rebalances (see --format json)", style="dim"))
    return out


def evidence_line(evidence: Evidence, indent: str) -> Text:
    return Text.assemble(indent, (f"{visible(evidence.file)}:{evidence.line}", "dim"), " ", visible(evidence.text))
