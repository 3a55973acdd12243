"""Reconstruct rebalances from a group's timeline: generations (classic) or group epochs (KIP-848),
with their members, leader, protocol, timing and the pause each member took.

Classic protocol: a rebalance is the move from generation N-1 to N. The coordinator shows its start
(rebalance_start with old generation N-1), the end of the join phase (group_stabilized N) and the end
(assignment_received N); each member shows its own episode: the reasons it rejoined, revocation,
join_succeeded N, leader assignment, sync_succeeded N, partitions assigned. Either side alone is
enough to place a rebalance; both together give the members' pauses on the coordinator's clock.
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .model import EPOCH_PROTOCOLS, Cause, Departure, MemberPause, Rebalance
from .timeline import EARLIEST, RESTARTING, Event, broker_id, names_partitions, suspects_coordinator

# Kinds a member logs on its way into a rebalance, before it learns the new generation.
PRE_JOIN = {
    "join_requested", "join_start", "partitions_revoked", "heartbeat_failed", "poll_timeout", "leave_group",
    "generation_reset", "coordinator_lost", "coordinator_discovered", "partitions_lost", "join_failed",
    "sync_failed", "session_timeout", "followup_rebalance", "probing_rebalance", "version_probing",
    "streams_thread_state", "streams_client_state", "commit_failed", "shutdown_requested", "thread_replaced",
    "thread_failed", "member_fenced", "subscription_changed", "consumer_lifecycle", "consumer_started",
}
# Kinds that complete a member's episode after it joined the new generation.
POST_JOIN = {"leader_assignment", "sync_succeeded", "partitions_assigned", "streams_participants", "streams_assignment"}
STABLE_MARKS = {"assignment_received", "sync_succeeded", "partitions_assigned"}
COOPERATIVE_ASSIGNORS = ("cooperative", "stream")  # Streams' own assignor is cooperative since 2.4
EPOCH_LEAD = timedelta(seconds=1)
LEAVING = {"leave_group", "poll_timeout"}
DEPARTURE_CAUSES = ("heartbeat_expiry", "poll_timeout", "member_leave", "static_member_fencing", "assignment_timeout")
EPOCH_KINDS = {"group_epoch_bumped", "target_assignment", "member_assignment"}  # a KIP-848 epoch moving forward


@dataclass
class Episode:
    """One member's passage through one rebalance, from its own log."""

    participant: tuple[str, str, str]
    generation: int
    member_id: str | None
    node: str | None
    pre: list[Event] = field(default_factory=list)
    join: Event | None = None
    post: list[Event] = field(default_factory=list)
    first_in_log: bool = False  # the member's first rebalance in its log: it was starting, not processing
    previous_member_id: str | None = None  # the member id this consumer had in its previous episode
    previous_join_at: datetime | None = None  # when this consumer joined its previous generation

    @property
    def events(self) -> list[Event]:
        return self.pre + ([self.join] if self.join else []) + self.post

    @property
    def resumed_at(self) -> datetime | None:
        for event in reversed(self.post):
            if event.kind in ("partitions_assigned", "sync_succeeded") and event.at:
                return event.at
        return self.join.at if self.join else None


@dataclass
class Draft:
    """A rebalance being assembled: everything known about the move into one generation."""

    group_id: str
    generation: int | None
    starts: list[Event] = field(default_factory=list)  # broker rebalance_start (old generation = N-1)
    broker: list[Event] = field(default_factory=list)  # other broker events targeting N
    episodes: list[Episode] = field(default_factory=list)
    failed_attempt: bool = False
    signals: list[Event] = field(default_factory=list)  # a rebalance only its side effects show (no generation logged)

    @property
    def events(self) -> list[Event]:
        return self.starts + self.broker + [e for ep in self.episodes for e in ep.events] + self.signals

    @property
    def first_at(self) -> datetime | None:
        """When it began: the coordinator's or the side effects' first line, else the members' last steps before
        joining (a member's earlier lines may reach far back)."""
        times = [e.at for e in self.starts + self.broker + self.signals if e.at]
        if not times:
            times = [e.at for ep in self.episodes for e in ep.pre[-3:] + ([ep.join] if ep.join else []) if e.at]
        return min(times) if times else None


