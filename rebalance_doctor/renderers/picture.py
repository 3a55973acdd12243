"""The incident timeline as a picture: one lane of rebalances per group, one lane per member, event markers.

Both outputs draw the same geometry: :func:`_layout` turns the model into boxes, labels, rules and marks, then
:func:`timeline_svg` writes them as SVG (with a ``<title>`` hover text per shape) and :func:`timeline_png` draws them
with matplotlib (no browser at run time). A lane with more than :data:`AGGREGATE_ABOVE` items is aggregated (one bar
per few pixels, with a count) so that a 10k-rebalance storm stays a few thousand elements.
"""

from __future__ import annotations

import html
import io
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ..analysis.model import Analysis, Evidence, GroupAnalysis, MemberPause, Rebalance
from .words import (
    CAUSE_COLOURS,
    FALLBACK_COLOUR,
    clock,
    duration,
    generation_label,
    member_label,
    plural,
    short_names,
    visible,
)

FAILED_COLOUR = "#b00020"
IN_GROUP_COLOUR = "#cfe3f5"
PAUSE_COLOUR = "#f28e2b"
GRID_COLOUR = "#e4e4e4"
TEXT_COLOUR = "#222222"
DIM_COLOUR = "#666666"
# Event markers: (label in the legend, colour, shape)
MARKERS = {
    "heartbeat_expiry": ("heartbeat expiry", "#d62728", "triangle"),
    "poll_timeout": ("poll timeout", "#ff7f0e", "triangle"),
    "leader_change": ("leader change", "#6a3d9a", "diamond"),
    "coordinator_change": ("coordinator change", "#1f77b4", "square"),
}
# Finding evidence that places a marker: the finding kind → the evidence kinds that are the event itself
MARKER_EVIDENCE = {
    "heartbeat_expiry": {"member_expired", "session_timeout"},
    "poll_timeout": {"poll_timeout", "member_left", "leave_group"},
    "coordinator_change": {"coordinator_elected", "group_loaded", "coordinator_lost"},
}

AGGREGATE_ABOVE = 300  # items in one lane beyond which the lane is drawn in bins
BIN_PX = 4  # width of one aggregated bin
MAX_MEMBER_LANES = 24  # per group; the rest are counted in a note
MIN_BAR_PX = 2.0
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"  # matplotlib's bundled font first: the PNG and SVG match
CHAR_PX = 0.6  # average glyph width per pixel of font size, to shorten labels that would not fit
DPI = 100

TOP, AXIS_H, GROUP_HEAD_H, REBALANCE_H, MARK_H, MEMBER_H, GROUP_GAP, LEGEND_ROW_H = 28, 22, 22, 22, 16, 14, 14, 18
_XML_ILLEGAL = re.compile("[\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str | None = None
    hatched: bool = False  # failed rebalances: stripes in FAILED_COLOUR over the fill
    opacity: float = 1.0
    css: str | None = None
    data: tuple[tuple[str, str], ...] = ()
    title: str | None = None


@dataclass(frozen=True)
class Label:
    x: float
    y: float  # baseline
    text: str
    size: float = 11
    anchor: str = "start"  # start, middle, end
    bold: bool = False
    colour: str = TEXT_COLOUR


@dataclass(frozen=True)
class Rule:
    x1: float
    y1: float
    x2: float
    y2: float
    colour: str = GRID_COLOUR


@dataclass(frozen=True)
class Mark:
    points: tuple[tuple[float, float], ...]
    fill: str
    css: str
    title: str


Shape = Box | Label | Rule | Mark


@dataclass
class _Picture:
    height: float = 0
    shapes: list[Shape] = field(default_factory=list)


def plain_text(text: str | None) -> str:
    """Log text any XML or HTML document can hold: control characters made visible, non-characters replaced."""
    return _XML_ILLEGAL.sub("\ufffd", visible(text))


def xml_text(text: str | None) -> str:
    """Log text made inert for XML and HTML, in text and in attributes."""
    return html.escape(plain_text(text), quote=True)


def cause_colour(kind: str) -> str:
    return CAUSE_COLOURS.get(kind, FALLBACK_COLOUR)


def timeline_svg(analysis: Analysis, width: int = 1200) -> str:
    """The timeline as a standalone SVG document (also embeddable inline in HTML)."""
    picture = _layout(analysis, width)
    hatched = sorted({s.fill for s in picture.shapes if isinstance(s, Box) and s.hatched})
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" height="{picture.height:.0f}" '
           f'viewBox="0 0 {width} {picture.height:.0f}" font-family="{FONT}" role="img">'),
           "<title>rebalance timeline (UTC)</title>",
           f'<rect width="{width}" height="{picture.height:.0f}" fill="#ffffff"/>']
    if hatched:
        out.append("<defs>")
        out += [f'<pattern id="{_hatch_id(colour)}" width="6" height="6" patternUnits="userSpaceOnUse" '
                f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{colour}"/>'
                f'<rect width="2" height="6" fill="{FAILED_COLOUR}"/></pattern>' for colour in hatched]
        out.append("</defs>")
    out += [_svg_shape(shape) for shape in picture.shapes]
    out.append("</svg>")
    return "\n".join(out) + "\n"


