"""Pause: how long each member held no partitions because of a rebalance, from its own log.

A member is paused from the moment it holds no partitions — its eager revocation of everything, its
partitions lost, a cooperative or KIP-848 revocation of all it held — until its next assignment (an
empty one included: the rebalance is over for it). Idle time between a failed SyncGroup and the next
generation counts, since the member holds nothing all along. A cooperative revocation of some partitions
is no pause: the member keeps processing the rest. A member that closes (a restart, a scale-in) is not
paused, and neither is one starting up before its first assignment.

Members that never print their partitions (some clients and layouts) keep the pause their rebalance
episodes give (see :func:`.rebalances.pauses`).
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime

from .model import EPOCH_PROTOCOLS, MemberPause, PartitionMove, Rebalance
from .timeline import RESTARTING, Event

VOIDED = {"generation_reset", "commit_failed", "partitions_lost"}  # the member id the consumer had is gone: it rejoins anew
# Lines that name a member id only to refuse it (unknown member, illegal generation): not the id the consumer has.
REFUSING = {"heartbeat_failed", "commit_failed", "join_failed", "sync_failed", "generation_reset"}


def partition_set(printed: str | None) -> frozenset[str]:
    """``[orders-0, orders-1]`` → {"orders-0", "orders-1"}."""
    return frozenset(p.strip() for p in (printed or "").strip().strip("[]{}").split(",") if p.strip(" []{}"))


def _topic_and_number(partition: str) -> tuple[str, int, str]:
    """``orders-10`` sorts after ``orders-9``: by topic, then partition number."""
    topic, _, number = partition.rpartition("-")
    return (topic, int(number), partition) if number.isdigit() else (partition, -1, partition)


class _Holder:
    """One consumer (file, node, client or thread) as its own lines show it."""

    __slots__ = ("held", "holds", "member", "node", "since")

    def __init__(self) -> None:
        self.holds: frozenset[str] | None = None  # None: not known yet (the log starts with the member running)
        self.since: datetime | None = None  # holding nothing since
        self.held: int | None = None  # how many partitions it held when it stopped
        self.member: str | None = None
        self.node: str | None = None

    def stop(self, at: datetime, held: int) -> None:
        if self.since is None:
            self.since, self.held = at, held

    def reset(self) -> None:
        self.holds, self.since, self.held, self.member = frozenset(), None, None, None


def partition_moves(timeline: list[Event], protocol: str | None) -> list[tuple[datetime, PartitionMove]]:
    """Cooperative and KIP-848 rebalances move single partitions while their members go on with the rest: each
    partition revoked by one member and assigned to another (or the same), with the time nobody owned it, and
    when it was assigned."""
    if protocol != "cooperative" and protocol not in EPOCH_PROTOCOLS:
        return []
    printing = _printing_consumers(timeline)
    revoked: dict[str, tuple[datetime, str | None]] = {}
    moves = []
    for event in timeline:
        if event.component == "broker" or event.participant not in printing or event.at is None:
            continue
        who = event.member_id or _unnamed(event.participant)
        if event.kind in ("partitions_revoked", "partitions_lost"):
            for partition in partition_set(event.partitions):
                revoked[partition] = (event.at, who)
        elif event.kind == "partitions_assigned":
            for partition in sorted(partition_set(event.partitions), key=_topic_and_number):  # the same order every run
                if partition in revoked:
                    since, previous = revoked.pop(partition)
                    moves.append((event.at, PartitionMove(partition, previous, who, _ms(since, event.at))))
    return moves


def holding_pauses(timeline: list[Event], protocol: str | None,
                   starts: dict[tuple[str, str], list[datetime]] | None = None) -> tuple[list[MemberPause], set[str]]:
    """Every pause of every member that prints its partitions, and the member ids those members had. ``starts``:
    when consumers were constructed, per file and node (their configuration dumps name no group): a consumer
    constructed while it held nothing was restarted, and its wait was downtime."""
    holders: dict[tuple[str, str, str], _Holder] = {}
    printing = _printing_consumers(timeline)
    result: list[MemberPause] = []
    members: set[str] = set()
    partial_revocations = protocol == "cooperative" or protocol in EPOCH_PROTOCOLS
    members |= {_unnamed(participant) for participant in printing}  # how an episode names a member without an id
    for event in timeline:
        if event.component == "broker" or event.participant not in printing or event.at is None:
            continue
        holder = holders.setdefault(event.participant, _Holder())
        holder.node = holder.node or event.node
        if event.member_id:
            members.add(event.member_id)
            if event.kind not in REFUSING:
                holder.member = event.member_id
        kind = event.kind
        if kind in VOIDED and not event.member_id:
            holder.member = None
        if kind in RESTARTING or (kind in ("leave_group", "join_requested", "generation_reset") and event.cause == "member_leave"):
            holder.reset()
        elif kind == "partitions_revoked":
            revoked = partition_set(event.partitions)
            had = holder.holds
            if partial_revocations and had is not None:
                holder.holds = had - revoked
                if had and not holder.holds:
                    holder.stop(event.at, len(had))
            elif revoked or had:  # eager: everything goes; a revocation of nothing by a member that held nothing is no stop
                holder.holds = frozenset()
                holder.stop(event.at, len(had or revoked))
        elif kind == "partitions_lost":
            lost = partition_set(event.partitions)
            if lost or holder.holds:
                holder.stop(event.at, len(holder.holds or lost))
            holder.holds = frozenset()
        elif kind == "partitions_assigned":
            assigned = partition_set(event.partitions)
            resumed = holder.since is not None and not _restarted_between(starts or {}, event.participant, holder.since, event.at)
            since, held = holder.since, holder.held
            holder.since = None
            holder.holds = (holder.holds or frozenset()) | assigned if partial_revocations else assigned
            if resumed:
                # named by the member that resumed: one removed from the group comes back under a new id
                member = holder.member or _unnamed(event.participant)
                result.append(MemberPause(member, holder.node, since, event.at, _ms(since, event.at), partitions_before=held,
                                          partitions_after=len(holder.holds)))
    return result, members


def _printing_consumers(timeline: list[Event]) -> set[tuple[str, str, str]]:
    """The consumers that print their partitions. A framework's listener may print them again on its own thread
    (Spring's container): that is the same consumer, counted once, by its client's own lines."""
    printing = {e.participant for e in timeline if e.component != "broker" and e.kind in ("partitions_assigned", "partitions_revoked")}
    by_client = {e.participant for e in timeline if e.participant in printing and e.client_id}
    clients_in = {participant[:2] for participant in by_client}
    return {p for p in printing if p in by_client or p[:2] not in clients_in}


def attribute_pauses(rebalances: list[Rebalance], found: list[MemberPause], replaced: set[str],
                     moves: list[tuple[datetime, PartitionMove]] = ()) -> None:
    """Each pause (and partition move) goes to the rebalance whose assignment ended it; the episodes' pauses of
    ``replaced`` members go."""
    for rebalance in rebalances:
        rebalance.pauses = [p for p in rebalance.pauses if p.estimated or p.member not in replaced]
    timed = sorted((r for r in rebalances if r.started_at is not None), key=lambda r: r.started_at)
    if not timed:
        return
    starts = [r.started_at for r in timed]

    def owner(at: datetime | None) -> Rebalance:
        return timed[max(0, bisect_right(starts, at) - 1)] if at is not None else timed[0]

    for pause in found:
        owner(pause.ended_at).pauses.append(pause)
    for at, move in moves:
        owner(at).moves.append(move)


def _restarted_between(starts: dict[tuple[str, str], list[datetime]], participant: tuple[str, str, str],
                       since: datetime, until: datetime) -> bool:
    return any(since < at <= until for at in starts.get(participant[:2], ()))


def _unnamed(participant: tuple[str, str, str]) -> str:
    """``node/client`` for a member whose log never prints its member id (as the rebalance episodes name it)."""
    return "/".join(filter(None, participant[1:]))


def _ms(start: datetime, end: datetime) -> int:
    return max(0, round((end - start).total_seconds() * 1000))
