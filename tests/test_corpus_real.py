"""Real excerpts pasted by users in public places: the event table recovers what their annotations say.

Each `tests/fixtures/corpus/NNN-*.log` comes with a `.yaml` naming its source URL, Kafka version,
layout and the groups and generations a correct tool must recover, plus the root cause a human
reader attributed. The root cause itself is the analyzers' business; here the event table must
at least carry the evidence kind that cause rests on.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from rebalance_doctor import load

from support import FIXTURES

CORPUS = FIXTURES / "corpus"
CASES = sorted(CORPUS.glob("*.yaml"))

# The event kinds that are the evidence for an annotated root cause (any one of them).
EVIDENCE_FOR_CAUSE = {
    "heartbeat_expiry": {"member_expired"},
    "poll_timeout": {"poll_timeout"},
    "member_join": {"member_joined", "join_succeeded", "rebalance_start", "join_start"},
    "member_leave_shutdown": {"leave_group", "member_left"},
    "unsubscribe": {"leave_group", "member_left"},
    "probing_rebalance": {"probing_rebalance", "followup_rebalance"},
    "coordinator_change": {"coordinator_discovered", "coordinator_lost"},
    "commit_failed_after_rebalance": {"commit_failed"},
    "fencing": {"static_member_rejoined", "member_fenced"},
    "enforced": {"join_requested"},
    "unknown": set(),
}


def _annotated_group(name: str) -> str:
    """'GROUP-NAME (anonymised by reporter)' → 'GROUP-NAME': the annotation's remark is not part of the id."""
    return re.sub(r" \([^)]*\)$", "", name)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_real_excerpt_yields_annotated_groups_generations_and_evidence(case: Path) -> None:
    meta = yaml.safe_load(case.read_text())
    annotation = meta["annotation"]
    assert meta.get("source_url"), "every real excerpt names where it came from"
    logs = load([str(case.with_suffix(".log"))])
    events = logs.events
    groups = set(events["group_id"].drop_nulls().to_list())
    assert groups == {_annotated_group(g) for g in annotation["group_ids"]}
    generations = set(events["generation"].drop_nulls().to_list())
    assert generations == set(annotation["generations"])
    evidence = EVIDENCE_FOR_CAUSE[annotation["root_cause"]]
    if evidence:
        assert evidence & set(events["kind"].to_list()), f"no {sorted(evidence)} event for root cause {annotation['root_cause']}"
    assert logs.lines_read == len(case.with_suffix(".log").read_bytes().splitlines())
