"""Findings: what a senior Kafka engineer would point out about a group's rebalances, with the knob to turn."""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from .model import EPOCH_PROTOCOLS, Evidence, Finding, LeaderChange, MembershipChange, Probing, Rebalance, duration_text
from .timeline import (
    UNNAMED_GROUP,
    Event,
    answered_not_coordinator,
    asked_for_member_id,
    broker_id,
    changes_subscription,
    consumer_start_line,
    fenced_static_member,
    held_membership,
    leaves_start_state,
    shows_removal,
    start_up_line,
    suspects_coordinator,
)
from .versions import VersionRange

STORM_COUNT, STORM_WINDOW = 5, timedelta(minutes=5)
ENDLESS_GENERATION = 100_000
LONG_PAUSE_MS = 30_000
CRASH_LOOP_FLIPS = 3  # n, n+1, n, n+1, n: one expiry and one rejoin is not a loop
RESTART_GAP = timedelta(minutes=3)  # an instance back within this after it left was restarted, not removed
ROUTINE_CAUSES = {"member_leave", "member_join", "cooperative_followup"}
STREAMS_COMPONENTS = {"streams", "streamiz"}
BEFORE_FIRST_JOIN = {"diagnostic", "member_state_change"}  # what a consumer logs between its start and its first join
MAX_EVIDENCE = 6

