"""Root causes: why each rebalance started, told apart from its symptoms, with the lines that prove it.

The strongest witness is the coordinator: its rebalance_start carries the reason (2.1+) and, since
3.2, the client's own reason; patterns/reasons.yaml has turned those texts into the `cause` column.
Without it (older brokers, broker logs missing) the events around the start speak: a member the
coordinator expired, a member's poll timeout or LeaveGroup, a Streams followup or probing trigger,
a new member's first join, a coordinator move. "The group is already rebalancing" and friends are
symptoms: they are followed to the member that started the rebalance, and when nothing else is
known the cause is `unknown`, with what the missing logs would show.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta

from ..catalog.schema import SYMPTOM
from .model import EPOCH_PROTOCOLS, Cause, Evidence, Rebalance
from .rebalances import JOIN_SIGNALS, LEAVING, LINES_AROUND, MEMBERSHIP_OUT, Draft, Episode, joins
from .timeline import (
    EARLIEST,
    START_UP,
    Event,
    TimeIndex,
    answered_not_coordinator,
    answered_unknown_member,
    asked_for_member_id,
    changes_subscription,
    consumer_start_line,
    error_names,
    fenced_static_member,
    held_membership,
    leaves_start_state,
    names_partitions,
    start_up_line,
)

BROKER_LEAD = timedelta(seconds=2)  # a broker expiry/leave/join logged just before the rebalance start
# KIP-848: the coordinator bumps the epoch at the next member heartbeat after a leave or join, up to one
# group.consumer.heartbeat.interval.ms (5 s by default) later.
EPOCH_BUMP_LEAD = timedelta(seconds=6)
JOIN_PHASE = timedelta(minutes=5)  # members rejoin within the rebalance timeout (max.poll.interval.ms, 5 min by default)
CLIENT_GRACE = timedelta(seconds=1)  # client trigger lines may follow the coordinator's start by a little
RETRY_WINDOW = timedelta(seconds=30)
# A member's JVM stopping explains its expiry or poll timeout when the pause reaches into this window around it.
PAUSE_BEFORE, PAUSE_AFTER = timedelta(seconds=60), timedelta(seconds=5)
PAUSE_SEARCH = timedelta(minutes=10)  # pauses are logged when they end: search this far past the rebalance
MIN_RUNTIME_PAUSE_MS = 1000  # shorter pauses cannot stop a heartbeat for a session timeout
STALLED_CAUSES = ("heartbeat_expiry", "poll_timeout")
DEPARTURES = MEMBERSHIP_OUT | LEAVING | {"session_timeout"}  # a member gone, as the coordinator or the member says it
STARTUP_AND_JOIN = START_UP | {"join_start"}  # signs of a member starting up
CONSTRUCTION_REACH = 12  # the lines a client logs between its construction and its first join, at most
# a member's lines that may say why (a JoinGroup request carries its member's reason from 3.2, KIP-800)
REASONED = ("join_requested", "join_start", "leave_group", "subscription_changed", "consumer_lifecycle")

SUMMARY = {
    "heartbeat_expiry": "the coordinator expired {member}: no heartbeat within session.timeout.ms",
    "poll_timeout": "{member} exceeded max.poll.interval.ms between two poll() calls and left the group",
    "member_join": "{member} joined the group",
    "member_leave": "{member} left the group",
    "cooperative_followup": "second round of a cooperative rebalance: partitions revoked in the first round are reassigned",
    "probing_rebalance": "Kafka Streams probing rebalance to check whether warm-up replicas caught up",
    "version_probing": "Kafka Streams version probing: members run different subscription versions",
    "host_endpoint_change": "a Kafka Streams instance changed its application.server endpoint",
    "shutdown_requested": "a Kafka Streams client requested the application to shut down",
    "enforced": "{member} requested a rebalance",
    "metadata_change": "subscription or topic metadata changed ({member})",
    "coordinator_change": "the group coordinator moved; members rediscovered it and rejoined",
    "static_member_fencing": "static member {member} was fenced or replaced",
    "assignment_timeout": "the coordinator fenced {member}: it did not revoke and acknowledge its assignment within its "
                          "rebalance timeout",
    "topology_change": "the coordinator configured the Kafka Streams group's topology anew",
    "group_conversion": "the coordinator converted the group to another type when {member} joined",
    "failed_rebalance_retry": "the previous rebalance did not complete and is retried",
    "unknown": "the logs at hand do not show why this rebalance started",
}
BROKER_EVENT_CAUSE = {
    "member_expired": "heartbeat_expiry",
    "member_left": "member_leave",
    "member_joined": "member_join",
    "member_fenced": "static_member_fencing",
    "static_member_rejoined": "static_member_fencing",
    "coordinator_elected": "coordinator_change",
    "group_loaded": "coordinator_change",
    "group_converted": "group_conversion",
    "topology_configured": "topology_change",
    "topology_ready": "topology_change",
}
# When several coordinator lines stand right before a start, the member's own fate is the better witness.
BROKER_WITNESS_ORDER = ["member_expired", "member_fenced", "member_left", "static_member_rejoined", "group_converted",
                        "member_joined", "topology_ready", "topology_configured", "coordinator_elected", "group_loaded"]
CLIENT_EVENT_CAUSE = {
    "poll_timeout": "poll_timeout",
    "session_timeout": "heartbeat_expiry",
    "probing_rebalance": "probing_rebalance",
    "version_probing": "version_probing",
    "shutdown_requested": "shutdown_requested",
    "thread_replaced": "member_join",
}
# The order in which client-side witnesses are believed (strongest first) and how much.
CLIENT_CONFIDENCE = {
    "poll_timeout": 0.85, "heartbeat_expiry": 0.7, "probing_rebalance": 0.85, "cooperative_followup": 0.85,
    "version_probing": 0.85, "shutdown_requested": 0.85, "member_leave": 0.8, "static_member_fencing": 0.8,
    "metadata_change": 0.75, "enforced": 0.75, "member_join": 0.7, "failed_rebalance_retry": 0.6, "coordinator_change": 0.6,
    "newcomer": 0.55,  # a client whose log starts right before the rebalance: probably the member that joined
}


def attribute(draft: Draft, index: TimeIndex, previous: Rebalance | None, sides: set[str], protocol: str | None = None) -> Cause:
    """The cause of one rebalance (see module docstring for the order of witnesses)."""
    timed = sorted((e for e in draft.starts + draft.broker if e.at), key=lambda e: e.at)
    start = draft.starts[0] if draft.starts else (timed[0] if timed else None)
    start_at = start.at if start else (_first_client_signal(draft) or draft.first_at)
    window = _window(index, previous, start_at, draft)
    if start is not None and start.cause not in (None, SYMPTOM):
        related = _related(index, start, start.member_id)
        refined = _refine(start.cause, window, draft, index, previous)
        if refined is not None:  # the member's own log says more than the coordinator's generic reason
            kind, event, member = refined
            return _cause(kind, 0.9, member or start.member_id, [event, start, *related], sides)
        return _cause(start.cause, 0.95, start.member_id or _member_of(related), [start, *related], sides)
    lead = EPOCH_BUMP_LEAD if protocol in EPOCH_PROTOCOLS else BROKER_LEAD
    if not draft.starts:  # no line shows it starting: it began before its first line, by up to a join phase
        lead = max(lead, JOIN_PHASE)
    near = [e for e in window if e.component == "broker" and e.kind in BROKER_EVENT_CAUSE and _near(e, start_at, lead)
            and not _cause_of(e, previous)]
    first = start or next((e for e in draft.broker + draft.events if e in index), None)
    if first is not None and first.at is None and first in index:  # no times: the lines just before it
        near = [e for e in index.just_before_in_file(first, LINES_AROUND) if e.component == "broker" and e.kind in BROKER_EVENT_CAUSE]
    broker_witness = min(near, key=lambda e: BROKER_WITNESS_ORDER.index(e.kind), default=None)
    if broker_witness is not None:
        kind = broker_witness.cause if broker_witness.cause not in (None, SYMPTOM, "unknown") else BROKER_EVENT_CAUSE[broker_witness.kind]
        alike = [e for e in near if e.kind == broker_witness.kind and e is not broker_witness][:2]
        member = broker_witness.member_id
        if broker_witness.kind == "group_converted":  # the member whose join converted it is named right after
            joiner = next((e for e in near if e.kind == "member_joined" and e.member_id), None)
            member, alike = (joiner.member_id, [joiner]) if joiner is not None else (member, alike)
        return _cause(kind, 0.85, member, [broker_witness, *alike, *([start] if start else [])], sides)
    client = _client_witness(window, draft, index, previous)
    if client is not None:
        kind, event, member = client
        return _cause(kind, CLIENT_CONFIDENCE.get(kind, 0.6), member, [event, *([start] if start else [])], sides)
    if previous is not None and previous.failed and start_at and previous.started_at and start_at - previous.started_at <= RETRY_WINDOW:
        return _cause("failed_rebalance_retry", 0.6, None, [start] if start else [], sides)
    newcomer = next((ep for ep in draft.episodes if ep.first_in_log and _started_with(ep, window)
                     and not (ep.join is not None and ep.join in index and _was_member_before(ep.join, index))), None)
    if newcomer is not None and newcomer.join is not None:
        return _cause("member_join", 0.6, newcomer.member_id, [newcomer.join], sides)
    # A member that was not processing before its first join in the log, and found itself the only member of the
    # new generation, joined an empty group: nothing else in view explains the rebalance, its own join did.
    alone = next((ep for ep in draft.episodes if ep.first_in_log and ep.join is not None
                  and any(e.member_count == 1 for e in ep.events)), None)
    if alone is not None:
        return _cause("member_join", 0.55, alone.member_id, [alone.join, *(e for e in alone.post if e.member_count == 1)], sides)
    if previous is None and draft.generation == 1 and protocol not in EPOCH_PROTOCOLS:
        # the group's first generation, and the first rebalance in view: members joining a new group formed it
        return _cause("member_join", 0.55, None, (draft.starts + draft.broker)[:2], sides)
    retries = _failed_attempts(draft)
    if retries:
        return _cause("failed_rebalance_retry", 0.55, retries[0].member_id, retries[:3], sides)
    moved = _share_moved(draft, window)
    if moved is not None:
        kind, revoked, assigned = moved
        return _cause(kind, 0.5, None, [revoked, assigned], sides)
    first_join = _first_join_in_its_log(draft, index)
    if first_join is not None:
        return _cause("member_join", 0.5, first_join.member_id, [first_join], sides)
    symptoms = [e for e in window if e.cause == SYMPTOM] + ([start] if start is not None and start.cause == SYMPTOM else [])
    summary = SUMMARY["unknown"]
    if symptoms:
        summary += "; members only report symptoms (the group was already rebalancing when they noticed)"
    return Cause("unknown", 0.2 if symptoms else 0.1, summary, [e.evidence for e in symptoms[:3]], None, _confirm("unknown", sides))


def _failed_attempts(draft: Draft) -> list[Event]:
    """A member whose Join/SyncGroup failed within this rebalance and that joined again: it kept it going by
    retrying. Its failures (and the retry, when it failed only once), or nothing when no member retried."""
    failures: dict[tuple[str, str, str], list[Event]] = {}
    retried: dict[tuple[str, str, str], Event] = {}
    for event in sorted(draft.events, key=lambda e: (e.at is None, e.at or EARLIEST)):
        if not failures and _already_rebalancing(event):
            return []  # the group was rebalancing before the first failure: the failures are not what started it
        if event.kind in ("join_failed", "sync_failed") and event.component != "broker":
            failures.setdefault(event.participant, []).append(event)
        elif event.kind == "join_requested" and event.participant in failures:
            retried.setdefault(event.participant, event)
    attempts = [f if len(f) >= 2 else [*f, retried[who]] for who, f in failures.items() if len(f) >= 2 or who in retried]
    return max(attempts, key=len, default=[])


def _told_rebalancing_before(event: Event, window: list[Event]) -> bool:
    """The member had heard of a rebalance before the coordinator forgot it: it was dropped for not rejoining
    in time, not for heartbeats that stopped."""
    for other in window:
        if other is event:
            return False
        if other.participant == event.participant and _already_rebalancing(other):
            return True
    return False


def _already_rebalancing(event: Event) -> bool:
    return event.cause == SYMPTOM or error_names(event, "REBALANCEINPROGRESS")


def _share_moved(draft: Draft, window: list[Event]) -> tuple[str, Event, Event] | None:
    """A consumer that gave up its partitions and got back only some of them, while nobody left: another member
    took the rest, so one joined. Or one that got back partitions of a topic it had none of: its subscription
    now matches that topic. (More partitions of the same topics say a member left, not how: no cause.) The
    cause, the revocation and the new assignment, or None. A consumer is its file and thread: a listener
    container's own lines name no client id."""
    events = list({id(e): e for e in window + draft.events}.values())
    departed = any(e.kind in DEPARTURES for e in events)
    revoked: dict[tuple, Event] = {}
    for event in sorted((e for e in events if e.at is not None), key=lambda e: e.at) or events:
        consumer = (event.file, event.node, event.thread or event.client_id)
        if event.kind == "partitions_revoked" and _partition_set(event.partitions):
            revoked[consumer] = event
        elif event.kind == "partitions_assigned" and consumer in revoked:
            before, after = _partition_set(revoked[consumer].partitions), _partition_set(event.partitions)
            if after and after < before and not departed:
                return "member_join", revoked[consumer], event
            if after > before and _topics(after) - _topics(before):
                return "metadata_change", revoked[consumer], event  # a topic it had none of: its subscription grew
    return None


