"""Printers for event streams: grep lines, a terminal table, NDJSON, CSV and Parquet.

Log text is attacker-influenced (client ids, reasons). It always reaches the terminal as
:class:`rich.text.Text` (never markup) with control characters made visible.
"""

from __future__ import annotations

import contextlib
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import polars as pl
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .schema import BUCKETS

# C0 controls as ^X, DEL as ^?, and the C1 controls (U+0080–U+009F: U+009B is an 8-bit CSI) as <U+009B>
_CONTROL = {c: f"^{chr(c + 64)}" for c in range(32) if c not in (9, 10)} | {127: "^?"} | {c: f"<U+{c:04X}>" for c in range(0x80, 0xA0)}
NODE_STYLES = ("cyan", "magenta", "green", "yellow", "blue", "bright_cyan", "bright_magenta", "bright_green")
KIND_STYLES = {
    "rebalance_start": "bold red",
    "join_requested": "red",
    "join_start": "red",
    "group_stabilized": "bold green",
    "join_succeeded": "green",
    "sync_succeeded": "green",
    "assignment_received": "green",
    "member_expired": "bold yellow",
    "session_timeout": "bold yellow",
    "poll_timeout": "bold yellow",
    "heartbeat_failed": "yellow",
    "member_left": "yellow",
    "leave_group": "yellow",
    "join_failed": "bold magenta",
    "sync_failed": "bold magenta",
    "rebalance_failed": "bold magenta",
    "coordinator_lost": "bold blue",
    "coordinator_discovered": "blue",
}


def visible(text: str | None) -> str:
    """Control characters (terminal escapes) shown as ``^[`` instead of acting on the terminal."""
    return (text or "").translate(_CONTROL)


def iso_utc(ts: datetime | None) -> str | None:
    """ISO-8601 in UTC with a ``Z``; milliseconds unless the log gave finer precision."""
    if ts is None:
        return None
    spec = "milliseconds" if ts.microsecond % 1000 == 0 else "microseconds"
    return ts.isoformat(timespec=spec).replace("+00:00", "Z")


def node_style(node: str | None) -> str:
    return NODE_STYLES[zlib.crc32((node or "").encode()) % len(NODE_STYLES)]


def _iso_ts(events: pl.DataFrame) -> pl.DataFrame:
    """The table with ``ts`` as :func:`iso_utc` text, computed column-wise."""
    ts = pl.col("ts")
    whole_millis = ts.dt.microsecond() % 1000 == 0
    text = pl.when(whole_millis).then(ts.dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")).otherwise(ts.dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"))
    return events.with_columns(text.alias("ts"))


NDJSON_CHUNK_ROWS = 10_000


def write_ndjson(events: pl.DataFrame, stream: IO[str]) -> None:
    """One compact JSON object per event (serialised by polars: 20× faster than json.dumps per row),
    a chunk of rows at a time so that the text of a large table is never held whole."""
    for chunk in _iso_ts(events).iter_slices(NDJSON_CHUNK_ROWS):
        stream.write(chunk.write_ndjson())


def write_csv(events: pl.DataFrame, stream: IO[str]) -> None:
    stream.write(_iso_ts(events).write_csv())


@contextlib.contextmanager
def write_atomically(path: Path) -> Iterator[IO[str]]:
    """A text stream to ``path`` that only appears there complete: a failed or interrupted write leaves nothing."""
    temp = path.with_name(f".{path.name}.partial")
    try:
        with temp.open("w", encoding="utf-8") as stream:
            yield stream
        temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)


def write_file(events: pl.DataFrame, path: Path) -> None:
    """Write the table by suffix: .parquet, .csv, .ndjson/.jsonl (atomically: temp file, then rename)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        temp = path.with_name(f".{path.name}.partial")
        try:
            events.write_parquet(temp)
            temp.replace(path)
        finally:
            temp.unlink(missing_ok=True)
    elif suffix == ".csv":
        with write_atomically(path) as stream:
            stream.write(_iso_ts(events).write_csv())
    elif suffix in (".ndjson", ".jsonl", ".json"):
        with write_atomically(path) as stream:
            write_ndjson(events, stream)
    else:
        raise ValueError(f"{path}: unknown output format (use .parquet, .csv or .ndjson)")


def _detail(row: dict[str, Any]) -> str:
    if row.get("prev_state") and row.get("state"):
        return f"{row['prev_state']} → {row['state']}"
    for name in ("reason", "error", "member_count", "partitions", "leader_id", "state", "coordinator"):
        if row.get(name) is not None:
            return f"{name}={row[name]}"
    return ""


def _epoch(row: dict[str, Any]) -> str:
    if row.get("generation") is not None:
        return f"gen {row['generation']}"
    if row.get("group_epoch") is not None:
        return f"epoch {row['group_epoch']}"
    if row.get("member_epoch") is not None:
        return f"m-epoch {row['member_epoch']}"
    return ""


def print_table(events: pl.DataFrame, console: Console) -> None:
    table = Table(show_lines=False, header_style="bold", pad_edge=False, expand=False)
    for header in ("time (UTC)", "node", "kind", "group", "gen/epoch", "member", "detail", "where"):
        table.add_column(header, overflow="fold")
    for row in events.iter_rows(named=True):
        table.add_row(
            Text(iso_utc(row["ts"]) or "-"),
            Text(visible(row["node"]), style=node_style(row["node"])),
            Text(row["kind"], style=KIND_STYLES.get(row["kind"], "")),
            Text(visible(row["group_id"])),
            Text(_epoch(row)),
            Text(visible(row["member_id"] or row["client_id"] or row["instance_id"])),
            Text(visible(_detail(row))),
            Text(f"{row['file']}:{row['line']}", style="dim"),
        )
    console.print(table)


def print_grep(events: pl.DataFrame, console: Console, raw_only: bool) -> None:
    """One event per line, merged across nodes in time order: time, node, kind and the message without its
    envelope (``--raw``: the original log records instead)."""
    for row in events.iter_rows(named=True):
        if raw_only:
            console.print(Text(visible(row["raw"])), soft_wrap=True)
            continue
        console.print(
            Text.assemble(
                (iso_utc(row["ts"]) or "-".ljust(24), "dim"),
                " ",
                (visible(row["node"]), node_style(row["node"])),
                " ",
                (row["kind"], KIND_STYLES.get(row["kind"], "bold")),
                " ",
                visible((row["message"] or "").split("\n", 1)[0]),
            ),
            soft_wrap=True,
        )


def print_counts(events: pl.DataFrame, console: Console) -> None:
    """``grep -c``: matching events per file, like ``rg -c``."""
    counts = Counter(events["file"].to_list()) if events.height else Counter()
    for key, count in sorted(counts.items(), key=lambda kv: str(kv[0])):
        console.print(Text(f"{visible(str(key))}:{count}"))


def bucket_summary(buckets: Counter, files: int) -> Text:
    """The line accounting every command prints on stderr."""
    total = sum(buckets.values())
    parts = [f"{buckets.get(b, 0):,} {b.replace('_', ' ')}" for b in BUCKETS]
    return Text(f"{total:,} lines in {files:,} file{'s' * (files != 1)}: " + " · ".join(parts), style="dim")


def print_unmatched(unmatched: Iterable[tuple[str, int, str]], console: Console) -> None:
    for file, line, text in unmatched:
        console.print(Text.assemble((f"{file}:{line}:", "dim"), " ", visible(text)), soft_wrap=True)
