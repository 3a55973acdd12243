"""Clocks: every client file's clock set against the coordinator's log before anything is ordered or timed.

Broker and client log some moments of a rebalance within milliseconds of each other (the coordinator
stabilising generation N / a member learning it joined generation N; the coordinator storing the
leader's assignment / a member completing SyncGroup). Each such pair is one sample of how far the
file's clock is from the broker's.

- A file whose samples agree on a whole number of quarter hours was written in local time without an
  offset in its timestamps (a logback or log4j default): it is read in that zone, and the analysis says
  so. When the offset changes by an hour once, mid-file, it is a daylight-saving change: the file is
  read in a zone with that change.
- What remains is clock skew (milliseconds to seconds): the median per file is removed from the file's
  times on the analysis' clock and shown.

A file the user gave a zone for (``--tz``) is read as told.
"""

from __future__ import annotations

import functools
import statistics
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo, available_timezones

import polars as pl

from .model import ClockSkew, ClockZone

# (broker kind, client kind) that happen within milliseconds of each other for the same generation
SIMULTANEOUS = (("group_stabilized", "join_succeeded"), ("assignment_received", "sync_succeeded"))
MAX_SKEW = timedelta(minutes=30)  # beyond this a pair is another rebalance, not a clock difference
MAX_ZONE_OFFSET = timedelta(hours=15)  # UTC-12:00 to UTC+14:00, with room for skew
ZONE_STEP = timedelta(minutes=15)  # every zone's offset is a whole number of quarter hours
ZONE_TOLERANCE = timedelta(minutes=2)  # clocks disagree by seconds; a zone is off by quarter hours
MIN_AGREEING = 2  # one coincidence is no zone
DAYLIGHT_SAVING = 4  # quarter hours a daylight-saving change moves the clock by
# Where a daylight-saving pattern is shared by many zones, name one from these regions first.
PREFERRED_REGIONS = ("Europe/", "America/", "Australia/", "Asia/", "Pacific/", "Africa/")


class Sample:
    """One shared moment: the broker's time, and how far the client file's clock reads from it."""

    __slots__ = ("at", "delta", "reference")

    def __init__(self, at: datetime, delta: timedelta, reference: str):
        self.at, self.delta, self.reference = at, delta, reference


def shared_moments(events: pl.DataFrame, within: timedelta) -> dict[str, list[Sample]]:
    """Per client file, the moments it logged that the coordinator's log also holds, ``within`` apart at most."""
    kinds = [kind for pair in SIMULTANEOUS for kind in pair]
    needed = pl.col("kind").is_in(kinds) & pl.col("ts").is_not_null() & pl.col("group_id").is_not_null()
    rows = events.filter(needed).select("kind", "component", "group_id", "generation", "file", "ts").to_dicts()
    broker: dict[tuple[str, str, int], dict] = {}
    for row in rows:
        for broker_kind, _ in SIMULTANEOUS:
            if row["kind"] == broker_kind and row["component"] == "broker" and row["generation"] is not None:
                broker.setdefault((broker_kind, row["group_id"], row["generation"]), row)
    samples: dict[str, list[Sample]] = defaultdict(list)
    for row in rows:
        for broker_kind, client_kind in SIMULTANEOUS:
            if row["kind"] != client_kind or row["generation"] is None:
                continue
            reference = broker.get((broker_kind, row["group_id"], row["generation"]))
            if reference is None or reference["file"] == row["file"]:
                continue
            delta = row["ts"] - reference["ts"]
            if abs(delta) <= within:
                samples[row["file"]].append(Sample(reference["ts"], delta, reference["file"]))
    return samples


def _quarters(delta: timedelta) -> int | None:
    """The whole number of quarter hours ``delta`` is, or None when it is not close to one."""
    quarters = round(delta / ZONE_STEP)
    return quarters if abs(delta - quarters * ZONE_STEP) <= ZONE_TOLERANCE else None


