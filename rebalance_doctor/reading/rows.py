"""Rows: a matched line plus its envelope and context, shaped as one event-table row.

Both engines hand their matches (pattern id + regex groups) to :func:`build_event`, so the
enrichment every row goes through is written once.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..catalog import Catalog, MessagePattern, coerce_field
from ..catalog.schema import COLUMN_NAMES, FIELD_BY_GROUP
from .envelope import Envelope, EnvelopeReader, context_fields


@dataclass(frozen=True)
class MessageMatch:
    pattern: MessagePattern
    groups: dict[str, str]  # regex group name → text, only groups that took part


def candidate_patterns(text: str, catalog: Catalog, anchors: list[str] | None = None) -> list[MessagePattern]:
    """Patterns whose literal anchor occurs in ``text`` (or is in ``anchors``), in priority order."""
    if anchors is None:
        anchors = [anchor for anchor in catalog.anchors if anchor in text]
    by_anchor, priority = catalog.patterns_by_anchor, catalog.priority
    if len(anchors) == 1:  # most hit lines: the anchor's patterns are in catalog order already
        return by_anchor.get(anchors[0], [])
    return sorted({p.id: p for a in anchors for p in by_anchor.get(a, ())}.values(), key=lambda p: priority[p.id])


def match_message(text: str, catalog: Catalog, anchors: list[str] | None = None) -> MessageMatch | None:
    """The winning pattern for one line, or None: the first candidate (by priority) whose regex matches."""
    for pattern in candidate_patterns(text, catalog, anchors):
        m = pattern.compiled.search(text)
        if m:
            return MessageMatch(pattern, {k: v for k, v in m.groupdict().items() if v is not None})
    return None


def classify_reason(reason: str, catalog: Catalog) -> tuple[str, dict[str, str]] | None:
    """The cause a reason text names (first rule of patterns/reasons.yaml that matches), with the
    member it names."""
    for rule in catalog.reasons:
        if rule.required_text not in reason:
            continue
        m = rule.compiled.search(reason)
        if m:
            return rule.cause, {FIELD_BY_GROUP[k]: v for k, v in m.groupdict().items() if v is not None}
    return None


def event_fields(match: MessageMatch, envelope: Envelope, catalog: Catalog) -> dict[str, Any]:
    """Extracted fields: the message's own groups win over catalog constants and context prefixes;
    the reason's cause (and the member it names) fill what is still empty."""
    fields: dict[str, Any] = context_fields(envelope.message, catalog)
    for name, value in envelope.fields.items():
        fields.setdefault(FIELD_BY_GROUP[name], value)
    if envelope.thread and "thread" not in fields:
        fields["thread"] = envelope.thread
    fields.update(match.pattern.constants)
    for group, value in match.groups.items():
        fields[FIELD_BY_GROUP[group]] = value
    if fields.get("reason") and "cause" not in fields:
        classified = classify_reason(fields["reason"], catalog)
        if classified:
            fields["cause"] = classified[0]
            for name, value in classified[1].items():
                fields.setdefault(name, value)
    return {name: coerce_field(name, value) for name, value in fields.items()}


_ROW_VALUES = operator.itemgetter(*COLUMN_NAMES)  # a row's values in column order


class EventColumns:
    """Event rows column by column, in the schema's order: how scans hand their events on. The scan
    process's events crossed to the process you run as a 35-key dict each; as columns they pickle faster
    and unpickle into less memory, and the process that merges them no longer turns rows into columns."""

    def __init__(self, rows: Sequence[dict[str, Any]] = ()):
        # no events, no columns: every scan starts empty, and 2,000 small files make thousands of scans
        self.columns: dict[str, list[Any]] = dict(zip(COLUMN_NAMES, map(list, zip(*map(_ROW_VALUES, rows), strict=True)), strict=True)) if rows else {}

    def __len__(self) -> int:
        return len(self.columns["line"]) if self.columns else 0

    def extend(self, other: EventColumns) -> None:
        if not other.columns:
            return
        if not self.columns:
            self.columns = {name: [] for name in COLUMN_NAMES}
        for name, values in other.columns.items():
            self.columns[name] += values

    def shift_lines(self, start: int, stop: int, offset: int) -> None:
        """Renumber events ``start:stop``, which a later part of a file counted from its own first line."""
        lines = self.columns["line"]
        lines[start:stop] = [line + offset for line in lines[start:stop]]


def build_event(
    match: MessageMatch,
    *,
    raw: str,
    file: str,
    line: int,
    file_node: str,
    reader: EnvelopeReader,
    previous_line: str | None = None,
) -> dict[str, Any]:
    """One event-table row (all columns present) for a matched record."""
    first_line = raw.split("\n", 1)[0]
    envelope = reader.read(first_line, previous_line)
    row: dict[str, Any] = dict.fromkeys(COLUMN_NAMES)
    row.update(event_fields(match, envelope, reader.catalog))
    row.update(
        ts=envelope.ts,
        file=file,
        line=line,
        node=envelope.node or file_node,
        component=match.pattern.component,
        kind=match.pattern.kind,
        pattern_id=match.pattern.id,
        level=envelope.level,
        logger=envelope.logger,
        message=envelope.message,
        raw=raw,
    )
    return row
