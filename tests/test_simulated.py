"""Simulated incidents, over Kafka versions and log layouts, come out of the event table as they happened.

Each case is a scenario played by tests/simulator on one Kafka version (wording from the reference,
chosen per version) with the consumers logging in one or more layouts, e.g. "a member stops
heartbeating on a 2.3 cluster, logged by Spring Boot clients". The simulator returns the ground
truth from its model; the assertions read the event table (`rebalance_doctor.load`):

- every Kafka line written is an event at that file:line, of the kind family its step belongs to,
  and so is every line the truth cites (the proof of each rebalance's cause, the leader's line);
- the group id, the generations and the member ids in the table are those of the truth;
- no Kafka line lands in the relevant-but-unmatched bucket, and the buckets add up to the lines written.

When `rebalance_doctor.analyze` exists, the analysis is checked too: per rebalance the new
generation, the cause, the leader and the members; per member the total pause.
"""

from __future__ import annotations

import pytest

import rebalance_doctor

import simulator
from reference import version_key
from simulator import SCENARIOS, VERSIONS, Truth, Unsupported, simulate

# How each scenario reads in a test id / failure message.
STORIES = {
    "startup": "consumers start and form the group",
    "heartbeat_expiry": "a member stops heartbeating, is expired, and comes back with a new member id",
    "poll_timeout": "a member exceeds max.poll.interval.ms, leaves, and comes back",
    "rolling_restart": "every member is restarted one at a time",
    "scale_out_cooperative": "a third member joins a cooperative-sticky group (two rounds)",
    "static_rejoin": "a static member restarts within its session timeout (no rebalance)",
}
LAYOUT_NAMES = {
    "spring-boot-2": "Spring Boot 2 console",
    "spring-boot-3": "Spring Boot 3 console",
    "logback": "plain logback",
    "logstash-json": "logstash JSON lines",
    "kubectl": "kubectl logs --prefix (pods interleaved)",
    "docker-compose": "docker compose logs",
}
# Client layouts per case, in turn (a tuple mixes layouts across the consumers of one incident).
LAYOUT_MIXES = (
    ("spring-boot-3",),
    ("logback",),
    ("logstash-json",),
    ("kubectl",),
    ("docker-compose",),
    ("spring-boot-2",),
    ("spring-boot-3", "logstash-json", "kubectl"),
    ("logback", "docker-compose", "spring-boot-2"),
    ("kubectl", "logstash-json"),
)


class Case(simulator.Case):
    def __str__(self) -> str:
        clients = " / ".join(LAYOUT_NAMES[layout] for layout in self.layouts)
        return f"{STORIES[self.scenario]} on Kafka {self.version}, clients logged by {clients}"


# Versions each scenario runs on: every simulated version, except where the feature does not exist yet
# (the simulator refuses those, see test_features_need_their_version).
SINCE = {"scale_out_cooperative": "2.4", "static_rejoin": "2.3"}


def _cases() -> list[Case]:
    cases, turn = [], 0
    for scenario in SCENARIOS:
        for version in VERSIONS:
            if scenario in SINCE and version_key(version) < version_key(SINCE[scenario]):
                continue
            cases.append(Case(scenario, version, LAYOUT_MIXES[turn % len(LAYOUT_MIXES)], seed=turn))
            turn += 1
    return cases


CASES = _cases()


_RUNS: dict[Case, tuple[Truth, object]] = {}


@pytest.fixture(params=CASES, ids=lambda case: case.id)
def run(request, tmp_path_factory):
    """(case, truth, logs): the incident written once per case and loaded with unmatched lines collected."""
    case: Case = request.param
    if case not in _RUNS:
        out = tmp_path_factory.mktemp(case.id.replace("+", "_"))
        truth = case.simulate(out)
        _RUNS[case] = truth, rebalance_doctor.load(truth.paths, collect_unmatched=True)
    truth, logs = _RUNS[case]
    return case, truth, logs


def _events_at(logs) -> dict[tuple[str, int], str]:
    events = logs.events
    return {(f, n): k for f, n, k in zip(events["file"], events["line"], events["kind"], strict=True)}


