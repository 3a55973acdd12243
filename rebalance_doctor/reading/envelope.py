"""The envelope of a log line (time, level, logger, thread, node) and its context fields.

Only lines that a catalog pattern matched reach this module, so it may afford per-line Python
work. The layouts and prefixes it applies are data (``patterns/layouts.yaml``,
``patterns/context.yaml``); this module only knows how to apply them and how to read the
timestamp formats they name.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..catalog import Catalog, Layout
from ..catalog.schema import FIELD_BY_GROUP
from .sources import Source

_ISO = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?\s?(Z|[+-]\d\d:?\d\d)?"
)
_DASHES = str.maketrans({"–": "-", "—": "-"})
# JSON-lines logs: which keys hold what (logstash-logback-encoder, ECS, Bunyan, pino, …)
_JSON_KEYS = {
    "msg": ("message", "msg", "log", "@message"),
    "ts": ("@timestamp", "timestamp", "time", "ts", "@t", "datetime"),
    "level": ("level", "log.level", "severity", "loglevel"),
    "logger": ("logger_name", "logger", "log.logger", "loggerName", "name"),
    "thread": ("thread_name", "thread", "process.thread.name", "threadName"),
    "node": ("host", "hostname", "pod", "kubernetes.pod_name", "node"),
}


def parse_zone(name: str | None) -> tzinfo:
    """``UTC``, ``+02:00``, ``-0500`` or an IANA name such as ``Europe/Paris``."""
    if not name or name.upper() in ("UTC", "Z"):
        return UTC
    offset = re.fullmatch(r"([+-])(\d\d):?(\d\d)", name)
    if offset:
        sign = 1 if offset.group(1) == "+" else -1
        return timezone(sign * timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3))))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r} (use UTC, +02:00 or an IANA name like Europe/Paris)") from None


def _names(source: Source, pattern: str) -> bool:
    """A ``--tz GLOB=ZONE`` glob names a file by its path as shown, its node, or its file name."""
    return any(fnmatch.fnmatch(name, pattern) for name in (source.display, source.node, os.path.basename(source.display)))


def zone_for(source: Source, tz_specs: tuple[str, ...]) -> tzinfo:
    """The time zone for naive timestamps of one file: ``ZONE`` for all, or ``GLOB=ZONE`` per file."""
    zone = parse_zone(None)
    for spec in tz_specs:
        pattern, sep, name = spec.rpartition("=")
        if not sep:
            zone = parse_zone(spec)
        elif _names(source, pattern):
            zone = parse_zone(name)
    return zone


def zones_for(sources: list[Source], tz_specs: tuple[str, ...]) -> tuple[dict[int, tzinfo], frozenset[str]]:
    """Each source's zone (by its order), and the files whose zone the user gave. A ``GLOB=ZONE`` that names
    no input is a mistake worth stopping for: the file it meant would silently be read as UTC."""
    for spec in tz_specs:
        pattern, sep, _ = spec.rpartition("=")
        if sep and sources and not any(_names(source, pattern) for source in sources):
            raise ValueError(f"--tz {spec!r}: {pattern!r} names no input file (a path as shown, a node or a file name; globs like *app-2*)")
    told = frozenset(s.display for s in sources if any(not spec.rpartition("=")[1] or _names(s, spec.rpartition("=")[0]) for spec in tz_specs))
    return {source.order: zone_for(source, tz_specs) for source in sources}, told


EARLIEST_YEAR, LATEST_YEAR = 1900, 2200  # outside: a corrupt or placeholder stamp (0001-01-01, 9999-12-31), read as none


def parse_timestamp(text: str, fmt: str | None, zone: tzinfo) -> datetime | None:
    """Parse a timestamp in one of the layout formats; naive times are read in ``zone``. A year no log was
    written in gives no time (the line keeps its place in its file), instead of arithmetic that overflows."""
    stamp = _parse_timestamp(text, fmt, zone)
    return stamp if stamp is not None and EARLIEST_YEAR <= stamp.year <= LATEST_YEAR else None


ORDINAL = "ordinal-day "  # a ts_format prefix: the day of month carries st/nd/rd/th
_ORDINAL_DAY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b")


def _parse_timestamp(text: str, fmt: str | None, zone: tzinfo) -> datetime | None:
    text = text.strip()
    if not text.isascii():
        text = text.translate(_DASHES)
    try:
        if fmt == "epoch":
            return datetime.fromtimestamp(float(text), tz=UTC)
        if fmt in (None, "iso"):
            m = _ISO.match(text)
            if not m:
                return None
            year, month, day, hour, minute, second, frac, offset = m.groups()
            if offset:
                zone = UTC if offset == "Z" else parse_zone(offset)
            micros = int(frac[:6].ljust(6, "0")) if frac else 0
            stamp = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, zone)
            return stamp if zone is UTC else stamp.astimezone(UTC)
        if fmt.startswith(ORDINAL):  # "May 29th 2018": the day's English suffix, which strptime has no directive for
            text, fmt = _ORDINAL_DAY.sub(r"\1", text, count=1), fmt.removeprefix(ORDINAL)
        return datetime.strptime(text, fmt).replace(tzinfo=zone).astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        return None


@dataclass
class Envelope:
    """What surrounds the message: filled as far as the line allows, never guessed."""

    ts: datetime | None = None
    level: str | None = None
    logger: str | None = None
    thread: str | None = None
    node: str | None = None
    message: str = ""
    fields: dict[str, str] = field(default_factory=dict)  # event-table fields a structured record holds in keys of its own


@dataclass
class EnvelopeReader:
    """Reads envelopes line by line for one file, trying the file's last good layout first."""

    catalog: Catalog
    zone: tzinfo = UTC
    _preferred: Layout | None = None

    def _layout_order(self) -> list[Layout]:
        preferred = self._preferred
        return self.catalog.layouts if preferred is None else self.catalog.layouts_preferring[preferred.id]

    def read(self, line: str, previous_line: str | None = None) -> Envelope:
        envelope = Envelope(message=line)
        rest = self._strip_outer(line, envelope)
        if rest.startswith("{"):
            self._read_json(rest, envelope)
            rest = envelope.message
        self._apply_layout(rest, envelope)
        embedded = envelope.message.find('{"')
        if embedded > 0 and envelope.message.rstrip().endswith("}"):  # a JSON record printed by a text logger (NestJS, …)
            self._read_json(envelope.message[embedded:], envelope, outer=False)
        if envelope.ts is None and previous_line is not None:
            header = Envelope()
            self._apply_layout(self._strip_outer(previous_line, header), header, headers_only=True)
            envelope.ts = header.ts
            envelope.logger = envelope.logger or header.logger
        return envelope

    def _strip_outer(self, line: str, envelope: Envelope) -> str:
        rest = line
        any_outer = self.catalog.any_outer_prefix
        for _ in range(4 if any_outer is not None and any_outer.match(line) else 0):
            for prefix in self.catalog.outer_prefixes:
                m = prefix.compiled.match(rest)
                if m and m.end() > 0:
                    groups = m.groupdict()
                    envelope.node = envelope.node or groups.get("node")
                    if groups.get("ts") and envelope.ts is None:
                        envelope.ts = parse_timestamp(groups["ts"], "iso", self.zone)
                    rest = rest[m.end() :]
                    break
            else:
                break
        envelope.message = rest
        return rest

    def _read_json(self, text: str, envelope: Envelope, outer: bool = True, depth: int = 0) -> None:
        """A JSON record's message and envelope; ``outer`` False for a record inside a text line, whose
        envelope the text layout already gave. A message that is itself a JSON record (a client's JSON log
        forwarded as a string by another JSON logger) is read in turn."""
        try:
            record = json.loads(text)
        except ValueError:
            return
        if not isinstance(record, dict):
            return
        for entry in self.catalog.json_fields:
            value = next((record[key] for key in entry.keys if isinstance(record.get(key), (str, int)) and record[key] != ""), None)
            if value is not None and not isinstance(value, bool):
                envelope.fields.setdefault(entry.field, str(value))
        found: dict[str, str] = {}
        for name, keys in _JSON_KEYS.items():
            for key in keys:
                value = record.get(key)
                if value is None and "." in key:
                    head, _, tail = key.partition(".")
                    nested = record.get(head)
                    value = nested.get(tail) if isinstance(nested, dict) else None
                if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                    found[name] = str(value)
                    break
        if outer:
            if "ts" in found:
                envelope.ts = parse_timestamp(found["ts"], "iso", self.zone) or (
                    parse_timestamp(found["ts"], "epoch", self.zone) if found["ts"].replace(".", "").isdigit() else None
                ) or envelope.ts
            envelope.level = found.get("level", envelope.level)
            envelope.logger = found.get("logger", envelope.logger)
            envelope.thread = found.get("thread", envelope.thread)
            envelope.node = envelope.node or found.get("node")
        if "msg" in found:
            envelope.message = found["msg"]
            if depth < 2 and envelope.message.startswith("{"):
                self._read_json(envelope.message, envelope, outer, depth + 1)

    def _apply_layout(self, text: str, envelope: Envelope, headers_only: bool = False) -> None:
        for layout in self._layout_order():
            if headers_only != layout.header:
                continue
            m = layout.compiled.match(text)
            if not m:
                continue
            groups = m.groupdict()
            if groups.get("ts"):
                envelope.ts = parse_timestamp(groups["ts"], layout.ts_format, self.zone) or envelope.ts
            envelope.level = groups.get("level") or envelope.level
            envelope.logger = groups.get("logger") or envelope.logger
            envelope.thread = groups.get("thread") or envelope.thread
            envelope.node = envelope.node or groups.get("node")
            if groups.get("msg") is not None:
                envelope.message = groups["msg"]
            if not headers_only:
                self._preferred = layout
            return


def node_prefix(line: str, catalog: Catalog) -> str:
    """The docker-compose / kubectl prefix that starts a line ('' when none): every line of a
    multi-line record carries it again, so continuation is judged after it."""
    any_outer = catalog.any_outer_prefix
    if any_outer is None or not any_outer.match(line):  # most lines: one regex instead of one per prefix
        return ""
    for prefix in catalog.node_prefixes:
        m = prefix.compiled.match(line)
        if m:
            return m.group(0)
    return ""


def context_fields(message: str, catalog: Catalog) -> dict[str, str]:
    """Fields named by log-context prefixes (``[Consumer clientId=…, groupId=…]`` …)."""
    fields: dict[str, str] = {}
    for prefix in catalog.context_prefixes:
        if prefix.required_text not in message:
            continue
        m = prefix.compiled.search(message)
        if not m:
            continue
        for group, value in m.groupdict().items():
            if value is not None:
                fields.setdefault(FIELD_BY_GROUP[group], value)
    return fields
