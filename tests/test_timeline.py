"""`rebalance-doctor timeline`: a quick look during an incident, one row per group and per member.

Scenario: a rolling restart. With the eager assignor every member's row shows paused stretches (█) at every
rebalance; with cooperative-sticky the same rollout leaves the survivors' rows almost free of them.
"""

from __future__ import annotations

from support import SAMPLES, ExitStatus, run_cli


def timeline(incident: str) -> str:
    result = run_cli("timeline", str(SAMPLES / incident), width=140)
    assert result.exit_code == ExitStatus.OK, result.output
    return result.stdout


def _paused_cells(text: str) -> int:
    return sum(line.split("  ", 1)[-1].count("█") for line in text.splitlines() if "(…" in line)


def test_eager_rolling_bounce_shows_every_member_paused_at_every_rebalance():
    text = timeline("rolling-bounce-eager")
    lines = text.splitlines()
    assert lines[0].startswith("group invoice-writer") and "6 rebalances" in lines[0]
    assert lines[1].strip().startswith("rebalances")
    member_rows = [line for line in lines if "(…" in line]
    assert len(member_rows) >= 3 and all("─" in row for row in member_rows)
    assert "✗ failed  ─ in group  █ paused" in lines[-1]


def test_cooperative_rollout_pauses_less_than_eager():
    assert _paused_cells(timeline("rolling-bounce-cooperative")) < _paused_cells(timeline("rolling-bounce-eager"))


def test_failed_rebalances_are_marked():
    assert "✗" in timeline("unstable-leader-failed-rebalances").splitlines()[1]
