"""The incident model: what the analyzers found, shaped for every renderer (terminal, JSON, Markdown, HTML).

Plain dataclasses with no behaviour beyond serialisation: renderers read them, nothing writes back.
`SCHEMA_VERSION` is bumped whenever the JSON shape changes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

SCHEMA_VERSION = 3

# Protocols whose coordinator moves the group by epochs and assigns itself: KIP-848 consumer groups, KIP-1071 streams
# groups and KIP-932 share groups.
EPOCH_PROTOCOLS = ("consumer", "streams", "share")

def member_tail(member: str) -> str:
    """A member id as a reader tells it apart: whole when short, else its last 12 characters."""
    return member if len(member) <= 16 else "…" + member[-12:]


def duration_text(ms: int) -> str:
    """``87 ms``, ``5.4 s``, ``2.0 min``: how the analysis' sentences and every renderer write a duration."""
    if ms < 1000:
        return f"{ms} ms"
    return f"{ms / 1000:.1f} s" if ms < 120_000 else f"{ms / 60000:.1f} min"

@dataclass(frozen=True, slots=True)
class Evidence:
    """A log line that proves something: where it is, when, on which node, and what it says."""

    file: str
    line: int
    text: str
    ts: datetime | None = None
    node: str | None = None
    kind: str | None = None


@dataclass(slots=True)
class Cause:
    """Why a rebalance happened, how sure we are (0–1), and the lines that say so."""

    kind: str  # one of schema.CAUSES
    confidence: float
    summary: str
    evidence: list[Evidence] = field(default_factory=list)
    member: str | None = None  # the member whose action started the rebalance
    confirm: str | None = None  # what the logs we do not have would confirm
    trigger: str | None = None  # what set off the cause on the member, when its own log shows it ("50.4 s JVM pause")
    consequence: str | None = None  # what it cost the member beyond the pause (a refused offset commit: redelivery)


@dataclass(slots=True)
class Departure:
    member: str
    how: str  # heartbeat_expiry, poll_timeout, member_leave, static_member_fencing, unknown


@dataclass(slots=True)
class MemberPause:
    """How long one member stopped processing in one rebalance."""

    member: str
    node: str | None
    started_at: datetime | None
    ended_at: datetime | None
    pause_ms: int
    estimated: bool = False  # from the group's timeline, not the member's own log
    partitions_before: int | None = None  # held when it stopped (its own log; None when estimated)
    partitions_after: int | None = None  # held once the assignment that resumed it came


@dataclass(slots=True)
class PartitionMove:
    """A partition that changed owner in a cooperative (or KIP-848) rebalance, and how long nobody processed it."""

    partition: str
    from_member: str | None
    to_member: str | None
    unowned_ms: int


@dataclass(slots=True)
class Rebalance:
    group_id: str
    from_generation: int | None
    to_generation: int | None
    started_at: datetime | None
    ended_at: datetime | None
    duration_ms: int | None
    protocol: str | None  # eager, cooperative, consumer (KIP-848)
    assignor: str | None
    coordinator: str | None
    leader: str | None
    members: list[str]
    member_count: int | None
    joined: list[str]
    left: list[Departure]
    cause: Cause
    pauses: list[MemberPause]
    failed: bool = False  # never reached a stable generation
    seen_by: list[str] = field(default_factory=list)  # broker, client
    completed: bool = True  # the logs show the group (or a member) stable at the new generation
    moves: list[PartitionMove] = field(default_factory=list)  # cooperative / KIP-848: partitions revoked and reassigned
    clock_backwards: bool = False  # it ends before it starts on the logs' clocks (a clock stepped back): no duration

    @property
    def pause_ms(self) -> int:
        return sum(p.pause_ms for p in self.pauses)

    @property
    def unfinished(self) -> bool:
        """No stable generation is seen after it: it failed, or the logs end (or the member gave up) before one."""
        return not self.completed or self.to_generation is None


@dataclass(slots=True)
class MembershipChange:
    """A share group's (KIP-932) epoch moving on as members come and go: no rebalance, nobody pauses, since its
    members share the partitions and acquire records one by one."""

    group_epoch: int | None
    at: datetime | None
    joined: list[str]
    left: list[Departure]
    members: list[str]
    cause: Cause


@dataclass(slots=True)
class LeaderChange:
    generation: int | None
    at: datetime | None
    previous: str | None
    leader: str | None
    previous_stayed: bool = False  # the old leader is still a member: it lost leadership without leaving


@dataclass(slots=True)
class Probing:
    interval_ms: int | None  # median spacing of probing rebalances
    count: int
    expected_interval_ms: int


@dataclass(slots=True)
class Finding:
    kind: str
    severity: str  # critical, warning, info
    summary: str
    evidence: list[Evidence]
    recommendation: str
    trigger: str | None = None  # what the logs show set it off (the record a stream thread died on)


@dataclass(slots=True)
class ClockSkew:
    """How far a file's clock is from the reference (a broker log), from matched broker/client events."""

    file: str
    reference: str
    skew_ms: int
    samples: int


