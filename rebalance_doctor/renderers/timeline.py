"""`rebalance-doctor timeline`: the incident at a glance in the terminal, one row per group and per member.

A character column stands for a slice of time. The group row shows rebalances coloured by cause
(✗ where one failed); a member row shows when the member was in the group (─) and when it was
paused (█). Reads the incident model only.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

from rich.console import Console
from rich.text import Text

from ..analysis.model import Analysis, GroupAnalysis, Rebalance
from .words import CAUSE_GLYPHS, CAUSE_STYLE, clock, duration, member_label, visible

LABEL_WIDTH = 28
MIN_COLUMNS = 20
MAX_MEMBERS_SHOWN = 20


def print_timeline(analysis: Analysis, console: Console) -> None:
    start, end = analysis.started_at, analysis.ended_at
    if start is None or end is None or not analysis.groups:
        console.print(Text("No timestamped rebalance events to draw.", style="yellow"))
        return
    columns = max(MIN_COLUMNS, console.width - LABEL_WIDTH - 2)
    plain = console.color_system is None  # without colour every cause needs a mark of its own
    span = max(end - start, timedelta(milliseconds=1))
    slots = [start + span * i / columns for i in range(columns + 1)]
    for group in analysis.groups:
        if not group.rebalances:
            continue
        console.print(Text.assemble(("group ", "bold"), (visible(group.group_id), "bold cyan"),
                                    (f"  {len(group.rebalances)} rebalances · pause {duration(group.total_pause_ms)}", "dim")))
        console.print(Text.assemble(_label("rebalances"), _group_row(group.rebalances, slots, plain)))
        members = list(dict.fromkeys(m for r in group.rebalances for m in r.members))
        for member in members[:MAX_MEMBERS_SHOWN]:
            console.print(Text.assemble(_label(member_label(member, group)), _member_row(member, group, slots)))
        if len(members) > MAX_MEMBERS_SHOWN:
            console.print(Text(f"  … {len(members) - MAX_MEMBERS_SHOWN} more members", style="dim"))
    axis = f"{clock(start, True)}".ljust(columns // 2) + f"{clock(end, True)}".rjust(columns - columns // 2)
    console.print(Text(" " * LABEL_WIDTH + "  " + axis, style="dim"))
    legend = Text(" " * LABEL_WIDTH + "  ")
    for cause in dict.fromkeys(r.cause.kind for g in analysis.groups for r in g.rebalances):  # only the causes drawn
        legend.append(_cause_mark(cause, plain), style=CAUSE_STYLE.get(cause, "white")).append(f" {cause}  ", style="dim")
    legend.append("✗ failed  ─ in group  █ paused", style="dim")
    console.print(legend)


def _label(text: str) -> Text:
    shown = visible(text)
    shown = shown if len(shown) <= LABEL_WIDTH else "…" + shown[-(LABEL_WIDTH - 1):]
    return Text(shown.rjust(LABEL_WIDTH) + "  ", style="bold")


def _overlaps(a_start: datetime, a_end: datetime, b_start: datetime, b_end: datetime) -> bool:
    return a_start <= b_end and b_start <= a_end


def _cause_mark(cause: str, plain: bool) -> str:
    """A block in the cause's colour; without colour, the cause's own letter."""
    return CAUSE_GLYPHS.get(cause, "#") if plain else "█"


def _group_row(rebalances: list[Rebalance], slots: list[datetime], plain: bool) -> Text:
    row = Text()
    for left, right in itertools.pairwise(slots):
        hits = [r for r in rebalances if r.started_at and _overlaps(r.started_at, r.ended_at or r.started_at, left, right)]
        if not hits:
            row.append("·", style="dim")
        elif any(r.failed for r in hits):
            row.append("✗", style="bold magenta")
        else:
            row.append(_cause_mark(hits[0].cause.kind, plain), style=CAUSE_STYLE.get(hits[0].cause.kind, "white"))
    return row


def _member_row(member: str, group: GroupAnalysis, slots: list[datetime]) -> Text:
    stints = group.member_stints(member, slots[0], slots[-1])
    paused = [(p.started_at, p.ended_at) for r in group.rebalances for p in r.pauses
              if p.member == member and p.started_at and p.ended_at]
    row = Text()
    for left, right in itertools.pairwise(slots):
        if any(_overlaps(a, b, left, right) for a, b in paused):
            row.append("█", style="red")
        elif any(_overlaps(a, b, left, right) for a, b in stints):
            row.append("─", style="green")
        else:
            row.append(" ")
    return row
