"""Catalog entries: what the Python side knows of a catalog's *shape* (messages, layouts, context prefixes,
reason rules, ignored wordings) and the assembled :class:`Catalog`. The words themselves are data in
``patterns/`` (see :mod:`.loading`)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .dialect import BoundedPattern, any_of, compile_portable, ordered_union, required_text
from .schema import INTEGER_FIELDS

BUNDLED_DIR = Path(__file__).resolve().parent / "patterns"  # package data: the YAML ships in the wheel

ENVELOPE_GROUPS = frozenset({"ts", "level", "logger", "thread", "node", "msg"})
CONTEXT_GROUPS = frozenset({"groupId", "clientId", "instanceId", "thread", "coordinator", "memberId", "partitions"})
REASON_GROUPS = frozenset({"memberId", "instanceId"})


@dataclass(frozen=True)
class Example:
    line: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class RegexEntry:
    """What every catalog entry has: an id, one portable regex, the examples that test it, and where it is."""

    id: str
    regex: str
    examples: tuple[Example, ...]
    path: str
    line: int

    @functools.cached_property
    def compiled(self) -> re.Pattern | BoundedPattern:
        """The regex; a user's own is time-limited per line by the ``regex`` module (the bundled ones are
        reviewed and tested, and run in the faster ``re``)."""
        if Path(self.path).is_relative_to(BUNDLED_DIR):
            return compile_portable(self.regex)
        import regex

        return BoundedPattern(regex.compile(self.regex), self)

    @functools.cached_property
    def required_text(self) -> str:
        return required_text(self.regex)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class MessagePattern(RegexEntry):
    """One Kafka log message: its wording across versions as one portable regex."""

    kind: str = ""
    component: str = ""
    level: str = "INFO"
    since: str = ""
    until: str | None = None
    anchor: str = ""
    constants: dict[str, Any] = field(default_factory=dict)
    multiline: bool = False
    housekeeping: bool = False  # a periodic line of no analytical value: counted as matched, never a row

    @property
    def versions(self) -> str:
        return f"{self.since}–{self.until or 'current'}"


@dataclass(frozen=True)
class Layout(RegexEntry):
    """An envelope: where the timestamp, level, logger and thread sit around the message."""

    ts_format: str | None = None
    header: bool = False  # the line before the message carries the timestamp (java.util.logging)
    last_resort: bool = False  # tried after every other layout, whichever file defines them


@dataclass(frozen=True)
class LayoutUnion:
    """Layouts as one regex (:func:`.dialect.ordered_union`): one match per line finds the first layout, in
    catalog order, that matches it. ``layout_of[n]`` is the layout whose outer group is number ``n`` (a
    match's ``lastindex``) and ``groups[i]`` the numbers of layout ``i``'s named groups, by name."""

    layouts: tuple[Layout, ...]
    pattern: re.Pattern | BoundedPattern
    layout_of: dict[int, int]
    groups: tuple[dict[str, int], ...]

    @classmethod
    def of(cls, layouts: list[Layout]) -> LayoutUnion:
        regex = ordered_union([layout.regex for layout in layouts])
        user = next((layout for layout in layouts if not Path(layout.path).is_relative_to(BUNDLED_DIR)), None)
        if user is None:
            pattern: re.Pattern | BoundedPattern = re.compile(regex)
        else:  # a user's layout in the union: the union runs under the same time limit as that layout alone
            import regex as regex_module

            pattern = BoundedPattern(regex_module.compile(regex), user)
        groups: list[dict[str, int]] = [{} for _ in layouts]
        layout_of = {}
        for name, number in pattern.groupindex.items():
            if name.startswith("rdAlt"):
                layout_of[number] = int(name.removeprefix("rdAlt"))
            else:
                field, _, layout = name.rpartition("_")
                groups[int(layout)][field] = number
        return cls(tuple(layouts), pattern, layout_of, tuple(groups))


@dataclass(frozen=True)
class ContextPrefix(RegexEntry):
    """A log-context prefix inside the message that names the group, client or thread. An ``inferred`` one
    reads them out of another name (a Streams application id in a thread's name): a group the message names
    comes first; a prefix the client writes with the group (``[Consumer clientId=…, groupId=…]``) comes before it."""

    inferred: bool = False


@dataclass(frozen=True)
class ReasonRule(RegexEntry):
    """Reason text (broker `reason: …`, client `due to: …`) → the cause it names, or ``symptom``."""

    cause: str = ""


@dataclass(frozen=True)
class JsonField:
    """Keys of a structured (JSON) record that hold one event-table field beside the message (KafkaJS's
    ``groupId``, a Go logger's ``group``): the first key present gives the value."""

    field: str  # a named group of the message regexes (groupId, memberId, generation, …)
    keys: tuple[str, ...]
    path: str
    line: int


@dataclass(frozen=True)
class IgnoredWording:
    """A reference wording deliberately left out of the catalogs, and why."""

    template: str
    reason: str
    path: str
    line: int


@dataclass
class Catalog:
    patterns: list[MessagePattern] = field(default_factory=list)
    layouts: list[Layout] = field(default_factory=list)
    outer_prefixes: list[ContextPrefix] = field(default_factory=list)
    context_prefixes: list[ContextPrefix] = field(default_factory=list)
    relevance_words: list[str] = field(default_factory=list)
    reasons: list[ReasonRule] = field(default_factory=list)
    ignored: list[IgnoredWording] = field(default_factory=list)
    json_fields: list[JsonField] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # a user's entries that replace a bundled one: "where: id (was where)"

    @functools.cached_property
    def by_id(self) -> dict[str, MessagePattern]:
        return {p.id: p for p in self.patterns}

    @property
    def pattern_versions(self) -> dict[str, tuple[str | None, str | None]]:
        """Each entry's Kafka releases (since, until): the wordings seen bound the versions that wrote the logs."""
        return {p.id: (p.since, p.until) for p in self.patterns}

    @functools.cached_property
    def anchors(self) -> list[str]:
        """Distinct literal anchors, the prefilter's whole vocabulary."""
        return sorted({p.anchor for p in self.patterns})

    @functools.cached_property
    def patterns_by_anchor(self) -> dict[str, list[MessagePattern]]:
        grouped: dict[str, list[MessagePattern]] = {}
        for pattern in self.patterns:
            grouped.setdefault(pattern.anchor, []).append(pattern)
        return grouped

    @functools.cached_property
    def any_outer_prefix(self) -> re.Pattern | BoundedPattern | None:
        """One regex for "some outer prefix starts this line", so most lines skip the prefix loop."""
        if not self.outer_prefixes:
            return None
        union = any_of(p.regex for p in self.outer_prefixes)
        user = next((p for p in self.outer_prefixes if not Path(p.path).is_relative_to(BUNDLED_DIR)), None)
        if user is None:
            return compile_portable(union)
        import regex  # a user's prefix in the union: the union runs under the same time limit as that prefix alone

        return BoundedPattern(regex.compile(union), user)

    @functools.cached_property
    def node_prefixes(self) -> list[ContextPrefix]:
        """The outer prefixes that name a node (docker-compose, kubectl --prefix)."""
        return [p for p in self.outer_prefixes if "(?<node>" in p.regex]

    @functools.cached_property
    def line_layouts(self) -> LayoutUnion:
        """The layouts of a record's line, as one regex."""
        return LayoutUnion.of([layout for layout in self.layouts if not layout.header])

    @functools.cached_property
    def header_layouts(self) -> LayoutUnion:
        """The layouts of a header line before a record (java.util.logging), as one regex."""
        return LayoutUnion.of([layout for layout in self.layouts if layout.header])

    @functools.cached_property
    def record_layouts(self) -> list[Layout]:
        """Layouts that start a timestamped record (message-only logs have none: only indented lines can
        be told to continue them)."""
        return [
            layout
            for layout in self.layouts
            if not layout.header and "(?<ts>" in layout.regex and not layout.regex.startswith("^.{")
        ]

    @functools.cached_property
    def priority(self) -> dict[str, int]:
        """Catalog order decides between two patterns matching one line: earlier wins."""
        return {p.id: i for i, p in enumerate(self.patterns)}


_CONVERTED_FIELDS = INTEGER_FIELDS | {"leader"}  # the columns whose text becomes another type


def coerce_field(name: str, value: Any) -> Any:
    """Turn an extracted string into the column's Python type (ints for integer columns)."""
    if value.__class__ is str and name not in _CONVERTED_FIELDS:  # most fields of every event: first, and cheap
        return value
    if value is None:
        return None
    if name == "leader":
        return value if isinstance(value, bool) else str(value).lower() in ("true", "1", "yes", "me")
    if name in INTEGER_FIELDS:
        try:
            number = int(str(value).strip())
        except ValueError:
            return None
        # a negative generation is the clients' "none yet" placeholder (Generation{generationId=-1}), not a generation
        return None if name == "generation" and number < 0 else number
    return str(value)
