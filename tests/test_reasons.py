"""Reason texts name causes: every reason string Kafka prints is classified, or listed as not a cause.

Scenario: the broker says `Preparing to rebalance group g … (reason: removing member m on heartbeat
expiration)`; a client says `Request joining group due to: group is already rebalancing`. The
first names the cause (heartbeat expiry of member m), the second is only a symptom. Every reason
template of the reference (sections 2.10, 3.11, 4.11, 5.8, 6.8) is rendered and classified.
"""

from __future__ import annotations

import pytest

from rebalance_doctor.catalog import load_catalog
from rebalance_doctor.reading.rows import classify_reason

from reference import ReasonRow, load_reason_rows

CATALOG = load_catalog()
ROWS = load_reason_rows()
IGNORED = {entry.template for entry in CATALOG.ignored}
RULES = [(rule, i, example) for rule in CATALOG.reasons for i, example in enumerate(rule.examples)]


@pytest.mark.parametrize(("rule", "index", "example"), RULES, ids=[f"{r.id}#{i}" for r, i, _ in RULES])
def test_reason_example_is_classified_by_its_rule(rule, index, example):
    result = classify_reason(example.line, CATALOG)
    assert result is not None, f"{rule.path}:{rule.line}: example {index} is not classified"
    cause, fields = result
    expected_cause = example.fields.get("cause", rule.cause)
    assert cause == expected_cause, f"{rule.path}:{rule.line}: example {index}: {cause} != {expected_cause}"
    for name, value in example.fields.items():
        if name != "cause":
            assert fields.get(name) == value, f"{rule.path}:{rule.line}: {name}: {fields.get(name)!r} != {value!r}"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"sec{r.section}-L{r.line}")
def test_reference_reason_is_classified_or_ignored(row: ReasonRow):
    if row.template in IGNORED:
        return
    for rendered in row.renderings():
        assert classify_reason(rendered, CATALOG) is not None, f"reference line {row.line}: {rendered!r} names no cause"
