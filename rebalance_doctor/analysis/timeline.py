"""Timelines: the event table as per-group lists of events, on one clock (see :mod:`.clocks` for how
each file's clock is set against the coordinator's)."""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import polars as pl

from ..catalog.schema import COLUMN_NAMES, SYMPTOM
from .model import ClockSkew, Evidence

EARLIEST = datetime.min.replace(tzinfo=UTC)
UNNAMED_GROUP = "(group not in the logs)"
BROKER_FOLLOW_UPS = {"rebalance_skipped"}  # coordinator lines that continue the previous one and name no group
# Kinds whose lines some clients print without the group (a Streams assignor, librdkafka's debug lines and fatal
# errors, KafkaJS's debug lines, a consumer's or worker's close in Arroyo and Connect): when nothing in their file
# names one, they still make a rebalance, of a group the logs do not name. A coordinator's lines of these kinds name
# their group.
GROUPLESS_KINDS = {"probing_rebalance", "followup_rebalance", "version_probing", "streams_participants", "streams_assignment",
                   "poll_timeout", "leave_group", "join_requested", "join_start", "join_failed", "heartbeat_failed",
                   "session_timeout", "subscription_changed", "member_fenced", "consumer_lifecycle", "consumer_started",
                   "coordinator_discovered", "join_succeeded", "sync_succeeded", "partitions_assigned", "partitions_revoked"}


# The texts of an event (its message and raw lines) stay in the table's columns: only the lines a finding cites,
# and a departure's mention of a member, are read, and a Python string per event for them was a third of a
# storm analysis's memory.
TEXT_COLUMNS = ("message", "raw")
ROW_COLUMNS = tuple(name for name in COLUMN_NAMES if name not in TEXT_COLUMNS)


class EventTexts:
    """The message and raw text of a table's events, read one event at a time by its row."""

    def __init__(self, table: pl.DataFrame):
        self._message, self._raw = table["message"], table["raw"]

    def message(self, row: int) -> str | None:
        return self._message[row]

    def raw(self, row: int) -> str | None:
        return self._raw[row]


class Event(NamedTuple("EventRow", [(name, Any) for name in (*ROW_COLUMNS, "at", "row", "texts")])):
    """One event-table row, its columns as attributes (``event.kind``), with its time on the reference
    clock (``at``), its ``row`` in the table and the table's ``texts``. A tuple: far less memory than a
    dict per event, for the many events of a large incident, and attribute reads as fast as a dict's."""

    __slots__ = ()

    @property
    def message(self) -> str | None:
        return None if self.texts is None else self.texts.message(self.row)

    @property
    def raw(self) -> str | None:
        return None if self.texts is None else self.texts.raw(self.row)

    @property
    def evidence(self) -> Evidence:
        text = (self.message or self.raw or "").split("\n", 1)[0]
        return Evidence(self.file, self.line, text, self.ts, self.node, self.kind)

    @property
    def participant(self) -> tuple[str, str, str]:
        """Who logged it: file, node and client/thread (one file may hold several pods and consumers)."""
        return self.file, self.node or "", self.client_id or self.thread or ""


def python_columns(table: pl.DataFrame) -> dict[str, list[Any]]:
    """The table's columns as Python lists, a repeated text (file, node, kind, group, client …) as one
    shared string object: less memory than a string per cell."""
    columns = {}
    for name, column in table.to_dict().items():
        if column.dtype == pl.Utf8:
            distinct = column.drop_nulls().unique(maintain_order=True)
            if len(distinct) * 4 < len(column):
                values = distinct.to_list()
                columns[name] = [None if code is None else values[code] for code in column.cast(pl.Enum(values)).to_physical().to_list()]
                continue
        columns[name] = column.to_list()
    return columns