def target_generation(event: Event) -> int | None:
    """The generation a classic event is about to reach (the old generation + 1 for rebalance starts)."""
    generation = event.generation
    if generation is None or event.group_epoch is not None:
        return None
    if event.kind in ("rebalance_start", "join_failed", "heartbeat_failed"):
        return generation + 1
    if event.kind in ("group_stabilized", "join_succeeded", "sync_succeeded", "assignment_received", "leader_assignment", "sync_failed"):
        return generation
    if event.kind == "group_state_change" and (event.state or "").lower() == "empty":
        return generation  # "is now empty": the join phase ended with no members at this generation
    return None


def member_episodes(timeline: list[Event]) -> list[Episode]:
    """Cut each member's own events into episodes, one per generation it joined."""
    by_participant: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for event in timeline:
        if event.component != "broker":
            by_participant[event.participant].append(event)
    episodes = []
    for participant, events in by_participant.items():
        pending: list[Event] = []
        current: Episode | None = None
        seen_join = False
        for event in events:
            if event.kind == "join_succeeded" and event.generation is not None:
                current = Episode(participant, event.generation, event.member_id, event.node, pre=pending, join=event,
                                  first_in_log=not seen_join and not _was_processing(pending),
                                  previous_member_id=current.member_id if current else None,
                                  previous_join_at=current.join.at if current and current.join else None)
                episodes.append(current)
                pending, seen_join = [], True
            elif current is not None and event.kind in POST_JOIN and not _closes(current):
                current.post.append(event)
            elif event.kind in PRE_JOIN or event.kind in POST_JOIN:
                pending.append(event)
        # a trailing pre-join run with no join: the member was cut off (log ends, or it never rejoined)
    return episodes


def _was_processing(pending: list[Event]) -> bool:
    """Before its first join in the log, a member that gets or gives up partitions was already processing."""
    return any(e.kind == "partitions_assigned" or (e.kind == "partitions_revoked" and names_partitions(e.partitions)) for e in pending)


def _closes(episode: Episode) -> bool:
    """An episode is over once the member has its new partitions."""
    return any(e.kind == "partitions_assigned" for e in episode.post)


def drafts(group_id: str, timeline: list[Event]) -> list[Draft]:
    """Classic rebalances of one group, one draft per generation reached (plus failed retries)."""
    by_generation: dict[int, Draft] = {}

    def draft(generation: int) -> Draft:
        return by_generation.setdefault(generation, Draft(group_id, generation))

    for event in timeline:
        if event.component != "broker":
            continue
        target = target_generation(event)
        if target is None:
            continue
        if event.kind == "rebalance_start":
            draft(target).starts.append(event)
        else:
            draft(target).broker.append(event)
    first: dict[tuple[int, object], Episode] = {}
    for episode in member_episodes(timeline):
        # one consumer (or one group.instance.id), one member per generation: a static member restarting into the
        # same generation (no rebalance) is not part of the rebalance that formed it
        identity = (episode.join.instance_id if episode.join and episode.join.instance_id else None) or episode.participant
        first.setdefault((episode.generation, identity), episode)
    for (generation, _), episode in first.items():
        draft(generation).episodes.append(episode)
    result = []
    for generation in sorted(by_generation):
        current = by_generation[generation]
        # the same old generation prepared again: every start but the last is an attempt that failed
        for retry in current.starts[:-1]:
            result.append(Draft(group_id, generation, starts=[retry], failed_attempt=True))
        current.starts = current.starts[-1:]
        result.append(current)
    return result


