"""Housekeeping lines cost a count, not a row.

Scenario: a day of broker logs from the new coordinator holds thousands of `Generated 0 tombstone records while
cleaning up group metadata …` lines (one per __consumer_offsets partition every few minutes). They are Kafka lines
the catalogs know, so they count as matched, but they say nothing about rebalances: they must not become events,
nor pay for an envelope, a timestamp and a row each (docs/performance.md).
"""

from __future__ import annotations

from pathlib import Path

from rebalance_doctor.catalog import load_catalog
from rebalance_doctor.reading.kernel import BlockFile, Kernel

from support import run_cli

CLEANUP = ("[2024-11-05 10:{m:02d}:00,012] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition={p}] Generated 0 "
           "tombstone records while cleaning up group metadata in 1 milliseconds. (org.apache.kafka.coordinator.group.GroupCoordinatorShard)")
JOIN = ("[2024-11-05 10:{m:02d}:30,000] INFO [GroupCoordinator id=2 topic=__consumer_offsets partition=3] [GroupId orders] Member "
        "m{m} joins the consumer group using the consumer protocol. (org.apache.kafka.coordinator.group.GroupMetadataManager)")


def _broker_log(tmp_path: Path) -> Path:
    lines = [line for m in range(30) for line in [*(CLEANUP.format(m=m, p=p) for p in range(50)), JOIN.format(m=m)]]
    path = tmp_path / "server.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_housekeeping_lines_are_counted_but_build_no_rows(tmp_path: Path):
    """1,500 cleanup lines and 30 joins: 1,530 matched lines, and 30 records to make rows of, not 1,530."""
    path = _broker_log(tmp_path)
    scanned = Kernel(load_catalog()).scan(path.read_bytes(), [BlockFile(0, str(path), "server")])
    (_, accounting, records), = scanned.parts
    assert records == 30 == len(scanned.records)
    assert accounting.buckets["matched"] == 1530 and accounting.buckets["irrelevant"] == 0


def test_the_events_command_lists_no_housekeeping(tmp_path: Path):
    result = run_cli("events", str(_broker_log(tmp_path)), "--format", "ndjson")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 30 and "tombstone" not in result.stdout
    assert "1,530 matched" in result.stderr