ADVICE = {
    "heartbeat_expiry": "A member stopped heartbeating for longer than session.timeout.ms. Look for long GC pauses, CPU "
    "starvation or network trouble on that member at that time; raise session.timeout.ms (default 45 s since 3.0, "
    "10 s before) if pauses are expected; with static membership (group.instance.id, 2.3+) a restart within the "
    "session timeout causes no rebalance at all.",
    "poll_timeout": "Processing between two poll() calls took longer than max.poll.interval.ms (default 5 min): lower "
    "max.poll.records, speed up or offload the per-record work, or raise max.poll.interval.ms. The member leaves the "
    "group and every partition it owned stops until it is reassigned.",
    "member_churn": "Members keep joining and leaving (deploys, restarts, autoscaling). Use cooperative-sticky so that "
    "survivors keep their partitions, static membership (group.instance.id + session.timeout.ms above the restart time) "
    "for rolling restarts, and group.initial.rebalance.delay.ms on the brokers to absorb start-up bursts.",
    "rolling_restart": "A rolling restart: each instance left the group as it shut down and rejoined when it came back, "
    "two rebalances per instance. Routine. To make the next one cheaper: static membership (group.instance.id, with "
    "session.timeout.ms above the restart time) lets an instance come back without any rebalance, and cooperative-sticky "
    "moves only the restarted instance's partitions instead of stopping every member.",
    "cooperative_followups": "Cooperative rebalancing moves partitions in two rounds: revoke, then reassign. One "
    "follow-up per membership change is expected; a chain of them points at continuing membership churn.",
    "probing_rebalances": "Kafka Streams schedules a probing rebalance every probing.rebalance.interval.ms while "
    "warm-up replicas catch up. Many rounds mean large state to restore: raise max.warmup.replicas to move more tasks "
    "per round, tune acceptable.recovery.lag, or give restores more resources (num.standby.replicas avoids most of them).",
    "version_probing": "Instances run different Streams versions (a rolling upgrade): finish the upgrade; use upgrade.from "
    "for the two-bounce path when crossing metadata versions.",
    "failed_rebalances": "Rebalances did not complete: members did not rejoin or sync in time (JoinGroup/SyncGroup "
    "failures, rebalance timeout = max.poll.interval.ms). Check the leader and slow members: long onPartitionsRevoked "
    "callbacks, blocked poll loops, overloaded JVMs.",
    "rebalance_storm": "The group rebalances continuously. Find the member that starts each round (the causes below); "
    "a generation in the tens of thousands means a loop that never converges — typically a member that joins and "
    "immediately fails (crash loop, poll timeout shorter than its start-up).",
    "unstable_leader": "The group leader changes between generations: the previous leader did not complete the rebalance "
    "(left, expired or too slow to send the assignment). Check the leaders' logs around the changes.",
    "crash_loop": "Membership flaps between n and n+1: a member (or a Streams thread replaced by the uncaught-exception "
    "handler) keeps dying and rejoining. Fix the exception it dies on; REPLACE_THREAD turns a poison record into an "
    "endless rebalance loop — consider a deserialization/production exception handler that skips or dead-letters it.",
    "coordinator_change": "The group coordinator moved (broker restart or __consumer_offsets leadership change): members "
    "had to rediscover it. Expected during rolling broker restarts; otherwise check the broker that lost leadership.",
    "static_member_fencing": "A static member was fenced or replaced: two instances share one group.instance.id, or an "
    "instance restarted and replaced its previous member id. group.instance.id must be unique per running instance.",
    "assignment_timeout": "A member did not finish revoking and acknowledging its partitions (or tasks) within its "
    "rebalance timeout, so the coordinator fenced it: it lost everything it held and had to join again as a new member. "
    "The rebalance timeout is the member's max.poll.interval.ms: look for slow onPartitionsRevoked callbacks (commits, "
    "flushes, closing resources) and poll loops blocked in processing on that member; raise max.poll.interval.ms only if "
    "that work is legitimately that slow.",
    "topology_change": "The coordinator configured the Kafka Streams group's topology anew (a new or newly validated "
    "topology epoch: internal topics created, source topics changed) and rebalanced to hand out its tasks. Expected when "
    "an application is first deployed; until its internal topics exist and its source topics are partitioned alike, the "
    "group gets no tasks at all. Topology updates of a running streams group are not supported before Kafka 4.4: stop "
    "every instance (or reset the application) to change it. group.streams.initial.rebalance.delay.ms on the brokers "
    "batches the joins of a start-up.",
    "group_conversion": "The coordinator converted the group online between the classic and consumer types: a member with "
    "group.protocol=consumer joined a classic group (upgrade), or the last one left a converted group (downgrade). Every "
    "conversion rebalances the group. Finish the rolling upgrade of the clients in one go; the brokers' "
    "group.consumer.migration.policy (bidirectional, upgrade, downgrade, disabled) says which conversions are allowed.",
    "clock_backwards": "A clock went backwards while these rebalances ran: the lines that end them carry earlier "
    "times than the lines that start them. Check the hosts' time synchronisation (chrony or ntpd stepping the clock "
    "instead of slewing it, a VM resumed from a pause); read those rebalances in file order.",
    "streams_not_ready": "The coordinator cannot configure the streams group's topology, so it assigns no tasks at all "
    "(the group is NOT_READY): create the internal topics it names (the application creates them itself unless it "
    "lacks the ACLs, or the brokers refuse auto-creation), create missing source topics, and give co-partitioned "
    "topics equal partition counts. The group rebalances as soon as the topology is ready.",
    "static_member_replaced": "Static membership at work: a restarted instance came back with its group.instance.id "
    "within the session timeout and took its partitions back without a rebalance. Nothing to fix; keep "
    "session.timeout.ms (group.consumer.session.timeout.ms with group.protocol=consumer) above the restart time.",
    "share_group": "Share groups (KIP-932) do not rebalance: their members share partitions and acquire records one by "
    "one, so a member joining or leaving pauses nobody. A member whose session expired (the brokers' "
    "group.share.session.timeout.ms) leaves its acquired records locked until group.share.record.lock.duration.ms passes, "
    "then they are delivered again to another member.",
    "long_pause": "Members stopped processing for a long time during rebalances. Eager assignors stop every member in "
    "every rebalance; cooperative-sticky (2.4+) or the KIP-848 consumer protocol (4.0+) stop only what moves.",
    "eager_protocol": "The group uses an eager assignor: every rebalance revokes every partition of every member. Move to "
    "cooperative-sticky with two rolling bounces: first partition.assignment.strategy=[cooperative-sticky, range], then "
    "[cooperative-sticky] only (clients 2.4+); on Kafka 4.0+ consider group.protocol=consumer.",
    "member_start": "A consumer is starting: its first JoinGroup (or first heartbeat with group.protocol=consumer) "
    "rebalances the group, and with an eager assignor every member stops for it. Nothing to fix when the start was "
    "planned; read on in its log, or the coordinator's, for the generation it joins. group.initial.rebalance.delay.ms "
    "on the brokers gathers the joins of a new group's members into one rebalance.",
    "unexplained_rebalances": "The logs given do not show why these rebalances started. Add the group coordinator's "
    "server.log (it names the reason of every rebalance since 2.1) and the members' logs around those times.",
}
SEVERITY = {
    "heartbeat_expiry": "critical", "poll_timeout": "critical", "failed_rebalances": "critical", "rebalance_storm": "critical",
    "crash_loop": "critical", "unstable_leader": "warning", "probing_rebalances": "warning", "static_member_fencing": "warning",
    "long_pause": "warning", "coordinator_change": "warning", "assignment_timeout": "critical", "streams_not_ready": "critical",
    "member_churn": "info", "cooperative_followups": "info", "rolling_restart": "info", "version_probing": "info",
    "eager_protocol": "info", "unexplained_rebalances": "info", "topology_change": "info", "group_conversion": "info",
    "share_group": "info", "static_member_replaced": "info", "clock_backwards": "warning",
    "member_start": "info",
}
CAUSE_FINDING = {
    "heartbeat_expiry": "heartbeat_expiry", "poll_timeout": "poll_timeout", "member_join": "member_churn",
    "member_leave": "member_churn", "cooperative_followup": "cooperative_followups", "probing_rebalance": "probing_rebalances",
    "version_probing": "version_probing", "coordinator_change": "coordinator_change",
    "static_member_fencing": "static_member_fencing", "failed_rebalance_retry": "failed_rebalances",
    "assignment_timeout": "assignment_timeout", "topology_change": "topology_change", "group_conversion": "group_conversion",
    "unknown": "unexplained_rebalances",
}


