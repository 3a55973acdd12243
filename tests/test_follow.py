"""`--follow`: watching an incident as it happens. Scenario: during a rebalance storm the on-call engineer runs
`rebalance-doctor grep --follow -k member_expired logs/` (or pipes `kubectl logs -f` into it) while the
brokers keep logging and logrotate rotates the files under it, by renaming them or by copying and
truncating them. Every line must show up once, soon after it is written, and Ctrl-C must end the run with
status 130 and nothing left running.

The logs are written by a separate writer process, as a broker writes them.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from support import ROOT, ExitStatus

WAIT = 60  # seconds a test waits for a line before it gives up (a shared machine can be slow)


def broker_line(text: str) -> str:
    """A broker log line written now."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()) + f",{int(time.time() * 1000) % 1000:03d}"
    return f"[{stamp}] INFO [GroupCoordinator 1]: {text} (kafka.coordinator.group.GroupCoordinator)\n"


def expiry(n: int) -> str:
    return f"Member consumer-orders-{n}-6f0c in group orders has failed, removing it from the group"


PREPARING = ("Preparing to rebalance group orders in state PreparingRebalance with old generation 7 (__consumer_offsets-44) "
             "(reason: removing member consumer-orders-1-6f0c on heartbeat expiration)")
STABILIZED = "Stabilized group orders generation 8 (__consumer_offsets-44) with 2 members"


class Follower:
    """`rebalance-doctor ARGS…` started in its own process, its stdout read line by line as it comes."""

    def __init__(self, *args: str, stdin: int | None = None):
        self.process = subprocess.Popen([sys.executable, "-m", "rebalance_doctor", *args], cwd=ROOT, stdin=stdin,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "TZ": "UTC"})
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def until(self, wanted, count: int = 1) -> list[str]:
        """The lines read until ``count`` of them satisfy ``wanted``."""
        seen, found = [], 0
        deadline = time.monotonic() + WAIT
        while found < count:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"waited {WAIT} s; read so far: {seen}") from None
            seen.append(line)
            found += bool(wanted(line))
        return seen

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C, as a terminal sends it; the exit status and stderr."""
        children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.process.pid)], capture_output=True, text=True).stdout.split()
        self.process.send_signal(signal.SIGINT)
        status = self.process.wait(timeout=WAIT)
        assert children == [], "following starts no process"
        return status, self.process.stderr.read()


WRITER = textwrap.dedent('''
    import os, shutil, sys, time
    log, marks, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    out = open(log, "a", buffering=1)

    def write(n):
        out.write(f"2024-10-24T10:00:{n % 60:02d}.000Z INFO app - MARK {n} processed a batch\\n")
        out.write(f"2024-10-24T10:00:{n % 60:02d}.500Z INFO app - nothing to see {n}\\n")

    n = 0
    for phase in ("start", "rename", "copytruncate"):
        for _ in range(marks):
            write(n); n += 1
            time.sleep(pause)
        time.sleep(1.0)  # the follower has read it all before the rotation
        if phase == "start":  # logrotate's default: rename; the app writes on to the old file until it reopens
            os.rename(log, log + ".1")
            write(n); n += 1
            time.sleep(1.0)
            out.close()
            out = open(log, "a", buffering=1)
        elif phase == "rename":  # copytruncate: the same file, emptied
            shutil.copy(log, log + ".2")
            os.truncate(log, 0)
            out.seek(0)
    out.close()
    print(n)
''')


def test_grep_follows_a_file_through_rename_and_copytruncate_rotations(tmp_path: Path):
    """Every line written, before, during and after each rotation, shows exactly once, in order."""
    log = tmp_path / "app.log"
    log.write_text("2024-10-24T09:59:59.000Z INFO app - MARK -1 already there\n")
    follower = Follower("grep", "--follow", "--raw", "MARK", str(log))
    assert follower.until(lambda line: "MARK -1" in line)
    writer = subprocess.run([sys.executable, "-c", WRITER, str(log), "5", "0.1"], capture_output=True, text=True, timeout=WAIT)
    written = int(writer.stdout)
    shown = follower.until(lambda line: f"MARK {written - 1} " in line)
    status, stderr = follower.interrupt()
    assert [line.split()[5] for line in shown] == [str(n) for n in range(written)]
    assert status == ExitStatus.INTERRUPTED and "interrupted" in stderr and "Traceback" not in stderr


def test_a_line_shows_soon_after_it_is_written(tmp_path: Path):
    """Line-buffered: each expiry shows while the writer is still writing (well before it ends), with its kind."""
    log = tmp_path / "server.log"
    log.write_text(broker_line(expiry(0)))
    follower = Follower("grep", "--follow", "-k", "member_expired", str(log))
    assert "member_expired orders" in follower.until(lambda line: "consumer-orders-0" in line)[-1]
    with log.open("a", buffering=1) as out:
        for n in range(1, 4):
            written = time.monotonic()
            out.write(broker_line(expiry(n)))
            follower.until(lambda line, n=n: f"consumer-orders-{n}-" in line)
            assert time.monotonic() - written < 5  # shown while the writer waits, not when it closes the file
    assert follower.interrupt()[0] == ExitStatus.INTERRUPTED


def test_context_lines_come_with_the_round_that_brings_them(tmp_path: Path):
    """`grep --follow -C 1`: the line before a selected line was read (and shown) in an earlier round, the line
    after it is written later; each shows once, in file order."""
    log = tmp_path / "app.log"
    log.write_text("".join(f"2024-10-24T10:00:0{n}.000Z INFO app - {text}\n" for n, text in enumerate(["warming up", "MARK zero", "ready"])))
    follower = Follower("grep", "--follow", "--raw", "-C", "1", "MARK", str(log))
    shown = follower.until(lambda line: "ready" in line)  # the first round, read before anything more is written
    with log.open("a", buffering=1) as out:
        out.write("2024-10-24T10:00:03.000Z INFO app - MARK one\n")
        shown += follower.until(lambda line: "MARK one" in line)
        out.write("2024-10-24T10:00:04.000Z INFO app - after it\n")
        out.write("2024-10-24T10:00:05.000Z INFO app - not shown\n")
        shown += follower.until(lambda line: "after it" in line)
    assert follower.interrupt()[0] == ExitStatus.INTERRUPTED
    assert [line.rsplit(" - ", 1)[1] for line in shown] == ["warming up", "MARK zero", "ready", "MARK one", "after it"]
    assert follower.lines.empty()


def test_stdin_is_followed_until_it_closes(tmp_path: Path):
    """`kubectl logs -f … | rebalance-doctor grep --follow`: lines show as the pipe brings them; when the pipe
    closes the run ends with grep's status."""
    follower = Follower("grep", "--follow", "-k", "member_expired", "-", stdin=subprocess.PIPE)
    follower.process.stdin.write(broker_line(expiry(1)))
    follower.process.stdin.flush()
    assert follower.until(lambda line: "consumer-orders-1-" in line)
    follower.process.stdin.close()
    assert follower.process.wait(timeout=WAIT) == ExitStatus.OK