def _topics(partitions: frozenset[str]) -> set[str]:
    """The topics of partitions printed as `topic-N`."""
    return {p.rsplit("-", 1)[0] for p in partitions}


def _partition_set(partitions: str | None) -> frozenset[str]:
    """Partitions as `topic-N`, however printed: `[orders-0, orders-1]`, or `orders [0], orders [1]` (kcat)."""
    text = _BRACKETED_PARTITION.sub(r"\1-\2", partitions or "")
    return frozenset(p for p in re.split(r"[\s,\[\]{}]+", text) if p)


_BRACKETED_PARTITION = re.compile(r"([^\s,\[\]{}]+)\s*\[(\d+)\]")


def _first_join_in_its_log(draft: Draft, index: TimeIndex) -> Event | None:
    """In a rebalance known only from members' lines (a client that prints no generation), a member joining for
    the first time in its log, after start-up lines only: a consumer starting, the one change in view."""
    if draft.starts or draft.episodes:
        return None
    joined: set[tuple[str, str, str]] = set()
    for event in draft.signals:
        if not joins(event) or event.component == "broker" or event.participant in joined:
            continue
        joined.add(event.participant)
        if event in index and _starting(event, index):
            return event
    return None


def _never_joined(event: Event, index: TimeIndex) -> bool:
    """The event's file shows a consumer starting before it, and at most trying to join: never a member."""
    place = index.place_in_file(event)
    return place > 0 and index.first_in_file(event, "beyond a join attempt", lambda e: _at_work(e) and e.kind != "join_start") >= place


