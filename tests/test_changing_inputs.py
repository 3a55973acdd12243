"""Logs that change while they are read are reported, not half-read in silence.

Scenario: an engineer points the tool at a live broker's log directory; logrotate renames server.log and starts
a new one (or copytruncate cuts it) while the large file is being scanned in spans by several processes. The
analysis must not mix the old file's first half with the new file's bytes, nor stop at a cut without a word:
the file gets a problem that says what happened, and the lines read before it are kept.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rebalance_doctor.catalog import load_catalog
from rebalance_doctor.engines import parallel
from rebalance_doctor.reading import blocks
from rebalance_doctor.reading.sources import expand

from support import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import generate  # bench/generate.py: the benchmark corpus generator

ROTATE = "import os, sys; os.rename(sys.argv[1], sys.argv[1] + '.1'); open(sys.argv[1], 'w').write('fresh start\\n' * 1000)"
TRUNCATE = "import os, sys; os.truncate(sys.argv[1], os.path.getsize(sys.argv[1]) // 3)"


@pytest.fixture
def large_log(tmp_path: Path, monkeypatch) -> Path:
    """A 3 MB broker log scanned in 100 KB spans by two scan processes."""
    generate.generate(tmp_path, size=3_000_000, files=1, rebalance_ratio=0.01, groups=5, seed=9)
    monkeypatch.setattr(blocks, "SPAN_SIZE", 100_000)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "SCAN_PROCESSES", 2)
    return next(tmp_path.rglob("*.log"))


def _scan_after(log: Path, writer: str):
    """List the log, let a writer process change it, then scan what was listed (as the tool does, in spans)."""
    sources = expand([str(log)]).sources
    subprocess.run([sys.executable, "-c", writer, str(log)], check=True)
    scanner = parallel.LocalScanner(load_catalog())
    events = []
    scans = scanner.scan(sources, events.append)
    return scans[0], sum(len(e) for e in events)


def test_a_log_rotated_while_it_is_read_is_reported(large_log: Path):
    scan, events = _scan_after(large_log, ROTATE)
    assert scan.problem and "replaced while being read" in scan.problem
    assert events == 0  # nothing of the new file is taken for the old one


def test_a_log_truncated_while_it_is_read_is_reported_and_its_first_lines_kept(large_log: Path):
    lines = large_log.read_text().count("\n")
    scan, events = _scan_after(large_log, TRUNCATE)
    assert scan.problem and "truncated while being read" in scan.problem
    assert 0 < scan.lines_read < lines and events > 0
