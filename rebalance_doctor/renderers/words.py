"""Words and colours every renderer shares: labels (durations, generations, members, files), log text made
inert (control characters shown, never acted on), and one palette of cause colours for the terminal
and the pictures."""

from __future__ import annotations

import os
import zlib
from dataclasses import replace
from datetime import datetime

from ..analysis.model import Analysis, ClockZone, GroupAnalysis, Rebalance, Verdict, duration_text, member_tail

# C0 controls as ^X, DEL as ^?, and the C1 controls (U+0080–U+009F: U+009B is an 8-bit CSI) as <U+009B>
CONTROL_SHOWN_AS = {c: f"^{chr(c + 64)}" for c in range(32) if c not in (9, 10)} | {127: "^?"} | {c: f"<U+{c:04X}>" for c in range(0x80, 0xA0)}
# Characters that reorder or hide text (bidirectional overrides and isolates, zero-width characters, line and
# paragraph separators) shown by code point: a group or member id must read as what it is (Trojan Source).
CONTROL_SHOWN_AS |= {c: f"<U+{c:04X}>" for c in (*range(0x200B, 0x2010), *range(0x2028, 0x202F), *range(0x2060, 0x2070), 0xFEFF)}
NODE_STYLES = ("cyan", "magenta", "green", "yellow", "blue", "bright_cyan", "bright_magenta", "bright_green")
SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
# One palette of causes (schema.CAUSES): the terminal's style, the pictures' colour, and the glyph that stands
# for the cause where there is no colour. Each cause has its own of each; one missing here is drawn in
# FALLBACK_COLOUR.
CAUSE_PALETTE = {
    "heartbeat_expiry": ("red", "#d62728", "H"), "poll_timeout": ("bright_red", "#ff7f0e", "P"),
    "failed_rebalance_retry": ("magenta", "#6a3d9a", "R"), "unknown": ("dim", "#9e9e9e", "?"),
    "static_member_fencing": ("bright_magenta", "#c51b7d", "S"), "coordinator_change": ("blue", "#1f77b4", "C"),
    "probing_rebalance": ("yellow", "#e6ab02", "W"), "cooperative_followup": ("cyan", "#17becf", "F"),
    "member_join": ("green", "#2ca02c", "J"), "member_leave": ("bright_yellow", "#bcbd22", "L"),
    "version_probing": ("bright_blue", "#a6761d", "V"), "host_endpoint_change": ("bright_cyan", "#7570b3", "E"),
    "shutdown_requested": ("bright_black", "#8c564b", "D"), "enforced": ("white", "#e377c2", "A"),
    "metadata_change": ("bright_green", "#9467bd", "M"), "assignment_timeout": ("dark_orange", "#d95f02", "T"),
    "topology_change": ("dark_cyan", "#1b9e77", "O"), "group_conversion": ("purple", "#66a61e", "G"),
}
CAUSE_STYLE = {cause: style for cause, (style, _, _) in CAUSE_PALETTE.items()}
CAUSE_COLOURS = {cause: colour for cause, (_, colour, _) in CAUSE_PALETTE.items()}
CAUSE_GLYPHS = {cause: glyph for cause, (_, _, glyph) in CAUSE_PALETTE.items()}
FALLBACK_COLOUR = "#9e9e9e"
MAX_DETAILED_REBALANCES = 25  # per group: beyond that the table stands for the rest
CONFIRM_BELOW = 0.9  # a cause this sure needs no "to confirm" hint in the terminal (JSON always has it)


def visible(text: str | None) -> str:
    """Control characters (terminal escapes) shown as ``^[`` instead of acting on the terminal."""
    return (text or "").translate(CONTROL_SHOWN_AS)


def iso_utc(ts: datetime | None) -> str | None:
    """ISO-8601 in UTC with a ``Z``; milliseconds unless the log gave finer precision."""
    if ts is None:
        return None
    spec = "milliseconds" if ts.microsecond % 1000 == 0 else "microseconds"
    return ts.isoformat(timespec=spec).replace("+00:00", "Z")


def node_style(node: str | None) -> str:
    return NODE_STYLES[zlib.crc32((node or "").encode()) % len(NODE_STYLES)]


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def duration(ms: int | None) -> str:
    return "–" if ms is None else duration_text(ms)


def clock(ts: datetime | None, with_date: bool = False) -> str:
    if ts is None:
        return "–"
    return ts.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z" if with_date else ts.strftime("%H:%M:%S.%f")[:-3]


# How each rebalance protocol reads next to its group: the KIPs that named the 4.x ones.
PROTOCOL_WORDS = {"eager": "eager protocol", "cooperative": "cooperative protocol", "consumer": "consumer protocol (KIP-848)",
                  "streams": "streams protocol (KIP-1071)", "share": "share protocol (KIP-932)"}


def group_kind_text(group: GroupAnalysis) -> str | None:
    """``streams group · streams protocol (KIP-1071)``; a group converted online names both of its types."""
    kind = f"{' → '.join(group.group_types)} group" if group.group_types else None
    protocol = PROTOCOL_WORDS.get(group.protocol or "", group.protocol)
    return " · ".join(part for part in (kind, protocol) if part) or None