def protocol_of(events: list[Event]) -> str | None:
    """eager / cooperative from the assignor a member joined with; consumer for KIP-848, streams for KIP-1071 and
    share for KIP-932 (share and streams groups print some consumer-group wordings too: their own lines decide)."""
    for protocol in ("streams", "share"):
        if any(event.protocol == protocol for event in events):
            return protocol
    for event in events:
        if event.protocol == "consumer" or event.group_epoch is not None:
            return "consumer"
    for event in events:  # the protocol the coordinator selected, as the members learned it when joining
        assignor = (event.assignor or "").lower()
        if assignor:
            return "cooperative" if any(name in assignor for name in COOPERATIVE_ASSIGNORS) else "eager"
    for event in events:  # lines only one protocol prints
        if event.protocol in ("cooperative", "eager"):
            return event.protocol
    return None


def by_group_type(timeline: list[Event]) -> list[list[Event]]:
    """The timeline cut where the coordinator converted the group to another type: each part is one type's."""
    parts: list[list[Event]] = [[]]
    for event in timeline:
        if event.kind == "group_converted" and parts[-1]:
            parts.append([])
        parts[-1].append(event)
    return parts


def group_types_of(timeline: list[Event]) -> list[str]:
    """The group's types in the order the logs show them (an online migration shows two): per part of
    :func:`by_group_type`, the type its coordinator's lines name, else the one its protocol implies (a
    generation is a classic group's)."""
    types: list[str] = []
    for part in by_group_type(timeline):
        named = next((e.group_type for e in part if e.group_type), None)
        protocol = protocol_of(part)
        implied = protocol if protocol in EPOCH_PROTOCOLS else \
            "classic" if protocol is not None or any(e.generation is not None for e in part) else None
        kind = named or implied
        if kind and (not types or types[-1] != kind):
            types.append(kind)
    return types


def coordinator_of(events: list[Event]) -> str | None:
    """The coordinator broker id: from the coordinator's own log prefix, or a client's FindCoordinator answer."""
    for event in events:
        if event.component == "broker" and event.coordinator:
            return event.coordinator
    for event in reversed(events):
        if event.kind == "coordinator_discovered" and event.coordinator:
            return broker_id(event.coordinator)
    return None