def timeline_png(analysis: Analysis, width: int = 1200) -> bytes:
    """The same picture as PNG bytes, drawn by matplotlib's Agg renderer (no display, no browser)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Polygon, Rectangle

    picture = _layout(analysis, width)
    height = round(picture.height)
    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, facecolor="white")
    FigureCanvasAgg(figure)
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(0, width)
    axes.set_ylim(height, 0)
    axes.set_axis_off()
    points = 72 / DPI  # one pixel in points
    for order, shape in enumerate(picture.shapes):  # drawn in list order, as SVG does
        if isinstance(shape, Box):
            axes.add_patch(Rectangle((shape.x, shape.y), shape.w, shape.h, facecolor=shape.fill, alpha=shape.opacity,
                                     edgecolor=FAILED_COLOUR if shape.hatched else (shape.stroke or "none"),
                                     hatch="////" if shape.hatched else None, linewidth=1.5 * points, zorder=order))
        elif isinstance(shape, Label):
            axes.text(shape.x, shape.y, plain_text(shape.text), fontsize=shape.size * points, color=shape.colour,
                      ha={"start": "left", "middle": "center", "end": "right"}[shape.anchor], va="baseline",
                      fontweight="bold" if shape.bold else "normal", parse_math=False, family="DejaVu Sans",
                      zorder=order)
        elif isinstance(shape, Rule):
            axes.plot((shape.x1, shape.x2), (shape.y1, shape.y2), color=shape.colour, linewidth=points, zorder=order)
        else:
            axes.add_patch(Polygon(shape.points, closed=True, facecolor=shape.fill, edgecolor="white",
                                   linewidth=0.5 * points, zorder=order))
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, facecolor="white")
    return buffer.getvalue()


def _hatch_id(colour: str) -> str:
    return "failed-" + colour.lstrip("#")


def _svg_shape(shape: Shape) -> str:
    if isinstance(shape, Label):
        weight = ' font-weight="bold"' if shape.bold else ""
        return (f'<text x="{shape.x:.1f}" y="{shape.y:.1f}" font-size="{shape.size:g}" text-anchor="{shape.anchor}" '
                f'fill="{shape.colour}"{weight}>{xml_text(shape.text)}</text>')
    if isinstance(shape, Rule):
        return (f'<line x1="{shape.x1:.1f}" y1="{shape.y1:.1f}" x2="{shape.x2:.1f}" y2="{shape.y2:.1f}" '
                f'stroke="{shape.colour}" stroke-width="1"/>')
    title = f"<title>{xml_text(shape.title)}</title>" if shape.title else ""
    if isinstance(shape, Mark):
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in shape.points)
        return (f'<polygon class="{shape.css}" points="{points}" fill="{shape.fill}" stroke="#ffffff" '
                f'stroke-width="0.5">{title}</polygon>')
    attributes = [f'x="{shape.x:.1f}" y="{shape.y:.1f}" width="{shape.w:.1f}" height="{shape.h:.1f}"']
    if shape.css:
        attributes.append(f'class="{shape.css}"')
    attributes += [f'data-{name}="{xml_text(value)}"' for name, value in shape.data]
    attributes.append(f'fill="url(#{_hatch_id(shape.fill)})"' if shape.hatched else f'fill="{shape.fill}"')
    if shape.hatched or shape.stroke:
        attributes.append(f'stroke="{FAILED_COLOUR if shape.hatched else shape.stroke}" stroke-width="1.5"')
    if shape.opacity != 1:
        attributes.append(f'fill-opacity="{shape.opacity:g}"')
    return f"<rect {' '.join(attributes)}>{title}</rect>"


# ---- layout -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Scale:
    """UTC time ↔ x pixel over the plot area."""

    start: datetime
    end: datetime
    x0: float
    x1: float

    def x(self, ts: datetime) -> float:
        span = (self.end - self.start).total_seconds()
        return self.x0 + (ts - self.start).total_seconds() / span * (self.x1 - self.x0)

    def bar(self, start: datetime | None, end: datetime | None) -> tuple[float, float]:
        """Left edge and width of an interval, at least MIN_BAR_PX wide so that an instant stays visible."""
        left = self.x(start or end)  # type: ignore[arg-type]
        right = self.x(end) if end else left
        return left, max(right - left, MIN_BAR_PX)


@dataclass(frozen=True)
class _Item:
    """One thing to draw in a lane: where it is in pixels, and what the hover text and aggregate need."""

    left: float
    width: float
    title: str
    failed: bool = False
    estimated: bool = False
    generation: str = ""
    cause: str = ""


def _layout(analysis: Analysis, width: int) -> _Picture:
    picture = _Picture()
    label_w = min(230.0, width * 0.28)
    x0, x1 = label_w, width - 16.0
    span = _span(analysis)
    if span is None:
        picture.shapes.append(Label(8, TOP, "no timestamps: nothing to draw on a time axis", 12, colour=DIM_COLOUR))
        picture.height = TOP + 16
        return picture
    scale = _Scale(*span, x0, x1)
    y = TOP + AXIS_H
    marker_kinds: set[str] = set()
    files = short_names(analysis.files)
    for group in analysis.groups:
        y = _layout_group(picture.shapes, group, scale, y, files, marker_kinds)
    undated = sum(1 for g in analysis.groups for r in g.rebalances if not (r.started_at or r.ended_at))
    if undated:
        picture.shapes.append(Label(8, y + 4, f"{plural(undated, 'rebalance')} without timestamps not drawn", 11,
                                    colour=DIM_COLOUR))
        y += LEGEND_ROW_H
    _layout_axis(picture.shapes, scale, y)
    picture.height = _layout_legend(picture.shapes, analysis, marker_kinds, y + 8, width)
    return picture


def _span(analysis: Analysis) -> tuple[datetime, datetime] | None:
    """The drawn time range: the logs' span and every rebalance, padded so that edge bars stay visible."""
    times = [t for t in (analysis.started_at, analysis.ended_at) if t]
    times += [t for g in analysis.groups for r in g.rebalances for t in (r.started_at, r.ended_at) if t]
    if not times:
        return None
    start, end = min(times), max(times)
    pad = max((end - start) * 0.02, timedelta(milliseconds=500))
    return start - pad, end + pad