def _tried_to_join(event: Event, index: TimeIndex) -> bool:
    return index.first_in_file(event, "join attempt", lambda e: e.kind == "join_start") < index.place_in_file(event)


def _was_member_before(event: Event, index: TimeIndex) -> bool:
    """The event's file shows a consumer that had joined the group before it (not one still starting)."""
    return index.first_in_file(event, "member", held_membership) < index.place_in_file(event)


def _asked_while_starting(event: Event, index: TimeIndex) -> bool:
    """A consumer starting may ask a broker before the coordinator has loaded its group, or lose its connection to
    the coordinator it has just found: one that had not been a member yet, in a file that shows a consumer start
    (before the answer, or after it: an application that builds its consumer anew on the error), or its coordinator
    found before the loss. Finding the coordinator again after the loss is what a move looks like: no start."""
    if _was_member_before(event, index):
        return False
    if index.first_in_file(event, "coordinator found", lambda e: e.kind == "coordinator_discovered") < index.place_in_file(event):
        return True  # it had just found its coordinator, and had not joined: it was starting
    return index.first_in_file(event, "consumer start", consumer_start_line) < index.in_file(event)


def _start_shown_before(event: Event, index: TimeIndex) -> bool:
    """A start-up line other than a join before the event in its file: a log that begins at a join shows a member
    (re)joining, not why."""
    return index.first_in_file(event, "start-up", start_up_line) < index.place_in_file(event)


