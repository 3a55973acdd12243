"""Which Kafka versions the logs were written by, read from the wordings they contain.

Every catalog entry knows the releases its wording belongs to (since/until). A wording that first
appeared in X proves a version ≥ X; one that disappeared after Y proves ≤ Y. Intersected per
component (broker, consumer, streams, …), this gives the range the advice is worded for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

from ..catalog.schema import RUNTIME_COMPONENTS

CURRENT = (99,)  # "still in trunk / 4.x"


def version_key(version: str | None) -> tuple[int, ...]:
    return CURRENT if version is None else tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class VersionRange:
    component: str
    lowest: str  # the newest wording seen first appeared in this release
    highest: str | None  # the oldest-ending wording seen was last in this release (None: still current)

    def at_least(self, version: str) -> bool:
        return version_key(self.lowest) >= version_key(version)

    def below(self, version: str) -> bool:
        return self.highest is not None and version_key(self.highest) < version_key(version)

    def __str__(self) -> str:
        if self.highest is None:
            return f"{self.component} ≥ {self.lowest}"
        if self.highest == self.lowest:
            return f"{self.component} {self.lowest}"
        return f"{self.component} {self.lowest}–{self.highest}"


def versions_seen(events: pl.DataFrame, pattern_versions: dict[str, tuple[str, str | None]]) -> dict[str, VersionRange]:
    """Per component, the release range consistent with every wording matched (upper bound dropped when the
    wordings disagree: mixed client versions)."""
    per_component = events.group_by("component").agg(pl.col("pattern_id").unique())
    return versions_of(dict(per_component.iter_rows()), pattern_versions)


def versions_of(pattern_ids: dict[str, Iterable[str]], pattern_versions: dict[str, tuple[str, str | None]]) -> dict[str, VersionRange]:
    """:func:`versions_seen` for the catalog entries matched per component (a group's own events)."""
    result: dict[str, VersionRange] = {}
    for component, ids in sorted(pattern_ids.items()):
        if component in RUNTIME_COMPONENTS:  # a JDK's versions say nothing of Kafka's
            continue
        spans = [pattern_versions[i] for i in ids if i in pattern_versions]
        if not spans:
            continue
        lowest = max((since for since, _ in spans), key=version_key)
        ends = [until for _, until in spans if until is not None]
        highest = min(ends, key=version_key) if ends else None
        if highest is not None and version_key(highest) < version_key(lowest):
            highest = None  # contradictory: several versions at once; keep the sure lower bound
        result[component] = VersionRange(component, lowest, highest)
    return result