def assemble(draft: Draft, previous: Rebalance | None, protocol: str | None, cause: Cause,
             broker_members: set[str], consumer_starts: dict[tuple[str, str], list[datetime]]) -> Rebalance:
    """Timing, membership, leader and pauses of one drafted rebalance. Members come from the members' own
    logs; without them, from the coordinator's join/leave lines (``broker_members``)."""
    episodes = draft.episodes
    if protocol not in EPOCH_PROTOCOLS:  # members may switch assignors (a canary with other settings): trust each generation's own
        protocol = protocol_of([ep.join for ep in episodes if ep.join]) or protocol
    starts = [e.at for e in draft.starts if e.at] + [ev.at for ep in episodes for ev in ep.pre[-3:] if ev.at]
    starts += [e.at for e in draft.signals if e.at]
    broker_start = next((e.at for e in draft.starts if e.at), None)
    started_at = broker_start or (min(starts) if starts else None)
    ends = [e.at for e in draft.broker if (e.kind in STABLE_MARKS or e.kind == "group_state_change") and e.at]
    if protocol in EPOCH_PROTOCOLS:  # the coordinator assigns: its target and the members' new states end the epoch
        ends += [e.at for e in draft.broker if e.kind in ("target_assignment", "member_assignment") and e.at]
    ends += [ep.resumed_at for ep in episodes if ep.resumed_at]
    ends += [e.at for e in draft.signals if e.at and _client_settles(e)]
    stabilized = [e for e in draft.broker if e.kind == "group_stabilized"]
    if not ends and stabilized and stabilized[0].at:
        ends = [stabilized[0].at]
    ended_at = max(ends) if ends and not draft.failed_attempt else None
    completed = any(e.kind in STABLE_MARKS or e.kind == "group_state_change" for e in draft.broker) or any(
        ep.resumed_at and any(e.kind in ("sync_succeeded", "partitions_assigned") for e in ep.post) for ep in episodes
    ) or (protocol in EPOCH_PROTOCOLS and bool(episodes or draft.broker))  # an epoch has no failed state: the next one follows
    members_seen = {ep.member_id for ep in episodes if ep.member_id}
    if protocol in EPOCH_PROTOCOLS:
        # KIP-848 members that need no new partitions do not log a transition: they stay unless they left; the
        # coordinator's own join and leave lines name the others
        departed = _departed(draft)
        if cause.member and cause.kind in DEPARTURE_CAUSES:
            departed.add(cause.member)
        members_seen |= (set(previous.members) if previous else set()) - departed
        members_seen |= broker_members
    members = sorted(members_seen or broker_members)
    member_count = next((e.member_count for e in stabilized if e.member_count is not None), None)
    if member_count is None and members and not draft.failed_attempt:
        member_count = len(members)
    previous_members = set(previous.members) if previous else set()
    joined = sorted(set(members) - previous_members) if previous_members else []
    left = [Departure(m, "unknown") for m in sorted(previous_members - set(members))]
    if cause.member and cause.kind in DEPARTURE_CAUSES:
        left = [d for d in left if d.member != cause.member] + [Departure(cause.member, cause.kind)]
    assignor = next((ep.join.assignor for ep in episodes if ep.join and ep.join.assignor), None)
    seen_by = sorted({"broker" if e.component == "broker" else "client" for e in draft.events})
    backwards = started_at is not None and ended_at is not None and ended_at < started_at  # a clock stepped back
    return Rebalance(
        group_id=draft.group_id,
        from_generation=_from_generation(draft, previous),
        to_generation=None if draft.failed_attempt else draft.generation,
        started_at=started_at,
        ended_at=ended_at,
        duration_ms=None if backwards else _ms(started_at, ended_at),
        protocol=protocol,
        assignor=assignor,
        coordinator=coordinator_of(draft.starts + draft.broker + [ev for ep in episodes for ev in ep.events]),
        leader=leader_of(draft),
        members=members,
        member_count=member_count,
        joined=joined,
        left=left,
        cause=cause,
        pauses=pauses(draft, protocol, started_at, ended_at, previous, set(members), consumer_starts),
        failed=draft.failed_attempt,
        seen_by=seen_by,
        completed=completed or draft.generation is None,
        clock_backwards=backwards,
    )


def _from_generation(draft: Draft, previous: Rebalance | None) -> int | None:
    if draft.generation is None:  # seen only through side effects: the generation the members held
        held = [e.generation for e in draft.signals if e.generation is not None]
        return max(held) if held else (previous.to_generation if previous else None)
    return draft.generation - 1 if draft.starts or previous else None


def _departed(draft: Draft) -> set[str]:
    """Members the coordinator removed, or that left, between the previous rebalance and this one's start."""
    gone = set()
    for event in draft.starts + draft.broker + [e for ep in draft.episodes for e in ep.pre]:
        if event.member_id and event.kind in ("member_expired", "member_left", "member_removed", "member_fenced", "leave_group"):
            gone.add(event.member_id)
    return gone


def leader_of(draft: Draft) -> str | None:
    for event in draft.broker:
        if event.kind == "assignment_received" and event.leader_id:
            return event.leader_id
    for episode in draft.episodes:
        for event in episode.post + episode.pre:
            if event.kind in ("leader_assignment", "streams_participants", "streams_assignment") and (event.leader or event.leader_id):
                return event.leader_id or episode.member_id
    return None


