"""Event lines: the event table as grep lines, an aligned terminal table, NDJSON, CSV and Parquet.

Log text is attacker-influenced (client ids, reasons). It always reaches the terminal as
:class:`rich.text.Text` (never markup) with control characters made visible.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

import polars as pl
from rich.console import Console
from rich.text import Text

from ..catalog.schema import BUCKETS, COLUMN_NAMES
from .files import write_atomically
from .text_tables import GAP, WRITE_CHUNK_ROWS, Palette, cell_width, fit_widths, fold_row, write_lines
from .words import CONTROL_SHOWN_AS, node_style, visible

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


def _iso_ts(frame: pl.DataFrame) -> pl.DataFrame:
    """The table with every time column (``ts`` of the event table) as :func:`iso_utc` text, computed column-wise."""
    times = [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.Datetime)]
    return frame.with_columns(_iso_text(pl.col(name).dt.convert_time_zone("UTC")).alias(name) for name in times)


def _iso_text(time: pl.Expr) -> pl.Expr:
    whole_millis = time.dt.microsecond() % 1000 == 0
    return pl.when(whole_millis).then(time.dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")).otherwise(time.dt.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"))


NDJSON_CHUNK_ROWS = 10_000


def write_ndjson(events: pl.DataFrame, stream: IO[str]) -> None:
    """One compact JSON object per event (serialised by polars: faster than json.dumps per row),
    a chunk of rows at a time so that the text of a large table is never held whole. The bytes go
    to the stream's binary buffer when it has one (faster than decoding them into text first)."""
    binary = getattr(stream, "buffer", None)
    if binary is not None:
        stream.flush()  # what was written as text comes first
    for chunk in _iso_ts(events).iter_slices(NDJSON_CHUNK_ROWS):
        if binary is not None:
            chunk.write_ndjson(binary)
        else:
            stream.write(chunk.write_ndjson())
    if binary is not None:
        binary.flush()


def write_csv(events: pl.DataFrame, stream: IO[str], header: bool = True) -> None:
    stream.write(_iso_ts(events).write_csv(include_header=header))
    stream.flush()


