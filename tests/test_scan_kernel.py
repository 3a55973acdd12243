"""The scan kernel spends no Python per event: its cost per event is polars and numpy work over columns.

Scenario: a rebalance storm, where a fifth of every log is rebalance lines. The scan must not turn each of
them into a Python call chain (match, envelope, timestamp, fields, a row): that bound the storm at ~110 µs
per event (docs/performance.md). This is the timing-free guard: it counts the Python functions a scan
calls, which must not grow with the number of events in a block.
"""

from __future__ import annotations

import sys
from collections import Counter
from datetime import UTC

from rebalance_doctor.catalog import load_catalog
from rebalance_doctor.reading.kernel import BlockFile, Kernel
from rebalance_doctor.reading.rows import event_rows

CATALOG = load_catalog()
# One storm round: a broker's coordinator lines, a Java client's lines behind its log-context prefix (logback and
# Spring Boot layouts, and a JSON record), a librdkafka line, with application lines that share words with them in between.
ROUND = [
    "[2024-05-01 10:{m:02d}:{s:02d},101] INFO [GroupCoordinator 1]: Preparing to rebalance group orders-{g} in state "
    "PreparingRebalance with old generation {n} (__consumer_offsets-7) (reason: Adding new member consumer-1-{n} with group "
    "instance id None; client reason: need to re-join with the given member-id) (kafka.coordinator.group.GroupCoordinator)",
    "2024-05-01 10:{m:02d}:{s:02d}.202 [main] INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=consumer-orders-{g}-1, "
    "groupId=orders-{g}] (Re-)joining group",
    "2024-05-01 10:{m:02d}:{s:02d}.303 INFO 7 --- [  worker-{g}] c.acme.orders.Handler : rebalancing the order book for group {g}",
    "2024-05-01T10:{m:02d}:{s:02d}.404Z  INFO 1 --- [ntainer#0-0-C-1] o.a.k.c.c.internals.ConsumerCoordinator  : [Consumer "
    "clientId=consumer-orders-{g}-1, groupId=orders-{g}] Successfully joined group with generation Generation{{generationId={n}, "
    "memberId='consumer-orders-{g}-1-{n}', protocol='range'}}",
    "%7|1714557600.{n:03d}|CGRPSTATE|rdkafka#consumer-1| [thrd:main]: Group \"orders-{g}\" changed state up -> wait-join (join-state init)",
    "[2024-05-01 10:{m:02d}:{s:02d},505] INFO [GroupCoordinator 1]: Stabilized group orders-{g} generation {n} "
    "(__consumer_offsets-7) with 3 members (kafka.coordinator.group.GroupCoordinator)",
    '{{"@timestamp":"2024-05-01T10:{m:02d}:{s:02d}.606Z","message":"[Consumer clientId=consumer-payments-{g}-1, groupId=payments-{g}] '
    'Request joining group due to: rebalance failed due to UnknownMemberIdException","logger_name":"o.a.k.c.c.i.ConsumerCoordinator",'
    '"thread_name":"payments-{g}-consumer-0","level":"INFO"}}',
]


def _storm(rounds: int) -> bytes:
    lines = [line.format(m=r // 60 % 60, s=r % 60, g=r % 7, n=r + 1) for r in range(rounds) for line in ROUND]
    return ("\n".join(lines) + "\n").encode()


def _events(block: bytes, kernel: Kernel | None = None):
    """A block's scan and the rows made of its records, as a scan process and the table builder do."""
    records = (kernel or Kernel(CATALOG)).scan(block, [BlockFile(0, "storm.log", "storm")]).records
    return event_rows(records, CATALOG, {0: UTC})


def _python_calls(block: bytes) -> tuple[Counter, int]:
    """The Python functions one block's scan and row making call (by name), and the events they make."""
    kernel = Kernel(CATALOG)
    _events(_storm(1), kernel)  # the prefilter and caches are made once per process
    calls: Counter = Counter()

    def count(frame, event, _arg):
        if event == "call":
            calls[f"{frame.f_code.co_filename.rsplit('/', 2)[-1]}:{frame.f_code.co_name}"] += 1

    sys.setprofile(count)
    try:
        events = _events(block, kernel)
    finally:
        sys.setprofile(None)
    return calls, len(events)


def test_a_scan_calls_no_python_function_per_event():
    """Ten times the events, the same Python calls: the only per-hit call is the Hyperscan prefilter's
    match callback (its wheel reports each literal it finds through Python)."""
    few, few_events = _python_calls(_storm(60))
    many, many_events = _python_calls(_storm(600))
    assert many_events == 10 * few_events == 3600
    callback = "prefilter.py:on_match"
    few.pop(callback, None), many.pop(callback, None)
    grown = {name: (few[name], count) for name, count in many.items() if count > few[name] + 20}
    assert not grown, grown
    assert many.total() < 1.2 * few.total()


def test_every_event_of_the_storm_is_read_whole():
    """What the guard scans is what a user gets: each line its event, with its envelope and fields."""
    events = _events(_storm(10))
    assert events["kind"].to_list()[:7] == ["rebalance_start", "join_start", "join_succeeded", "member_state_change", "group_stabilized",
                                            "join_requested", "rebalance_start"]
    assert events["ts"].null_count() == 0 and events["group_id"].null_count() == 0
    joined = events.row(2, named=True)
    assert (joined["generation"], joined["member_id"], joined["thread"], joined["logger"]) == (
        1, "consumer-orders-0-1-1", "ntainer#0-0-C-1", "o.a.k.c.c.internals.ConsumerCoordinator")