def leader_changes(rebalances: list[Rebalance]) -> list[LeaderChange]:
    changes, previous = [], None
    for rebalance in rebalances:
        if not rebalance.leader:
            continue  # (a failed generation's leader counts: it is the one that did not finish the rebalance)
        if previous is not None and rebalance.leader != previous:
            stayed = previous in rebalance.members
            changes.append(LeaderChange(rebalance.to_generation, rebalance.started_at, previous, rebalance.leader, stayed))
        previous = rebalance.leader
    return changes


def probing(rebalances: list[Rebalance], expected_interval_ms: int) -> Probing | None:
    starts = [r.started_at for r in rebalances if r.cause.kind == "probing_rebalance" and r.started_at]
    if not starts:
        return None
    gaps = [(b - a).total_seconds() * 1000 for a, b in itertools.pairwise(starts)]
    return Probing(interval_ms=round(statistics.median(gaps)) if gaps else None, count=len(starts),
                   expected_interval_ms=expected_interval_ms)


@dataclass(frozen=True)
class GroupFacts:
    """What the group's own lines reveal that changes the advice."""

    broker_assigned: str | None = None  # consumer, streams or share: the brokers own timeouts and assignment
    streams: bool = False  # Kafka Streams: its assignor is already cooperative
    connect: bool = False  # Kafka Connect workers: rebalance.timeout.ms bounds a rebalance
    offer_cooperative: bool = False  # every member already lists a cooperative assignor among its protocols
    broker_log: bool = False  # a coordinator's log is among the inputs


def group_facts(timeline: list[Event], protocol: str | None) -> GroupFacts:
    offered = [e.supported_protocols.lower() for e in timeline if e.supported_protocols]
    return GroupFacts(
        broker_assigned=protocol if protocol in EPOCH_PROTOCOLS else None,
        streams=any(e.component == "streams" for e in timeline) or any(o.strip() == "stream" for o in offered),
        connect=any(e.component == "connect" for e in timeline),
        offer_cooperative=bool(offered) and all("cooperative" in o for o in offered),
        broker_log=any(e.component == "broker" for e in timeline),
    )


def advice(kind: str, versions: dict[str, VersionRange], facts: GroupFacts = GroupFacts()) -> str:
    """The recommendation for a finding, with what the versions the logs prove and the group's own lines change
    about it."""
    specific = _specific_advice(kind, facts)
    if specific is not None:
        return specific
    text = ADVICE[kind]
    client, broker = versions.get("consumer"), versions.get("broker")
    if kind == "heartbeat_expiry" and client is not None:
        if client.at_least("3.0.0"):
            text += f" These clients ({client}) default to 45 s."
        elif client.below("3.0.0"):
            text += f" These clients ({client}) default to 10 s: raising it is the first step."
        if client.below("2.3.0"):
            text += " Static membership needs clients and brokers 2.3+."
    if kind in ("eager_protocol", "long_pause", "member_churn") and client is not None and client.below("2.4.0"):
        text += f" These clients ({client}) predate cooperative rebalancing: upgrade them to 2.4+ first."
    if kind in ("eager_protocol", "long_pause") and broker is not None and broker.at_least("4.0.0"):
        text += f" The brokers ({broker}) run the new group coordinator: clients 4.0+ can use group.protocol=consumer."
    return text