def group_versions_text(group: GroupAnalysis) -> str | None:
    """The Kafka versions the group's own lines prove, or None."""
    return f"Kafka {', '.join(group.versions)} (from its wordings)" if group.versions else None


def member_label(member: str | None, group: GroupAnalysis) -> str:
    """A member as a reader recognises it: the node that logged it, and the tail of its id."""
    if not member:
        return "–"
    return member_on_node(member, group.member_nodes.get(member))


def member_on_node(member: str, node: str | None) -> str:
    """``orders-app-0 (…5e8f0d2b7a64)``: the node, and the tail of the member id."""
    tail = member_tail(member)
    return f"{node} ({tail})" if node else tail


def short_names(files: list[str]) -> dict[str, str]:
    """Files without the directory they all share (`sample_logs/x/broker-1/server.log` → `broker-1/server.log`)."""

    if len(files) < 2:
        return {f: os.path.basename(f) for f in files}
    common = os.path.commonpath(files)
    return {f: os.path.relpath(f, common) for f in files}


def generation_label(rebalance: Rebalance) -> str:
    start = "?" if rebalance.from_generation is None else str(rebalance.from_generation)
    # no target generation: failed, or the logs end before the group settled
    end = str(rebalance.to_generation) if rebalance.to_generation is not None else "✗ failed" if rebalance.failed else "?"
    return f"{start} → {end}" + (" ✗" if rebalance.failed and rebalance.to_generation is not None else "")


def delta_label(rebalance: Rebalance) -> str:
    parts = [f"+{len(rebalance.joined)}"] if rebalance.joined else []
    parts += [f"-1 ({d.how})" for d in rebalance.left]
    return " ".join(parts)


def zone_sentence(zone: ClockZone, names: dict[str, str]) -> str:
    """``app-2.log read as UTC+02:00: 14 shared events agree`` (``names``: the files' short names)."""
    return f"{names.get(zone.file, zone.file)} read as {zone.label}: {plural(zone.agreeing, 'shared event')} agree{'s' if zone.agreeing == 1 else ''}"


def impact_text(verdict: Verdict) -> str:
    """``13 rebalances in 2 groups · 0 failed · 5.4 s of pause``."""
    groups = len(verdict.groups)
    where = f" in {plural(groups, 'group')}" if groups > 1 else ""
    impact = verdict.impact
    return f"{plural(impact['rebalances'], 'rebalance')}{where} · {impact['failed']:,} failed · {duration(impact['pause_ms'])} of pause"


def moves_text(group: GroupAnalysis) -> str | None:
    """``7 partitions moved in 2 rebalances, each unowned 1.8–2.4 s; their owners kept processing the rest``."""
    moves = [m for r in group.rebalances for m in r.moves]
    if not moves:
        return None
    rounds = sum(1 for r in group.rebalances if r.moves)
    low, high = min(m.unowned_ms for m in moves), max(m.unowned_ms for m in moves)
    spread = duration(low) if low == high else f"{duration(low)}–{duration(high)}"
    return (f"{plural(len(moves), 'partition')} moved in {plural(rounds, 'rebalance')}, each unowned {spread}; "
            "their owners kept processing the rest")


# Past this many groups a report shows the first ones (ranked worst first) in full and the others as one table
# row each, up to MAX_GROUPS_LISTED: a page detailing every group of a whole platform is one no browser opens.
# The JSON has them all.
MAX_GROUPS_IN_FULL = 50
MAX_GROUPS_LISTED = 1000
OTHER_GROUP_HEADERS = ("group", "type", "rebalances", "failed", "pause", "worst finding")


def in_full(analysis: Analysis) -> Analysis:
    """The analysis as a report details it: its first MAX_GROUPS_IN_FULL groups (the totals stay the whole's)."""
    return analysis if len(analysis.groups) <= MAX_GROUPS_IN_FULL else replace(analysis, groups=analysis.groups[:MAX_GROUPS_IN_FULL])


def other_groups(analysis: Analysis) -> tuple[list[tuple[str, ...]], str | None]:
    """The groups past the detailed ones as table rows (group, type, rebalances, failed, pause, worst finding),
    and a closing note: how many are not listed, and how to see one group. Empty when every group is detailed."""
    rest = analysis.groups[MAX_GROUPS_IN_FULL:]
    if not rest:
        return [], None
    rows = [(group.group_id, "/".join(group.group_types) or "–", f"{len(group.rebalances):,}", f"{group.failed_rebalances:,}",
             duration(group.total_pause_ms), f"{group.findings[0].severity} {group.findings[0].kind}" if group.findings else "–")
            for group in rest[:MAX_GROUPS_LISTED]]
    unlisted = len(rest) - len(rows)
    note = (f"{plural(len(rest), 'other group')} besides the {MAX_GROUPS_IN_FULL} detailed above"
            + (f" ({unlisted:,} not listed here)" if unlisted else "")
            + ": `--group NAME` reports one in full, `--format json` has them all.")
    return rows, note

