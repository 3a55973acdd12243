"""Piped the way people pipe it. Scenario: `rebalance-doctor events logs/ --format ndjson | head -1` or
`grep --json | head -1` during an incident: the reader stops after one line. The command must end quietly
(no traceback, status 0, as grep and rg do), and so must a run whose stdout was closed (`>&-`).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from support import ROOT, ExitStatus

COMMANDS = [["events", "sample_logs/", "--format", "ndjson"], ["grep", "sample_logs/", "--json"], ["grep", "sample_logs/"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_a_reader_that_stops_after_one_line_ends_the_run_quietly(command: list[str]):
    process = subprocess.Popen([sys.executable, "-m", "rebalance_doctor", *command], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()  # what `head -1` does after its line
    stderr = process.stderr.read().decode()
    status = process.wait(timeout=120)

    assert first.strip()
    assert status == ExitStatus.OK, stderr
    assert "Traceback" not in stderr and "Error" not in stderr


def test_a_closed_stdout_ends_the_run_quietly():
    done = subprocess.run(["bash", "-c", f"{sys.executable} -m rebalance_doctor report sample_logs/heartbeat-expiry/ >&-"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)

    assert done.returncode == ExitStatus.OK, done.stderr
    assert "Traceback" not in done.stderr and "Error" not in done.stderr