def _specific_advice(kind: str, facts: GroupFacts) -> str | None:
    """Advice the group's own lines make more precise than the general one (or None)."""
    if facts.broker_assigned and kind == "heartbeat_expiry":
        return (f"A member stopped heartbeating for longer than its session timeout. With group.protocol="
                f"{facts.broker_assigned} the timeout is the brokers' group.{facts.broker_assigned}.session.timeout.ms "
                "(default 45 s), not the client's session.timeout.ms: look for GC pauses, CPU starvation or network "
                "trouble on that member first.")
    if facts.broker_assigned == "streams" and kind in ("member_churn", "rolling_restart", "long_pause"):
        return ("The streams protocol (group.protocol=streams) has the brokers assign tasks: they move only the tasks "
                "that change owner, warm-up tasks first. group.streams.num.standby.replicas keeps state ready elsewhere, "
                "and static membership (group.instance.id, Kafka 4.4+) lets a restarted instance take its tasks back.")
    if facts.broker_assigned == "consumer" and kind in ("member_churn", "rolling_restart", "long_pause"):
        return ("The consumer protocol (group.protocol=consumer) already moves only the partitions that change owner, "
                "and the brokers decide the assignment: cooperative-sticky and group.initial.rebalance.delay.ms do not "
                "apply. Static membership (group.instance.id) lets a restarted member take its partitions back.")
    if facts.connect and kind in ("poll_timeout", "failed_rebalances"):
        return ("Connect workers: a rebalance waits at most rebalance.timeout.ms (default 60 s) for every worker; a worker "
                "busy starting or stopping connectors and tasks longer than that is removed. Raise rebalance.timeout.ms, "
                "or find the slow connector in that worker's log (max.poll.interval.ms does not apply to workers).")
    if facts.offer_cooperative and kind == "eager_protocol":
        return ("The group rebalances eagerly although every member already offers cooperative-sticky after an eager "
                "assignor (their supported protocols): remove the eager assignor from partition.assignment.strategy, in "
                "one rolling bounce, and rebalances will stop only the partitions that move.")
    if facts.streams and kind in ("eager_protocol", "long_pause"):
        return ("Kafka Streams' own assignor is cooperative (since 2.4): a long stop comes from restoring state, not from "
                "the assignor. Standby replicas (num.standby.replicas) and warm-up replicas keep tasks ready elsewhere.")
    if facts.broker_log and kind == "unexplained_rebalances":
        return ("A broker log is among the inputs but names no reason for these rebalances: check that it is the log of "
                "the group's coordinator (the broker leading its __consumer_offsets partition) and covers their time, "
                "and add the members' logs around them.")
    return None