def _starting(event: Event, index: TimeIndex) -> bool:
    """The event's file shows a consumer starting up before it (a start-up line), and nothing else. A log that begins
    at the event (a time window, a rotated file), or with detail a member at work prints too (a rejoin's "Disabling
    heartbeat thread"), may begin in the middle of a consumer's life: that is not a start."""
    return _start_shown_before(event, index) and _only_starting_before(event, index)


def _only_starting_before(event: Event, index: TimeIndex) -> bool:
    """Nothing in the event's file before it shows a consumer at work (partitions held, an error from the group,
    an earlier join): only start-up lines, and detail that shows neither (diagnostics). The whole file, not only the
    member's own lines: a line whose client id a paste mangled is another participant, and a consumer starting
    beside a busy one is not the only change."""
    return index.first_in_file(event, "busy", _at_work) >= index.place_in_file(event)


def _constructed_to_join(event: Event, index: TimeIndex) -> bool:
    """A client constructed (its configuration or version line) that joins next, with nothing between but start-up
    lines and a revocation of nothing: a consumer (re)starting, though its file shows an earlier life. A join is
    such a start when it is the first join after such a construction (the construction line may name no group)."""
    if event.kind in JOIN_SIGNALS:
        before = index.just_before_in_file(event, CONSTRUCTION_REACH)
        last_join = max((i for i, e in enumerate(before) if e.kind in JOIN_SIGNALS), default=-1)
        return any(e.kind == "client_config" and _constructed_to_join(e, index) for e in before[last_join + 1 :])
    if event.kind != "client_config":
        return False
    for later in index.just_after_in_file(event, CONSTRUCTION_REACH):
        if later.kind in JOIN_SIGNALS:
            return True
        if _at_work(later) and not (later.kind == "partitions_revoked" and not names_partitions(later.partitions)):
            return False
    return False