def group_timelines(events: pl.DataFrame, skews: list[ClockSkew]) -> Iterator[tuple[str, list[Event]]]:
    """Each group's events in reference-clock order (events without a timestamp keep their file position),
    group by group in group-id order. The events are made a batch of groups at a time, and a group's are
    the caller's alone once yielded: a storm's hundreds of thousands of events are never held all at once.

    A client line that does not name its group (librdkafka's JoinGroup/SyncGroup responses, a Streams
    assignor line) belongs to the group its own consumer named last, in the same file.
    """
    offset = {s.file: timedelta(milliseconds=s.skew_ms) for s in skews}
    shift = pl.col("file").replace_strict(offset, default=timedelta(0), return_dtype=pl.Duration("us")) if offset else timedelta(0)
    table = events.select(*ROW_COLUMNS, at=pl.col("ts") - shift, row=pl.int_range(pl.len()))
    texts = EventTexts(events)
    groups = pl.Series("group_id", _timeline_groups(python_columns(table.select(_GROUPING_COLUMNS))), dtype=pl.Utf8)
    table = table.with_columns(groups)
    # the rows of each group together, in group-id order and table order within a group
    rows = table.select("group_id", "row").filter(pl.col("group_id").is_not_null()).sort("group_id", maintain_order=True)
    sizes = rows.group_by("group_id", maintain_order=True).len().rows()
    first = start = 0
    while first < len(sizes):  # a batch: whole groups, up to _SLICE_ROWS events unless one group has more
        last, count = first + 1, sizes[first][1]
        while last < len(sizes) and count + sizes[last][1] <= _SLICE_ROWS:
            count += sizes[last][1]
            last += 1
        timelines = _batch_timelines(table, rows["row"].slice(start, count), sizes[first:last], texts)
        first, start = last, start + count
        while timelines:
            yield timelines.pop()


def _batch_timelines(table: pl.DataFrame, rows: pl.Series, batch: list[tuple[str, int]], texts: EventTexts) -> list[tuple[str, list[Event]]]:
    """The timelines of a batch of groups, whose ``rows`` come group after group: last group first, for popping."""
    columns = python_columns(table.select(pl.all().gather(rows)))
    columns["texts"] = [texts] * len(rows)
    events = list(map(Event._make, zip(*columns.values(), strict=True)))
    timelines, start = [], 0
    for group_id, size in batch:
        timeline = events[start : start + size]
        _order(timeline)
        timelines.append((group_id, timeline))
        start += size
    timelines.reverse()
    return timelines


_SLICE_ROWS = 50_000
_GROUPING_COLUMNS = ("group_id", "component", "kind", "file", "node", "client_id", "thread")


def _timeline_groups(columns: dict[str, list[Any]]) -> list[str | None]:
    """The group each event belongs to (None: to none), computed on the columns before any event exists
    (replacing the field of the named tuples afterwards was slow)."""
    last_group: dict[tuple[str, str, str], str] = {}
    file_group: dict[tuple[str, str], str] = {}  # a Streams client's own lines name no group: its consumer's do
    groups: list[str | None] = []
    names = _GROUPING_COLUMNS
    # Before its consumer names a group, a line belongs to the one group that consumer (or its file) names later.
    only_group: dict[tuple, set[str]] = defaultdict(set)
    for group, component, _, file, node, client, thread in zip(*(columns[name] for name in names), strict=True):
        if group is not None and component != "broker":
            only_group[(file, node or "", client or thread or "")].add(group)
            only_group[(file, node or "")].add(group)
    rows = zip(*(columns[name] for name in names), strict=True)
    broker_group: dict[str, str] = {}  # the group of the coordinator's last line, per file
    for group, component, kind, file, node, client, thread in rows:
        participant = file, node or "", client or thread or ""  # as Event.participant
        later = only_group.get(participant) or only_group.get(participant[:2]) or set()
        if group is None and component != "broker" and participant not in last_group and len(later) == 1:
            group = next(iter(later))
        if group is not None:
            if component != "broker":
                last_group[participant] = file_group[participant[:2]] = group
            else:
                broker_group[file] = group
        elif component != "broker" and (inherited := last_group.get(participant) or file_group.get(participant[:2])):
            group = inherited
        elif kind in BROKER_FOLLOW_UPS and file in broker_group:
            group = broker_group[file]  # the line right after the one that names the group
        elif kind in GROUPLESS_KINDS and component != "broker":  # a coordinator's lines name their group, or follow one that does
            group = UNNAMED_GROUP  # e.g. a Streams assignor line: the group is never printed
        groups.append(group)
    return groups


def _order(timeline: list[Event]) -> None:
    """Sort by corrected time; an event without time stays right after the event that preceded it in its file."""
    last_seen: dict[str, datetime] = {}
    keyed = []
    for position, event in enumerate(timeline):
        file = event.file
        if event.at is not None:
            last_seen[file] = event.at
        anchor = event.at or last_seen.get(file)
        keyed.append((anchor is None, anchor or EARLIEST, position, event))
    keyed.sort(key=lambda item: item[:3])
    timeline[:] = [item[3] for item in keyed]


