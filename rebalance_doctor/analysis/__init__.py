"""Analyzers: pure functions of the event table that reconstruct what happened to each group.

>>> import rebalance_doctor
>>> analysis = rebalance_doctor.analyze(rebalance_doctor.load(["sample_logs/heartbeat-expiry"]).events)  # doctest: +SKIP
>>> [(r.to_generation, r.cause.kind) for r in analysis.groups[0].rebalances]                            # doctest: +SKIP
"""

from __future__ import annotations

from collections import defaultdict

import polars as pl

from ..collector import collector_paused
from .causes import attribute, with_refused_commit, with_runtime_trigger
from .clocks import align_clocks
from .findings import group_findings, leader_changes, probing
from .model import EPOCH_PROTOCOLS, Analysis, GroupAnalysis, MembershipChange, Rebalance
from .pauses import attribute_pauses, holding_pauses, partition_moves
from .rebalances import (
    assemble,
    by_group_type,
    coordinator_of,
    drafts,
    epoch_drafts,
    group_types_of,
    in_time_order,
    orphan_drafts,
    protocol_of,
    skipped_by_coordinator,
    track_broker_members,
)
from .timeline import Event, TimeIndex, consumer_starts, files_and_nodes, group_timelines
from .verdict import verdict
from .versions import VersionRange, versions_of, versions_seen

DEFAULT_PROBING_INTERVAL_MS = 600_000  # probing.rebalance.interval.ms default


@collector_paused()
def analyze(events: pl.DataFrame, *, probing_interval_ms: int = DEFAULT_PROBING_INTERVAL_MS,
            buckets: dict[str, int] | None = None,
            pattern_versions: dict[str, tuple[str, str | None]] | None = None,
            zoned_files: frozenset[str] | set[str] = frozenset()) -> Analysis:
    """Every rebalance of every group in the event table, with causes, pauses and findings.

    ``pattern_versions`` (catalog entry id → since, until) lets the advice speak of the Kafka versions the
    wordings prove; ``rebalance_doctor.analyze`` passes the loaded catalog's. Files written in local time
    without an offset are found and read in their zone, except ``zoned_files``, whose zone the user gave.
    """
    events, zones, skews = align_clocks(events, frozenset(zoned_files))
    versions = versions_seen(events, pattern_versions or {})
    starts = consumer_starts(events, skews)
    groups = [analyze_group(group_id, timeline, probing_interval_ms, starts, versions, pattern_versions or {})
              for group_id, timeline in group_timelines(events, skews)]
    severity = {"critical": 0, "warning": 1, "info": 2}
    # the group a responder should read first: the worst finding, then the most rebalances
    groups.sort(key=lambda g: (min((severity[f.severity] for f in g.findings), default=3), -len(g.rebalances), g.group_id))
    files, nodes = files_and_nodes(events)
    times = events["ts"].drop_nulls()
    return Analysis(
        groups=groups,
        started_at=times.min() if len(times) else None,
        ended_at=times.max() if len(times) else None,
        files=files,
        nodes=nodes,
        events=events.height,
        buckets=dict(buckets or {}),
        clock_skew=skews,
        clock_zones=zones,
        verdict=verdict(groups),
        versions=[str(v) for v in versions.values()],
    )


def analyze_group(group_id: str, timeline: list[Event], probing_interval_ms: int,
                  starts: dict[tuple[str, str], list] | None = None,
                  versions: dict[str, VersionRange] | None = None,
                  pattern_versions: dict[str, tuple[str, str | None]] | None = None) -> GroupAnalysis:
    protocol = protocol_of(timeline)
    protocol_by_draft: dict[int, str | None] = {}
    candidates = []
    for part in by_group_type(timeline):  # a group converted online is drafted by generations, then by epochs
        part_protocol = protocol_of(part) or protocol
        found = epoch_drafts(group_id, part) if part_protocol in EPOCH_PROTOCOLS else drafts(group_id, part)
        protocol_by_draft.update((id(d), part_protocol) for d in found)
        candidates += found
    candidates = in_time_order(candidates + orphan_drafts(group_id, timeline, candidates))
    skips = sorted(e.at for e in timeline if e.kind == "rebalance_skipped" and e.at)
    candidates = [d for d in candidates if not skipped_by_coordinator(d, skips)]
    rebalances: list[Rebalance] = []
    previous: Rebalance | None = None
    index, position, broker_members = TimeIndex(timeline), 0, set()
    broker_log = {"broker log"} if any(e.component == "broker" for e in timeline) else set()
    for draft in candidates:
        sides = {"broker" if e.component == "broker" else "client" for e in draft.events} | broker_log
        draft_protocol = protocol_by_draft.get(id(draft), protocol)
        cause = attribute(draft, index, previous, sides, draft_protocol)
        cause = with_refused_commit(with_runtime_trigger(cause, index, draft.first_at), index, draft.first_at)
        stabilized = [e.at for e in draft.broker + draft.signals if e.at]
        position = track_broker_members(broker_members, timeline, position, min(stabilized) if stabilized else None)
        rebalance = assemble(draft, previous, draft_protocol, cause, set(broker_members), starts or {})
        rebalances.append(rebalance)
        if not rebalance.failed:
            previous = rebalance
    for earlier in rebalances[:-1]:
        if not earlier.completed and earlier.to_generation is not None:
            earlier.failed = True  # another rebalance began before this one reached a stable generation
    found, printing_members = holding_pauses(timeline, protocol, starts)
    attribute_pauses(rebalances, found, printing_members, partition_moves(timeline, protocol))
    pause_by_member: dict[str, int] = defaultdict(int)
    for rebalance in rebalances:
        for pause in rebalance.pauses:
            pause_by_member[pause.member] += pause.pause_ms
    generations = sorted({g for r in rebalances for g in (r.from_generation, r.to_generation) if g is not None})
    changes = leader_changes(rebalances)
    probe = probing(rebalances, probing_interval_ms)
    member_nodes = {e.member_id: e.node for e in timeline if e.member_id and e.node and e.component != "broker"}
    for rebalance in rebalances:  # a member id means little to a reader; the pod it ran on tells where to look
        member = rebalance.cause.member
        if member and member_nodes.get(member) and member in rebalance.cause.summary:
            rebalance.cause.summary = rebalance.cause.summary.replace(member, f"{member} ({member_nodes[member]})", 1)
    types = group_types_of(timeline)
    membership: list[MembershipChange] = []
    if protocol == "share":  # its epochs are membership changes, not rebalances: nobody stops
        membership = [MembershipChange(r.to_generation, r.started_at or r.ended_at,
                                       r.joined or ([r.cause.member] if r.cause.kind == "member_join" and r.cause.member else []),
                                       r.left, r.members, r.cause) for r in rebalances]
        rebalances, changes, pause_by_member = [], [], defaultdict(int)
    findings = group_findings(group_id, rebalances, changes, probe, timeline, protocol, versions or {}, member_nodes, membership)
    matched: dict[str, set[str]] = defaultdict(set)
    for event in timeline:
        matched[event.component].add(event.pattern_id)
    return GroupAnalysis(
        group_id=group_id,
        coordinator=coordinator_of(timeline),
        protocol=protocol,
        generations=generations,
        rebalances=rebalances,
        leader_changes=changes,
        probing=probe,
        findings=findings,
        pause_by_member=dict(sorted(pause_by_member.items(), key=lambda kv: -kv[1])),
        member_nodes=member_nodes,
        group_type=types[-1] if types else None,
        group_types=types,
        versions=[str(v) for v in versions_of(matched, pattern_versions or {}).values()],
        membership_changes=membership,
    )
