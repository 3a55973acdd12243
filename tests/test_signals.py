"""Stopped from outside. Scenario: a CI runner cancels a job (SIGTERM) or the terminal closes (SIGHUP) while
`report` scans a large log with its scan processes. It stops as Ctrl-C does: status 130, no scan process
left running (a piped or CI run would otherwise never end), no partial output left behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import ROOT, ExitStatus

sys.path.insert(0, str(ROOT / "bench"))
import generate


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc: field 4 of each stat, after the command's parentheses)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended while we looked
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_ends_the_scan_processes_and_leaves_no_partial_file(tmp_path: Path, stop: int):
    generate.generate(tmp_path / "logs", size=90_000_000, files=2, rebalance_ratio=0.05, groups=3, seed=4)
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "rebalance_doctor", "report", str(tmp_path / "logs"), "-o", str(out / "r.html")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    deadline = time.monotonic() + 60
    while not children(process.pid) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    spawned = children(process.pid)
    assert spawned, "the scan processes never started"
    time.sleep(0.5)
    process.send_signal(stop)
    status = process.wait(timeout=60)

    assert status == ExitStatus.INTERRUPTED, process.stderr.read().decode()[-2000:]
    time.sleep(0.5)
    alive = [pid for pid in spawned if os.path.exists(f"/proc/{pid}") and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]]
    assert alive == []
    assert list(out.iterdir()) == []
