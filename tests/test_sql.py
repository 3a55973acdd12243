"""SQL over the incident. Scenario: after the incident the on-call engineer asks questions the report does
not answer in one line — which causes cost the most pause, which members paused longest, how many events
each node logged — with `rebalance-doctor sql "SELECT …" logs/`, or from a notebook with the same tables.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

import rebalance_doctor as rd
from rebalance_doctor.analysis.tables import SCHEMAS
from rebalance_doctor.catalog.schema import COLUMN_NAMES

from support import ROOT, SAMPLES, ExitStatus, run_cli

INCIDENT = str(SAMPLES / "heartbeat-expiry")
DOCS = (ROOT / "docs" / "sql.md").read_text()


def documented(table: str) -> dict[str, str]:
    """The columns and types docs/sql.md gives a table."""
    section = DOCS.split(f"\n## {table}\n", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\w+)` \| (\w+) \|", section, re.MULTILINE))


@pytest.mark.parametrize("table", sorted(SCHEMAS))
def test_each_table_has_the_columns_and_types_its_docs_give(table: str):
    frame = rd.load([INCIDENT]).tables()[table]
    shown = {name: "Datetime" if isinstance(dtype, pl.Datetime) else str(dtype) for name, dtype in frame.schema.items()}
    assert shown == documented(table)


def test_the_events_table_is_the_event_table():
    frame = rd.tables(rd.load([INCIDENT]).events)["events"]
    assert tuple(frame.columns) == COLUMN_NAMES
    assert "[event-table.md](event-table.md#columns)" in DOCS.split("\n## events\n", 1)[1].split("\n## ", 1)[0]


def test_the_cost_of_each_cause_agrees_with_the_report():
    result = run_cli("sql", "SELECT cause, count(*) AS n, sum(pause_ms) AS pause FROM rebalances GROUP BY cause ORDER BY cause", INCIDENT,
                     "-f", "ndjson")
    assert result.exit_code == ExitStatus.OK, result.stderr
    by_cause = {row["cause"]: (row["n"], row["pause"]) for row in map(json.loads, result.stdout.splitlines())}
    report = json.loads(run_cli("report", INCIDENT, "--format", "json").stdout)
    expected: dict[str, tuple[int, int]] = {}
    for group in report["groups"]:
        for rebalance in group["rebalances"]:
            n, pause = expected.get(rebalance["cause"]["kind"], (0, 0))
            expected[rebalance["cause"]["kind"]] = (n + 1, pause + rebalance["pause_ms"])
    assert by_cause == expected


def test_members_partitions_are_those_their_own_logs_print():
    """A paused member's partitions after the pause are those of the assignment that resumed it (an eager
    group: the assignment is all it holds). The analysis reads client clocks corrected for their skew, so the
    assignment is looked for within two seconds."""
    query = ("SELECT m.partitions_after, e.partitions FROM members m JOIN events e ON e.node = m.node "
             "WHERE m.paused_ms > 0 AND NOT m.pause_estimated AND e.kind = 'partitions_assigned' "
             "AND e.ts BETWEEN m.paused_until - INTERVAL '2 seconds' AND m.paused_until + INTERVAL '2 seconds'")
    rows = [json.loads(line) for line in run_cli("sql", query, INCIDENT, "-f", "ndjson").stdout.splitlines()]
    assert rows
    for row in rows:
        assert row["partitions_after"] == len([p for p in re.split(r"[\s,\[\]]+", row["partitions"]) if p])


def test_results_print_as_events_print_them(tmp_path: Path):
    query = "SELECT group_id, generation, started_at, cause FROM rebalances WHERE cause = 'heartbeat_expiry'"
    table = run_cli("sql", query, INCIDENT)
    assert table.stdout.splitlines()[0].split() == ["group_id", "generation", "started_at", "cause"]
    assert "orders-processor  8           2024-03-12T10:17:47.643Z  heartbeat_expiry" in table.stdout
    csv = run_cli("sql", query, INCIDENT, "-f", "csv").stdout.splitlines()
    assert csv == ["group_id,generation,started_at,cause", "orders-processor,8,2024-03-12T10:17:47.643Z,heartbeat_expiry"]
    written = run_cli("sql", query, INCIDENT, "-o", str(tmp_path / "expiry.parquet"))
    assert "wrote 1 rows" in written.stderr
    assert pl.read_parquet(tmp_path / "expiry.parquet")["generation"].to_list() == [8]


def test_an_empty_result_exits_1_and_a_bad_query_2():
    assert run_cli("sql", "SELECT * FROM rebalances WHERE duration_ms < 0", INCIDENT).exit_code == ExitStatus.NOTHING_FOUND
    misspelt = run_cli("sql", "SELECT * FROM rebalance", INCIDENT)
    assert misspelt.exit_code == ExitStatus.ERROR and "did you mean 'rebalances'?" in misspelt.stderr
    column = run_cli("sql", "SELECT pause FROM rebalances", INCIDENT)
    assert column.exit_code == ExitStatus.ERROR and "pause_ms" in column.stderr


def test_an_event_store_answers_as_the_logs_do(tmp_path: Path):
    store = tmp_path / "store"
    assert run_cli("ingest", INCIDENT, "-o", str(store)).exit_code == ExitStatus.OK
    query = "SELECT r.generation, m.member, m.paused_ms FROM rebalances r JOIN members m USING (rebalance_id) ORDER BY 1, 2"
    assert run_cli("sql", query, "--events", str(store)).stdout == run_cli("sql", query, INCIDENT).stdout
