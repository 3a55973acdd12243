"""The verdict: what a senior engineer would say first about the incident, in at most five lines. The root
cause as a chain of what the logs show (a member stops heartbeating → the coordinator expires it → the
group rebalances), the pods involved, the impact, and the one or two actions that fix it. Computed from
the groups' findings: the worst finding of the group that should be read first."""

from __future__ import annotations

import math
from collections import Counter
from datetime import timedelta

from .findings import CAUSE_FINDING
from .model import EPOCH_PROTOCOLS, Finding, GroupAnalysis, Rebalance, Verdict, duration_text, member_tail

# The one or two things to do, per finding, as a responder would say them (the findings carry the full advice).
ACTIONS = {
    "heartbeat_expiry": ["Find what stalled {who} at {at} (GC pause, CPU starvation, network) in its own logs and metrics",
                         "Raise session.timeout.ms if such stalls are expected; static membership avoids rebalances on restarts"],
    "heartbeat_expiry kip848": ["Find what stalled {who} at {at} (GC pause, CPU starvation, network) in its own logs and metrics",
                                "Raise the brokers' group.{protocol}.session.timeout.ms if such stalls are expected"],
    "failed_rebalances coordinator": ["The rebalance failed while the group coordinator moved (a broker restart or a "
                                      "__consumer_offsets leadership change): members retry on their own; check why that broker "
                                      "restarted if it was not planned"],
    "jvm_pause": ["Fix the {trigger} on {who}: heap size, allocation rate, GC settings",
                  "Raise session.timeout.ms only if such pauses cannot be avoided"],
    "poll_timeout": ["Make one poll loop of {who} fit max.poll.interval.ms: lower max.poll.records or speed up the per-record work",
                     "Or raise max.poll.interval.ms to the slowest batch's time"],
    "failed_rebalances": ["Read the leader's and the slow members' logs around {at}: long onPartitionsRevoked callbacks or "
                          "blocked poll loops keep a rebalance from completing"],
    "rebalance_storm": ["Find the member that starts each round (the causes below) and fix why it keeps leaving or failing"],
    "crash_loop": ["Fix the exception {who} dies on; a poison record needs a handler that skips or dead-letters it "
                   "(a processing exception handler)"],
    "static_member_fencing": ["Give every running instance its own group.instance.id"],
    "assignment_timeout": ["Find what kept {who} from revoking its partitions at {at}: a slow onPartitionsRevoked callback or "
                           "a poll loop blocked in processing", "Raise max.poll.interval.ms (its rebalance timeout) only if "
                           "that work is legitimately that slow"],
    "topology_change": ["Nothing to fix if the application was being deployed; otherwise create its internal topics and "
                        "check its source topics' partition counts"],
    "group_conversion": ["Finish the rolling upgrade to group.protocol=consumer in one go: each conversion rebalances the group"],
    "share_group": ["Nothing to fix: share groups move members without rebalancing"],
    "static_member_replaced": ["Nothing to fix: static members restarted without a rebalance"],
    "streams_not_ready": ["Create the internal and source topics the coordinator names, with matching partition counts"],
    "clock_backwards": ["Check the hosts' time synchronisation: a clock stepped backwards during the rebalances"],
    "coordinator_change": ["Expected during broker restarts; otherwise check the broker that lost the __consumer_offsets partition"],
    "unstable_leader": ["Read the leaders' logs around the changes: the previous leader did not complete the rebalance"],
    "long_pause": ["Move to cooperative-sticky (or group.protocol=consumer on Kafka 4) so that only moving partitions stop"],
    "probing_rebalances": ["Let warm-up replicas catch up faster: raise max.warmup.replicas, or add standby replicas"],
    "version_probing": ["Finish the rolling upgrade of the Streams instances"],
    "rolling_restart": ["Nothing to fix; static membership (group.instance.id) would make the next restart rebalance-free"],
    "scale_out": ["Nothing to fix; cooperative-sticky keeps the other members processing while partitions move"],
    "member_churn": ["Expected when instances start and stop; static membership and cooperative-sticky make it cheaper"],
    "cooperative_followups": ["Nothing to fix: the second round of a cooperative rebalance"],
    "eager_protocol": ["Move to cooperative-sticky so that a rebalance stops only the partitions that move"],
    "unexplained_rebalances": ["Add the group coordinator's server.log: it names the reason of every rebalance"],
}
TITLES = {
    "heartbeat_expiry": "heartbeat expiry", "poll_timeout": "poll timeout (max.poll.interval.ms)",
    "failed_rebalances": "rebalances that never completed", "rebalance_storm": "rebalance storm",
    "crash_loop": "a member in a crash loop", "static_member_fencing": "static member fencing",
    "coordinator_change": "coordinator change", "unstable_leader": "unstable group leader", "long_pause": "long pauses",
    "probing_rebalances": "Streams probing rebalances", "version_probing": "Streams version probing",
    "rolling_restart": "routine rolling restart", "scale_out": "routine scale-out", "member_churn": "members joining and leaving",
    "cooperative_followups": "cooperative follow-up rounds", "eager_protocol": "eager rebalancing",
    "unexplained_rebalances": "rebalances without a visible cause", "assignment_timeout": "a member fenced for a slow rebalance",
    "topology_change": "a Streams topology configured anew", "group_conversion": "online group conversion",
    "share_group": "share group membership changes", "static_member_replaced": "static members replaced",
    "streams_not_ready": "a streams group without tasks", "clock_backwards": "a clock that went backwards",
}
CAUSE_OF_FINDING = {finding: cause for cause, finding in CAUSE_FINDING.items() if finding not in ("member_churn", "unexplained_rebalances")}
CAUSE_OF_FINDING["static_member_replaced"] = "static_member_fencing"  # the vocabulary's "fenced or replaced"
CAUSE_OF_FINDING["member_start"] = "member_join"  # a start whose join is not in view yet
FINDING_CAUSES = {finding: {c for c, f in CAUSE_FINDING.items() if f == finding} for finding in set(CAUSE_FINDING.values())}
MAX_ACTIONS = 2
SHOWN = 0.8  # a cause this sure leads the verdict over rebalances the logs say nothing of
COORDINATOR_REACH = timedelta(minutes=5)  # a member that lost its coordinator is expired within its session timeout