def _joins_holding_partitions(event: Event) -> bool:
    """A join logged with the partitions the member holds (ruby-kafka tags its lines with them): it was at work."""
    return event.kind == "join_start" and names_partitions(event.partitions)


def _at_work(event: Event) -> bool:
    """A line only a consumer at work prints: anything but start-up lines and detail, or detail that names the
    partitions it was consuming (sarama's "closed dead subscription to orders/3")."""
    return not start_up_line(event) and (event.kind != "diagnostic" or bool(event.partitions))


def _started_with(episode: Episode, window: list[Event]) -> bool:
    """The member's log shows it starting: start-up lines before its join, or a Streams thread or client of its
    file leaving its start state around this rebalance (a thread's lines name no consumer: they are its file's)."""
    return any(start_up_line(e) for e in episode.pre) or any(leaves_start_state(e) and e.file == episode.participant[0]
                                                               for e in window)


# Coordinator reasons that only say what the coordinator saw; a member's own line may name the real cause.
REFINABLE = {
    "member_leave": {"poll_timeout"},  # before 3.2 the broker cannot know why a member left
    "metadata_change": {"cooperative_followup", "probing_rebalance", "version_probing", "enforced", "shutdown_requested"},
}


def _refine(broker_cause: str, window: list[Event], draft: Draft, index: TimeIndex,
            previous: Rebalance | None) -> tuple[str, Event, str | None] | None:
    better = REFINABLE.get(broker_cause)
    if not better:
        return None
    witness = _client_witness(window, draft, index, previous)
    return witness if witness is not None and witness[0] in better else None