def pauses(draft: Draft, protocol: str | None, started_at: datetime | None, ended_at: datetime | None,
           previous: Rebalance | None, members: set[str], starts: dict[tuple[str, str], list[datetime]]) -> list[MemberPause]:
    """Each member's stop: eager members stop from revocation (or rejoin) to their new assignment; cooperative
    members only when they revoke partitions. Without a member's own log, the coordinator's timeline is the
    estimate (eager: every member of the previous generation)."""
    result = []
    for episode in draft.episodes:
        if episode.first_in_log or _restarted(episode) or _new_process(episode) or _recreated(episode, starts):
            continue  # it was starting (or restarting after a close), not processing
        pre = _after_leaving(episode.pre)
        revoked = [e for e in pre + episode.post if e.kind == "partitions_revoked" and e.at and names_partitions(e.partitions)]
        if protocol == "cooperative" or protocol in EPOCH_PROTOCOLS:
            if not revoked:
                continue
            stop = revoked[0].at
        else:
            # processing stops when partitions are revoked or lost; without such a line, when the member rejoins
            stops = [e.at for e in pre if e.at and e.kind in ("partitions_revoked", "partitions_lost")]
            stops = stops or [e.at for e in pre if e.at and e.kind in ("join_start", "join_requested")]
            if not stops and len(pre) < len(episode.pre):
                continue  # it left and came back without stopping again: nothing paused in this rebalance
            stop = min(stops) if stops else (episode.join.at if episode.join else None)
        resume = episode.resumed_at
        if stop and resume and resume >= stop:
            result.append(MemberPause(episode.member_id or "/".join(filter(None, episode.participant[1:])), episode.node, stop, resume, _ms(stop, resume) or 0))
    if (not draft.episodes and protocol != "cooperative" and protocol not in EPOCH_PROTOCOLS and started_at and ended_at
            and ended_at >= started_at and previous):
        for member in set(previous.members) & members:
            result.append(MemberPause(member, None, started_at, ended_at, _ms(started_at, ended_at) or 0, estimated=True))
    return result


def _recreated(episode: Episode, starts: dict[tuple[str, str], list[datetime]]) -> bool:
    """The consumer was constructed again (its configuration dump) since its previous join: a restart."""
    since, until = episode.previous_join_at, episode.join.at if episode.join else None
    if since is None or until is None:
        return False
    return any(since < at <= until for at in starts.get(episode.participant[:2], ()))


def _new_process(episode: Episode) -> bool:
    """A new member id without having lost partitions: the consumer was restarted (a static member's restart
    sends no LeaveGroup), not kicked out while running."""
    renamed = episode.previous_member_id and episode.member_id and episode.member_id != episode.previous_member_id
    return bool(renamed) and not any(e.kind == "partitions_lost" for e in episode.pre)


def _restarted(episode: Episode) -> bool:
    """The consumer was closed (or unsubscribed) and started again: it joins as a new member and its wait was
    downtime. A poll-timeout leave is different: the same consumer comes back and its partitions were stopped."""
    if any(e.kind in RESTARTING for e in episode.pre):
        return True
    timed_out = any(e.kind == "poll_timeout" or e.cause == "poll_timeout" for e in episode.pre)
    closed = any(e.kind in ("leave_group", "join_requested", "generation_reset") and e.cause == "member_leave" for e in episode.pre)
    return closed and not timed_out


def _after_leaving(pre: list[Event]) -> list[Event]:
    """The member's lines after it last left the group (LeaveGroup, poll timeout): what it did on coming back."""
    last = max((i for i, e in enumerate(pre) if e.kind in LEAVING or (
        e.kind == "member_state_change" and (e.state or "").upper() in ("LEAVING", "UNSUBSCRIBED"))), default=-1)
    return pre[last + 1 :]


def _ms(start: datetime | None, end: datetime | None) -> int | None:
    if start is None or end is None:
        return None
    return int((end - start).total_seconds() * 1000)


