"""What the tests share that is not a fixture (usable in ``parametrize`` at import time): where things
are, and the command line run the way a user runs it, at a pinned width."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from rebalance_doctor.cli import app
from rebalance_doctor.cli.console import ExitStatus

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
FIXTURES = ROOT / "tests" / "fixtures"
GOLDEN = ROOT / "tests" / "golden"
INCIDENTS = sorted(path.name for path in SAMPLES.iterdir() if path.is_dir())
WIDTH = 200  # wide enough that tables never fold, as into a pipe
TRACE_LINES = 90  # the stack trace of each record in the traced_log fixture: a record is its matched line and these

__all__ = ["FIXTURES", "GOLDEN", "INCIDENTS", "ROOT", "SAMPLES", "WIDTH", "ExitStatus", "run_cli"]


def run_cli(*args: str, stdin: str | bytes | None = None, width: int = WIDTH, colour: bool = False,
            env: dict[str, str] | None = None) -> Result:
    """``rebalance-doctor ARGS…`` in this process, with ``COLUMNS`` pinned and colour off (``NO_COLOR``)
    unless asked for; stdout and stderr are kept apart."""
    environment = {"COLUMNS": str(width), "NO_COLOR": None if colour else "1", **(env or {})}
    return CliRunner().invoke(app, list(args), input=stdin, env=environment)


def matched_lines(rg_json: str) -> list[dict]:
    """`grep --json` output (ripgrep's JSON Lines) as one flat record per selected line: file, line, ts, node,
    raw and the event's columns (for a line that is an event)."""
    import json

    records = []
    for message in map(json.loads, filter(str.strip, rg_json.splitlines())):
        if message["type"] == "match":
            data = message["data"]
            records.append({"file": data["path"]["text"], "line": data["line_number"], "ts": data["ts"], "node": data["node"],
                            "raw": data["lines"]["text"].removesuffix("\n"), **(data["event"] or {})})
    return records


def text_lines(count: int, marked_every: int) -> list[str]:
    """Application lines 10 ms apart, every ``marked_every``-th of them naming MARK; about 100 bytes each."""
    return [f"2024-03-12T{10 + n // 360_000:02d}:{n // 6000 % 60:02d}:{n // 100 % 60:02d}.{n % 100 * 10:03d}Z  INFO 1 --- [app] [worker-{n % 7}] c.a.Worker : "
            f"{'MARK ' if n % marked_every == 0 else ''}processed batch {n} of orders from partition {n % 12} in {n % 97} ms" for n in range(count)]


def expected_context(lines: list[str], pattern: str, around: int) -> list[str]:
    """grep -C: the selected lines and ``around`` lines on each side, runs parted by `--`."""
    chosen = [i for i, line in enumerate(lines) if pattern in line]
    shown = sorted({j for i in chosen for j in range(max(i - around, 0), min(i + around + 1, len(lines)))})
    out = []
    for previous, index in zip([None, *shown], shown, strict=False):
        if previous is not None and index != previous + 1:
            out.append("--")
        out.append(lines[index])
    return out