def _layout_axis(shapes: list[Shape], scale: _Scale, bottom: float) -> None:
    """Tick labels along the top and a grid line per tick down to the last lane; the date in the corner."""
    step = _tick_step((scale.end - scale.start).total_seconds(), (scale.x1 - scale.x0) / 90)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    first = epoch + timedelta(seconds=((scale.start - epoch).total_seconds() // step + 1) * step)
    show_ms = step < 1
    tick = first
    while tick <= scale.end:
        x = scale.x(tick)
        text = clock(tick) if show_ms else tick.strftime("%H:%M:%S")
        if x + len(text) * CHAR_PX * 10 / 2 <= scale.x1 + 12:  # a label cut by the edge is left out
            shapes.insert(0, Rule(x, TOP + AXIS_H - 4, x, bottom))
            shapes.append(Label(x, TOP + AXIS_H - 8, text, 10, "middle", colour=DIM_COLOUR))
        tick += timedelta(seconds=step)
    shapes.append(Label(8, TOP - 10, f"{scale.start:%Y-%m-%d} (UTC)", 11, bold=True))


def _tick_step(seconds: float, max_ticks: float) -> float:
    for step in (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200):
        if seconds / step <= max(max_ticks, 1):
            return step
    return 86400 * max(1, int(seconds / 86400 / max(max_ticks, 1)) + 1)


def _layout_group(shapes: list[Shape], group: GroupAnalysis, scale: _Scale, y: float, files: dict[str, str],
                  marker_kinds: set[str]) -> float:
    facts = [plural(len(group.rebalances), "rebalance"),
             f"{group.failed_rebalances} failed" if group.failed_rebalances else "",
             f"pause {duration(group.total_pause_ms)}" if group.pause_by_member else ""]
    shapes.append(Label(8, y + 15, _fit("group " + group.group_id, scale.x1 * 0.7, 12), 12, bold=True))
    shapes.append(Label(scale.x1, y + 15, " · ".join(f for f in facts if f), 10, "end", colour=DIM_COLOUR))
    y += GROUP_HEAD_H
    shapes.append(Label(8, y + 15, "rebalances", 11))
    _draw_rebalances(shapes, group, scale, y + 2, REBALANCE_H - 4, files)
    if not group.rebalances:
        shapes.append(Label(scale.x0 + 4, y + 15, "no rebalances in these logs", 10, colour=DIM_COLOUR))
    y += REBALANCE_H
    markers = _markers(group, scale, files)
    marker_kinds.update(markers)
    for kind in MARKERS:  # one row per kind of event, so that an expiry and a coordinator move at once stay apart
        if kind in markers:
            shapes.append(Label(16, y + 11, MARKERS[kind][0], 10, colour=DIM_COLOUR))
            _draw_markers(shapes, kind, markers[kind], y + MARK_H / 2)
            y += MARK_H
    members, left_out = _member_lanes(group)
    pauses: dict[str, list[tuple[Rebalance, MemberPause]]] = {}
    for rebalance in group.rebalances:
        for pause in rebalance.pauses:
            if pause.started_at or pause.ended_at:
                pauses.setdefault(pause.member, []).append((rebalance, pause))
    for member in members:
        shapes.append(Label(16, y + 11, _fit(member_label(member, group), scale.x0 - 22, 10), 10))
        _draw_member(shapes, group, member, pauses.get(member, []), scale, y + 2, MEMBER_H - 4)
        y += MEMBER_H
    if left_out:
        shapes.append(Label(16, y + 11, f"… {plural(left_out, 'more member')} not drawn", 10, colour=DIM_COLOUR))
        y += MEMBER_H
    return y + GROUP_GAP


def _fit(text: str, px: float, size: float) -> str:
    """The text, cut with an ellipsis where it would run past px pixels at this font size."""
    chars = max(int(px / (CHAR_PX * size)), 2)
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _rebalance_title(rebalance: Rebalance, group: GroupAnalysis, files: dict[str, str]) -> str:
    cause = rebalance.cause
    lines = [f"{group.group_id}: generation {generation_label(rebalance)}",
             f"{cause.kind} {cause.confidence:.0%}: {cause.summary}",
             f"start {clock(rebalance.started_at, True)} · duration {duration(rebalance.duration_ms)}"
             + (f" · {plural(rebalance.member_count, 'member')}" if rebalance.member_count is not None else "")
             + (f" · leader {member_label(rebalance.leader, group)}" if rebalance.leader else "")]
    lines += [evidence_ref(e, files) for e in cause.evidence[:3]]
    return "\n".join(lines)


def evidence_ref(evidence: Evidence, files: dict[str, str]) -> str:
    """`file:line` with the file named as short_names names it."""
    return f"{files.get(evidence.file, evidence.file)}:{evidence.line}"


def _draw_rebalances(shapes: list[Shape], group: GroupAnalysis, scale: _Scale, y: float, h: float,
                     files: dict[str, str]) -> None:
    dated = [r for r in group.rebalances if r.started_at or r.ended_at]
    aggregate = len(dated) > AGGREGATE_ABOVE
    items = [_Item(*scale.bar(r.started_at, r.ended_at), "" if aggregate else _rebalance_title(r, group, files),
                   r.failed, generation="" if r.to_generation is None else str(r.to_generation), cause=r.cause.kind)
             for r in dated]
    if not aggregate:
        for item in items:
            data = (("group", group.group_id), ("generation", item.generation), ("cause", item.cause))
            shapes.append(Box(item.left, y, item.width, h, cause_colour(item.cause), hatched=item.failed,
                              css="rebalance", data=data, title=item.title))
        return
    for members in _bins(items):
        causes = Counter(item.cause for item in members)
        failed = sum(item.failed for item in members)
        left = members[0].left
        right = max(item.left + item.width for item in members)
        title = (f"{plural(len(members), 'rebalance')}: generations {members[0].generation or '?'}–"
                 f"{members[-1].generation or '?'}" + (f", {failed} failed" if failed else "") + "\n"
                 + ", ".join(f"{kind} {count}" for kind, count in causes.most_common()))
        shapes.append(Box(left, y, max(right - left, BIN_PX - 0.5), h, cause_colour(causes.most_common(1)[0][0]),
                          hatched=failed > 0, css="rebalance-bin", data=(("count", str(len(members))),), title=title))


def _bins(items: Sequence[_Item]) -> Iterable[list[_Item]]:
    """Items grouped by the BIN_PX-wide pixel column they start in, left to right."""
    bins: dict[int, list[_Item]] = {}
    for item in items:
        bins.setdefault(int(item.left // BIN_PX), []).append(item)
    return (bins[key] for key in sorted(bins))


def _markers(group: GroupAnalysis, scale: _Scale, files: dict[str, str]) -> dict[str, list[_Item]]:
    """Heartbeat expiries and poll timeouts (departures, finding evidence), leader and coordinator changes."""
    found: dict[str, list[_Item]] = {}

    def add(kind: str, ts: datetime | None, title: str) -> None:
        if ts is not None:
            found.setdefault(kind, []).append(_Item(scale.x(ts), 0, f"{clock(ts, True)} {title}"))

    previous_coordinator = None
    for rebalance in group.rebalances:
        generation = f"generation {generation_label(rebalance)}"
        for departure in rebalance.left:
            if departure.how in ("heartbeat_expiry", "poll_timeout"):
                add(departure.how, rebalance.started_at,
                    f"{departure.how.replace('_', ' ')}: {member_label(departure.member, group)} left ({generation})")
        if rebalance.coordinator and previous_coordinator and rebalance.coordinator != previous_coordinator:
            add("coordinator_change", rebalance.started_at,
                f"coordinator {previous_coordinator} → {rebalance.coordinator} ({generation})")
        previous_coordinator = rebalance.coordinator or previous_coordinator
    for finding in group.findings:
        for evidence in finding.evidence:
            if evidence.kind in MARKER_EVIDENCE.get(finding.kind, ()):
                add(finding.kind, evidence.ts,
                    f"{finding.kind.replace('_', ' ')}: {evidence_ref(evidence, files)}\n{evidence.text}")
    for change in group.leader_changes:
        stayed = " (it stayed in the group)" if change.previous_stayed else ""
        add("leader_change", change.at, f"leader change at generation {change.generation}: "
            f"{member_label(change.previous, group)}{stayed} → {member_label(change.leader, group)}")
    return found


def _draw_markers(shapes: list[Shape], kind: str, items: list[_Item], middle: float) -> None:
    """One mark per BIN_PX column and marker kind: near-simultaneous lines (a rebalance and its expiry) share it."""
    label, colour, shape = MARKERS[kind]
    for members in _bins(sorted(items, key=lambda item: item.left)):
        titles = [item.title for item in members[:5]]
        if len(members) > 5:
            titles.append(f"… {plural(len(members) - 5, label)} more")
        shapes.append(Mark(_mark_points(shape, members[0].left, middle), colour, f"marker {kind}", "\n".join(titles)))


def _mark_points(shape: str, x: float, y: float, r: float = 5.0) -> tuple[tuple[float, float], ...]:
    """A marker's outline centred on (x, y)."""
    if shape == "triangle":
        return (x - r, y - r), (x + r, y - r), (x, y + r)
    if shape == "diamond":
        return (x, y - r), (x + r, y), (x, y + r), (x - r, y)
    return (x - r + 1, y - r + 1), (x + r - 1, y - r + 1), (x + r - 1, y + r - 1), (x - r + 1, y + r - 1)


def _member_lanes(group: GroupAnalysis) -> tuple[list[str], int]:
    """The members to draw, in the order they first appear, and how many are left out: beyond MAX_MEMBER_LANES the
    ones that paused longest and stayed in the most generations are drawn (in a crash loop, the survivors)."""
    presence: Counter[str] = Counter()
    for rebalance in group.rebalances:
        presence.update((*rebalance.members, *rebalance.joined, *(d.member for d in rebalance.left),
                         *(p.member for p in rebalance.pauses)))
    presence.update(dict.fromkeys(group.pause_by_member, 0))
    order = list(presence)  # first appearance
    if len(order) <= MAX_MEMBER_LANES:
        return order, 0
    kept = set(sorted(order, key=lambda m: (-group.pause_by_member.get(m, 0), -presence[m]))[:MAX_MEMBER_LANES])
    return [m for m in order if m in kept], len(order) - MAX_MEMBER_LANES


def _draw_member(shapes: list[Shape], group: GroupAnalysis, member: str, pauses: list[tuple[Rebalance, MemberPause]],
                 scale: _Scale, y: float, h: float) -> None:
    label = member_label(member, group)
    for start, end in group.member_stints(member, scale.start, scale.end):
        left, width = scale.bar(start, end)
        shapes.append(Box(left, y, width, h, IN_GROUP_COLOUR, css="membership",
                          title=f"{label} in the group {clock(start, True)} → {clock(end, True)}"))
    if len(pauses) > AGGREGATE_ABOVE:
        items = _runs([p for _, p in pauses], label, scale)
    else:
        items = [_pause_item(rebalance, pause, label, scale) for rebalance, pause in pauses]
    for item in items:
        shapes.append(Box(item.left, y + 1, item.width, h - 2, PAUSE_COLOUR, opacity=0.55 if item.estimated else 1.0,
                          css="pause", title=item.title))


def _pause_item(rebalance: Rebalance, pause: MemberPause, label: str, scale: _Scale) -> _Item:
    left, width = scale.bar(pause.started_at, pause.ended_at)
    estimated = " (estimated from the group's timeline)" if pause.estimated else ""
    return _Item(left, width, f"{label} paused {duration(pause.pause_ms)}{estimated} in generation "
                 f"{generation_label(rebalance)}: {clock(pause.started_at, True)} → {clock(pause.ended_at, True)}",
                 estimated=pause.estimated)


def _runs(pauses: list[MemberPause], label: str, scale: _Scale) -> list[_Item]:
    """Pauses closer than BIN_PX merged into one bar that counts them and sums their time."""
    placed = sorted(((scale.bar(p.started_at, p.ended_at), p) for p in pauses), key=lambda placed: placed[0])
    runs: list[tuple[float, float, list[MemberPause]]] = []  # left, right, pauses
    for (left, width), pause in placed:
        if runs and left <= runs[-1][1] + BIN_PX:
            start, right, members = runs[-1]
            members.append(pause)
            runs[-1] = (start, max(right, left + width), members)
        else:
            runs.append((left, left + width, [pause]))
    return [_Item(left, right - left, f"{label} paused {plural(len(members), 'time')}, "
                  f"{duration(sum(p.pause_ms for p in members))} in total: "
                  f"{clock(members[0].started_at or members[0].ended_at, True)} → "
                  f"{clock(members[-1].ended_at or members[-1].started_at, True)}")
            for left, right, members in runs]


def _layout_legend(shapes: list[Shape], analysis: Analysis, marker_kinds: set[str], y: float, width: int) -> float:
    """Swatches for the causes, markers and lane colours the picture uses, wrapped into rows; returns the height."""
    causes = list(dict.fromkeys(r.cause.kind for g in analysis.groups for r in g.rebalances))
    entries: list[tuple[str, Box | Mark]] = [(kind, Box(0, 0, 14, 10, cause_colour(kind))) for kind in causes]
    if any(r.failed for g in analysis.groups for r in g.rebalances):
        entries.append(("failed", Box(0, 0, 14, 10, FALLBACK_COLOUR, hatched=True)))
    entries.append(("in the group", Box(0, 0, 14, 10, IN_GROUP_COLOUR)))
    entries.append(("paused", Box(0, 0, 14, 10, PAUSE_COLOUR)))
    for kind, (label, colour, shape) in MARKERS.items():
        if kind in marker_kinds:
            entries.append((label, Mark(_mark_points(shape, 7, 5), colour, "legend", label)))
    x, row = 8.0, y
    for text, swatch in entries:
        item_w = 22 + len(text) * CHAR_PX * 11 + 14
        if x + item_w > width - 8 and x > 8:
            x, row = 8.0, row + LEGEND_ROW_H
        if isinstance(swatch, Box):
            shapes.append(Box(x, row + 3, swatch.w, swatch.h, swatch.fill, hatched=swatch.hatched, css="legend"))
        else:
            shapes.append(Mark(tuple((x + px, row + 3 + py) for px, py in swatch.points), swatch.fill, "legend", text))
        shapes.append(Label(x + 20, row + 12, text, 11))
        x += item_w
    return row + LEGEND_ROW_H + 6