def epoch_drafts(group_id: str, timeline: list[Event]) -> list[Draft]:
    """KIP-848 rebalances: one per group epoch. The coordinator bumps the epoch and computes a target
    assignment; each member reconciles and reports STABLE. Members print the epoch they held when the
    transition happened, so with the coordinator's log at hand a member's STABLE belongs to the latest epoch
    the coordinator had reached by then; without it, to the member epoch as printed."""
    by_epoch: dict[int, Draft] = {}
    for event in timeline:
        if event.component == "broker" and event.group_epoch is not None and event.kind in EPOCH_KINDS:
            target = by_epoch.setdefault(event.group_epoch, Draft(group_id, event.group_epoch))
            (target.starts if event.kind == "group_epoch_bumped" else target.broker).append(event)
    epoch_starts = sorted((min(e.at for e in d.starts + d.broker if e.at), epoch) for epoch, d in by_epoch.items()
                          if any(e.at for e in d.starts + d.broker))
    by_participant: dict[tuple[str, str, str], list[Event]] = defaultdict(list)
    for event in timeline:
        if event.component != "broker":
            by_participant[event.participant].append(event)
    for participant, events in by_participant.items():
        pending: list[Event] = []
        seen_stable = False
        for event in events:
            stable = event.kind == "member_state_change" and (event.state or "").upper() == "STABLE"
            if stable and event.member_epoch is not None and event.member_epoch > 0:
                epoch = _epoch_at(epoch_starts, event.at) or event.member_epoch
                episode = Episode(participant, epoch, event.member_id, event.node, pre=pending, join=event,
                                  first_in_log=not seen_stable)
                by_epoch.setdefault(epoch, Draft(group_id, epoch)).episodes.append(episode)
                pending, seen_stable = [], True
            else:
                pending.append(event)
    return [by_epoch[epoch] for epoch in sorted(by_epoch)]


def _epoch_at(epoch_starts: list[tuple[datetime, int]], at: datetime | None) -> int | None:
    """The coordinator's epoch at a moment (a member may log STABLE a little before the coordinator's line)."""
    if at is None or not epoch_starts:
        return None
    current = None
    for started, epoch in epoch_starts:
        if started <= at + EPOCH_LEAD:
            current = epoch
    return current


MEMBERSHIP_IN = {"member_joined", "static_member_rejoined"}
MEMBERSHIP_OUT = {"member_expired", "member_left", "member_removed", "member_fenced"}


def track_broker_members(members: set[str], timeline: list[Event], position: int, until: datetime | None) -> int:
    """Apply the coordinator's join/leave lines from ``position`` up to ``until`` to the running member set;
    returns the position to continue from."""
    while position < len(timeline) and (until is None or timeline[position].at is None or timeline[position].at <= until):
        event = timeline[position]
        position += 1
        if event.component != "broker" or not event.member_id:
            continue
        if event.kind in MEMBERSHIP_IN:
            members.add(event.member_id)
        elif event.kind in MEMBERSHIP_OUT:
            members.discard(event.member_id)
    return position


# Lines that mean a rebalance is starting or under way, even when no generation line of it was logged.
ORPHAN_SIGNALS = {
    "join_requested", "leave_group", "poll_timeout", "member_expired", "member_left", "member_fenced", "member_removed",
    "probing_rebalance", "followup_rebalance", "sync_failed", "join_failed", "heartbeat_failed", "partitions_lost",
    "commit_failed", "session_timeout", "rebalance_failed", "thread_replaced", "member_joined",
    "group_converted",  # a converted group always moves to a new epoch or generation
    "partitions_revoked",  # a member revokes as it sets out to join
}
# Clients that never print a generation (KafkaJS, ruby-kafka, sarama, Streamiz) or, at INFO, an epoch transition
# (the KIP-848 consumer of 3.7 and 3.8) show a rebalance by these alone.
JOIN_SIGNALS = {"join_start", "join_succeeded", "sync_succeeded", "partitions_assigned", "reconciliation"}
ORPHAN_SIGNALS |= JOIN_SIGNALS
# A stream thread passes through these states only in a rebalance (its consumer's revocation and assignment).
REBALANCE_THREAD_STATES = {"PARTITIONS_REVOKED", "PARTITIONS_ASSIGNED"}