# ----------------------------------------------------------------------------------- event table


def test_every_kafka_line_is_an_event_of_its_kind(run):
    """Each Kafka line the scenario wrote (rendered from the reference for this version) is an event at
    its file:line, with a kind of its step's family. A miss is a catalog gap for a wording in range."""
    case, truth, logs = run
    at = _events_at(logs)
    problems = []
    for record in truth.kafka_records:
        kind = at.get((truth.path(record), record.line))
        if kind not in record.kinds:
            problems.append(f"{record} [{record.step}] is {kind or 'no event'}, expected {'/'.join(record.kinds)}")
    assert not problems, f"{case}:\n" + "\n".join(problems)


def test_each_cited_line_is_an_event(run):
    """The line that proves each rebalance's cause, the leader's line and the broker's start / stabilized /
    assignment lines are events at the file:line the truth cites."""
    case, truth, logs = run
    at = _events_at(logs)
    missing = [f"{c} [{c.step}] is {at.get((truth.path(c), c.line)) or 'no event'}"
               for c in truth.cited() if at.get((truth.path(c), c.line)) not in c.kinds]
    assert not missing, f"{case}: {missing}"


def test_group_generations_and_members(run):
    """The table names the simulated group only, exactly the generations the lines print, and exactly the
    member ids the lines name."""
    case, truth, logs = run
    events = logs.events
    assert set(events["group_id"].drop_nulls()) == {truth.group}, case
    assert set(events["generation"].drop_nulls()) == truth.logged_generations, case
    assert truth.logged_generations <= set(truth.generations), case
    member_ids = set(events["member_id"].drop_nulls())
    assert member_ids == truth.logged_member_ids, (
        f"{case}: missing {sorted(truth.logged_member_ids - member_ids)}, unexpected {sorted(member_ids - truth.logged_member_ids)}"
    )
    assert truth.logged_member_ids <= truth.all_member_ids


def test_no_kafka_line_is_relevant_but_unmatched(run):
    """Lines the catalogs did not match may be noise, never a Kafka line; and nothing is lost: the buckets
    add up to the lines written."""
    case, truth, logs = run
    record_at = {(truth.path(r), n): r for r in truth.kafka_records for n in range(r.line, r.last_line + 1)}
    leftovers = []
    for file, n, text in logs.unmatched:
        record = record_at.get((file, n))
        if record is not None:  # anything else is noise
            leftovers.append(f"{file}:{n} [{record.step}]: {text}")
    assert not leftovers, f"{case}:\n" + "\n".join(leftovers)
    assert logs.problems == []
    assert logs.buckets["unreadable"] == 0
    assert logs.lines_read == truth.lines_written, (case, dict(logs.buckets))
    for name, file in truth.files.items():
        scan = next(s for s in logs.scans if s.source.display == str(truth.root / name))
        assert scan.lines_read == file.lines, name


def test_truth_is_consistent(run):
    """The truth itself: generations step by one per rebalance, leaders are members, causes are known."""
    case, truth, _ = run
    from rebalance_doctor.catalog.schema import CAUSES

    assert [r.to_generation for r in truth.rebalances] == truth.generations[1:], case
    for previous, rebalance in zip(truth.generations, truth.rebalances, strict=False):
        assert rebalance.from_generation == previous and rebalance.to_generation == previous + 1
        assert rebalance.cause in CAUSES
        assert rebalance.leader in rebalance.members
        assert rebalance.started_at <= rebalance.stable_at <= rebalance.ended_at
    kafka_lines = sum(len(f.kafka_lines) for f in truth.files.values())
    assert 2 * kafka_lines < truth.lines_written, f"rebalance lines must be a minority: {kafka_lines}/{truth.lines_written}"
    assert truth.clock_skew_ms[truth.broker_node] == 0
    assert all(80 <= abs(skew) <= 450 for node, skew in truth.clock_skew_ms.items() if node != truth.broker_node)


@pytest.mark.parametrize(("scenario", "version"), [("scale_out_cooperative", "2.3"), ("static_rejoin", "2.0")])
def test_features_need_their_version(scenario, version, tmp_path):
    """cooperative-sticky exists from 2.4 (KIP-429), static membership from 2.3 (KIP-345)."""
    with pytest.raises(Unsupported):
        simulate(scenario, version, "logback", 0, tmp_path)