def group_findings(group_id: str, rebalances: list[Rebalance], changes: list[LeaderChange], probe: Probing | None,
                   timeline: list[Event], protocol: str | None, versions: dict[str, VersionRange],
                   member_nodes: dict[str, str] | None = None, membership: list[MembershipChange] | None = None) -> list[Finding]:
    findings: list[Finding] = []
    by_cause: dict[str, list[Rebalance]] = {}
    for rebalance in rebalances:
        by_cause.setdefault(CAUSE_FINDING.get(rebalance.cause.kind, "member_churn"), []).append(rebalance)
    failed_count = sum(1 for r in rebalances if r.failed)
    total_pause = sum(p.pause_ms for r in rebalances for p in r.pauses)

    facts = group_facts(timeline, protocol)

    def add(kind: str, summary: str, evidence: list[Evidence], severity: str | None = None, trigger: str | None = None) -> None:
        findings.append(Finding(kind, severity or SEVERITY[kind], summary, evidence[:MAX_EVIDENCE], advice(kind, versions, facts), trigger))

    restart = _rolling_restart(rebalances, member_nodes or {})
    if restart is not None:  # routine: said once, and not again as churn, a storm or a crash loop
        nodes, restarted, evidence = restart
        span = f"{restarted[0].started_at:%H:%M:%S} → {restarted[-1].started_at:%H:%M:%S}"
        add("rolling_restart", f"rolling restart of {len(nodes)} instances ({', '.join(nodes)}), {span}: "
            f"{len(restarted)} rebalances, each instance leaving on shutdown and rejoining", evidence)
        routine = {id(r) for r in restarted}
        by_cause["member_churn"] = [r for r in by_cause.get("member_churn", []) if id(r) not in routine]

    for kind in ("heartbeat_expiry", "poll_timeout", "assignment_timeout", "static_member_fencing", "coordinator_change",
                 "version_probing", "topology_change", "group_conversion"):
        hits = by_cause.get(kind, [])
        if hits:
            members = sorted({r.cause.member for r in hits if r.cause.member})
            named = [f"{m} ({member_nodes[m]})" if member_nodes and member_nodes.get(m) else m for m in members]
            who = f": {', '.join(named)}" if named else ""
            add(kind, f"{len(hits)} rebalance(s) of {group_id} caused by {kind.replace('_', ' ')}{who}", _evidence(hits))
    # a client that only suspected its coordinator (no heartbeat answered for a session) was expired only where a line
    # shows it removed; otherwise it lost its coordinator
    removed = any(shows_removal(e) for e in timeline)
    for kind, event_kinds in (("heartbeat_expiry", ("member_expired", "session_timeout")), ("poll_timeout", ("poll_timeout",))):
        if not by_cause.get(kind):  # it happened inside a rebalance something else had started
            lines = [e for e in _before_own_leave(timeline) if e.kind in event_kinds and (removed or not suspects_coordinator(e))]
            if lines:  # it started no rebalance: a symptom to read, not the cause
                add(kind, f"{len(lines)} {kind.replace('_', ' ')} line(s) during rebalances started by something else",
                    [e.evidence for e in lines], severity="warning")
    moves = _coordinator_moves(timeline, suspected_counts=not removed)
    if moves and not by_cause.get("coordinator_change"):
        brokers = f" ({', '.join(f'broker {b}' for b in moves[0])})" if moves[0] else ""
        found = "and found it again" if moves[2] else "(no line shows them finding it again)"
        add("coordinator_change", f"members lost the group coordinator {found}{brokers}; no rebalance came of it in these logs", moves[1])
    replaced = [e for e in timeline if e.kind == "static_member_rejoined"]
    fenced = [e for e in timeline if fenced_static_member(e)]
    again = [i for i, n in Counter(e.instance_id for e in replaced if e.instance_id).items() if n > 1]
    if (fenced or again) and not by_cause.get("static_member_fencing"):  # two instances fighting over one id
        add("static_member_fencing", f"{len(replaced) + len(fenced)} static-member replacement/fencing line(s)"
            + (f"; replaced more than once: {', '.join(again)}" if again else ""), [e.evidence for e in fenced + replaced])
    elif replaced and not by_cause.get("static_member_fencing"):
        add("static_member_replaced", f"{len(replaced)} static member(s) came back under a new member id and took "
            "their assignment back without a rebalance", [e.evidence for e in replaced])
    churn = by_cause.get("member_churn", [])
    if len(churn) >= 2:
        add("member_churn", f"{len(churn)} rebalances from members joining or leaving", _evidence(churn))
    followups = by_cause.get("cooperative_followups", [])
    if followups:
        add("cooperative_followups", f"{len(followups)} cooperative follow-up round(s)", _evidence(followups))
    if probe is not None and probe.count >= 2:
        spacing = f", every {probe.interval_ms / 60000:.1f} min" if probe.interval_ms else ""
        expected = f" (probing.rebalance.interval.ms = {probe.expected_interval_ms / 60000:.1f} min)"
        add("probing_rebalances", f"{probe.count} probing rebalances{spacing}{expected}", _evidence(by_cause.get("probing_rebalances", [])))
    retried = by_cause.get("failed_rebalances", [])
    failed = [r for r in rebalances if r.failed] + retried
    failures = [e for e in timeline if e.kind in ("join_failed", "sync_failed", "rebalance_failed")]
    if failed:
        summary = (f"{failed_count} rebalance(s) never reached a stable generation" if failed_count
                   else f"{len(retried)} rebalance(s) started again after the previous one failed")
        add("failed_rebalances", f"{summary}; {len(failures)} JoinGroup/SyncGroup failure line(s)",
            [e.evidence for e in failures] + _evidence(failed), severity=None if failed_count else "warning")
    elif failures:
        unfinished = [r for r in rebalances if r.unfinished]
        gave_up = [e for e in failures if e.kind == "rebalance_failed"]  # a rebalance given up, though none is in view
        if unfinished:  # no generation after them: the member may have given up (a fatal error), or the logs end there
            add("failed_rebalances", f"{len(failures)} JoinGroup/SyncGroup failure line(s); {len(unfinished)} rebalance(s) not seen "
                "reaching a generation", [e.evidence for e in failures] + _evidence(unfinished), severity="warning")
        elif gave_up:
            add("failed_rebalances", f"{len(gave_up)} rebalance(s) given up; {len(failures) - len(gave_up)} JoinGroup/SyncGroup "
                "failure line(s)", [e.evidence for e in failures], severity="warning")
        else:  # members retried and got through: worth a look, not an outage
            add("failed_rebalances", f"{len(failures)} JoinGroup/SyncGroup failure line(s); no rebalance failed",
                [e.evidence for e in failures], severity="info")
    storm = None if restart is not None and _all_routine(rebalances, restart[1]) else _storm(rebalances)
    if storm:  # critical when it hurt: failures, long pauses or a loop that never ends
        hurt = failed_count or total_pause >= LONG_PAUSE_MS or storm[0].startswith("generation")
        add("rebalance_storm", storm[0], storm[1], severity=None if hurt else "warning")
    unstable = [c for c in changes if c.previous_stayed]
    if len(unstable) >= 2 or (len(changes) >= 2 and any(r.failed for r in rebalances)):
        add("unstable_leader", f"the leader changed {len(changes)} times across generations "
            f"({len(unstable)} while the previous leader stayed in the group)", _leader_evidence(rebalances))
    loop = None if restart is not None and _all_routine(rebalances, restart[1]) else _crash_loop(rebalances, timeline)
    if loop:
        poison = next((e for e in timeline if e.kind == "record_failed" and e.partitions), None)
        trigger = f"{poison.partitions}" + (f": {poison.error}" if poison.error else "") if poison else None
        summary = loop[0] + (f"; the thread died on {trigger}" if trigger else "")
        add("crash_loop", summary, ([poison.evidence] if poison else []) + loop[1], trigger=trigger)
    paused = Counter()
    for rebalance in rebalances:
        for pause in rebalance.pauses:
            paused[pause.member] += pause.pause_ms
    long_members = [(m, ms) for m, ms in paused.most_common() if ms >= LONG_PAUSE_MS]
    if long_members:
        top = ", ".join(f"{m} {ms / 1000:.1f} s" for m, ms in long_members[:3])
        add("long_pause", f"{len(long_members)} member(s) paused ≥ {LONG_PAUSE_MS // 1000} s in total: {top}", [])
    eager = [r for r in rebalances if r.protocol == "eager"]
    if len(eager) >= 2:
        add("eager_protocol", f"{len(eager)} rebalances with an eager assignor stopped every member each time", [])
    not_ready = _topology_not_ready(timeline)
    if not_ready is not None:
        summary, evidence, resolved = not_ready
        add("streams_not_ready", summary, evidence, severity="info" if resolved else None)
    if membership:
        joined = sum(len(c.joined) for c in membership)
        left = [d for c in membership for d in c.left]
        expired = sum(1 for d in left if d.how == "heartbeat_expiry")
        epochs = [c.group_epoch for c in membership if c.group_epoch is not None]
        span = f" (group epochs {min(epochs)}–{max(epochs)})" if epochs else ""
        add("share_group", f"share group: {joined} member(s) joined and {len(left)} left in {len(membership)} epoch "
            f"change(s){span}, without a rebalance" + (f"; {expired} by session expiry" if expired else ""),
            [e for c in membership for e in c.cause.evidence])
    stepped = [r for r in rebalances if r.clock_backwards]
    if stepped:
        add("clock_backwards", f"{len(stepped)} rebalance(s) end before they start on the logs' clocks: a clock went "
            "backwards (an NTP step, a VM resumed), so their durations and pauses are left out", _evidence(stepped))
    starting = [] if rebalances or membership else _members_starting(timeline)
    # a Streams client always joins its application's group, named or not; another client may be a producer's
    if starting and (group_id != UNNAMED_GROUP or any(e.component in STREAMS_COMPONENTS for e in starting)):
        since = next((f" from {e.at:%H:%M:%S}" for e in starting if e.at), "")
        add("member_start", f"a member of {group_id} starting{since}: its first join, which rebalances the group, is not "
            "in these lines", [e.evidence for e in starting])
    unknown = by_cause.get("unexplained_rebalances", [])
    if unknown:
        add("unexplained_rebalances", f"{len(unknown)} rebalance(s) without a visible cause", _evidence(unknown))
    order = {"critical": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: order[f.severity])
    return findings