def _cause(kind: str, confidence: float, member: str | None, events: list[Event], sides: set[str]) -> Cause:
    seen: set[tuple[str, int]] = set()
    evidence: list[Evidence] = []
    for event in events:
        if (event.file, event.line) not in seen:
            seen.add((event.file, event.line))
            evidence.append(event.evidence)
    return Cause(kind, confidence, SUMMARY[kind].format(member=member or "a member"), evidence, member, _confirm(kind, sides))


def _confirm(kind: str, sides: set[str]) -> str | None:
    """What the logs we do not have would add."""
    if "broker" not in sides:
        if "broker log" in sides:  # a coordinator's log is among the inputs, yet silent about this rebalance
            return ("the broker log at hand has no line of this rebalance: the log of this group's coordinator, "
                    "for this time, would name the reason")
        return "the group coordinator's log would name the reason it started this rebalance"
    if "client" not in sides:
        if kind == "heartbeat_expiry":
            return "the expired member's log would show why it stopped heartbeating (GC pause, network, a stuck thread)"
        if kind == "poll_timeout":
            return "the member's log would show the poll-timeout warning and the slow processing before it"
        return "the members' logs would show their side (revocation, rejoin, pause)"
    return None


def _related(index: TimeIndex, start: Event, member: str | None) -> list[Event]:
    """Lines that back a broker reason: the expiry/leave of the same member, and its own log's witness."""
    if start.at is None:
        return []
    related = []
    for event in index.between(start.at - 2 * BROKER_LEAD, start.at + CLIENT_GRACE):
        departure = event.kind in ("member_expired", "member_left", "member_fenced", "poll_timeout", "leave_group")
        if event is start or not departure:
            continue
        if member is None and event.component == "broker" and event.member_id:
            member = event.member_id  # the reason did not name it: the departure logged with the start does
        if member and (event.member_id == member or member in (event.raw or "")):
            related.append(event)
    return related[:3]


def _member_of(events: list[Event]) -> str | None:
    return next((e.member_id for e in events if e.member_id), None)


def _cause_of(event: Event, previous: Rebalance | None) -> bool:
    """The coordinator's line of the change that started the previous rebalance (a leave it logs once that rebalance
    has begun): it cannot start this one too."""
    return (previous is not None and event.member_id is not None and event.member_id == previous.cause.member
            and BROKER_EVENT_CAUSE[event.kind] == previous.cause.kind)


def _first_client_signal(draft: Draft) -> datetime | None:
    times = [e.at for ep in draft.episodes for e in ep.pre if e.at]
    return min(times) if times else None


def _window(index: TimeIndex, previous: Rebalance | None, start_at: datetime | None, draft: Draft) -> list[Event]:
    """Events between the end of the previous rebalance and just after this one started, plus the draft's own
    lines (all a log without timestamps can offer)."""
    nearby: list[Event] = []
    if start_at is not None:
        since = (previous.ended_at or previous.started_at) if previous else None
        since = max(since or start_at - timedelta(minutes=5), start_at - timedelta(minutes=30))
        nearby = [e for e in index.between(since, start_at + CLIENT_GRACE) if e.at is not None]
    seen = {id(e) for e in nearby}
    return nearby + [e for e in draft.events if id(e) not in seen]


def _near(event: Event, at: datetime | None, lead: timedelta) -> bool:
    return at is not None and event.at is not None and at - lead <= event.at <= at + CLIENT_GRACE