@dataclass(slots=True)
class ClockZone:
    """A file written in local time without an offset in its timestamps, and the zone it is read in: its shared
    moments with the reference (a broker log) agree on a whole number of quarter hours."""

    file: str
    reference: str
    offsets_min: list[int]  # minutes ahead of UTC; two when a daylight-saving change falls inside the file
    zone: str | None  # a zone with that daylight-saving change (one of several with the same offsets)
    samples: int
    agreeing: int

    @property
    def label(self) -> str:
        """``UTC+02:00``, or ``UTC+01:00 → UTC+02:00 (daylight saving, as Europe/Amsterdam)``."""
        offsets = " → ".join(f"UTC{'-' if m < 0 else '+'}{abs(m) // 60:02d}:{abs(m) % 60:02d}" for m in self.offsets_min)
        return f"{offsets} (daylight saving, as {self.zone})" if self.zone else offsets


@dataclass(slots=True)
class GroupAnalysis:
    group_id: str
    coordinator: str | None
    protocol: str | None
    generations: list[int]
    rebalances: list[Rebalance]
    leader_changes: list[LeaderChange]
    probing: Probing | None
    findings: list[Finding]
    pause_by_member: dict[str, int]
    member_nodes: dict[str, str] = field(default_factory=dict)  # member id → the node whose log names it
    group_type: str | None = None  # classic, consumer, streams or share: the type the group has at the end of the logs
    group_types: list[str] = field(default_factory=list)  # every type it had, in order (an online migration shows two)
    versions: list[str] = field(default_factory=list)  # Kafka versions the group's own wordings prove, per component
    membership_changes: list[MembershipChange] = field(default_factory=list)  # share groups: epochs without rebalances

    @property
    def total_pause_ms(self) -> int:
        return sum(self.pause_by_member.values())

    def member_stints(self, member: str, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
        """When a member was in the group, within [start, end]: from the rebalance that first lists it (from
        ``start`` if the group's first rebalance already had it) until the rebalance it left, or the first one
        that no longer lists it, or ``end``. Shared by the terminal timeline and the picture."""
        spans: list[tuple[datetime, datetime]] = []
        since: datetime | None = None
        dated = [r for r in self.rebalances if r.started_at or r.ended_at]
        for index, rebalance in enumerate(dated):
            at = rebalance.started_at or rebalance.ended_at
            listed = member in rebalance.members or member in rebalance.joined
            departed = any(d.member == member for d in rebalance.left)
            if since is None and departed and not spans:
                spans.append((start, at))  # there before the logs show it, until it left
            elif since is None and listed and not departed:
                since = start if index == 0 and member not in rebalance.joined else at
            elif since is not None and (departed or not listed):
                spans.append((since, at if departed else (rebalance.ended_at or at)))
                since = None
        if since is not None:
            spans.append((since, end))
        return spans

    @property
    def failed_rebalances(self) -> int:
        return sum(1 for r in self.rebalances if r.failed)


@dataclass(slots=True)
class Verdict:
    """The incident in a few lines: the root cause as a chain, the pods, the impact and what to do."""

    cause: str  # the finding that explains the incident (FINDING_KINDS), or "none"
    severity: str
    title: str  # what happened, and where: "heartbeat expiry in orders"
    chain: list[str]  # cause → effect, as far as the logs show it
    groups: list[str]  # the groups that rebalanced
    members: list[tuple[str, str | None]]  # the members involved, with the node each ran on
    impact: dict[str, int]  # rebalances, failed, pause_ms over every group
    actions: list[str]
    root_cause: str = "unknown"  # what started the rebalances behind the verdict (schema.CAUSES)

    @property
    def headline(self) -> str:
        return f"{self.title}: {' → '.join(self.chain)}" if self.chain else self.title

    def to_dict(self) -> dict[str, Any]:
        return {"cause": self.cause, "root_cause": self.root_cause, "severity": self.severity, "headline": self.headline, "chain": self.chain,
                "groups": self.groups, "members": [{"member": m, "node": n} for m, n in self.members],
                "impact": self.impact, "actions": self.actions}


@dataclass(slots=True)
class Analysis:
    groups: list[GroupAnalysis]
    started_at: datetime | None
    ended_at: datetime | None
    files: list[str]
    nodes: list[str]
    events: int
    buckets: dict[str, int]
    clock_skew: list[ClockSkew]
    versions: list[str] = field(default_factory=list)  # Kafka versions the wordings prove, per component
    clock_zones: list[ClockZone] = field(default_factory=list)  # files read in the local time they were written in
    verdict: Verdict | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of `report --format json` (see README "Report JSON")."""
        return {
            "schema_version": SCHEMA_VERSION,
            "verdict": self.verdict.to_dict() if self.verdict else None,
            "span": {"started_at": _iso(self.started_at), "ended_at": _iso(self.ended_at)},
            "stats": {"events": self.events, "files": len(self.files), "nodes": self.nodes, **self.buckets},
            "clock_skew": [asdict(s) for s in self.clock_skew],
            "clock_zones": [asdict(z) | {"read_as": z.label} for z in self.clock_zones],
            "kafka_versions": self.versions,
            "groups": [_group_dict(g) for g in self.groups],
        }


def _iso(ts: datetime | None) -> str | None:
    if ts is None:
        return None
    spec = "milliseconds" if ts.microsecond % 1000 == 0 else "microseconds"
    return ts.isoformat(timespec=spec).replace("+00:00", "Z")


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return _iso(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _evidence(items: list[Evidence]) -> list[dict[str, Any]]:
    return [{"file": e.file, "line": e.line, "text": e.text, "ts": _iso(e.ts), "node": e.node} for e in items]


def _group_dict(group: GroupAnalysis) -> dict[str, Any]:
    return {
        "group_id": group.group_id,
        "group_type": group.group_type,
        "group_types": group.group_types,
        "coordinator": group.coordinator,
        "protocol": group.protocol,
        "kafka_versions": group.versions,
        "generations": group.generations,
        "total_pause_ms": group.total_pause_ms,
        "pause_by_member": group.pause_by_member,
        "member_nodes": group.member_nodes,
        "rebalances": [
            {
                "generation": r.to_generation,
                "from_generation": r.from_generation,
                "started_at": _iso(r.started_at),
                "ended_at": _iso(r.ended_at),
                "duration_ms": r.duration_ms,
                "clock_backwards": r.clock_backwards,
                "failed": r.failed,
                "leader": r.leader,
                "members": r.members,
                "member_count": r.member_count,
                "joined": r.joined,
                "left": [asdict(d) for d in r.left],
                "protocol": r.protocol,
                "assignor": r.assignor,
                "coordinator": r.coordinator,
                "seen_by": r.seen_by,
                "cause": {
                    "kind": r.cause.kind,
                    "confidence": r.cause.confidence,
                    "summary": r.cause.summary,
                    "member": r.cause.member,
                    "confirm": r.cause.confirm,
                    "trigger": r.cause.trigger,
                    "consequence": r.cause.consequence,
                    "evidence": _evidence(r.cause.evidence),
                },
                "pause_ms": r.pause_ms,
                "pauses": [_jsonable(asdict(p)) for p in r.pauses],
                "moves": [asdict(m) for m in r.moves],
            }
            for r in group.rebalances
        ],
        "membership_changes": [
            {"group_epoch": c.group_epoch, "at": _iso(c.at), "joined": c.joined, "left": [asdict(d) for d in c.left],
             "members": c.members, "cause": {"kind": c.cause.kind, "summary": c.cause.summary, "member": c.cause.member,
                                             "evidence": _evidence(c.cause.evidence)}}
            for c in group.membership_changes
        ],
        "leader_changes": [_jsonable(asdict(c)) for c in group.leader_changes],
        "probing": asdict(group.probing) if group.probing else None,
        "findings": [
            {"kind": f.kind, "severity": f.severity, "summary": f.summary, "evidence": _evidence(f.evidence),
             "recommendation": f.recommendation, "trigger": f.trigger}
            for f in group.findings
        ],
    }


FINDING_KINDS: dict[str, str] = {
    "heartbeat_expiry": "members were expired for missing heartbeats",
    "poll_timeout": "members exceeded max.poll.interval.ms and left",
    "member_churn": "members joined and left (deploys, restarts, scale-out)",
    "rolling_restart": "instances left on shutdown and rejoined one after another: a routine rolling restart",
    "cooperative_followups": "cooperative rebalances needed a second round",
    "probing_rebalances": "Streams probing rebalances at probing.rebalance.interval.ms",
    "version_probing": "Streams version probing during a rolling upgrade",
    "failed_rebalances": "rebalances that never reached a stable generation (retries, Join/SyncGroup failures)",
    "rebalance_storm": "many rebalances in a short window, or an endless loop",
    "unstable_leader": "the group leader changed between generations",
    "crash_loop": "membership flapping n ↔ n+1: a member or stream thread keeps dying and coming back",
    "coordinator_change": "the group coordinator moved",
    "static_member_fencing": "a static member was fenced or replaced",
    "assignment_timeout": "members were fenced for not finishing their part of a rebalance within the rebalance timeout",
    "topology_change": "a Kafka Streams group's topology was configured anew (KIP-1071)",
    "group_conversion": "the group was converted between the classic and consumer types (online migration)",
    "share_group": "a share group's members came and went without rebalances (KIP-932)",
    "static_member_replaced": "static members restarted and took their assignment back without a rebalance",
    "streams_not_ready": "a streams group got no tasks while its topology could not be configured (NOT_READY)",
    "clock_backwards": "a clock went backwards inside rebalances: their durations are unknown",
    "member_start": "a member starting, its first join not in the lines yet",
    "long_pause": "members stopped processing for a long time",
    "eager_protocol": "every rebalance stops every member (eager assignor)",
    "unexplained_rebalances": "rebalances whose cause the logs at hand do not show",
}