def _topology_not_ready(timeline: list[Event]) -> tuple[str, list[Evidence], bool] | None:
    """A streams group whose topology the coordinator could not configure: no member had tasks until its
    topology became ready, if it did. (summary, evidence, resolved) or None."""
    missing = [e for e in timeline if e.kind == "topology_not_ready"]
    if not missing:
        return None
    ready = next((e for e in timeline if e.kind == "topology_ready" and e.at and missing[-1].at and e.at >= missing[-1].at), None)
    reason = missing[-1].reason or "its topics are not ready"
    if ready is None:
        return (f"the streams group has no tasks: the coordinator cannot configure its topology ({reason})",
                [e.evidence for e in missing[-3:]], False)
    waited = ready.at - missing[0].at if missing[0].at else None
    after = f" after {duration_text(int(waited.total_seconds() * 1000))}" if waited is not None else ""
    return (f"the streams group had no tasks until its topology became ready{after} ({reason})",
            [missing[0].evidence, ready.evidence], True)


def _rolling_restart(rebalances: list[Rebalance], member_nodes: dict[str, str]) -> tuple[list[str], list[Rebalance], list[Evidence]] | None:
    """Instances that left the group and, within RESTART_GAP, rejoined it from the same node as a new member, one
    instance after another, each once: a rolling restart (at least two instances)."""
    nodes: list[str] = []
    restarted: list[Rebalance] = []
    left: dict[str, Rebalance] = {}
    for rebalance in rebalances:
        if rebalance.cause.kind == "member_leave" and rebalance.started_at:
            for departure in rebalance.left:
                node = member_nodes.get(departure.member)
                if node is not None and node not in nodes:
                    left[node] = rebalance
        elif rebalance.cause.kind == "member_join" and rebalance.started_at:
            node = member_nodes.get(rebalance.cause.member or "")
            before = left.pop(node, None) if node is not None else None
            if before is not None and rebalance.started_at - before.started_at <= RESTART_GAP:
                nodes.append(node)
                restarted += [before, rebalance]
    if len(nodes) < 2:
        return None
    restarted.sort(key=lambda r: r.started_at)
    followups = [r for r in rebalances if r.cause.kind == "cooperative_followup" and r.started_at
                 and restarted[0].started_at <= r.started_at <= restarted[-1].started_at + RESTART_GAP]
    restarted = sorted(restarted + followups, key=lambda r: r.started_at)
    return nodes, restarted, _evidence([r for r in restarted if r.cause.kind == "member_leave"])