def _client_witness(window: list[Event], draft: Draft, index: TimeIndex,
                    previous: Rebalance | None) -> tuple[str, Event, str | None] | None:
    """The strongest client-side witness in the window (a reason that is not a symptom, a trigger line)."""
    members = _member_ids(draft.episodes)
    candidates: list[tuple[float, int, str, Event]] = []
    first_seen = index.first_seen
    joined = [ep.join.at for ep in draft.episodes if ep.join is not None and ep.join.at is not None]
    joining_since = _joining_since(draft)
    rejoining = {ep.participant for ep in draft.episodes} | {e.participant for e in draft.events if e.kind in JOIN_SIGNALS}
    # a member that asks to join with a member id of its own had one: it rejoins, it is not new
    with_own_id = {e.participant for e in window if e.kind == "join_start" and e.member_id}
    for position, event in enumerate(window):
        if _next_round(event) and joined and event.at is not None and event.at > min(joined):
            continue  # a followup scheduled once this rebalance's join was done: it starts the next round, it did not start this one
        if event.kind in REASONED and _after(event, joining_since.get(event.file)):
            continue  # a member in its file was already joining this rebalance: what is asked for later did not start it
        first_start = first_seen.get(event.participant) is event and _only_starting_before(event, index)
        if (((event.kind in STARTUP_AND_JOIN and not changes_subscription(event)) or leaves_start_state(event))
                and event.component != "broker" and not _joins_holding_partitions(event) and event.participant not in with_own_id
                and (event.kind != "join_start" or _start_shown_before(event, index))
                and (first_start or _constructed_to_join(event, index))):
            candidates.append((-CLIENT_CONFIDENCE["newcomer"], position, "member_join", event))  # a member starting up
        if event.component == "broker":
            continue
        kind = None
        if event.kind == "followup_rebalance":
            kind = "cooperative_followup" if _immediate(event.scheduled_for) else "probing_rebalance"
        elif event.kind == "partitions_revoked" and previous is not None and previous.protocol == "cooperative":
            # cooperative rebalancing revokes after SyncGroup and rejoins at once (2.4–2.8 say no more than that)
            kind = "cooperative_followup" if names_partitions(event.partitions) else None
        elif event.kind == "coordinator_discovered":
            kind = "coordinator_change" if index.coordinator_moved(event) else None
        elif (event.kind in ("join_failed", "sync_failed", "heartbeat_failed", "coordinator_lost")
              and (answered_not_coordinator(event) or event.cause == "coordinator_change"
                   # a member that marked its coordinator dead and rejoins here had to find it again; one that does not
                   # rejoin was cut off itself (a partition, a pause) and expired
                   or (event.kind == "coordinator_lost" and event.cause is None and event.participant in rejoining
                       and _since(event, previous)))
              and not _asked_while_starting(event, index)):
            kind = "coordinator_change"
        elif (previous is None and event.kind == "heartbeat_failed" and answered_unknown_member(event)
              and not _told_rebalancing_before(event, window) and not _failed_attempts(draft)):
            # its heartbeats had stopped long enough for the coordinator to drop it; with the rebalance that dropped it
            # in view, this one is its rejoin
            kind = "heartbeat_expiry"
        elif asked_for_member_id(event):
            kind = "member_join"  # the coordinator gives a member id only to a member that joins without one: a new member
        elif event.kind == "member_state_change" and event.cause == "member_join":
            kind = "member_join"  # a consumer that never had an assignment (librdkafka's group handle at v1): its first join
        elif fenced_static_member(event):
            kind = "static_member_fencing"
        elif event.kind in CLIENT_EVENT_CAUSE:
            kind = CLIENT_EVENT_CAUSE[event.kind]
        elif event.kind in REASONED and event.cause not in (None, SYMPTOM, "unknown"):
            kind = event.cause
            if kind in ("metadata_change", "member_leave") and _starting(event, index):
                # a consumer starting sees its topics' metadata for the first time, and drops the assignment it does
                # not have yet (librdkafka's "unsubscribe" in state init): it is joining
                kind = "member_join"
            elif kind == "member_leave" and event.kind in ("join_requested", "join_start"):
                # the rejoin a client schedules as it leaves ("consumer pro-actively leaving the group"): its LeaveGroup
                # line is the leave; without one it had no membership to give up (never joined, or static)
                kind = None
            elif kind == "member_leave" and _never_joined(event, index):
                # a consumer that gives up before it ever joined (its coordinator never found) leaves no generation:
                # its attempt to join is the change in view, if it made one
                kind = "member_join" if _tried_to_join(event, index) else None
        if kind is not None:
            candidates.append((-CLIENT_CONFIDENCE.get(kind, 0.5), position, kind, event))
    # a member that says it is joining for the first time sees its topics' metadata "change" as it starts
    joining = {event.participant for _, _, kind, event in candidates if kind == "member_join"}
    candidates = [c for c in candidates if not (c[2] == "metadata_change" and c[3].participant in joining)]
    if not candidates:
        return None
    _, _, kind, event = min(candidates)
    return kind, event, event.member_id or members.get(event.participant)