class TimeIndex:
    """A group's timeline with binary search by time: analyzers ask "what happened around t" per rebalance,
    which must not cost a scan of the whole timeline (a storm has tens of thousands of rebalances)."""

    def __init__(self, timeline: list[Event]):
        self.events = timeline
        self.keys: list[datetime] = []
        last = EARLIEST
        for event in timeline:  # running maximum: monotonic, a timeless line takes the time before it
            if event.at is not None and event.at > last:
                last = event.at
            self.keys.append(last)
        self.first_seen: dict[tuple[str, str, str], Event] = {}
        self.member_nodes: dict[str, set[str]] = defaultdict(set)  # the nodes whose own lines name each member
        self._files: dict[tuple[str, str | None], list[Event]] = defaultdict(list)  # each file's events, in timeline order
        self._in_file: dict[int, int] = {}  # id(event) → its position among its file's events
        self._first: dict[tuple[tuple[str, str | None], str], int] = {}
        for event in timeline:
            self.first_seen.setdefault(event.participant, event)
            events = self._files[(event.file, event.node)]
            self._in_file[id(event)] = len(events)
            events.append(event)
            if event.member_id and event.node and event.component != "broker":
                self.member_nodes[event.member_id].add(event.node)

    def coordinator_moved(self, found: Event) -> bool:
        """A member found a coordinator other than the one the group had before (not just lost and found again)."""
        previous = None
        for event in self.events:
            if event is found:
                return previous is not None and previous != broker_id(found.coordinator or "")
            if event.kind == "coordinator_discovered" and event.coordinator and event.participant == found.participant:
                previous = broker_id(event.coordinator)
        return False

    def __contains__(self, event: Event) -> bool:
        return id(event) in self._in_file

    def place_in_file(self, event: Event) -> int:
        """How many events of ``event``'s own file (and node) precede it."""
        return self._in_file[id(event)]

    def in_file(self, event: Event) -> int:
        """How many events ``event``'s own file (and node) has."""
        return len(self._files[(event.file, event.node)])

    def just_after_in_file(self, event: Event, count: int) -> list[Event]:
        """The ``count`` events of ``event``'s file right after it."""
        place = self._in_file[id(event)]
        return self._files[(event.file, event.node)][place + 1 : place + 1 + count]

    def just_before_in_file(self, event: Event, count: int) -> list[Event]:
        """The ``count`` events of ``event``'s file right before it."""
        place = self._in_file[id(event)]
        return self._files[(event.file, event.node)][max(0, place - count) : place]

    def first_in_file(self, event: Event, name: str, test: Callable[[Event], bool]) -> int:
        """Where ``test`` first holds among the events of ``event``'s file (their count when never), found once per
        file and ``name``: asked for every rebalance of a storm, it must not cost a scan each time."""
        key = ((event.file, event.node), name)
        if key not in self._first:
            events = self._files[key[0]]
            self._first[key] = next((i for i, e in enumerate(events) if test(e)), len(events))
        return self._first[key]

    def between(self, start: datetime, end: datetime) -> list[Event]:
        """Events whose (forward-filled) time lies in [start, end], in timeline order."""
        return self.events[bisect.bisect_left(self.keys, start) : bisect.bisect_right(self.keys, end)]


def consumer_starts(events: pl.DataFrame, skews: list[ClockSkew]) -> dict[tuple[str, str], list[datetime]]:
    """When a consumer was constructed (its configuration dump), per file and node, on the reference clock:
    the line often names no group, yet it tells a restart from a pause."""
    offset = {s.file: timedelta(milliseconds=s.skew_ms) for s in skews}
    starts: dict[tuple[str, str], list[datetime]] = defaultdict(list)
    for row in events.filter((pl.col("kind") == "client_config") & pl.col("ts").is_not_null()).select("file", "node", "ts").iter_rows():
        file, node, ts = row
        starts[(file, node or "")].append(ts - offset.get(file, timedelta(0)))
    return dict(starts)


def files_and_nodes(events: pl.DataFrame) -> tuple[list[str], list[str]]:
    files = events["file"].unique(maintain_order=True).to_list()
    nodes = [node for node, _ in Counter(events["node"].drop_nulls().to_list()).most_common()]
    return files, sorted(nodes)


_COORDINATOR_ID = re.compile(r"(?:nodeId=|\bid:? )(\d+)")


def error_names(event: Event, code: str) -> bool:
    """The event's error is the Kafka error ``code`` (``NOTCOORDINATOR``), however the client prints it:
    NOT_COORDINATOR, "Not coordinator" or NotCoordinatorForGroup."""
    return code in (event.error or "").upper().replace(" ", "").replace("_", "")


def answered_not_coordinator(event: Event) -> bool:
    """The broker a member asked said it is not (or no longer) the group's coordinator: the coordinator moved."""
    return error_names(event, "NOTCOORDINATOR")