def joins(event: Event) -> bool:
    """A member's line that shows it (re)joining: its JoinGroup, SyncGroup or assignment, or a stream thread
    taking partitions."""
    return event.kind in JOIN_SIGNALS or (event.kind == "streams_thread_state" and (event.state or "").upper() == "PARTITIONS_ASSIGNED")
ORPHAN_MARGIN = timedelta(seconds=10)
# Errors of a request the coordinator never answered (timed out, not the coordinator, unavailable, disconnected).
UNANSWERED = ("TIMED OUT", "TIMEOUT", "NOT COORDINATOR", "COORDINATOR NOT AVAILABLE", "DISCONNECT")
LINES_AROUND = 3  # in a log without times, the events this close to a rebalance's own lines belong to it
PENDING_REBALANCE = timedelta(minutes=5)  # the default rebalance timeout (max.poll.interval.ms)
SETTLED = {"group_stabilized", "join_succeeded", "sync_succeeded", "assignment_received", "partitions_assigned"}
ORPHAN_GAP = timedelta(seconds=30)


def orphan_drafts(group_id: str, timeline: list[Event], known: list[Draft]) -> list[Draft]:
    """Rebalances seen only through their side effects: a member leaving or expiring with no rebalance line
    after it, a member that only reports the group rebalancing, a Streams probing trigger without a group."""
    covered = {id(e) for d in known for e in d.events}
    windows = sorted((d.first_at - ORPHAN_MARGIN, _window_end(d)) for d in known if d.first_at)
    starts = [a for a, _ in windows]
    reach = list(itertools.accumulate((b for _, b in windows), max))  # furthest end among windows starting before

    def inside(at: datetime | None) -> bool:
        i = bisect.bisect_right(starts, at) - 1 if at else -1
        return i >= 0 and reach[i] >= at

    loose = [e for e in timeline if _signals_rebalance(e) and id(e) not in covered and not inside(e.at)]
    if any(e.at is None for e in loose):  # without a time, a line right before a known rebalance belongs to it
        following: dict[int, list[Event]] = {}
        by_file: dict[tuple[str, str | None], list[Event]] = defaultdict(list)
        for event in timeline:
            by_file[(event.file, event.node)].append(event)
        for events in by_file.values():
            for i, event in enumerate(events):
                following[id(event)] = events[i + 1 : i + 1 + LINES_AROUND]
        loose = [e for e in loose if e.at is not None or not any(id(n) in covered for n in following.get(id(e), ()))]
    clusters: list[list[Event]] = []
    settled: set[str] = set()  # the files whose Streams client is back to RUNNING: their next line is another rebalance's
    for event in loose:
        last = clusters[-1][-1] if clusters else None
        settles = _client_settles(event)
        if (last is not None and event.file not in settled
                and (event.at is None or last.at is None or event.at - last.at <= ORPHAN_GAP)):
            clusters[-1].append(event)
        elif settles:
            continue  # the end of a rebalance counted already, or begun before the logs: no rebalance of its own
        else:
            clusters.append([event])
            settled = set()
        if settles:
            settled.add(event.file)
    # a cluster needs a time or a real cause: timeless symptoms ("already rebalancing") cannot be placed; and when
    # the coordinator's log covers that time but shows no rebalance, the members' lines alone do not make one
    # (a static member closing sends no LeaveGroup)
    broker_times = [e.at for e in timeline if e.component == "broker" and e.at]
    covered_by_broker = (min(broker_times), max(broker_times)) if broker_times else None

    timeless = not any(e.at for e in timeline)  # then the lines' order is the only order, and a join places a rebalance

    def real(cluster: list[Event]) -> bool:
        if all(suspects_coordinator(e) for e in cluster):
            return False
        placed = any(e.at for e in cluster) or any(e.cause not in (None, "symptom") or (timeless and joins(e)) for e in cluster)
        if not placed:
            return False
        client_only = all(e.component != "broker" for e in cluster)
        at = next((e.at for e in cluster if e.at), None)
        return not (client_only and covered_by_broker and at and covered_by_broker[0] <= at <= covered_by_broker[1])

    return [Draft(group_id, None, signals=c) for c in clusters if real(c)]