def _since(event: Event, previous: Rebalance | None) -> bool:
    """Logged after the previous rebalance began (or in a log without the times to tell)."""
    return previous is None or previous.started_at is None or event.at is None or event.at >= previous.started_at


def _joining_since(draft: Draft) -> dict[str, datetime]:
    """When a member of the rebalance first set out to join it, per file: the lines of a file share its clock, and
    a member's framework names the member by its thread, not by the client id its coordinator's lines give."""
    since: dict[str, datetime] = {}
    for event in draft.events:
        if event.kind == "join_start" and event.at is not None:
            since[event.file] = min(event.at, since.get(event.file, event.at))
    return since


def _after(event: Event, at: datetime | None) -> bool:
    return at is not None and event.at is not None and event.at > at


def _next_round(event: Event) -> bool:
    """A followup rebalance scheduled, or the rejoin that asks for it."""
    return event.kind == "followup_rebalance" or (event.kind == "join_requested" and event.cause in ("cooperative_followup", "probing_rebalance"))


def _immediate(scheduled_for: str | None) -> bool:
    """A followup scheduled for 'immediately' / epoch 0 is the cooperative second round, not a probe."""
    text = (scheduled_for or "").strip()
    return text in ("", "0", "immediately", "immediate") or text.startswith("1970-01-01")


def _member_ids(episodes: list[Episode]) -> dict[tuple[str, str, str], str]:
    return {ep.participant: ep.member_id for ep in episodes if ep.member_id}


COMMIT_REACH = timedelta(minutes=10)  # a removed member learns of it at its next commit, after its slow batch or pause


def with_refused_commit(cause: Cause, index: TimeIndex, at: datetime | None) -> Cause:
    """A member removed from the group (expired, timed out) whose next offset commit was refused: what it had
    processed since its last commit is processed again by the partitions' new owners."""
    if cause.kind not in STALLED_CAUSES or cause.member is None or at is None:
        return cause
    nodes = index.member_nodes.get(cause.member, set())
    refused = next((e for e in index.between(at, at + COMMIT_REACH) if e.kind == "commit_failed" and e.node in nodes), None)
    if refused is None:
        return cause
    return replace(cause, consequence=f"its offset commit was refused at {refused.at:%H:%M:%S}: the records it had processed "
                                      "since its last commit will be processed again",
                   evidence=[*cause.evidence, refused.evidence])


def with_runtime_trigger(cause: Cause, index: TimeIndex, at: datetime | None) -> Cause:
    """A heartbeat expiry or poll timeout whose member's JVM had stopped just then: the pause, with the line that
    shows it, is the cause behind the cause."""
    if cause.kind not in STALLED_CAUSES or cause.member is None or at is None:
        return cause
    nodes = index.member_nodes.get(cause.member, set())
    pauses = [e for e in index.between(at - PAUSE_BEFORE, at + PAUSE_SEARCH)
              if e.kind == "jvm_pause" and e.node in nodes and e.at is not None and (e.duration_ms or 0) >= MIN_RUNTIME_PAUSE_MS
              and e.at - timedelta(milliseconds=e.duration_ms) <= at + PAUSE_AFTER and e.at >= at - PAUSE_BEFORE]
    if not pauses:
        return cause
    longest = max(pauses, key=lambda e: e.duration_ms)
    trigger = f"{longest.duration_ms / 1000:.1f} s JVM pause" + (f" ({longest.reason})" if longest.reason else "")
    return replace(cause, summary=f"{cause.summary}; its JVM had stopped in a {trigger}", trigger=trigger,
                   evidence=[*cause.evidence[:1], longest.evidence, *cause.evidence[1:]])  # the line that proves the cause stays first