def suspects_coordinator(event: Event) -> bool:
    """A client's own session timeout that only marks its coordinator dead (the Java client): no heartbeat was
    answered, but the coordinator may never have expired the member. Only lines that show it removed (its member
    id unknown, a commit refused, a rejoin) make a rebalance of it. A client that says its session expired
    (kafka-python) or that it rejoins (librdkafka) gives the line a cause."""
    return event.kind == "session_timeout" and event.cause is None


FAILED_REQUESTS = {"join_failed", "sync_failed", "heartbeat_failed", "commit_failed"}  # a request the coordinator refused
REMOVAL_SIGNS = {"heartbeat_failed", "commit_failed", "generation_reset", "partitions_lost", "member_expired"}
# What only a member of the group logs: it had joined, held partitions or heartbeated.
MEMBERSHIP_HELD = {"join_succeeded", "sync_succeeded", "partitions_assigned", "partitions_revoked", "heartbeat_failed", "commit_failed",
                   "generation_reset"}


STREAMS_START_STATES = {"CREATED", "STARTING"}
# a consumer closing, starting or constructed anew: a wait around such a line is downtime, not a rebalance's pause
RESTARTING = {"consumer_lifecycle", "consumer_started", "client_config"}
# a member on its way up, before it joins
START_UP = {"subscription_changed", "consumer_started", "client_config", "coordinator_discovered"}


def start_up_line(event: Event) -> bool:
    """A line a consumer prints on its way up: its config, its subscription, finding the coordinator, the
    coordinator asking it for a member id (only a new member has none), or a Streams client or thread leaving its
    CREATED or STARTING state (states only a start passes through)."""
    if event.kind in ("streams_thread_state", "streams_client_state"):
        return leaves_start_state(event)
    if asked_for_member_id(event):
        return True
    return event.kind in START_UP and not changes_subscription(event)


def consumer_start_line(event: Event) -> bool:
    """A start-up line other than finding the coordinator, which a member at work does again when it moves."""
    return start_up_line(event) and event.kind != "coordinator_discovered"


def leaves_start_state(event: Event) -> bool:
    """A Streams thread or client leaving CREATED or STARTING: a start, which only its first rebalance completes."""
    return event.kind in ("streams_thread_state", "streams_client_state") and (event.prev_state or "").upper() in STREAMS_START_STATES


def changes_subscription(event: Event) -> bool:
    """A subscription change the catalogs give a cause (topics matched before changed): a consumer at work."""
    return event.kind == "subscription_changed" and event.cause not in (None, SYMPTOM, "unknown")


def names_partitions(partitions: str | None) -> bool:
    """A partition list with a partition in it: "[]", "{}" or "" is a member holding (or revoking) nothing."""
    return bool(partitions and partitions.strip("[]{} ,"))


def held_membership(event: Event) -> bool:
    """A line only a member of the group logs. A request answered by a broker that is not the coordinator shows
    none: a member starting sends its first heartbeat (KIP-848's join) there too."""
    return event.kind in MEMBERSHIP_HELD and not answered_not_coordinator(event)


def shows_removal(event: Event) -> bool:
    """A line that shows a member out of its generation: the coordinator refused its heartbeat or commit (not for
    being the wrong broker), the member reset its generation or lost its partitions, or the coordinator expired it."""
    return event.kind in REMOVAL_SIGNS and not answered_not_coordinator(event)


def fenced_static_member(event: Event) -> bool:
    """A member fenced for its group.instance.id: another instance joined with the same id (KIP-345). The
    coordinator answers the old instance's join, sync, heartbeat or commit FENCED_INSTANCE_ID."""
    if event.kind == "member_fenced":
        return bool(event.instance_id) or error_names(event, "FENCEDINSTANCEID")
    return event.kind in FAILED_REQUESTS and error_names(event, "FENCEDINSTANCEID")


def answered_unknown_member(event: Event) -> bool:
    """The coordinator no longer knows the member (UNKNOWN_MEMBER_ID, "Unknown member", UnknownMemberId)."""
    return error_names(event, "UNKNOWNMEMBER")


def asked_for_member_id(event: Event) -> bool:
    """The coordinator answered a join MEMBER_ID_REQUIRED: only a member joining without an id (a new one) is."""
    return error_names(event, "MEMBERIDREQUIRED")


def broker_id(printed: str) -> str:
    """`host:9092 (id: 2147483646 rack: null)` → '1' (clients address the coordinator as 2147483647 − broker id)."""
    m = _COORDINATOR_ID.search(printed)
    if m and int(m.group(1)) > 2147483000:
        return str(2147483647 - int(m.group(1)))
    return m.group(1) if m else printed
