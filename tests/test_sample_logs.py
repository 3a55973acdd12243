"""The bundled incidents (sample_logs/) come out of the event table as their ground truth says.

Each incident directory holds a broker and several client logs in real Kafka wording and the
layouts people run (broker server.log, Spring Boot, logstash JSON, kubectl --prefix, log4j2,
a rotated .gz); tests/fixtures/sample_truth/<incident>.yaml records what happened: groups,
generations (or KIP-848 epochs), members, and the file:line that proves each rebalance.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rebalance_doctor import load

from support import FIXTURES, ROOT, SAMPLES

TRUTHS = sorted((FIXTURES / "sample_truth").glob("*.yaml"))


@pytest.fixture(scope="module", params=TRUTHS, ids=lambda p: p.stem)
def bundled(request, incident):
    """A bundled incident: its ground truth, its folder as the event table names it (from the repository's
    root, sample_logs/NAME) and its logs."""
    truth = yaml.safe_load(request.param.read_text())
    return truth, SAMPLES.relative_to(ROOT) / truth["incident"], incident(truth["incident"])


def _where(directory: Path, evidence: str) -> tuple[str, int]:
    path, _, line = evidence.rpartition(":")
    return str(directory / path), int(line)


def test_groups_and_generations(bundled):
    truth, _, logs = bundled
    events = logs.events
    assert set(events["group_id"].drop_nulls()) == set(truth["group_ids"])
    generations = truth["generations"]
    if "group_epochs" in generations:  # KIP-848: epochs instead of generations
        for group, epochs in generations["group_epochs"].items():
            if group == "note":
                continue
            seen = set(events.filter(events["group_id"] == group)["group_epoch"].drop_nulls())
            assert set(epochs) <= seen <= set(epochs) | {11}  # 11: the epoch before the window (truth note)
        member_epochs = set(events["member_epoch"].drop_nulls())
        assert member_epochs <= set(generations["member_epochs_in_client_logs"]) | set(range(11, 16))
    else:
        for group, numbers in generations.items():
            seen = set(events.filter(events["group_id"] == group)["generation"].drop_nulls())
            assert seen == set(numbers), group


def test_every_member_is_named(bundled):
    truth, _, logs = bundled
    seen = set(logs.events["member_id"].drop_nulls())
    for node, member_ids in truth["members"].items():
        assert set(member_ids) <= seen, node


def test_each_rebalance_has_its_evidence_line(bundled):
    """The line the ground truth cites for each rebalance is an event, at that file:line."""
    truth, directory, logs = bundled
    rows = set(zip(logs.events["file"], logs.events["line"], strict=True))
    for rebalance in truth["rebalances"]:
        assert _where(directory, rebalance["evidence"]) in rows, rebalance


GROUP_LOGGERS = ("org.apache.kafka.clients.consumer", "o.a.k.c.c.", "kafka.coordinator", "org.apache.kafka.coordinator",
                 "org.apache.kafka.streams", "o.a.k.s.")


def test_every_kafka_group_line_is_matched():
    """No line logged by Kafka's group machinery (consumer coordinator, group coordinator, Streams) is left over:
    per file there are at least as many events as the Kafka rebalance lines the incident was written with, and
    the relevant-but-unmatched lines are other libraries' (application listeners, SmallRye, broker shutdown)."""
    for truth_file in TRUTHS:
        truth = yaml.safe_load(truth_file.read_text())
        directory = SAMPLES / truth["incident"]
        logs = load([str(directory)], collect_unmatched=True)
        per_file = dict(zip(*logs.events["file"].value_counts().to_dict(as_series=False).values(), strict=True))
        for spec in truth["files"]:
            assert per_file.get(str(directory / spec["path"]), 0) >= spec["catalog_matchable_lines"], spec["path"]
        leftovers = [f"{f}:{n}: {t}" for f, n, t in logs.unmatched if any(g in t for g in GROUP_LOGGERS)]
        assert leftovers == []
        assert logs.buckets["unreadable"] == 0 and logs.problems == []
