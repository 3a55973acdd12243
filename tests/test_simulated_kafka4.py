"""Kafka 4.x incidents on the new group coordinator come out of the logs as they happened.

Each case is a scenario played by tests/simulator/epochs.py on a 4.x release (the brokers' wording from the
reference's section 3, chosen per release), e.g. "a KIP-848 member is fenced for not finishing its revocation,
on a 4.4 cluster". The simulator returns the ground truth from its model; the assertions read the event table
and the analysis, and the report a responder reads:

- every Kafka line written is an event of its step's kind family, at its file:line; nothing is lost;
- the group's id, its group epochs and member ids are those of the truth;
- per group epoch the cause, with the line that proves it; a share group's epochs are membership changes,
  never rebalances;
- the group's type (a migrated group: both, in order), its protocol and the Kafka versions its wordings prove;
- `report` names them.
"""

from __future__ import annotations

import pytest

import rebalance_doctor

import simulator
from reference import version_key
from simulator import EPOCH_SCENARIOS, EPOCH_VERSIONS, Truth, Unsupported, simulate
from simulator.epochs import SINCE
from support import run_cli

STORIES = {
    "kip848_assignment_timeout": "a KIP-848 member does not finish its revocation and is fenced, then rejoins",
    "share_scale_out": "a share group scales out from two members to four",
    "classic_migration": "a consumer with group.protocol=consumer joins a classic group, which is converted online",
    "streams_topology_change": "a streams group rebalances when its topology becomes ready (internal topics created)",
}
PROTOCOL = {"kip848_assignment_timeout": "consumer", "share_scale_out": "share", "classic_migration": "consumer",
            "streams_topology_change": "streams"}
REPORT_WORDS = {"kip848_assignment_timeout": "consumer group · consumer protocol (KIP-848)",
                "share_scale_out": "share group · share protocol (KIP-932)",
                "classic_migration": "classic → consumer group · consumer protocol (KIP-848)",
                "streams_topology_change": "streams group · streams protocol (KIP-1071)"}
LAYOUT_MIXES = (("logback",), ("kubectl",), ("spring-boot-3", "logstash-json"))
# What the verdict leads with, and the findings that must come with it.
VERDICT = {"kip848_assignment_timeout": ("assignment_timeout", set()), "share_scale_out": ("share_group", {"share_group"}),
           "classic_migration": ("group_conversion", {"group_conversion"}),
           "streams_topology_change": ("topology_change", {"topology_change", "streams_not_ready"})}


class Case(simulator.Case):
    def __str__(self) -> str:
        return f"{STORIES[self.scenario]}, on Kafka {self.version}"


CASES = [Case(scenario, version, LAYOUT_MIXES[i % len(LAYOUT_MIXES)], seed=i)
         for i, (scenario, version) in enumerate((s, v) for s in EPOCH_SCENARIOS for v in EPOCH_VERSIONS
                                                  if version_key(v) >= version_key(SINCE[s]))]
_RUNS: dict[Case, tuple[Truth, object, object]] = {}


@pytest.fixture(params=CASES, ids=lambda case: case.id)
def run(request, tmp_path_factory):
    """(case, truth, logs, analysis) of one incident, written and read once."""
    case: Case = request.param
    if case not in _RUNS:
        truth = case.simulate(tmp_path_factory.mktemp(case.id.replace("+", "_")))
        logs = rebalance_doctor.load(truth.paths, collect_unmatched=True)
        _RUNS[case] = truth, logs, rebalance_doctor.analyze(logs.events)
    return case, *_RUNS[case]


def test_every_release_has_its_incidents():
    """The done-when of Kafka 4.x support: incidents on 4.1, 4.2 and 4.4, each scenario on at least two."""
    assert {c.version for c in CASES} == {"4.1", "4.2", "4.4"}
    for scenario in EPOCH_SCENARIOS:
        assert len([c for c in CASES if c.scenario == scenario]) >= 2, scenario


def test_every_kafka_line_is_an_event_of_its_kind(run):
    case, truth, logs, _ = run
    at = {(f, n): k for f, n, k in zip(logs.events["file"], logs.events["line"], logs.events["kind"], strict=True)}
    wrong = [f"{r} [{r.step}] is {at.get((truth.path(r), r.line)) or 'no event'}, expected {'/'.join(r.kinds)}"
             for r in truth.kafka_records if at.get((truth.path(r), r.line)) not in r.kinds]
    assert not wrong, f"{case}:\n" + "\n".join(wrong)
    unmatched = {(file, n) for file, n, _ in logs.unmatched}
    assert not [r for r in truth.kafka_records if (truth.path(r), r.line) in unmatched], case
    assert logs.lines_read == truth.lines_written, case