def _generation(rebalance: Rebalance) -> str:
    start = "?" if rebalance.from_generation is None else rebalance.from_generation
    return f"{start} → {'✗' if rebalance.to_generation is None else rebalance.to_generation}"


def _who(members: list[str], group: GroupAnalysis) -> str:
    """One member as its node and the tail of its id; several as their nodes (a pod restarted is one pod)."""
    if len(members) == 1:
        node = group.member_nodes.get(members[0])
        return f"{node} ({member_tail(members[0])})" if node else member_tail(members[0])
    names = list(dict.fromkeys(group.member_nodes.get(m) or member_tail(m) for m in members))
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def verdict(groups: list[GroupAnalysis]) -> Verdict:
    rebalances = sum(len(g.rebalances) for g in groups)
    failed = sum(g.failed_rebalances for g in groups)
    pause = sum(g.total_pause_ms for g in groups)
    impact = {"rebalances": rebalances, "failed": failed, "pause_ms": pause}
    rebalanced = [g for g in groups if g.rebalances]  # ranked by their worst finding (see analyze)
    if not rebalanced:
        shared = next((g for g in groups if g.membership_changes), None)
        if shared is not None:  # share groups: members came and went, and that is all
            changes = shared.membership_changes
            joined = sum(len(c.joined) for c in changes)
            left = sum(len(c.left) for c in changes)
            chain = [f"{joined} member(s) joined and {left} left share group {shared.group_id} in {len(changes)} epoch(s)",
                     "no rebalance: share group members pause nobody"]
            known = Counter(c.cause.kind for c in changes if c.cause.kind != "unknown")
            return Verdict("share_group", "info", f"{TITLES['share_group']} in {shared.group_id}", chain, [], [], impact,
                           ACTIONS["share_group"], known.most_common(1)[0][0] if known else "unknown")
        starting = next((g.group_id for g in groups for f in g.findings if f.kind == "member_start"), None)
        headline = "no rebalance in these logs" + (f": a member of {starting} is starting" if starting else "")
        return Verdict("none", "info", headline, [], [], [], impact, [], _root_cause([], groups))
    # a group whose rebalances have a known cause leads one whose only finding is that nothing is known of them
    group = next((g for g in rebalanced if _explained(g)), None) or next((g for g in rebalanced if g.findings), rebalanced[0])
    finding = next((f for f in group.findings if not _retried_only(f, group) and not _inferred_beside_shown(f, group)
                    and not _unknown_beside_known(f, group)), None)
    known = [r.cause.kind for r in group.rebalances if r.cause.kind != "unknown"] or [r.cause.kind for r in group.rebalances]
    kind = finding.kind if finding else CAUSE_FINDING.get(Counter(known).most_common(1)[0][0], "member_churn")
    caused = [r for r in group.rebalances if r.cause.kind in FINDING_CAUSES.get(kind, ())] or group.rebalances
    if kind == "rolling_restart":  # who restarted: the members that left, in order
        members = list(dict.fromkeys(d.member for r in caused for d in r.left))
    else:
        members = list(dict.fromkeys(m for r in caused for m in ([r.cause.member] if r.cause.member else [d.member for d in r.left])))
    if kind == "member_churn" and all(r.cause.kind == "member_join" for r in caused):
        kind = "scale_out"
    first = caused[0]
    at = f"{first.started_at:%H:%M:%S}" if first.started_at else "the start"
    chain = _chain(kind, group, caused, members, at, finding.trigger if finding else None)
    moved = next((f for f in group.findings if f.kind == "coordinator_change"), None)
    coordinator_moved = kind in ("heartbeat_expiry", "failed_rebalances") and moved is not None and _shortly_before(moved.evidence, first)
    if coordinator_moved:
        chain.insert(0, "the group coordinator moved: members had to find it again")
    others = len(rebalanced) - 1
    scope = f"{group.group_id}" + (f" (and {others} other group{'s' if others > 1 else ''})" if others else "")
    title = f"{TITLES.get(kind, kind.replace('_', ' '))} in {scope}"
    who = _who(members, group) if members else "the member"
    trigger = next((r.cause.trigger for r in caused if r.cause.trigger), None)
    if trigger and kind == "heartbeat_expiry":
        advice = ACTIONS["jvm_pause"]
    elif kind == "failed_rebalances" and coordinator_moved:  # not slow callbacks: the coordinator went away
        advice = ACTIONS["failed_rebalances coordinator"]
    elif kind == "heartbeat_expiry" and group.protocol in EPOCH_PROTOCOLS:  # KIP-848: the brokers own the session timeout
        advice = ACTIONS["heartbeat_expiry kip848"]
    else:
        advice = ACTIONS.get(kind, [])
    actions = [a.format(who=who, at=at, trigger=trigger, protocol=group.protocol) for a in advice][:MAX_ACTIONS]
    nodes = [(m, group.member_nodes.get(m)) for m in members]
    severity = finding.severity if finding else "info"
    return Verdict(kind, severity, title, chain, [g.group_id for g in groups if g.rebalances], nodes, impact, actions,
                   _root_cause(caused, groups, group))