def write_file(events: pl.DataFrame, path: Path) -> None:
    """Write the table by suffix: .parquet, .csv, .ndjson/.jsonl (atomically: temp file, then rename)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        with write_atomically(path, binary=True) as stream:
            events.write_parquet(stream)
    elif suffix == ".csv":
        with write_atomically(path) as stream:
            stream.write(_iso_ts(events).write_csv())
    elif suffix in (".ndjson", ".jsonl", ".json"):
        with write_atomically(path) as stream:
            write_ndjson(events, stream)
    else:
        raise ValueError(f"{path}: unknown output format (use .parquet, .csv or .ndjson)")


_CONTROL_CHARS = [chr(c) for c in CONTROL_SHOWN_AS]
_CONTROL_SHOWN = list(CONTROL_SHOWN_AS.values())


def _visible_expr(expr: pl.Expr) -> pl.Expr:
    """:func:`visible`, column-wise."""
    return expr.fill_null("").str.replace_many(_CONTROL_CHARS, _CONTROL_SHOWN)


def _painted(events: pl.DataFrame, name: str, palette: Palette, style_of: Callable[[str], str]) -> pl.Expr:
    return pl.col(name).replace_strict(palette.by_value(events[name], style_of), default="")


def _epoch_label() -> pl.Expr:
    """``gen 7``, ``epoch 12`` or ``m-epoch 3``: the generation, else the group epoch, else the member epoch."""
    col = pl.col
    return (
        pl.when(col("generation").is_not_null()).then(pl.format("gen {}", col("generation")))
        .when(col("group_epoch").is_not_null()).then(pl.format("epoch {}", col("group_epoch")))
        .when(col("member_epoch").is_not_null()).then(pl.format("m-epoch {}", col("member_epoch")))
    )


def print_grep(lines: pl.DataFrame, console: Console, raw_only: bool, highlight: str | None = None, separated: bool = False) -> None:
    """One found line per line (see :mod:`..table.found_lines`), merged across nodes in time order: time, node,
    for an event its kind, group and generation, then the message without its envelope (``raw_only``: the
    original lines). ``highlight``: a regex whose matches are painted; context lines are dim, and with
    ``separated`` runs of lines are parted by ``--`` as grep parts them."""
    palette = Palette(console)
    dim = palette.codes("dim")
    text = _visible_expr(pl.col("raw") if raw_only else pl.col("message").str.split("\n").list.first())
    if highlight is not None and palette.codes("bold red")[0]:
        before, after = palette.codes("bold red")
        text = pl.when("selected").then(text.str.replace_all(highlight, f"{before}${{0}}{after}")).otherwise(text)
    text = pl.when("selected").then(text).otherwise(pl.lit(dim[0]) + text + pl.lit(dim[1]))
    if not raw_only:
        group = pl.when(pl.col("group_id").is_not_null()).then(_visible_expr(pl.col("group_id")))
        kind = _painted(lines, "kind", palette, lambda kind: KIND_STYLES.get(kind, "bold"))
        mark = pl.when(pl.col("kind").is_not_null()).then(pl.concat_str(kind, group, _epoch_label(), separator=" ", ignore_nulls=True))
        text = pl.concat_str(
            pl.lit(dim[0]) + pl.col("ts").fill_null("-".ljust(24)) + pl.lit(dim[1]),
            _painted(lines, "node", palette, node_style), mark, text, separator=" ", ignore_nulls=True)
        lines = _iso_ts(lines)
    new_run = (pl.col("file") != pl.col("file").shift(1)) | (pl.col("line") != pl.col("line").shift(1) + 1)
    shown = lines.select(text.alias("text"), new_run.fill_null(True).alias("apart"))
    texts = shown["text"].to_list()
    if separated and len(texts) > 1:
        apart = shown["apart"].to_list()
        texts = [piece for text, new_run in zip(texts, apart, strict=True) for piece in (("--", text) if new_run else (text,))][1:]
    write_lines(texts, console)


EVENT_FIELDS = [name for name in COLUMN_NAMES if name not in ("ts", "file", "line", "node", "raw")]  # the rest is in rg's own fields


def write_rg_json(lines: pl.DataFrame, stream: IO[str], regex: str | None) -> None:
    """ripgrep's JSON Lines (``rg --json``): per file a ``begin`` before its first line and an ``end`` with its
    count; per line a ``match`` (a selected line, with ``submatches``: byte offsets of ``regex``'s matches) or a
    ``context``; then a ``summary``. Lines come in time order across files, and each ``data`` adds the line's
    ``ts``, ``node`` and, for an event, ``event`` (the event table's other columns)."""
    data = _iso_ts(lines).select(
        pl.when("selected").then(pl.lit("match")).otherwise(pl.lit("context")).alias("type"),
        pl.struct(
            pl.struct(text="file").alias("path"),
            pl.struct(text=pl.col("raw") + "\n").alias("lines"),
            pl.col("line").alias("line_number"),
            "ts", "node",
            pl.when(pl.col("kind").is_not_null()).then(pl.struct(*EVENT_FIELDS)).alias("event"),
        ).alias("data"),
    )
    matches = _submatches(lines, regex)
    encoded = data.select(pl.struct("type", "data").struct.json_encode())[:, 0].to_list()
    counts: Counter = Counter()
    out = []
    for text, file, selected, found in zip(encoded, lines["file"].to_list(), lines["selected"].to_list(), matches, strict=True):
        if file not in counts:
            out.append(_compact({"type": "begin", "data": {"path": {"text": file}}}))
            counts[file] = 0
        counts[file] += selected
        out.append(text[:-2] + f',"submatches":{_compact(found)}}}}}')
    out += [_compact({"type": "end", "data": {"path": {"text": file}, "stats": {"matched_lines": count}}}) for file, count in counts.items()]
    out.append(_compact({"type": "summary", "data": {"stats": {"matched_lines": sum(counts.values()),
                                                               "searches_with_match": sum(1 for count in counts.values() if count)}}}))
    for start in range(0, len(out), WRITE_CHUNK_ROWS):
        stream.write("".join(f"{line}\n" for line in out[start : start + WRITE_CHUNK_ROWS]))
    stream.flush()


def _compact(value: object) -> str:
    """JSON as polars writes it: no spaces, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _submatches(lines: pl.DataFrame, regex: str | None) -> list[list[dict]]:
    """Per line, where ``regex`` matches it (as rg gives them: the text and its start and end in bytes); none
    for context lines, and none without a regex."""
    if regex is None:
        return [[] for _ in range(lines.height)]
    found = lines.select(pl.when("selected").then(pl.col("raw").str.extract_all(regex)))[:, 0].to_list()
    result = []
    for raw, texts in zip(lines["raw"].to_list(), found, strict=True):
        spans, at = [], 0
        for text in texts or ():
            start = raw.find(text, at)
            at = start + max(len(text), 1)
            begin = len(raw[:start].encode())
            spans.append({"match": {"text": text}, "start": begin, "end": begin + len(text.encode())})
        result.append(spans)
    return result


def selected_per_file(lines: pl.DataFrame) -> Counter:
    """How many selected lines each file has."""
    return Counter(lines.filter("selected")["file"].to_list()) if lines.height else Counter()


def print_files(counts: Counter, console: Console) -> None:
    """``grep -l``: the files with a selected line, like ``rg -l``."""
    write_lines([visible(str(file)) for file in sorted(counts, key=str) if counts[file]], console)


TABLE_HEADERS = ("time (UTC)", "node", "kind", "group", "gen/epoch", "member", "where", "detail")
_FOLDABLE = [header in ("group", "member", "where", "detail") for header in TABLE_HEADERS]
_DETAIL_FIELDS = ("reason", "error", "member_count", "partitions", "leader_id", "state", "coordinator")


def _tablecell_width(events: pl.DataFrame) -> pl.DataFrame:
    """The table's columns as visible one-line text, computed column-wise."""
    col = pl.col
    epoch = _epoch_label()
    detail = pl.when(col("prev_state").is_not_null() & col("state").is_not_null()).then(pl.format("{} → {}", col("prev_state"), col("state")))
    for name in _DETAIL_FIELDS:
        detail = detail.when(col(name).is_not_null()).then(pl.format(f"{name}={{}}", col(name).cast(pl.String)))
    cells = _iso_ts(events).select(
        col("ts").fill_null("-"),
        col("node"),
        col("kind"),
        col("group_id"),
        epoch,
        pl.coalesce("member_id", "client_id", "instance_id"),
        pl.format("{}:{}", col("file"), col("line")),
        detail,
    )
    return cells.select(_visible_expr(col(c)).str.replace_all(r"[\t\n]", " ").alias(h) for c, h in zip(cells.columns, TABLE_HEADERS, strict=True))


def print_table(events: pl.DataFrame, console: Console, header: bool = True) -> None:
    """Aligned columns (like ``kubectl get``), one event per row: greppable, and as fast on 50,000 events as on 50.
    On a terminal, cells wider than their share of the screen fold onto the following lines; into a
    pipe or file, rows keep their whole width (for ``less -S``, ``grep``, ``cut``)."""
    cells = _tablecell_width(events)
    palette = Palette(console)
    nodes = palette.by_value(cells["node"], node_style)
    kinds = palette.by_value(cells["kind"], lambda kind: KIND_STYLES.get(kind, ""))
    dim_before, dim_after = palette.codes("dim")
    painters: list[Callable[[str], str] | None] = [None] * len(TABLE_HEADERS)
    painters[1], painters[2] = (lambda text: nodes.get(text, text)), (lambda text: kinds.get(text, text))
    if dim_before:
        painters[-2] = lambda text: f"{dim_before}{text}{dim_after}"
    print_columns(cells, console, _FOLDABLE, painters, header)


def print_frame(frame: pl.DataFrame, console: Console) -> None:
    """Any table (a SQL query's result) as aligned columns, as :func:`print_table` prints events: times in
    ISO-8601 UTC, nulls empty, text columns folding on a terminal."""
    cells = _iso_ts(frame).select(_visible_expr(pl.col(name).cast(pl.String)).str.replace_all(r"[\t\n]", " ") for name in frame.columns)
    foldable = [dtype == pl.String for dtype in frame.schema.values()]
    print_columns(cells, console, foldable, [None] * frame.width)


def print_columns(cells: pl.DataFrame, console: Console, foldable: list[bool], painters: list[Callable[[str], str] | None],
                  header: bool = True) -> None:
    """Text columns (named by their headers) aligned, each painted by its painter (see :func:`print_table`)."""
    headers = cells.columns
    columns = [cells[h].to_list() for h in headers]
    lengths = [[cell_width(value) for value in column] for column in columns]
    natural = [max([cell_width(h), *sizes]) for h, sizes in zip(headers, lengths, strict=True)]
    widths = fit_widths(natural, console.width - len(GAP) * (len(natural) - 1) if console.is_terminal else None, foldable)
    palette = Palette(console)
    last = len(widths) - 1

    def padded(texts: list[str], sizes: list[int], index: int, paint: Callable[[str], str] | None) -> list[str]:
        """A column's cells painted and padded to its width, a column at a time (the last column is not
        padded: its spaces would be stripped)."""
        if paint is not None:
            texts = [paint(text) if text else text for text in texts]
        return texts if index == last else [text + " " * (widths[index] - size) for text, size in zip(texts, sizes, strict=True)]

    def line(cells: Iterable[str]) -> str:
        return GAP.join(cells).rstrip(" ")

    def one_line(texts: list[str], paints: list[Callable[[str], str] | None]) -> str:
        return line(padded([text], [cell_width(text)], index, paint)[0] for index, (text, paint) in enumerate(zip(texts, paints, strict=True)))

    if header:
        write_lines([one_line(list(headers), [lambda name: palette.paint(name, "bold")] * len(widths))], console)
    for start in range(0, len(columns[0]) if columns else 0, WRITE_CHUNK_ROWS):  # a chunk at a time: all rows at once raised peak memory
        stop = start + WRITE_CHUNK_ROWS
        rows = zip(*(padded(column[start:stop], sizes[start:stop], index, paint)
                     for index, (column, sizes, paint) in enumerate(zip(columns, lengths, painters, strict=True))), strict=True)
        if widths == natural:  # into a pipe or file, or on a terminal wide enough: no cell folds
            write_lines(list(map(line, rows)), console)
            continue
        lines = []
        for row_index, row in enumerate(rows, start):
            if all(sizes[row_index] <= width for sizes, width in zip(lengths, widths, strict=True)):
                lines.append(line(row))
                continue
            for pieces in fold_row([column[row_index] for column in columns], widths):
                lines.append(one_line(pieces, painters))
        write_lines(lines, console)


def print_counts(counts: Counter, console: Console) -> None:
    """``grep -c``: selected lines per file, like ``rg -c``."""
    for key, count in sorted(counts.items(), key=lambda kv: str(kv[0])):
        console.print(Text(f"{visible(str(key))}:{count}"))


def bucket_summary(buckets: Counter, files: int) -> Text:
    """The line accounting every command prints on stderr."""
    total = sum(buckets.values())
    parts = [f"{buckets.get(b, 0):,} {b.replace('_', ' ')}" for b in BUCKETS]
    return Text(f"{total:,} lines in {files:,} file{'s' * (files != 1)}: " + " · ".join(parts), style="dim")


def print_unmatched(unmatched: Iterable[tuple[str, int, str]], console: Console) -> None:
    before, after = Palette(console).codes("dim")
    write_lines([f"{before}{visible(file)}:{line}:{after} {visible(text)}" for file, line, text in unmatched], console)
