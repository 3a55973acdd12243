"""Advice from what the logs already say. Scenario: the recommendations a responder pastes into the incident
ticket must fit the group at hand: a KIP-848 group has no client session.timeout.ms to raise and no
cooperative-sticky to move to; members that already offer cooperative-sticky need one bounce, not two; a
broker log that is among the inputs is not asked for again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from support import SAMPLES, run_cli


def findings_of(analysis) -> dict[str, str]:
    return {f.kind: f.recommendation for g in analysis.groups for f in g.findings}


def test_a_kip848_group_is_advised_with_the_brokers_settings(analysis):
    result = analysis("kip848-coordinator-failover")
    advice = findings_of(result)

    assert "group.consumer.session.timeout.ms" in advice["heartbeat_expiry"]
    assert "raise session.timeout.ms" not in advice["heartbeat_expiry"]
    assert "do not apply" in advice["member_churn"] and "Use cooperative-sticky" not in advice["member_churn"]
    assert "group.consumer.session.timeout.ms" in result.verdict.actions[-1]


def test_members_that_already_offer_cooperative_sticky_need_one_bounce(tmp_path: Path, monkeypatch):
    incident = shutil.copytree(SAMPLES / "rolling-bounce-eager", tmp_path / "incident")
    broker = incident / "broker-1" / "server.log"
    broker.write_text(broker.read_text().replace("supportedProtocols=List(range)", "supportedProtocols=List(range, cooperative-sticky)"))
    monkeypatch.chdir(tmp_path)

    report = run_cli("report", "incident/").stdout

    assert "remove the eager assignor from partition.assignment.strategy, in one rolling bounce" in report
    assert "with two rolling bounces" not in report


def test_the_general_advice_stays_where_the_logs_say_nothing_more(analysis):
    advice = findings_of(analysis("rolling-bounce-eager"))

    assert "two rolling bounces" in advice["eager_protocol"]