def _retried_only(finding: Finding, group: GroupAnalysis) -> bool:
    """JoinGroup or SyncGroup failure lines, but every rebalance reached its generation, none started again for a
    failed one: the members retried and got through; that is not what happened."""
    return finding.kind == "failed_rebalances" and all(
        not r.unfinished and not r.failed and r.cause.kind != "failed_rebalance_retry" for r in group.rebalances)


def _inferred_beside_shown(finding: Finding, group: GroupAnalysis) -> bool:
    """Rebalances whose cause the logs do not show (nothing is known, or it is inferred), in a group where they show
    why others happened: those lead."""
    causes = FINDING_CAUSES.get(finding.kind)
    own = [r for r in group.rebalances if causes and r.cause.kind in causes]
    return bool(own) and not any(_shown(r) for r in own) and any(_shown(r) for r in group.rebalances)


def _unknown_beside_known(finding: Finding, group: GroupAnalysis) -> bool:
    """Rebalances nothing is known of, in a group where the lines tell why another happened, even by inference: that
    one leads."""
    return finding.kind == "unexplained_rebalances" and any(r.cause.kind != "unknown" for r in group.rebalances)


def _explained(group: GroupAnalysis) -> bool:
    """A group with something to say beyond "nothing is known": another finding, or a cause the lines show."""
    return any(f.kind != "unexplained_rebalances" for f in group.findings) or any(_shown(r) for r in group.rebalances)


def _shown(rebalance: Rebalance) -> bool:
    """A cause the lines show, not one inferred from what they leave out (a member's log that starts with it)."""
    return rebalance.cause.kind != "unknown" and rebalance.cause.confidence >= SHOWN


def _origin(rebalance: Rebalance, rounds: list[Rebalance], position: dict[int, int]) -> str:
    """A rebalance's cause, followed back through cooperative follow-up rounds to the round that started them
    (``position``: each of the group's ``rounds`` by id, found once for all: a storm has tens of thousands)."""
    i = position.get(id(rebalance))
    if i is None:
        return rebalance.cause.kind
    while i > 0 and rounds[i].cause.kind == "cooperative_followup" and rounds[i - 1].cause.kind != "unknown":
        i -= 1
    return rounds[i].cause.kind