def test_group_epochs_and_members(run):
    """The table names the group, exactly the group epochs the coordinator printed, and only members it named."""
    case, truth, logs, _ = run
    events = logs.events
    assert set(events["group_id"].drop_nulls()) == {truth.group}, case
    assert set(events["group_epoch"].drop_nulls()) == truth.logged_epochs, case
    assert truth.logged_epochs <= set(truth.generations), case
    assert set(events["member_id"].drop_nulls()) <= truth.all_member_ids, case


def test_each_epoch_has_its_cause_and_proof(run):
    """Per group epoch: a rebalance with the truth's cause, the proving line among its evidence, and the members
    of that epoch; a share group's epochs are membership changes with who joined, and no rebalance at all."""
    case, truth, _, analysis = run
    group = next(g for g in analysis.groups if g.group_id == truth.group)
    if truth.membership:
        assert group.rebalances == [], case
        changes = {c.group_epoch: c for c in group.membership_changes}
        assert sorted(changes) == [m.group_epoch for m in truth.membership], case
        for expected in truth.membership:
            assert changes[expected.group_epoch].joined == expected.joined, (case, expected.group_epoch)
        assert group.pause_by_member == {} and any(f.kind == "share_group" for f in group.findings), case
        return
    found = {r.to_generation: r for r in group.rebalances}
    assert sorted(g for g in found if g is not None) == [r.to_generation for r in truth.rebalances], case
    for expected in truth.rebalances:
        rebalance = found[expected.to_generation]
        where = f"{case}, epoch {expected.to_generation}"
        assert rebalance.cause.kind == expected.cause, f"{where}: {rebalance.cause.kind} ({rebalance.cause.summary})"
        if expected.cause_member:
            assert rebalance.cause.member == expected.cause_member, where
        proof = expected.evidence
        assert (truth.path(proof), proof.line) in {(e.file, e.line) for e in rebalance.cause.evidence}, where
        if expected.members_named:
            assert sorted(rebalance.members) == sorted(expected.members), where
        assert not rebalance.failed, where


def test_group_type_protocol_and_versions(run):
    """The group's types in order, its protocol, and a broker version range its wordings prove that holds the
    simulated release."""
    case, truth, _, analysis = run
    group = next(g for g in analysis.groups if g.group_id == truth.group)
    assert group.group_types == truth.group_types, case
    assert group.group_type == truth.group_types[-1] and group.protocol == PROTOCOL[case.scenario], case
    broker = next(v for v in group.versions if v.startswith("broker"))
    lowest, _, highest = broker.removeprefix("broker").strip(" ≥").partition("–")
    assert version_key("4.0.0") <= version_key(lowest) <= version_key(truth.tag), (case, broker)
    assert not highest or version_key(truth.tag) <= version_key(highest), (case, broker)


def test_report_names_type_protocol_and_versions(run):
    """`rebalance-doctor report` shows, on the group's line, its type and protocol and the versions it proves."""
    case, truth, _, _ = run
    result = run_cli("report", *truth.paths)
    assert result.exit_code == 0, result.output
    assert REPORT_WORDS[case.scenario] in result.output, result.output
    assert "Kafka broker ≥ 4." in result.output or "Kafka broker 4." in result.output, result.output


def test_the_verdict_names_what_happened(run):
    """The verdict leads with the scenario's story: the fenced member, the share group's membership, the
    conversion, the topology; a streams group that waited for its topics says how long it had no tasks."""
    case, truth, _, analysis = run
    cause, findings = VERDICT[case.scenario]
    assert analysis.verdict.cause == cause, (case, analysis.verdict.headline)
    group = next(g for g in analysis.groups if g.group_id == truth.group)
    assert findings <= {f.kind for f in group.findings}, (case, [f.kind for f in group.findings])
    waited = [f for f in group.findings if f.kind == "streams_not_ready"]
    assert all(f.severity == "info" and "until its topology became ready after" in f.summary for f in waited), case


@pytest.mark.parametrize(("scenario", "version"), [("streams_topology_change", "4.1")])
def test_scenarios_need_their_release(scenario, version, tmp_path):
    """Streams groups print their topology epoch from 4.2 (early access in 4.1): the simulator refuses 4.1."""
    with pytest.raises(Unsupported):
        simulate(scenario, version, "logback", 0, tmp_path)