def _client_settles(event: Event) -> bool:
    """A Streams client back to RUNNING from REBALANCING: its rebalance is over."""
    return (event.kind == "streams_client_state" and (event.state or "").upper() == "RUNNING"
            and (event.prev_state or "").upper() == "REBALANCING")


def _signals_rebalance(event: Event) -> bool:
    """A heartbeat failure says "rebalance" only when the coordinator answered so (not for a coordinator move); an
    offset commit that failed for want of an answer (a timeout, the coordinator gone) says nothing of the group."""
    error = (event.error or event.reason or "").upper()
    if event.kind == "heartbeat_failed":
        return event.cause == "symptom" or any(word in error for word in ("REBALANCE", "GENERATION", "UNKNOWN_MEMBER"))
    if event.kind == "commit_failed" and any(word in error.replace("_", " ") for word in UNANSWERED):
        return False
    if event.kind == "streams_thread_state":
        return (event.state or "").upper() in REBALANCE_THREAD_STATES
    if event.kind == "streams_client_state":  # the client itself says its group is rebalancing, or is done
        return (event.state or "").upper() == "REBALANCING" or _client_settles(event)
    if event.kind in ("subscription_changed", "consumer_lifecycle"):  # an unsubscribe or a close sends a LeaveGroup
        return event.cause == "member_leave"
    if event.kind == "member_state_change":  # a consumer that never had an assignment, on its way into the group
        return event.cause == "member_join"
    return event.kind in ORPHAN_SIGNALS


def _last_at(draft: Draft) -> datetime:
    return max(e.at for e in draft.events if e.at)


def _window_end(draft: Draft) -> datetime:
    """Until when a rebalance's side effects belong to it. One the logs never show settle may still be waiting
    for its members (up to the rebalance timeout): a member expired meanwhile is part of it, not a new one."""
    end = _last_at(draft) + ORPHAN_MARGIN
    if not any(e.kind in SETTLED for e in draft.events):
        end = max(end, draft.first_at + PENDING_REBALANCE)
    return end


def in_time_order(drafts: list[Draft]) -> list[Draft]:
    """Drafts by when they began; one with no timestamps stays after its predecessor."""
    keyed, last = [], None
    for position, draft in enumerate(drafts):
        last = draft.first_at or last
        keyed.append((last is None, last, position, draft))
    keyed.sort(key=lambda k: (k[0], k[1] or EARLIEST, k[2]))
    return [k[3] for k in keyed]


SKIP_REACH = timedelta(seconds=5)  # the coordinator's "no rebalance" line and the member's rejoin are moments apart


def skipped_by_coordinator(draft: Draft, skips: list[datetime]) -> bool:
    """A member's rejoin that the coordinator said starts no rebalance (a static member back in a Stable group),
    and no coordinator line of a rebalance: not a rebalance, whatever the member logged. ``skips``: the times of
    the coordinator's "no rebalance" lines, in order."""
    if not skips or draft.starts or any(e.kind in ("group_stabilized", "assignment_received") for e in draft.broker):
        return False
    times = [e.at for e in draft.events if e.at]
    if not times:
        return False
    first = bisect.bisect_left(skips, min(times) - SKIP_REACH)
    return first < len(skips) and skips[first] <= max(times) + SKIP_REACH