def _all_routine(rebalances: list[Rebalance], restarted: list[Rebalance]) -> bool:
    """Every rebalance is part of the restart or an ordinary join/leave/follow-up."""
    routine = {id(r) for r in restarted}
    return all(id(r) in routine or (r.cause.kind in ROUTINE_CAUSES and not r.failed) for r in rebalances)


def _evidence(rebalances: list[Rebalance]) -> list[Evidence]:
    return [e for r in rebalances for e in r.cause.evidence[:2]]


def _leader_evidence(rebalances: list[Rebalance]) -> list[Evidence]:
    return [e for r in rebalances if r.leader for e in r.cause.evidence[:1]]


def _storm(rebalances: list[Rebalance]) -> tuple[str, list[Evidence]] | None:
    top = max((r.to_generation or 0 for r in rebalances), default=0)
    # a long history of rebalances shows in a high generation, but only a group seen rebalancing again is in a loop:
    # a service that numbers generations its own way (Azure Event Hubs: tens of millions) starts high
    if top >= ENDLESS_GENERATION and len(rebalances) >= 2:
        return f"generation {top}: this group has rebalanced in a loop for a long time", _evidence(rebalances[-2:])
    starts = [r for r in rebalances if r.started_at]
    for i in range(len(starts) - STORM_COUNT + 1):
        first, last = starts[i], starts[i + STORM_COUNT - 1]
        if last.started_at - first.started_at <= STORM_WINDOW:
            burst = [r for r in starts if first.started_at <= r.started_at <= first.started_at + STORM_WINDOW]
            span = (burst[-1].started_at - first.started_at).total_seconds()
            return f"{len(burst)} rebalances within {span:.0f} s", _evidence(burst)
    return None