def _root_cause(caused: list[Rebalance], groups: list[GroupAnalysis], group: GroupAnalysis | None = None) -> str:
    """The cause behind the verdict: the most frequent known cause of its rebalances (a cooperative second round
    counts as what started its first; of causes as frequent, the one that started the earliest rebalance: a log
    of a start and a stop is about the start); without a rebalance, what a group's findings show happened to its
    members (an expiry, a coordinator move) though no rebalance is in view."""
    rounds = group.rebalances if group is not None else []
    position = {id(r): i for i, r in enumerate(rounds)}
    origins = [(_origin(r, rounds, position), _began_by(r)) for r in caused if r.cause.kind != "unknown"]
    if origins:
        known = Counter(origin for origin, _ in origins)
        earliest: dict[str, float] = {}
        for origin, started in origins:
            earliest[origin] = min(started, earliest.get(origin, math.inf))
        return min(known, key=lambda origin: (-known[origin], earliest[origin]))
    if caused:
        return "unknown"
    # JoinGroup or SyncGroup failures that failed no rebalance in view (an info finding) show no retry
    found = (CAUSE_OF_FINDING.get(f.kind) for g in groups for f in g.findings if not (f.kind == "failed_rebalances" and f.severity == "info"))
    return next((cause for cause in found if cause), "unknown")


def _began_by(rebalance: Rebalance) -> float:
    """When the rebalance had begun at the latest: its start, or, when the logs begin inside it, its end."""
    at = rebalance.started_at or rebalance.ended_at
    return at.timestamp() if at else math.inf


def _shortly_before(evidence: list, rebalance: Rebalance) -> bool:
    """Evidence of a coordinator move in the few minutes before the rebalance (a session timeout's reach)."""
    return rebalance.started_at is not None and any(
        e.ts is not None and timedelta(0) <= rebalance.started_at - e.ts <= COORDINATOR_REACH for e in evidence)


def _chain(kind: str, group: GroupAnalysis, caused: list[Rebalance], members: list[str], at: str,
           found_trigger: str | None = None) -> list[str]:
    """Cause → effect, as far as the logs show it."""
    who = _who(members, group) if members else "a member"
    paused = sum(p.pause_ms for r in caused for p in r.pauses)
    effect = f"{len(caused)} rebalance{'s' if len(caused) != 1 else ''} ({', '.join(_generation(r) for r in caused[:3])}{', …' if len(caused) > 3 else ''})"
    if paused:
        effect += f", {duration_text(paused)} of pause"
    trigger = next((r.cause.trigger for r in caused if r.cause.trigger), None)
    cost = [c for c in (next((r.cause.consequence for r in caused if r.cause.consequence), None),) if c]
    if kind == "heartbeat_expiry":
        stalled = f"{who} froze in a {trigger}" if trigger else f"{who} stopped heartbeating"
        return [stalled, f"the coordinator expired it at {at}", effect, *cost]
    if kind == "poll_timeout":
        stalled = f"{who} froze in a {trigger}" if trigger else f"{who} took longer than max.poll.interval.ms between two polls"
        return [stalled, f"it left the group at {at}", effect, *cost]
    if kind == "rolling_restart":
        return [f"{who} restarted one after another", "each left on shutdown and rejoined", effect]
    if kind == "scale_out":
        return [f"{who} joined", effect]
    if kind == "crash_loop":
        failing = [f"a stream thread of {who} failed on one record ({found_trigger})"] if found_trigger else []
        return [*failing, f"{who} keeps failing and rejoining", effect]
    if kind == "static_member_fencing":
        return [f"static members {who} were fenced or replaced (one group.instance.id on two instances?)", effect]
    if kind == "assignment_timeout":
        return [f"{who} did not finish revoking its partitions within its rebalance timeout",
                f"the coordinator fenced it at {at}", effect]
    if kind == "topology_change":
        return [f"the coordinator configured the topology of {group.group_id} anew at {at}", effect]
    if kind == "group_conversion":
        return [f"{who} joined with another group protocol", f"the coordinator converted the group at {at}", effect]
    if kind == "failed_rebalances":
        failed = [r for r in group.rebalances if r.failed] or [r for r in group.rebalances if r.unfinished]
        return [f"{len(failed)} rebalance{'s' if len(failed) != 1 else ''} did not complete ({', '.join(_generation(r) for r in failed[:3])})",
                f"the group needed {len(group.rebalances)} rebalance{'s' if len(group.rebalances) != 1 else ''}, "
                f"{duration_text(group.total_pause_ms)} of pause"]
    return [effect]
