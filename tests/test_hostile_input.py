"""Hostile input, as an on-call engineer gets it: truncated, rotated mid-line, binary, in odd encodings,
pasted from chat, growing while read. Each case runs the real command in its own process beside a good
broker log and asserts: no traceback, the exit status, the message that names the file, the line
accounting (matched + relevant-but-unmatched + irrelevant + unreadable = every line read), and that the
good log is still analysed.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import FIXTURES, WIDTH, ExitStatus

MINI = FIXTURES / "mini"
BROKER = (MINI / "broker-1.log").read_bytes()  # 6 lines, 4 events of group "orders"
BROKER_LINES, BROKER_EVENTS = 6, 4
SUMMARY = re.compile(
    r"([\d,]+) lines in ([\d,]+) files?: ([\d,]+) matched · ([\d,]+) relevant unmatched · ([\d,]+) irrelevant · ([\d,]+) unreadable"
)


@dataclass
class Run:
    status: int
    stdout: str
    stderr: str

    @property
    def accounting(self) -> dict[str, int]:
        return line_accounting(self.stderr)

    @property
    def events(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith("{")]


def line_accounting(stderr: str) -> dict[str, int]:
    """The buckets every log-reading command prints on stderr, checked to add up to the lines read."""
    found = SUMMARY.search(stderr)
    assert found, f"no line accounting on stderr:\n{stderr}"
    total, files, *buckets = (int(value.replace(",", "")) for value in found.groups())
    counts = dict(zip(("matched", "relevant_unmatched", "irrelevant", "unreadable"), buckets, strict=True))
    assert sum(counts.values()) == total, f"buckets do not add up to the lines read: {found.group(0)}"
    return {"lines": total, "files": files, **counts}


def doctor(*args: str, timeout: float = 120, prefix: tuple[str, ...] = ()) -> Run:
    """The real command in its own process: a traceback anywhere is a failure."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": str(WIDTH)}
    proc = subprocess.run([*prefix, sys.executable, "-m", "rebalance_doctor", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    if proc.returncode != ExitStatus.ERROR:
        line_accounting(proc.stderr)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def events_of(*paths: Path | str, options: tuple[str, ...] = ()) -> Run:
    return doctor("events", *map(str, paths), "--format", "ndjson", *options)


@pytest.fixture
def good(tmp_path: Path) -> Path:
    """The good log every case keeps beside its hostile one."""
    path = tmp_path / "good" / "broker-1.log"
    path.parent.mkdir()
    path.write_bytes(BROKER)
    return path


def written_and_read(good: Path, path: Path, lines: list[str]) -> tuple[Run, list[dict]]:
    """``lines`` written to ``path`` and read beside the good log: the run, and ``path``'s events in line order."""
    path.write_text("\n".join(lines) + "\n")
    run = events_of(good, path)
    assert run.status == ExitStatus.OK
    return run, sorted((json.loads(row) for row in run.events if str(path) in row), key=lambda row: row["line"])


def assert_good_log_analysed(run: Run, good: Path, extra_events: int = 0) -> None:
    assert sum(f'"file":"{good}"' in line for line in run.events) == BROKER_EVENTS
    assert len(run.events) == BROKER_EVENTS + extra_events


# --------------------------------------------------------------------------- files that are not text


def test_empty_file_is_read_as_zero_lines(tmp_path, good):
    (tmp_path / "empty.log").write_bytes(b"")
    run = events_of(good, tmp_path / "empty.log")
    assert run.status == ExitStatus.OK
    assert run.accounting == {"lines": BROKER_LINES, "files": 2, "matched": 4, "relevant_unmatched": 0, "irrelevant": 2, "unreadable": 0}
    alone = events_of(tmp_path / "empty.log")
    assert alone.status == ExitStatus.NOTHING_FOUND and "the input is empty" in alone.stderr


JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffdb004300") + bytes(range(256)) * 40 + b"\nrebalance\n\xff\xd9"


@pytest.mark.parametrize("name, data", [
    ("photo.jpg", JPEG),
    ("core.dump.gz", gzip.compress(b"\x7fELF\x02\x01\x01\x00" + bytes(5000) + b"Preparing to rebalance group\n")),
])
def test_binary_files_are_skipped_and_counted_unreadable(tmp_path, good, name, data):
    """A JPEG or a gzipped core dump handed over with the logs: skipped with a message, its lines counted unreadable."""
    (tmp_path / name).write_bytes(data)
    run = events_of(good, tmp_path / name)
    assert run.status == ExitStatus.OK
    assert f"{tmp_path / name}: binary file skipped" in run.stderr
    content = gzip.decompress(data) if name.endswith(".gz") else data
    assert run.accounting["unreadable"] == content.count(b"\n") + (not content.endswith(b"\n"))
    assert_good_log_analysed(run, good)


def test_nul_bytes_inside_lines_and_a_copytruncate_hole(tmp_path, good):
    """logrotate copytruncate leaves a run of NUL bytes where the file was cut before the writer's next line;
    NULs inside a line are just characters. Both files are logs, not binaries."""
    hole = tmp_path / "hole" / "broker-2.log"
    hole.parent.mkdir()
    hole.write_bytes(b"\x00" * 20_000 + BROKER)
    inside = tmp_path / "nul" / "broker-3.log"
    inside.parent.mkdir()
    inside.write_bytes(BROKER.replace(b"LogLoader", b"Log\x00Loader").replace(b"Wrote producer", b"Wrote\x00producer"))
    run = events_of(good, hole, inside)
    assert run.status == ExitStatus.OK and "binary" not in run.stderr
    assert run.accounting["lines"] == 3 * BROKER_LINES
    assert run.accounting["matched"] == 3 * BROKER_EVENTS
    assert_good_log_analysed(run, good, extra_events=2 * BROKER_EVENTS)
    first = next(line for line in run.events if '"file":"' + str(hole) in line)
    assert '"ts":"2024-03-05T10:00:00.000Z"' in first  # the envelope after the NUL run still parsed


def test_invalid_utf8_and_latin1_lines(tmp_path, good):
    """Undecodable lines count as unreadable; a matched line with a Latin-1 byte is still an event."""
    latin1 = BROKER.replace(b"LogLoader", b"LogLoader \xe9t\xe9").replace(b"in group orders has failed", b"in group orders has failed \xe0")
    path = tmp_path / "latin1.log"
    path.write_bytes(latin1 + b"\xff\xfe\xfd garbage \xc3\x28\n")
    run = events_of(good, path)
    assert run.status == ExitStatus.OK
    counts = run.accounting
    assert counts["lines"] == 2 * BROKER_LINES + 1
    assert counts["unreadable"] == 2 and counts["matched"] == 2 * BROKER_EVENTS
    assert_good_log_analysed(run, good, extra_events=BROKER_EVENTS)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-8-sig"])
def test_text_with_a_byte_order_mark(tmp_path, good, encoding):
    """`kubectl logs … > broker.log` in Windows PowerShell writes UTF-16 with a byte-order mark."""
    path = tmp_path / "windows.log"
    bom = {"utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    path.write_bytes(bom + BROKER.decode().encode(encoding))
    run = events_of(good, path)
    assert run.status == ExitStatus.OK and "binary" not in run.stderr
    assert run.accounting["lines"] == 2 * BROKER_LINES and run.accounting["matched"] == 2 * BROKER_EVENTS
    rows = [line for line in run.events if str(path) in line]
    assert [re.search(r'"line":(\d+)', row).group(1) for row in rows] == ["2", "3", "5", "6"]
    assert '"ts":"2024-03-05T10:00:00.000Z"' in rows[0]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_text_not_binary(tmp_path, good, encoding):
    """Some Windows tools write UTF-16 without a mark: every other byte is a NUL, which once read as "binary"."""
    path = tmp_path / "windows.log"
    path.write_bytes(BROKER.decode().encode(encoding))
    run = events_of(good, path)
    assert run.status == ExitStatus.OK and "binary" not in run.stderr
    assert run.accounting["lines"] == 2 * BROKER_LINES and run.accounting["matched"] == 2 * BROKER_EVENTS


@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
def test_crlf_and_lone_cr_line_ends(tmp_path, good, newline):
    path = tmp_path / "pasted.log"
    path.write_bytes(BROKER.replace(b"\n", newline))
    run = events_of(good, path)
    assert run.status == ExitStatus.OK
    assert run.accounting["lines"] == 2 * BROKER_LINES and run.accounting["matched"] == 2 * BROKER_EVENTS
    rows = [line for line in run.events if str(path) in line]
    assert [re.search(r'"line":(\d+)', row).group(1) for row in rows] == ["2", "3", "5", "6"]
    assert all("\\r" not in row for row in rows)


def test_a_10_mb_single_line(tmp_path, good):
    """A 10 MB line (a dumped assignment, a base64 blob) full of anchor words: bounded time, counted once,
    matched on its first 64 KB (said on stderr), the rest of the input analysed."""
    line = (b"[2024-03-05 10:00:02,000] INFO [GroupCoordinator 1]: Preparing to rebalance group big in state PreparingRebalance "
            b"with old generation 1 (reason: " + b"Member x in group y has failed " * 350_000 + b")\n")
    path = tmp_path / "huge.log"
    path.write_bytes(line + BROKER)
    run = events_of(good, path)
    assert run.status == ExitStatus.OK
    assert run.accounting["lines"] == 1 + 2 * BROKER_LINES and run.accounting["matched"] == 1 + 2 * BROKER_EVENTS
    assert f"{path}:1: line of {len(line) - 1:,} bytes cut to" in run.stderr
    huge = next(row for row in run.events if f'"file":"{path}","line":1,' in row)
    assert 65_536 < len(huge) < 200_000  # the event keeps the line's first 64 KB


@pytest.mark.parametrize("how", ["file", "gzip"])
def test_a_40_mb_line_without_a_newline_is_read_only_in_part(tmp_path, good, how):
    """A 40 MB blob with no newline at all (a dump cut off, a binary-ish payload in a text log): only its first
    32 MB are read, whether from a file or a stream, and it is still one matched line."""
    line = (b"[2024-03-05 10:00:02,000] INFO [GroupCoordinator 1]: Preparing to rebalance group big in state PreparingRebalance "
            b"with old generation 1 (reason: " + b"Member x in group y has failed " * 1_300_000)
    path = tmp_path / ("blob.log" if how == "file" else "blob.log.gz")
    path.write_bytes(BROKER + line if how == "file" else gzip.compress(BROKER + line, compresslevel=1))
    run = events_of(good, path)
    assert run.status == ExitStatus.OK
    assert run.accounting["lines"] == 2 * BROKER_LINES + 1 and run.accounting["matched"] == 2 * BROKER_EVENTS + 1
    assert f"{path}:{BROKER_LINES + 1}: line of more than 33,554,432 bytes cut to" in run.stderr


# --------------------------------------------------------------------------- damaged and odd files


def test_truncated_gzip_keeps_the_lines_before_the_damage(tmp_path, good):
    path = tmp_path / "server.log.1.gz"
    path.write_bytes(gzip.compress(BROKER * 200)[:-40])
    run = events_of(good, path)
    assert run.status == ExitStatus.OK
    assert f"{path}: compressed data is truncated or corrupt" in run.stderr
    assert run.accounting["lines"] > BROKER_LINES * 150
    assert run.accounting["matched"] > BROKER_EVENTS * 150


def test_gz_name_without_gzip_data(tmp_path, good):
    path = tmp_path / "server.log.2.gz"
    path.write_bytes(BROKER)
    run = events_of(good, path)
    assert run.status == ExitStatus.OK and f"{path}: named .gz but is not gzip data" in run.stderr
    assert_good_log_analysed(run, good)


def test_unreadable_file_and_dangling_symlink_in_a_directory(tmp_path, good):
    """A log directory copied with wrong permissions (a file, a subdirectory) and a symlink to a rotated-away file."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "broker-1.log").write_bytes(BROKER)
    secret = logs / "broker-2.log"
    secret.write_bytes(BROKER)
    secret.chmod(0)
    (logs / "current.log").symlink_to(logs / "server.log.2024-03-04")
    rotated = logs / "rotated"
    rotated.mkdir()
    (rotated / "server.log.1").write_bytes(BROKER)
    rotated.chmod(0)
    # root reads a mode-000 file: CI runs as root, so the command runs without the capabilities that allow it
    without_override = ("setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search", "--")
    run = doctor("events", str(logs), "--format", "ndjson", prefix=without_override if os.geteuid() == 0 else ())
    assert run.status == ExitStatus.OK
    assert f"{secret}: cannot read (Permission denied)" in run.stderr
    assert f"{logs / 'current.log'}: broken symbolic link" in run.stderr
    assert f"{rotated}: cannot read directory (Permission denied)" in run.stderr
    assert run.accounting["files"] == 1 and len(run.events) == BROKER_EVENTS


def test_a_log_tree_with_links_is_read_once_per_file_in_path_order(tmp_path, good):
    """An incident folder gathered by hand: nested pod folders, `current.log` linking to a file already
    there, a link to another folder (not followed, as `find` and `rg` do), the same file named twice."""
    logs = tmp_path / "logs"
    for folder in ("a", "a-c", "a/b"):
        (logs / folder).mkdir(parents=True)
    for name in ("a/x.log", "a-c/x.log", "a/b/x.log"):
        (logs / name).write_bytes(BROKER)
    (logs / "a" / "current.log").symlink_to(logs / "a" / "x.log")
    (logs / "elsewhere").symlink_to(good.parent, target_is_directory=True)
    run = doctor("events", str(logs), str(logs / "a" / "x.log"), "--format", "ndjson")
    assert run.status == ExitStatus.OK and "elsewhere" not in run.stdout + run.stderr
    files = list(dict.fromkeys(re.findall(r'"file":"([^"]+)"', run.stdout)))
    # a/… sorts before a-c/…; a/x.log is read once, by its first name (the link sorts before it)
    assert files == [str(logs / name) for name in ("a/b/x.log", "a/current.log", "a-c/x.log")]
    assert run.accounting["files"] == 3 and len(run.events) == 3 * BROKER_EVENTS


def test_fifo_named_on_the_command_line_is_read_as_a_stream(tmp_path, good):
    """`rebalance-doctor events <(kubectl logs broker-1)`: a pipe, read once, never sniffed twice."""
    fifo = tmp_path / "kubectl-logs"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_bytes, args=(BROKER,))
    writer.start()
    run = events_of(good, fifo)
    writer.join(timeout=10)
    assert run.status == ExitStatus.OK
    assert run.accounting == {"lines": 2 * BROKER_LINES, "files": 2, "matched": 2 * BROKER_EVENTS, "relevant_unmatched": 0,
                              "irrelevant": 4, "unreadable": 0}


def test_fifo_inside_a_directory_is_skipped_not_waited_on(tmp_path, good):
    os.mkfifo(good.parent / "nobody-writes-here")
    run = events_of(good.parent)
    assert run.status == ExitStatus.OK
    assert f"{good.parent / 'nobody-writes-here'}: not a regular file, skipped" in run.stderr
    assert_good_log_analysed(run, good)


# --------------------------------------------------------------------------- time


def test_file_without_timestamps(tmp_path, good):
    run = events_of(good, MINI / "client-b.log")
    assert run.status == ExitStatus.OK
    untimed = [row for row in run.events if "client-b.log" in row]
    assert untimed and all('"ts":null' in row for row in untimed)
    assert run.events[-len(untimed):] == untimed  # after every timed event, in file order


def test_out_of_order_lines_across_a_dst_change_and_several_zones(tmp_path, good):
    """A Paris client logging local time through the October DST change (02:00–03:00 happens twice), its
    lines out of order, beside a broker in UTC and a client printing +05:30 offsets: one UTC timeline."""
    paris = tmp_path / "paris" / "app.log"
    paris.parent.mkdir()
    prefix = " INFO 1 --- [C-1] o.a.k.c.c.internals.ConsumerCoordinator  : [Consumer clientId=c-1, groupId=orders] "
    paris.write_text(
        "2024-10-27 03:10:00.000" + prefix + "Successfully joined group with generation Generation{generationId=9, memberId='m-1', protocol='range'}\n"
        "2024-10-27 01:59:00.000" + prefix + "Request joining group due to: rebalance after DST\n"
        "2024-10-27 02:30:00.000" + prefix + "(Re-)joining group\n"
    )
    india = tmp_path / "india.log"
    india.write_text("2024-10-27T05:00:00.000+05:30" + prefix + "(Re-)joining group\n")
    run = events_of(good, paris, india, options=("--tz", "*paris*=Europe/Paris"))
    assert run.status == ExitStatus.OK
    stamps = re.findall(r'"ts":"([^"]+)","file":"([^"]+)"', "\n".join(run.events))
    assert [(ts, Path(file).name) for ts, file in stamps if "good" not in file] == [
        ("2024-10-26T23:30:00.000Z", "india.log"),
        ("2024-10-26T23:59:00.000Z", "app.log"),  # 01:59 CEST
        ("2024-10-27T00:30:00.000Z", "app.log"),  # 02:30, first (CEST) occurrence
        ("2024-10-27T02:10:00.000Z", "app.log"),  # 03:10 CET
    ]


def test_stack_traces_between_records(tmp_path, good):
    """An error record with its Java stack trace: the trace belongs to the record, the next record still parses."""
    trace = (
        "[2024-03-05 10:00:02,000] ERROR [GroupCoordinator 1]: Failed to write empty metadata for group orders: "
        "The coordinator is not available. (kafka.coordinator.group.GroupCoordinator)\n"
        "org.apache.kafka.common.errors.CoordinatorNotAvailableException: The coordinator is not available.\n"
        "\tat kafka.coordinator.group.GroupMetadataManager.storeGroup(GroupMetadataManager.scala:301)\n"
        "\tat kafka.coordinator.group.GroupCoordinator.onCompleteJoin(GroupCoordinator.scala:1302)\n"
        "Caused by: java.lang.IllegalStateException: no leader\n"
        "\t... 12 more\n"
    )
    lines = BROKER.decode().splitlines(keepends=True)
    path = tmp_path / "trace.log"
    path.write_text("".join(lines[:3]) + trace + "".join(lines[3:]))
    run = events_of(good, path)
    assert run.status == ExitStatus.OK
    counts = run.accounting
    assert counts["lines"] == 2 * BROKER_LINES + 6
    assert counts["matched"] == 2 * BROKER_EVENTS + 6  # the error record and its five trace lines
    rows = [row for row in run.events if str(path) in row]
    assert len(rows) == BROKER_EVENTS + 1
    assert "\\tat kafka.coordinator.group.GroupMetadataManager.storeGroup" in rows[2]
    assert '"line":11' in rows[3]  # "Stabilized group" after the trace keeps its own line number


def test_words_set_apart_by_runs_of_spaces_or_tabs(tmp_path, good):
    """A coordinator's lines copied out of a log console that set words apart by runs of spaces, and a consumer's
    line whose shipper put a tab between two words: each is read as if one space stood there, with its group, its
    generation and its reason, and its record keeps the line as written."""
    lines = [
        "[2022-08-12 18:32:36,194] INFO   [GroupCoordinator 2]: Preparing to rebalance group   orders in state "
        "PreparingRebalance with old   generation 501 (__consumer_offsets-20) (reason: Removing member   "
        "consumer-orders-1-74ea on LeaveGroup; client reason: not provided)   (kafka.coordinator.group.GroupCoordinator)",
        "[2022-08-12 18:32:36,195] INFO   [GroupCoordinator 2]: Group orders with generation   502 is now empty "
        "(__consumer_offsets-20)   (kafka.coordinator.group.GroupCoordinator)",
        "[2022-08-12 18:32:40,000] INFO [Consumer clientId=consumer-orders-2, groupId=orders] Successfully joined group "
        "with\tgeneration Generation{generationId=503, memberId='consumer-orders-2-9a1f', protocol='range'}",
    ]
    _, rows = written_and_read(good, tmp_path / "console.log", lines)

    assert [(row["kind"], row["group_id"], row["generation"]) for row in rows] == [
        ("rebalance_start", "orders", 501), ("group_state_change", "orders", 502), ("join_succeeded", "orders", 503)]
    assert rows[0]["cause"] == "member_leave" and rows[0]["member_id"] == "consumer-orders-1-74ea"
    assert [row["raw"] for row in rows] == lines


def test_a_procfile_runners_prefix_on_every_physical_line(tmp_path, good):
    """foreman and honcho put their own time of day and the process name before every physical line, the lines
    that continue a record included: brod's header-then-message records and a Java stack trace are read whole,
    and a line of another process ends a record."""
    lines = [
        "12:52:01 PM consumer.1 |  group coordinator (groupId=index.6,memberId=,generation=11,pid=#PID<0.263.0>):",
        "12:52:01 PM consumer.1 |  failed to join group",
        "12:52:02 PM consumer.1 |  group coordinator (groupId=index.6,memberId=,generation=11,pid=#PID<0.263.0>):",
        "12:52:02 PM consumer.1 |  re-joining group, reason::timeout",
        "9:52:03 PM worker.2   | [2024-03-05 10:00:03,000] ERROR [Consumer clientId=c-1, groupId=orders] Offset commit failed on "
        "partition orders-0 at offset 10: The coordinator is not aware of this member. "
        "(org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)",
        "9:52:03 PM worker.2   | org.apache.kafka.clients.consumer.CommitFailedException: Commit cannot be completed",
        "10:52:03 PM worker.2   | \tat org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.commitOffsetsSync(ConsumerCoordinator.java:1109)",
        "10:52:03 PM consumer.1 |  \tat not.this.Record(Elsewhere.java:1)",
    ]
    run, rows = written_and_read(good, tmp_path / "procfile.log", lines)

    assert [(row["kind"], row["line"], row["node"]) for row in rows] == [
        ("join_failed", 1, "consumer.1"), ("join_requested", 3, "consumer.1"), ("commit_failed", 5, "worker.2")]
    assert rows[1]["group_id"] == "index.6" and rows[1]["generation"] == 11 and rows[1]["raw"] == "\n".join(lines[2:4])
    assert rows[2]["raw"] == "\n".join(lines[4:7])  # the trace, whatever the width of the runner's time
    assert run.accounting["matched"] == BROKER_EVENTS + 7


def test_lines_a_terminal_wrapped_are_read_whole(tmp_path, good):
    """Lines pasted from a terminal that cut them at its width: a coordinator line cut mid-word, and a consumer line
    cut at a space, which the paste dropped. Each event is read from its two halves joined (its generation, its
    reason, its coordinator), its record keeps both lines as written, and both count as matched."""
    broker = ("[2024-03-05 10:00:01,000] INFO [GroupCoordinator 1]: Preparing to rebalance group orders in state PreparingRebalance "
              "with old generation 4 (__consumer_offsets-7) (reason: Adding new member consumer-orders-2-5d1e with group instance id "
              "None) (kafka.coordinator.group.GroupCoordinator)")
    client = ("[2024-03-05 10:00:02,000] INFO [Consumer clientId=consumer-orders-1, groupId=orders] Group coordinator kafka-1:9092 "
              "(id: 2147483646 rack: null) is unavailable or invalid due to cause: session timed out without receiving a heartbeat "
              "response. isDisconnected: false. Rediscovery will be attempted. (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)")
    cut = client.index(" coordinator kafka-1")
    halves = [broker[:167], broker[167:], client[:cut], client[cut + 1:]]
    assert broker[162:170] == "(reason:" and client[cut - 5:cut] == "Group"  # mid-word, and at a space
    path = tmp_path / "pasted.log"
    path.write_text("\n".join(halves) + "\n")

    run = events_of(good, path)

    assert run.status == ExitStatus.OK
    assert run.accounting["matched"] == BROKER_EVENTS + 4
    rows = [json.loads(row) for row in run.events if str(path) in row]
    assert [(row["kind"], row["line"]) for row in rows] == [("rebalance_start", 1), ("session_timeout", 3)]
    assert rows[0]["generation"] == 4 and rows[0]["cause"] == "member_join" and rows[0]["raw"] == "\n".join(halves[:2])
    assert rows[1]["coordinator"] == "kafka-1:9092 (id: 2147483646 rack: null)" and rows[1]["raw"] == "\n".join(halves[2:])


def test_file_growing_while_read(tmp_path, good):
    """A live server.log: lines appended while the scan runs are not half-read; the file is read as it was
    when opened (up to whole lines) and accounted exactly."""
    live = tmp_path / "live" / "server.log"
    live.parent.mkdir()
    live.write_bytes(BROKER * 20_000)  # 24 MB
    stop = threading.Event()

    def append() -> None:
        with live.open("ab") as handle:
            while not stop.is_set():
                handle.write(BROKER[:50])  # half lines too
                handle.flush()
                time.sleep(0.001)

    writer = threading.Thread(target=append)
    writer.start()
    try:
        run = events_of(good, live)
    finally:
        stop.set()
        writer.join()
    assert run.status == ExitStatus.OK
    counts = run.accounting
    assert counts["matched"] >= BROKER_EVENTS * 20_001
    assert counts["lines"] >= BROKER_LINES * 20_001


def test_ten_thousand_tiny_files(tmp_path):
    """A log collector's output: one directory per pod and container, a few lines each."""
    root = tmp_path / "pods"
    for pod in range(100):
        folder = root / f"pod-{pod}"
        folder.mkdir(parents=True)
        for container in range(100):
            (folder / f"c{container}.log").write_bytes(BROKER if (pod, container) == (42, 7) else b"started\n")
    run = doctor("grep", str(root), "-c")
    assert run.status == ExitStatus.OK
    assert run.accounting == {"lines": 9_999 + BROKER_LINES, "files": 10_000, "matched": BROKER_EVENTS, "relevant_unmatched": 0,
                              "irrelevant": 9_999 + 2, "unreadable": 0}
    assert f"{root / 'pod-42' / 'c7.log'}:{BROKER_EVENTS}" in run.stdout


def test_small_logs_read_together_stay_apart(tmp_path):
    """Small files are read several to a block: a pod's log that ends inside a stack trace, without a
    final newline, does not run into the next pod's log, whose first line is a stack frame; a
    java.util.logging message that starts a log does not take its time from the header line that
    ends the log before it. Every file reads as it reads alone."""
    trace = (
        "[2024-03-05 10:00:02,000] ERROR [GroupCoordinator 1]: Failed to write empty metadata for group orders: "
        "The coordinator is not available. (kafka.coordinator.group.GroupCoordinator)\n"
        "org.apache.kafka.common.errors.CoordinatorNotAvailableException: The coordinator is not available.\n"
        "\tat kafka.coordinator.group.GroupMetadataManager.storeGroup(GroupMetadataManager.scala:301)"
    )
    jul_header = "Mar 05, 2024 10:00:09 AM org.apache.kafka.clients.consumer.internals.ConsumerCoordinator onJoinComplete\n"
    jul_message = "INFO: [Consumer clientId=consumer-g-1, groupId=g] Discovered group coordinator localhost:9092 (id: 2147483646 rack: null)\n"
    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "pod-a.log").write_text(BROKER.decode() + trace)
    stack_frame = "\tat kafka.coordinator.group.GroupCoordinator.onCompleteJoin(GroupCoordinator.scala:1302)\n"
    (pods / "pod-b.log").write_text(stack_frame + BROKER.decode() + jul_header)
    (pods / "pod-c.log").write_text(jul_message)
    together = events_of(pods)
    alone = [events_of(path) for path in sorted(pods.iterdir())]
    assert together.status == ExitStatus.OK
    assert sorted(together.events) == sorted(row for run in alone for row in run.events)
    assert together.accounting["lines"] == sum(run.accounting["lines"] for run in alone) == (BROKER_LINES + 3) + (1 + BROKER_LINES + 1) + 1
    assert together.accounting["matched"] == sum(run.accounting["matched"] for run in alone)
    (pod_c,) = [row for row in together.events if "pod-c.log" in row]
    assert pod_c.startswith('{"ts":null') and "onCompleteJoin" not in together.stdout


# --------------------------------------------------------------------------- catalogs


def test_pathological_user_pattern_stops_with_its_file_and_line(tmp_path, good):
    """A site's own pattern whose alternatives overlap under a repetition passes the dialect check but
    backtracks without end on a long line: the run stops in bounded time, naming the entry."""
    catalog = tmp_path / "site"
    catalog.mkdir()
    (catalog / "site.yaml").write_text(
        "component: consumer\npatterns:\n  - id: site.slow\n    kind: diagnostic\n    since: 3.0.0\n"
        "    anchor: 'Slow notice '\n    regex: 'Slow notice (?:a|aa)+b'\n"
        "    examples:\n      - line: 'Slow notice aab'\n        fields: {}\n"
    )
    (tmp_path / "app.log").write_text("Slow notice " + "a" * 5_000 + "c\n")
    started = time.monotonic()
    run = doctor("events", str(good), str(tmp_path / "app.log"), "--patterns", str(catalog))
    assert time.monotonic() - started < 30
    assert run.status == ExitStatus.ERROR
    assert f"{catalog / 'site.yaml'}:3: the regex of site.slow ran over 1 s on one 5,013-character line" in run.stderr


def test_catalog_yaml_cannot_construct_objects(tmp_path, good):
    """User catalogs are data: a YAML tag that would build a Python object is refused with file:line."""
    catalog = tmp_path / "site"
    catalog.mkdir()
    (catalog / "evil.yaml").write_text("component: consumer\npatterns: !!python/object/apply:os.system ['touch pwned']\n")
    run = doctor("events", str(good), "--patterns", str(catalog), "--format", "ndjson")
    assert run.status == ExitStatus.ERROR and f"{catalog / 'evil.yaml'}:2" in run.stderr
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()


# --------------------------------------------------------------------------- interrupt


def test_ctrl_c_during_a_long_scan_exits_130_and_writes_nothing(tmp_path):
    """Ctrl-C in the middle of a scan large enough for the scan processes, while one is busy with a long
    span: status 130, promptly (the scan process is terminated, not waited for), and the report file it
    was to write does not exist (not even partially)."""
    big = tmp_path / "storm.log"
    big.write_bytes(BROKER * 300_000)  # 360 MB of storm: each 64 MB span keeps a scan process busy for many seconds
    out = tmp_path / "report.html"
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "rebalance_doctor", "report", str(big), "--format", "html", "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(2.5)
    assert proc.poll() is None, "the scan finished before it could be interrupted"
    interrupted_at = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == ExitStatus.INTERRUPTED
    assert time.monotonic() - interrupted_at < 5
    assert "Traceback" not in stderr and "interrupted" in stderr
    assert not out.exists() and not list(tmp_path.glob(".*partial"))
