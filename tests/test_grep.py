"""`grep` as the on-call engineer's grep: TEXT is searched in every line of every input, not only in the lines
that are rebalance events, and the lines from all nodes come merged in time order, each event marked with its
kind, group and generation. Scenario: during an incident someone types `rebalance-doctor grep 'Pause Full' -C 2
logs/` where they would have typed `rg`; they must see what rg shows them, and more.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support import SAMPLES, ExitStatus, expected_context, matched_lines, run_cli, text_lines

INCIDENT = SAMPLES / "heartbeat-expiry"
LOGS = sorted(INCIDENT.rglob("*.log"))


def rg_count(pattern: str, flags: int = 0, invert: bool = False) -> dict[str, int]:
    """What `rg -c` gives per file (Python's regex agrees with Rust's on these patterns)."""
    counts = {}
    for path in LOGS:
        lines = path.read_text().splitlines()
        found = sum((re.search(pattern, line, flags) is not None) != invert for line in lines)
        if found:
            counts[str(path)] = found
    return counts


def counts_of(output: str) -> dict[str, int]:
    return {file: int(count) for file, _, count in (line.rpartition(":") for line in output.splitlines())}


@pytest.mark.parametrize(("typed", "pattern", "flags"), [
    ("heartbeat", "heartbeat", re.IGNORECASE),  # smart case: all lower case ignores case
    ("Pause", "Pause", 0),  # a capital respects it
    (r"generation \d+", r"generation \d+", re.IGNORECASE),
    (r"\bpause\b", r"\bpause\b", re.IGNORECASE),  # Hyperscan compiles it without the boundaries; the regex confirms
    ("x*", "x*", re.IGNORECASE),  # matches the empty string: every line, searched line by line
])
def test_text_is_searched_in_every_line_of_every_file(typed: str, pattern: str, flags: int):
    result = run_cli("grep", "-c", typed, str(INCIDENT))
    assert result.exit_code == ExitStatus.OK, result.stderr
    assert counts_of(result.stdout) == rg_count(pattern, flags)


def test_a_line_that_is_no_event_is_found_with_its_time_and_node():
    """An application line: rg would find it, and so does grep, with the time and node of its envelope."""
    result = run_cli("grep", "Duplicate OrderCreated", str(INCIDENT))
    assert result.exit_code == ExitStatus.OK
    assert "2024-03-12T10:17:51.162Z orders-app-1 Duplicate OrderCreated ORD-240312-61712 (orders-5@1838551) ignored" in result.stdout


def test_a_line_that_is_an_event_is_marked_with_its_kind_group_and_generation():
    result = run_cli("grep", "heartbeat expiration", str(INCIDENT))
    assert result.stdout.splitlines() == [
        "2024-03-12T10:17:47.643Z broker-1 rebalance_start orders-processor gen 7 [GroupCoordinator 1]: Preparing to rebalance group "
        "orders-processor in state PreparingRebalance with old generation 7 (__consumer_offsets-44) (reason: removing member "
        "consumer-orders-processor-1-c7d0e9a4-2b5f-4d81-8c6e-03a9f7b1e5d2 on heartbeat expiration)"]


def test_lines_of_all_nodes_come_in_time_order():
    shown = matched_lines(run_cli("grep", "orders-processor", str(INCIDENT), "--json").stdout)
    times = [line["ts"] for line in shown]
    assert len({line["node"] for line in shown}) >= 4
    assert times == sorted(times)


def test_context_lines_come_from_the_same_file_and_runs_are_parted_like_grep():
    app = (INCIDENT / "orders-app-2.log").read_text().splitlines()
    result = run_cli("grep", "Pause Full", "-B", "1", "-A", "2", "--raw", str(INCIDENT))
    assert result.stdout.splitlines() == app[272:276]
    both = run_cli("grep", r"GC\(118[34]\) Pause", "-C", "1", "--raw", str(INCIDENT)).stdout.splitlines()
    assert both == app[271:275]  # two selected lines, one run
    apart = run_cli("grep", "Pause Young|Stabilized group orders-processor generation 8", "-C", "1", "--raw", str(INCIDENT)).stdout
    assert "\n--\n" in apart


@pytest.mark.parametrize("megabytes", [20, 40], ids=["blocks", "spans on every core"])
def test_context_is_whole_across_the_scans_block_and_span_edges(tmp_path: Path, megabytes: int):
    """A 20 MB file is read in 8 MiB blocks, a 40 MB one in spans scanned by several processes: a selected
    line next to an edge still has its context lines from the other side, each shown once."""
    lines = text_lines(megabytes * 10_000, marked_every=11)
    path = tmp_path / "app.log"
    path.write_text("\n".join(lines) + "\n")
    result = run_cli("grep", "MARK", "-C", "3", "--raw", str(path))
    assert result.exit_code == ExitStatus.OK
    assert result.stdout.splitlines() == expected_context(lines, "MARK", 3)


def test_case_inverted_files_and_nodes():
    assert run_cli("grep", "HeartBeat", str(INCIDENT)).exit_code == ExitStatus.NOTHING_FOUND
    assert counts_of(run_cli("grep", "-i", "HeartBeat", "-c", str(INCIDENT)).stdout) == rg_count("heartbeat", re.IGNORECASE)
    assert counts_of(run_cli("grep", "-s", "heartbeat", "-c", str(INCIDENT)).stdout) == rg_count("heartbeat")
    assert counts_of(run_cli("grep", "-v", "heartbeat", "-c", str(INCIDENT)).stdout) == rg_count("heartbeat", re.IGNORECASE, invert=True)
    files = run_cli("grep", "-l", "Pause Full", str(INCIDENT)).stdout.splitlines()
    assert files == [str(INCIDENT / "orders-app-2.log")]
    brokers = matched_lines(run_cli("grep", "group", "--node", "broker-*", "--json", str(INCIDENT)).stdout)
    assert {line["node"] for line in brokers} == {"broker-1", "broker-2"}


def test_kinds_and_generations_select_events_among_the_found_lines():
    found = matched_lines(run_cli("grep", "orders-processor", "-k", "rebalance_start", "--generation", "7", "--json", str(INCIDENT)).stdout)
    assert [(line["kind"], line["generation"]) for line in found] == [("rebalance_start", 7)]


def test_groups_select_lines_by_their_log_context_prefix(tmp_path: Path):
    """A line that is no event but carries `[Consumer clientId=…, groupId=…]` belongs to that group."""
    log = tmp_path / "client.log"
    log.write_text(
        "2024-03-12T10:00:00.000Z  INFO 1 --- [app] [ntainer#0-0-C-1] o.a.k.c.c.KafkaConsumer : [Consumer clientId=c-1, groupId=orders] "
        "Seeking to offset 42 for partition orders-0\n"
        "2024-03-12T10:00:01.000Z  INFO 1 --- [app] [ntainer#1-0-C-1] o.a.k.c.c.KafkaConsumer : [Consumer clientId=c-2, groupId=payments] "
        "Seeking to offset 7 for partition payments-0\n"
    )
    found = matched_lines(run_cli("grep", "Seeking", "-g", "orders", "--json", str(log)).stdout)
    assert [line["line"] for line in found] == [1]
    assert run_cli("grep", "Seeking", "-m", "c-2", "--raw", str(log)).stdout.count("Seeking") == 1


def test_json_is_ripgreps_with_the_time_node_and_event():
    messages = [json.loads(line) for line in run_cli("grep", "Pause", "-A", "1", "--json", str(INCIDENT)).stdout.splitlines()]
    types = [message["type"] for message in messages]
    assert types[0] == "begin" and types[-1] == "summary" and "context" in types and "end" in types
    matches = [message["data"] for message in messages if message["type"] == "match"]
    assert "jvm_pause" in {(data["event"] or {}).get("kind") for data in matches}
    for data in matches:
        raw = data["lines"]["text"].encode()
        assert all(raw[span["start"] : span["end"]].decode() == span["match"]["text"] == "Pause" for span in data["submatches"])
    summary = messages[-1]["data"]["stats"]
    assert summary["matched_lines"] == len(matches) and summary["searches_with_match"] == 1


def test_usage_errors_and_nothing_found():
    bad = run_cli("grep", "(unclosed", str(INCIDENT))
    assert bad.exit_code == ExitStatus.ERROR and "not a valid regex" in bad.stderr
    no_text = run_cli("grep", "-v", str(INCIDENT))
    assert no_text.exit_code == ExitStatus.ERROR and "needs TEXT" in no_text.stderr
    nothing = run_cli("grep", "no such words anywhere", str(INCIDENT))
    assert nothing.exit_code == ExitStatus.NOTHING_FOUND and nothing.stdout == ""


def test_an_event_store_is_searched_in_its_events(tmp_path: Path):
    store = tmp_path / "store"
    assert run_cli("ingest", str(INCIDENT), "-o", str(store)).exit_code == ExitStatus.OK
    from_store = run_cli("grep", "heartbeat expiration", "--events", str(store))
    assert from_store.exit_code == ExitStatus.OK
    assert from_store.stdout == run_cli("grep", "heartbeat expiration", str(INCIDENT)).stdout
