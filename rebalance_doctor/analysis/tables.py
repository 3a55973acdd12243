"""The incident as tables, for SQL and notebooks: ``rebalances`` (one row per rebalance), ``members`` (one row
per member of a rebalance: in it, joined, left or paused) and ``findings`` (one row per finding). Their
columns are documented in docs/sql.md; each schema is declared here once, so that an empty table has them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import Analysis, Rebalance

if TYPE_CHECKING:
    import polars as pl

REBALANCES = {
    "rebalance_id": "Int64", "group_id": "String", "group_type": "String", "from_generation": "Int64", "generation": "Int64",
    "started_at": "Datetime", "ended_at": "Datetime", "duration_ms": "Int64", "failed": "Boolean", "completed": "Boolean",
    "protocol": "String", "assignor": "String", "coordinator": "String", "leader": "String", "member_count": "Int64",
    "joined": "Int64", "left": "Int64", "cause": "String", "cause_member": "String", "cause_confidence": "Float64",
    "cause_summary": "String", "pause_ms": "Int64", "paused_members": "Int64", "moved_partitions": "Int64",
}
MEMBERS = {
    "rebalance_id": "Int64", "group_id": "String", "generation": "Int64", "member": "String", "node": "String",
    "joined": "Boolean", "left": "Boolean", "left_how": "String", "paused_ms": "Int64", "paused_from": "Datetime",
    "paused_until": "Datetime", "pause_estimated": "Boolean", "partitions_before": "Int64", "partitions_after": "Int64",
}
FINDINGS = {
    "group_id": "String", "kind": "String", "severity": "String", "summary": "String", "recommendation": "String",
    "trigger": "String", "evidence": "Int64", "first_file": "String", "first_line": "Int64", "first_ts": "Datetime",
}
SCHEMAS = {"rebalances": REBALANCES, "members": MEMBERS, "findings": FINDINGS}


def incident_tables(analysis: Analysis) -> dict[str, pl.DataFrame]:
    """``rebalances``, ``members`` and ``findings`` of an analysis; rebalances are numbered (``rebalance_id``)
    in the report's order, and members refer to them by that number."""
    rebalances, members, findings = [], [], []
    number = 0
    for group in analysis.groups:
        for rebalance in group.rebalances:
            number += 1
            rebalances.append(_rebalance_row(number, group.group_type, rebalance))
            members += _member_rows(number, rebalance, group.member_nodes)
        for finding in group.findings:
            first = finding.evidence[0] if finding.evidence else None
            findings.append({"group_id": group.group_id, "kind": finding.kind, "severity": finding.severity, "summary": finding.summary,
                             "recommendation": finding.recommendation, "trigger": finding.trigger, "evidence": len(finding.evidence),
                             "first_file": first and first.file, "first_line": first and first.line, "first_ts": first and first.ts})
    return {name: _frame(rows, SCHEMAS[name]) for name, rows in (("rebalances", rebalances), ("members", members), ("findings", findings))}


def _rebalance_row(number: int, group_type: str | None, rebalance: Rebalance) -> dict:
    return {
        "rebalance_id": number, "group_id": rebalance.group_id, "group_type": group_type, "from_generation": rebalance.from_generation,
        "generation": rebalance.to_generation, "started_at": rebalance.started_at, "ended_at": rebalance.ended_at,
        "duration_ms": rebalance.duration_ms, "failed": rebalance.failed, "completed": rebalance.completed, "protocol": rebalance.protocol,
        "assignor": rebalance.assignor, "coordinator": rebalance.coordinator, "leader": rebalance.leader,
        "member_count": rebalance.member_count, "joined": len(rebalance.joined), "left": len(rebalance.left),
        "cause": rebalance.cause.kind, "cause_member": rebalance.cause.member, "cause_confidence": rebalance.cause.confidence,
        "cause_summary": rebalance.cause.summary, "pause_ms": rebalance.pause_ms, "paused_members": len(rebalance.pauses),
        "moved_partitions": len(rebalance.moves),
    }


def _member_rows(number: int, rebalance: Rebalance, nodes: dict[str, str]) -> list[dict]:
    """Every member the rebalance names (in it, joined, left, paused), once, with its pause when it had one."""
    departures = {departure.member: departure.how for departure in rebalance.left}
    pauses = {pause.member: pause for pause in rebalance.pauses}
    names = dict.fromkeys([*rebalance.members, *rebalance.joined, *departures, *pauses])
    rows = []
    for member in names:
        pause = pauses.get(member)
        rows.append({
            "rebalance_id": number, "group_id": rebalance.group_id, "generation": rebalance.to_generation, "member": member,
            "node": (pause.node if pause else None) or nodes.get(member), "joined": member in rebalance.joined,
            "left": member in departures, "left_how": departures.get(member), "paused_ms": pause.pause_ms if pause else 0,
            "paused_from": pause and pause.started_at, "paused_until": pause and pause.ended_at, "pause_estimated": pause and pause.estimated,
            "partitions_before": pause and pause.partitions_before, "partitions_after": pause and pause.partitions_after,
        })
    return rows


def _frame(rows: list[dict], schema: dict[str, str]) -> pl.DataFrame:
    import polars as pl

    types = {name: pl.Datetime("us", "UTC") if kind == "Datetime" else getattr(pl, kind) for name, kind in schema.items()}
    return pl.DataFrame(rows, schema=types, orient="row") if rows else pl.DataFrame(schema=types)


def query(sql: str, tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The result of a SQL query over ``tables`` (by name), run by polars' SQL engine. ValueError when the query
    fails, saying why, with a near miss of a table's name."""
    import re

    import polars as pl

    from ..near_misses import did_you_mean

    try:
        return pl.SQLContext(tables, eager=True).execute(sql)
    except (pl.exceptions.PolarsError, pl.exceptions.SQLInterfaceError) as exc:
        why = str(exc).strip().splitlines()[0]
        missing = re.search(r"relation '([^']+)' was not found", why)
        hint = did_you_mean(missing.group(1), tables) if missing else ""
        raise ValueError(f"SQL: {why}{hint} (tables: {', '.join(tables)}; docs/sql.md)") from None