def detect_zones(events: pl.DataFrame, told: frozenset[str] = frozenset()) -> list[ClockZone]:
    """The client files written in local time without an offset, and the zone each was written in."""
    zones = []
    for file, samples in sorted(shared_moments(events, MAX_ZONE_OFFSET).items()):
        if file in told:
            continue
        samples.sort(key=lambda s: s.at)
        quarters = [_quarters(s.delta) for s in samples]
        agreeing = [(s, q) for s, q in zip(samples, quarters, strict=True) if q is not None]
        offsets = list(dict.fromkeys(q for _, q in agreeing))  # in time order
        if len(agreeing) < MIN_AGREEING or len(agreeing) * 5 < len(samples) * 4 or offsets == [0]:
            continue
        reference = Counter(s.reference for s in samples).most_common(1)[0][0]
        if len(offsets) == 1:
            zones.append(ClockZone(file, reference, [offsets[0] * 15], None, len(samples), len(agreeing)))
        elif len(offsets) == 2 and abs(offsets[0] - offsets[1]) == DAYLIGHT_SAVING and _changes_once(agreeing):
            name = _zone_with(tuple((s.at, q) for s, q in agreeing))
            if name is not None:
                zones.append(ClockZone(file, reference, [q * 15 for q in offsets], name, len(samples), len(agreeing)))
    return zones


def _changes_once(agreeing: list[tuple[Sample, int]]) -> bool:
    """The offset changes once: a daylight-saving change, not two clocks taking turns."""
    return sum(1 for (_, a), (_, b) in pairwise(agreeing) if a != b) == 1


@functools.cache
def _zones_by_preference() -> list[str]:
    def rank(name: str) -> tuple[int, str]:
        region = next((i for i, prefix in enumerate(PREFERRED_REGIONS) if name.startswith(prefix)), len(PREFERRED_REGIONS))
        return region, name

    return sorted((name for name in available_timezones() if "/" in name and not name.startswith(("Etc/", "SystemV/"))), key=rank)


def _zone_with(offsets: tuple[tuple[datetime, int], ...]) -> str | None:
    """A zone whose offset from UTC was these quarter hours at these moments."""
    for name in _zones_by_preference():
        zone = ZoneInfo(name)
        if all(at.astimezone(zone).utcoffset() == quarters * ZONE_STEP for at, quarters in offsets):
            return name
    return None


def read_in_zones(events: pl.DataFrame, zones: list[ClockZone]) -> pl.DataFrame:
    """The event table with the files written in local time read in their zones (times in UTC again)."""
    if not zones:
        return events
    ts = pl.col("ts")
    corrected = ts
    for zone in zones:
        if zone.zone is None:
            local = ts - timedelta(minutes=zone.offsets_min[0])
        else:
            local = (ts.dt.replace_time_zone(None).dt.replace_time_zone(zone.zone, ambiguous="earliest", non_existent="null")
                     .dt.convert_time_zone("UTC"))
        corrected = pl.when(pl.col("file") == zone.file).then(local).otherwise(corrected)
    return events.with_columns(ts=corrected)


def estimate_skew(events: pl.DataFrame) -> list[ClockSkew]:
    """Per client file, its clock's offset from the coordinator's log: the median of its shared moments."""
    pairs: dict[tuple[str, str], list[float]] = defaultdict(list)
    for file, samples in shared_moments(events, MAX_SKEW).items():
        for sample in samples:
            pairs[(file, sample.reference)].append(sample.delta.total_seconds() * 1000)
    return [ClockSkew(file=file, reference=reference, skew_ms=round(statistics.median(values)), samples=len(values))
            for (file, reference), values in sorted(pairs.items())]


def align_clocks(events: pl.DataFrame, told: frozenset[str] = frozenset()) -> tuple[pl.DataFrame, list[ClockZone], list[ClockSkew]]:
    """The event table with local-time files read in their zones, those zones, and the skew that remains."""
    zones = detect_zones(events, told)
    events = read_in_zones(events, zones)
    return events, zones, estimate_skew(events)