def test_events_follow_as_ndjson(tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_text(broker_line(PREPARING))
    follower = Follower("events", "--follow", "--format", "ndjson", str(log))
    first = json.loads(follower.until(lambda line: line.startswith("{"))[-1])
    with log.open("a") as out:
        out.write(broker_line(STABILIZED))
    second = json.loads(follower.until(lambda line: line.startswith("{"))[-1])
    assert (first["kind"], first["line"]) == ("rebalance_start", 1)
    assert (second["kind"], second["generation"], second["line"]) == ("group_stabilized", 8, 2)
    assert follower.interrupt()[0] == ExitStatus.INTERRUPTED


def test_report_follow_shows_a_rebalance_open_until_it_ends(tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_text(broker_line(PREPARING))
    follower = Follower("report", "--follow", str(log))
    assert any("open" in line for line in follower.until(lambda line: "gen 7 →" in line))
    with log.open("a") as out:
        out.write(broker_line(STABILIZED))
    closed = follower.until(lambda line: "gen 7 → 8" in line and "open" not in line)
    assert "heartbeat_expiry" in closed[-1]
    assert follower.interrupt()[0] == ExitStatus.INTERRUPTED


def test_timeline_follow_redraws_as_rebalances_come(tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_text(broker_line(PREPARING) + broker_line(STABILIZED))
    follower = Follower("timeline", "--follow", str(log))
    assert follower.until(lambda line: "orders" in line)
    assert follower.interrupt()[0] == ExitStatus.INTERRUPTED


@pytest.mark.parametrize("args", [["grep", "--follow", "-c"], ["grep", "--follow", "--events", "store"],
                                  ["events", "--follow", "--engine", "spark"]])
def test_follow_refuses_what_it_cannot_do(tmp_path: Path, args: list[str]):
    log = tmp_path / "server.log"
    log.write_text(broker_line(PREPARING))
    done = subprocess.run([sys.executable, "-m", "rebalance_doctor", *args, *([] if "--events" in args else [str(log)])], cwd=ROOT,
                          capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == ExitStatus.ERROR and "--follow" in done.stderr
