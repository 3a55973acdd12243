"""Times and names as people type them during an incident. Scenario: the on-call engineer wants the last
half hour of the logs (`--since 30m`), or everything after the alert at 10:05 (`--since 10:05`), and types
`-k member_expird` or `--group orders-procesor` by mistake: the tool must understand the first and point
at the right name for the second.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import rebalance_doctor

from support import SAMPLES, ExitStatus, run_cli

INCIDENT = str(SAMPLES / "heartbeat-expiry")


def event_lines(*args: str) -> list[tuple[str, int]]:
    result = run_cli("events", INCIDENT, "--format", "ndjson", *args)
    assert result.exit_code in (ExitStatus.OK, ExitStatus.NOTHING_FOUND), result.stderr
    return [(row["file"], row["line"]) for row in map(json.loads, result.stdout.splitlines())]


def newest_event() -> datetime:
    times = [json.loads(line)["ts"] for line in run_cli("events", INCIDENT, "--format", "ndjson").stdout.splitlines()]
    return datetime.fromisoformat(max(t for t in times if t))


def iso(stamp: datetime) -> str:
    return stamp.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_a_span_counts_back_from_the_newest_event():
    newest = newest_event()
    last_half_minute = event_lines("--since", "30s")
    assert last_half_minute and last_half_minute == event_lines("--since", iso(newest - timedelta(seconds=30)))
    assert event_lines("--since", "1h30m") == event_lines("--since", iso(newest - timedelta(minutes=90)))
    assert event_lines("--until", "5m ago") == event_lines("--until", iso(newest - timedelta(minutes=5)))


def test_with_now_a_span_counts_back_from_the_wall_clock():
    """Logs of 2024 hold nothing of the last day."""
    assert run_cli("events", INCIDENT, "--since", "1d", "--now").exit_code == ExitStatus.NOTHING_FOUND


def test_a_time_of_day_is_on_the_inputs_date():
    assert event_lines("--since", "10:17", "--until", "10:18") == event_lines("--since", "2024-03-12T10:17:00Z", "--until", "2024-03-12T10:18:00Z")
    assert event_lines("--since", "10:17:47.641") == event_lines("--since", "2024-03-12T10:17:47.641Z")


def broker_line(stamp: str) -> str:
    return (f"[{stamp}] INFO [GroupCoordinator 1]: Member consumer-orders-1-6f0c in group orders has failed, removing it from the group "
            "(kafka.coordinator.group.GroupCoordinator)\n")


def test_a_time_of_day_over_several_dates_must_be_unambiguous(tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_text(broker_line("2024-10-24 22:00:00,000") + broker_line("2024-10-25 01:00:00,000") + broker_line("2024-10-25 23:00:00,000"))
    only_once = run_cli("events", str(log), "--format", "ndjson", "--since", "23:30")  # 24th 23:30 lies inside the events, 25th 23:30 after them
    assert [json.loads(row)["ts"] for row in only_once.stdout.splitlines()] == ["2024-10-25T01:00:00.000Z", "2024-10-25T23:00:00.000Z"]
    twice = run_cli("events", str(log), "--since", "22:30")
    assert twice.exit_code == ExitStatus.ERROR
    assert "ambiguous" in twice.stderr and "2024-10-25T22:30:00Z" in twice.stderr


def test_a_time_that_is_no_time_is_a_usage_error_before_anything_is_read():
    result = run_cli("report", "no/such/logs", "--since", "yesterday-ish")
    assert result.exit_code == ExitStatus.ERROR
    assert "--since 'yesterday-ish' is not a time" in result.stderr and "30m" in result.stderr and "no/such" not in result.stderr


def test_the_library_takes_the_same_times():
    newest = newest_event()
    logs = rebalance_doctor.load([INCIDENT], since="30s")
    assert logs.events.height == len(event_lines("--since", iso(newest - timedelta(seconds=30))))


def test_near_misses_are_named():
    kind = run_cli("grep", "-k", "member_expird", INCIDENT)
    assert kind.exit_code == ExitStatus.ERROR and "did you mean 'member_expired'?" in kind.stderr and "known kinds:" in kind.stderr
    cause = run_cli("grep", "-k", "heartbeat_expiry", INCIDENT)
    assert cause.exit_code == ExitStatus.ERROR and "is a root cause, not an event kind" in cause.stderr and "--fail-on heartbeat_expiry" in cause.stderr
    group = run_cli("grep", "-g", "orders-procesor", INCIDENT)
    assert group.exit_code == ExitStatus.NOTHING_FOUND
    assert "--group 'orders-procesor' matches no group in the inputs; did you mean 'orders-processor'?" in group.stderr
    assert "fulfillment-audit, orders-processor" in group.stderr
    rule = run_cli("check", INCIDENT, "--fail-on", "heartbeat_expiri")
    assert rule.exit_code == ExitStatus.ERROR and "did you mean 'heartbeat_expiry'?" in rule.stderr