# --------------------------------------------------------------------------------------- analysis

# Pause tolerance per rebalance a member paused in: an analysis may start the pause when the member learns of the
# rebalance (heartbeat) rather than when its poll() revokes (up to 400 ms later), and client clocks are skewed by up
# to 450 ms when the two ends come from different files. At least 1 s, or a quarter of the pause.
PAUSE_TOLERANCE_MS = 500


def analysis_mismatches(truth: Truth, analysis) -> list[str]:
    """Where the analysis disagrees with the truth, one readable line each (empty when it agrees)."""
    groups = {g.group_id: g for g in analysis.groups}
    if truth.group not in groups:
        return [f"no group {truth.group} in the analysis (groups: {sorted(groups)})"]
    group = groups[truth.group]
    problems = []
    by_generation = {r.to_generation: r for r in group.rebalances}
    expected_generations = {r.to_generation for r in truth.rebalances}
    extra = sorted(g for g in by_generation if g is not None and g not in expected_generations)
    if extra:
        problems.append(f"rebalances to generations that did not happen: {extra}")
    for expected in truth.rebalances:
        g = expected.to_generation
        found = by_generation.get(g)
        if found is None:
            problems.append(f"gen {g}: not found (analysis has {sorted(k for k in by_generation if k is not None)})")
            continue
        proof = f"proved by {expected.evidence}" if expected.evidence else "no line proves it"
        if found.cause.kind != expected.cause and (expected.evidence is not None or found.cause.kind != "unknown"):
            problems.append(f"gen {g}: cause {found.cause.kind!r} ({found.cause.summary}), expected {expected.cause!r} ({proof})")
        if expected.leader_evidence is not None and found.leader != expected.leader:
            problems.append(f"gen {g}: leader {found.leader}, expected {expected.leader} (named at {expected.leader_evidence})")
        if expected.members_named and sorted(found.members) != sorted(expected.members):
            problems.append(f"gen {g}: members {sorted(found.members)}, expected {sorted(expected.members)}")
        elif not expected.members_named and found.member_count not in (None, len(expected.members)):
            problems.append(f"gen {g}: {found.member_count} members, expected {len(expected.members)}")
    # pauses: by member id where the analysis knows it, else by the node's key ("node/client.id", or "node/thread"
    # before 1.0 where no line carries a client id)
    expected: dict[str, int] = {}
    paused_in: dict[str, int] = {}
    for member in truth.all_member_ids:
        node = truth.member_nodes[member]
        node_keys = [k for k in group.pause_by_member if k.startswith(f"{node}/")]
        key = member if member in group.pause_by_member else node_keys[0] if len(node_keys) == 1 else \
            f"{node}/{truth.member_clients[member]}"
        expected[key] = expected.get(key, 0) + truth.pause_ms.get(member, 0)
        paused_in[key] = paused_in.get(key, 0) + len(truth.pause_intervals.get(member, ()))
    for key in sorted(set(expected) | set(group.pause_by_member)):
        want, got = expected.get(key, 0), group.pause_by_member.get(key, 0)
        tolerance = max(1000, PAUSE_TOLERANCE_MS * paused_in.get(key, 0), want // 4)
        if abs(got - want) > tolerance:
            problems.append(f"pause of {key}: {got} ms, expected {want} ms (± {tolerance})")
    return problems


@pytest.mark.skipif(not hasattr(rebalance_doctor, "analyze"), reason="rebalance_doctor.analyze is not built yet")
def test_analysis_matches_the_truth(run):
    """Per rebalance: the new generation, the cause (when a line proves it), the leader (when a line names
    it) and the members (when every member is named with the generation); per member the total pause
    (eager: from revoking its partitions to getting new ones); no rebalance that did not happen."""
    case, truth, logs = run
    problems = analysis_mismatches(truth, rebalance_doctor.analyze(logs.events))
    assert not problems, f"{case}:\n  " + "\n  ".join(problems)
