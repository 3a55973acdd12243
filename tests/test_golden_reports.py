"""What a user reads, pinned: every bundled incident's terminal report and post-mortem Markdown, byte for
byte, as `rebalance-doctor report sample_logs/NAME/` prints them into a pipe from the repository's root.

A change to any analyzer or renderer that alters what an on-call engineer reads shows up here as a diff
to review. After an intended change: `UPDATE_GOLDEN=1 make test` rewrites the files, and the diff goes
into the commit.
"""

from __future__ import annotations

import os

import pytest

from support import GOLDEN, INCIDENTS, ExitStatus

FORMATS = {"terminal": "txt", "markdown": "md"}


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("name", INCIDENTS)
def test_the_report_of_each_bundled_incident_reads_as_pinned(cli, name: str, format: str):
    result = cli("report", f"sample_logs/{name}/", "--format", format)

    assert result.exit_code == ExitStatus.OK, result.stderr
    golden = GOLDEN / f"{name}.{FORMATS[format]}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(result.stdout)
    assert result.stdout == golden.read_text()
