"""The library API as a notebook uses it: `load` → `analyze` → `render`, and what a wrong argument says.

Scenario: an engineer explores an incident in a notebook and passes the wrong thing along; the error must say
what was expected, in a type the notebook can catch, not a polars internals message.
"""

from __future__ import annotations

import polars as pl
import pytest

import rebalance_doctor as rd

from support import SAMPLES

INCIDENT = str(SAMPLES / "heartbeat-expiry")


def test_analyze_takes_what_load_returned_or_its_table():
    logs = rd.load(INCIDENT)
    from_logs, from_table = rd.analyze(logs), rd.analyze(logs.events, buckets=dict(logs.buckets))
    assert rd.render(from_logs, "json") == rd.render(from_table, "json")
    assert from_logs.buckets["matched"] == logs.buckets["matched"] > 0


@pytest.mark.parametrize("wrong", ["sample_logs/heartbeat-expiry", None, [1, 2]])
def test_analyze_refuses_what_is_not_an_event_table(wrong):
    with pytest.raises(TypeError, match=r"analyze\(\) takes the event table"):
        rd.analyze(wrong)


def test_analyze_names_the_columns_a_table_lacks():
    table = rd.load(INCIDENT).events.drop("kind", "group_id")
    with pytest.raises(ValueError, match="lacks the columns kind, group_id"):
        rd.analyze(table)
    with pytest.raises(ValueError, match="lacks the columns ts"):
        rd.analyze(pl.DataFrame({"a": [1]}))


def test_render_names_the_formats_it_knows():
    with pytest.raises(ValueError, match="unknown format 'pdf'"):
        rd.render(rd.analyze(rd.load(INCIDENT)), "pdf")