def _before_own_leave(timeline: list[Event]) -> list[Event]:
    """The timeline without what a client reports after it left the group on purpose and before it joins again: a
    consumer that unsubscribed may keep logging its session as expired, and that is no expiry of a live member."""
    left: set[tuple[str, str | None]] = set()
    kept = []
    for event in timeline:
        if (event.file, event.node) not in left:
            kept.append(event)
        if event.component != "broker" and event.cause == "member_leave":
            left.add((event.file, event.node))
        elif event.kind in ("join_start", "join_succeeded"):  # it came back
            left.discard((event.file, event.node))
    return kept


def _coordinator_moves(timeline: list[Event], suspected_counts: bool) -> tuple[list[str], list[Evidence], bool] | None:
    """The coordinators the group had (broker ids, in order of appearance), when it had more than one or
    members lost theirs (NOT_COORDINATOR, coordinator marked dead, or no heartbeat answered for a session where
    ``suspected_counts``) and had to find it again; and whether a line shows them finding it."""
    brokers: list[str] = []
    evidence: list[Evidence] = []
    lost = found_again = moved = False
    started: set[tuple[str, str]] = set()  # files that show a consumer starting, and files of members
    members: set[tuple[str, str]] = set()
    for event in timeline:
        place = (event.file, event.node)
        # a consumer starting that has not joined yet, told it asked the wrong broker or losing its coordinator, met a
        # coordinator that had not loaded the group or a first connection that failed: no move
        starting = place in started and place not in members
        told_moved = answered_not_coordinator(event) and not starting
        suspected = suspected_counts and suspects_coordinator(event)
        is_lost = (event.kind == "coordinator_lost" and not starting) or told_moved or suspected
        if consumer_start_line(event):
            started.add(place)
        if held_membership(event):
            members.add(place)
        if (event.kind in ("coordinator_discovered", "coordinator_elected", "group_loaded", "coordinator_lost") or suspected) and event.coordinator:
            broker = broker_id(event.coordinator)
            if broker not in brokers:
                brokers.append(broker)
                evidence.append(event.evidence)
        if lost and not found_again and event.kind in ("coordinator_discovered", "coordinator_elected", "group_loaded"):
            found_again = True  # some clients never print the coordinator's id: looking it up again is the move
            if not event.coordinator:
                evidence.append(event.evidence)
        if is_lost and not lost:
            lost = True
            if (event.file, event.line) not in {(e.file, e.line) for e in evidence}:
                evidence.append(event.evidence)
        moved = moved or told_moved
    if len(brokers) >= 2 or (lost and (brokers or found_again or moved)):
        return brokers, evidence, found_again or len(brokers) >= 2
    return None


def _members_starting(timeline: list[Event]) -> list[Event]:
    """The start-up lines of a group's members when they are all the group's lines show: consumers starting (their
    group management, a first subscription, a Streams thread leaving CREATED or STARTING, a member id asked for),
    finding their coordinator, and nothing that shows one at work, refused or gone. Each is on its way to its first
    join."""
    starts = [e for e in timeline if _starts_member(e)]
    on_the_way = all(e.kind != "consumer_lifecycle" and (e.kind in BEFORE_FIRST_JOIN or start_up_line(e) or _starts_member(e))
                     for e in timeline)
    return starts if on_the_way and not any(e.cause == "member_leave" for e in timeline) else []


def _starts_member(event: Event) -> bool:
    return (event.kind == "consumer_started" or leaves_start_state(event) or asked_for_member_id(event)
            or (event.kind == "subscription_changed" and not changes_subscription(event)))


def _crash_loop(rebalances: list[Rebalance], timeline: list[Event]) -> tuple[str, list[Evidence]] | None:
    """n ↔ n+1 flapping of the member count, or stream threads replaced again and again."""
    counts = [r.member_count for r in rebalances if r.member_count is not None and not r.failed]
    flips = sum(1 for a, b, c in zip(counts, counts[1:], counts[2:], strict=False) if a == c and abs(a - b) == 1)
    replaced = [e for e in timeline if e.kind in ("thread_replaced", "thread_failed")]
    if flips >= CRASH_LOOP_FLIPS or len(replaced) >= 2:
        flapping = " → ".join(str(c) for c in counts[:12])
        return (f"member count flapping {flapping}; {len(replaced)} thread failure/replacement line(s)",
                [e.evidence for e in replaced[:4]])
    return None
