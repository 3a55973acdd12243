"""The envelope of log lines (time, level, logger, thread, node), read a column at a time.

The layouts and prefixes it applies are data (``patterns/layouts.yaml``); this module only knows how to
apply them to a column of lines (each regex once over all the lines it may match, in polars) and how to
read the timestamp formats they name. Only two kinds of line cost Python of their own: a JSON record
(decoded by ``json``), and a timestamp in a strptime format (java.util.logging, Kibana exports), read
once per distinct text.
"""

from __future__ import annotations

import fnmatch
import json
import json.scanner
import os
import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..catalog import Catalog, any_of, compile_portable
from ..catalog.schema import FIELD_BY_GROUP
from .sources import Source

if TYPE_CHECKING:
    import polars as pl

# between the date and the time: T or a space, or " | " in layouts that put it between every part
_DATE_TIME_SEPARATOR = r"(?:[T ]| ?\| ?)"
_ISO = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)" + _DATE_TIME_SEPARATOR + r"(\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?\s?(Z|[+-]\d\d:?\d\d)?"
)
_DASHES = str.maketrans({"–": "-", "—": "-"})
# JSON-lines logs: which keys hold what (logstash-logback-encoder, ECS, Bunyan, pino, …)
_JSON_KEYS = {
    "msg": ("message", "msg", "log", "@message"),
    "ts": ("@timestamp", "timestamp", "time", "ts", "@t", "datetime"),
    "level": ("level", "log.level", "severity", "loglevel"),
    "logger": ("logger_name", "logger", "log.logger", "loggerName", "name"),
    "thread": ("thread_name", "thread", "process.thread.name", "threadName"),
    "node": ("host", "hostname", "pod", "kubernetes.pod_name", "node"),
}


def parse_zone(name: str | None) -> tzinfo:
    """``UTC``, ``+02:00``, ``-0500`` or an IANA name such as ``Europe/Paris``."""
    if not name or name.upper() in ("UTC", "Z"):
        return UTC
    offset = re.fullmatch(r"([+-])(\d\d):?(\d\d)", name)
    if offset:
        sign = 1 if offset.group(1) == "+" else -1
        return timezone(sign * timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3))))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r} (use UTC, +02:00 or an IANA name like Europe/Paris)") from None


def _names(source: Source, pattern: str) -> bool:
    """A ``--tz GLOB=ZONE`` glob names a file by its path as shown, its node, or its file name."""
    return any(fnmatch.fnmatch(name, pattern) for name in (source.display, source.node, os.path.basename(source.display)))


def zone_for(source: Source, tz_specs: tuple[str, ...]) -> tzinfo:
    """The time zone for naive timestamps of one file: ``ZONE`` for all, or ``GLOB=ZONE`` per file."""
    zone = parse_zone(None)
    for spec in tz_specs:
        pattern, sep, name = spec.rpartition("=")
        if not sep:
            zone = parse_zone(spec)
        elif _names(source, pattern):
            zone = parse_zone(name)
    return zone


def zones_for(sources: list[Source], tz_specs: tuple[str, ...]) -> tuple[dict[int, tzinfo], frozenset[str]]:
    """Each source's zone (by its order), and the files whose zone the user gave. A ``GLOB=ZONE`` that names
    no input is a mistake worth stopping for: the file it meant would silently be read as UTC."""
    for spec in tz_specs:
        pattern, sep, _ = spec.rpartition("=")
        if sep and sources and not any(_names(source, pattern) for source in sources):
            raise ValueError(f"--tz {spec!r}: {pattern!r} names no input file (a path as shown, a node or a file name; globs like *app-2*)")
    told = frozenset(s.display for s in sources if any(not spec.rpartition("=")[1] or _names(s, spec.rpartition("=")[0]) for spec in tz_specs))
    return {source.order: zone_for(source, tz_specs) for source in sources}, told


EARLIEST_YEAR, LATEST_YEAR = 1900, 2200  # outside: a corrupt or placeholder stamp (0001-01-01, 9999-12-31), read as none


def parse_timestamp(text: str, fmt: str | None, zone: tzinfo) -> datetime | None:
    """Parse a timestamp in one of the layout formats; naive times are read in ``zone``. A year no log was
    written in gives no time (the line keeps its place in its file), instead of arithmetic that overflows."""
    stamp = _parse_timestamp(text, fmt, zone)
    return stamp if stamp is not None and EARLIEST_YEAR <= stamp.year <= LATEST_YEAR else None


ORDINAL = "ordinal-day "  # a ts_format prefix: the day of month carries st/nd/rd/th
_ORDINAL_DAY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b")


def _parse_timestamp(text: str, fmt: str | None, zone: tzinfo) -> datetime | None:
    text = text.strip()
    if not text.isascii():
        text = text.translate(_DASHES)
    try:
        if fmt == "epoch":
            return datetime.fromtimestamp(float(text), tz=UTC)
        if fmt in (None, "iso"):
            m = _ISO.match(text)
            if not m:
                return None
            year, month, day, hour, minute, second, frac, offset = m.groups()
            if offset:
                zone = UTC if offset == "Z" else parse_zone(offset)
            micros = int(frac[:6].ljust(6, "0")) if frac else 0
            stamp = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, zone)
            return stamp if zone is UTC else stamp.astimezone(UTC)
        if fmt.startswith(ORDINAL):  # "May 29th 2018": the day's English suffix, which strptime has no directive for
            text, fmt = _ORDINAL_DAY.sub(r"\1", text, count=1), fmt.removeprefix(ORDINAL)
        return datetime.strptime(text, fmt).replace(tzinfo=zone).astimezone(UTC)
    except (ValueError, OverflowError, OSError):
        return None



_WHOLE = "rdWhole"  # a group around a whole prefix: where the rest of the line starts
_MATCHED = "rdMatched"  # an empty group first in a regex: not null exactly where it matched


def matched_regex(regex: str, whole: bool = False) -> str:
    """A catalog regex whose extracted groups say whether it matched (and, ``whole``, what it matched)."""
    body = f"(?<{_WHOLE}>(?:{regex.removeprefix('^')}))" if whole else f"(?:{regex})"
    return f"{'^' if whole else ''}(?<{_MATCHED}>){body}"


def _zone_name(zone: tzinfo) -> str:
    return getattr(zone, "key", None) or str(zone)


def envelopes(lines: pl.DataFrame, catalog: Catalog, zones: dict[int, tzinfo]) -> pl.DataFrame:
    """The envelope of each line: ``lines`` has ``text`` (the record's first line), ``previous`` (the line
    before it, or null) and ``reader`` (a key of ``zones``: naive times are read in that zone). The result,
    row for row: ts (UTC microseconds), level, logger, thread, node, message, and the fields that JSON keys
    hold (``json_fields``, by column name).

    Outer prefixes (kubectl, docker-compose, quoting) are stripped first, repeatedly; a JSON record gives
    its message and envelope; then the first layout in catalog order that matches the rest gives the
    envelope and the message. A line with no time of its own takes it from a header line before it
    (java.util.logging)."""
    import polars as pl

    zone_by_name = {_zone_name(zone): zone for zone in zones.values()}
    frame = lines.select(
        pl.col("text"),
        pl.col("previous"),
        pl.col("reader").replace_strict({key: _zone_name(zone) for key, zone in zones.items()}, return_dtype=pl.String).alias("zone"),
    )
    outer = _strip_outer(frame["text"], frame["zone"], catalog, zone_by_name)
    json_parts = _json_records(outer["rest"], frame["zone"], catalog, zone_by_name)
    rest = json_parts["message"].fill_null(outer["rest"])
    layout = _apply_layouts(rest, frame["zone"], catalog, zone_by_name, header=False)
    message = layout["msg"].fill_null(rest)
    embedded = _embedded_records(message, catalog)
    envelope = pl.DataFrame({
        "ts": layout["ts"].fill_null(json_parts["ts"]).fill_null(outer["ts"]),
        "level": layout["level"].fill_null(json_parts["level"]),
        "logger": layout["logger"].fill_null(json_parts["logger"]),
        "thread": layout["thread"].fill_null(json_parts["thread"]),
        "node": outer["node"].fill_null(json_parts["node"]).fill_null(layout["node"]),
        "message": embedded["message"].fill_null(message),
    })
    for name in _json_field_names(catalog):
        envelope = envelope.with_columns(json_parts[name].fill_null(embedded[name]))
    return _headers(envelope, frame, catalog, zone_by_name)


def messages_of(lines: list[str], catalog: Catalog) -> list[str]:
    """The message of each line read on its own (its envelope stripped, as a scan strips it)."""
    import polars as pl

    frame = pl.DataFrame({"reader": [0] * len(lines), "text": lines, "previous": [None] * len(lines)},
                         schema={"reader": pl.Int64, "text": pl.String, "previous": pl.String})
    return envelopes(frame, catalog, {0: UTC})["message"].to_list()


def _nonempty(column: pl.Expr) -> pl.Expr:
    import polars as pl

    return pl.when(column != "").then(column)


def _strip_outer(texts: pl.Series, zones: pl.Series, catalog: Catalog, zone_by_name: dict[str, tzinfo]) -> pl.DataFrame:
    """rest (the line without its outer prefixes), node (the first prefix that names one) and ts (the first
    prefix's time, kubectl --timestamps). Up to four prefixes, one in front of another, each the first in
    catalog order that matches a non-empty start."""
    import polars as pl

    frame = pl.DataFrame({"rest": texts, "zone": zones}).with_columns(
        node=pl.lit(None, pl.String), ts_text=pl.lit(None, pl.String), active=pl.lit(False)
    )
    if catalog.outer_prefixes:
        union = f"^(?:{any_of(p.regex for p in catalog.outer_prefixes)})"
        frame = frame.with_columns(active=pl.col("rest").str.contains(union))
    rounds = 4
    while rounds and frame["active"].any():
        rounds -= 1
        taken = none = pl.lit(None, pl.String)
        node = ts = none
        for prefix in catalog.outer_prefixes:
            groups = pl.col("rest").str.extract_groups(matched_regex(prefix.regex, whole=True))
            whole = pl.when(pl.col("active") & taken.is_null()).then(_nonempty(groups.struct.field(_WHOLE)))
            names = set(compile_portable(prefix.regex).groupindex)
            takes = taken.is_null() & whole.is_not_null()
            node = pl.when(takes).then(groups.struct.field("node") if "node" in names else none).otherwise(node)
            ts = pl.when(takes).then(groups.struct.field("ts") if "ts" in names else none).otherwise(ts)
            taken = pl.coalesce(taken, whole)
        frame = frame.with_columns(taken.alias("taken"), node.alias("found_node"), ts.alias("found_ts")).with_columns(
            rest=pl.when(pl.col("taken").is_not_null()).then(pl.col("rest").str.slice(pl.col("taken").str.len_chars())).otherwise("rest"),
            node=pl.coalesce("node", _nonempty(pl.col("found_node"))),
            ts_text=pl.coalesce("ts_text", _nonempty(pl.col("found_ts"))),
            active=pl.col("taken").is_not_null(),
        )
    ts = _parse_column(frame["ts_text"], "iso", frame["zone"], zone_by_name)
    return frame.select("rest", "node").with_columns(ts=ts)


def _json_field_names(catalog: Catalog) -> list[str]:
    return list(dict.fromkeys(FIELD_BY_GROUP[entry.field] for entry in catalog.json_fields))


def _json_records(texts: pl.Series, zones: pl.Series, catalog: Catalog, zone_by_name: dict[str, tzinfo]) -> pl.DataFrame:
    """Per line that is a JSON record (starts with '{'): its message, envelope and fields (null elsewhere)."""

    rows = texts.str.starts_with("{").fill_null(False).arg_true()
    layers = _json_layers(texts.gather(rows).to_list(), catalog)
    record_zones = zones.gather(rows)
    found = _innermost(layers, ["msg", "level", "logger", "thread"]).rename({"msg": "message"}).with_columns(
        _outermost(layers, ["node", *_json_field_names(catalog)]),
        ts=_innermost_series([_json_time(layer["ts"], record_zones, zone_by_name) for layer in layers]),
    )
    return _scattered(found, rows, len(texts))


def _json_time(texts: pl.Series, zones: pl.Series, zone_by_name: dict[str, tzinfo]) -> pl.Series:
    """A JSON record's time: ISO-8601, or seconds since the epoch."""
    import polars as pl

    epoch = texts.str.replace(".", "", literal=True).str.contains(r"^\d+$").fill_null(False)
    return _parse_column(texts, "iso", zones, zone_by_name).fill_null(
        _parse_column(pl.select(pl.when(epoch).then(texts)).to_series(), "epoch", zones, zone_by_name)
    )


def _json_layers(texts: list[str | None], catalog: Catalog) -> list[pl.DataFrame]:
    """Each text decoded as a JSON record, and the message of each that is itself a JSON record (a client's
    JSON log forwarded as a string by another JSON logger), up to twice: one frame per layer, outermost
    first, with the keys of :data:`_JSON_KEYS` and the catalog's JSON fields (null where a text is no
    record)."""
    import polars as pl

    layers = []
    while True:
        columns = _decoded_json(texts, catalog)
        layers.append(pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String)))
        texts = [message if message is not None and message.startswith("{") else None for message in columns["msg"]]
        if len(layers) == 3 or not any(texts):
            return layers


_JSON_SCANNER = json.scanner.make_scanner(json.JSONDecoder())
_MESSAGE_KEYS = frozenset(_JSON_KEYS["msg"])
_JSON_WHITESPACE = " \t\n\r"


def _decoded_json(texts: list[str | None], catalog: Catalog) -> dict[str, list[str | None]]:
    """One layer of :func:`_json_layers`, in one loop (no Python call per record). A JSON field takes the first
    of its keys that holds text or a number; a boolean there leaves it for the catalog's next entry."""
    field_keys = [(FIELD_BY_GROUP[entry.field], entry.keys) for entry in catalog.json_fields]
    field_key_set = {key for _, keys in field_keys for key in keys}
    columns: dict[str, list[str | None]] = {name: [None] * len(texts) for name in (*_JSON_KEYS, *_json_field_names(catalog))}
    envelope_keys = [(columns[name], keys) for name, keys in _JSON_KEYS.items()]
    scan = _JSON_SCANNER  # json.loads, less the Python calls around its C scanner (each text starts with '{')
    for row, text in enumerate(texts):
        if text is None:
            continue
        try:
            record, end = scan(text, 0)
        except (ValueError, StopIteration):
            continue
        if type(record) is not dict or text[end:].strip(_JSON_WHITESPACE):
            continue
        if record.keys().isdisjoint(_MESSAGE_KEYS):  # a wrapper ({"applicationLog": {…}}): the record is the object inside
            record = next((v for v in record.values() if type(v) is dict and not v.keys().isdisjoint(_MESSAGE_KEYS)), record)
        for name, keys in field_keys if not record.keys().isdisjoint(field_key_set) else ():
            column = columns[name]
            if column[row] is not None:
                continue
            for key in keys:
                value = record.get(key)
                kind = type(value)
                if (kind is str and value) or kind is int:
                    column[row] = str(value)
                    break
                if kind is bool:
                    break
        for column, keys in envelope_keys:
            for key in keys:
                value = record.get(key)
                if value is None and "." in key:
                    head, _, tail = key.partition(".")
                    nested = record.get(head)
                    value = nested.get(tail) if type(nested) is dict else None
                kind = type(value)
                if kind is str or kind is int or kind is float:
                    column[row] = str(value)
                    break
    return columns


def _innermost_series(columns: list[pl.Series]) -> pl.Series:
    found = columns[-1]
    for column in reversed(columns[:-1]):
        found = found.fill_null(column)
    return found


def _innermost(layers: list[pl.DataFrame], names: list[str]) -> pl.DataFrame:
    """Columns where an inner record's value wins (its message and envelope)."""
    import polars as pl

    return pl.DataFrame([_innermost_series([layer[name] for layer in layers]) for name in names])


def _outermost(layers: list[pl.DataFrame], names: list[str]) -> list[pl.Series]:
    """Columns where the value found first, outermost, stays (the fields)."""
    return [_innermost_series([layer[name] for layer in reversed(layers)]) for name in names]


def _scattered(found: pl.DataFrame, rows: pl.Series, height: int) -> pl.DataFrame:
    """``found``, one row per index in ``rows``, spread over ``height`` rows (null elsewhere)."""
    import polars as pl

    return (
        pl.DataFrame({"row": pl.int_range(height, eager=True, dtype=pl.UInt32)})
        .join(found.with_columns(row=rows.cast(pl.UInt32)), on="row", how="left")
        .drop("row")
    )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(stamp: datetime | None) -> int | None:
    return None if stamp is None else (stamp - _EPOCH) // timedelta(microseconds=1)


def _embedded_records(messages: pl.Series, catalog: Catalog) -> pl.DataFrame:
    """A JSON record printed at the end of a text line (NestJS, …): its message and fields (null elsewhere)."""
    rows = ((messages.str.find('{"', literal=True) > 0) & messages.str.strip_chars_end().str.ends_with("}")).fill_null(False).arg_true()
    records = [message[message.find('{"') :] for message in messages.gather(rows).to_list()]
    layers = _json_layers(records, catalog)
    found = _innermost(layers, ["msg"]).rename({"msg": "message"}).with_columns(_outermost(layers, _json_field_names(catalog)))
    return _scattered(found, rows, len(messages))


def _apply_layouts(texts: pl.Series, zones: pl.Series, catalog: Catalog, zone_by_name: dict[str, tzinfo], header: bool) -> pl.DataFrame:
    """Per line, the groups of the first layout (in catalog order; ``header``: of the header layouts) that
    matches it: ts (parsed in the layout's format), level, logger, thread, node and msg, each null when
    the layout has none or it is empty (msg: when the layout has none).

    The layouts run as one regex in Python's ``re`` (users' in ``regex``, time-limited), a line at a time:
    with their groups they run several times faster there than in polars' Rust engine, which would also
    compile them anew per batch, and one regex costs one call per line however many layouts there are."""
    import polars as pl

    union = catalog.header_layouts if header else catalog.line_layouts
    match, layout_of = union.pattern.match, union.layout_of
    wanted = [[(name, number) for name, number in groups.items() if name in _ENVELOPE_NAMES] for groups in union.groups]
    values: dict[str, list[str | None]] = {name: [None] * len(texts) for name in _ENVELOPE_NAMES}
    formats: list[int | None] = [None] * len(texts)
    for row, text in enumerate(texts.to_list()):
        m = match(text)
        if m is not None:
            index = layout_of[m.lastindex]
            groups = m.groups()
            for name, number in wanted[index]:
                values[name][row] = groups[number - 1]
            formats[row] = index
    found = pl.DataFrame({**values, "format": formats}, schema={**dict.fromkeys(values, pl.String), "format": pl.Int32})
    found = found.with_columns(pl.when(pl.col(name) != "").then(pl.col(name)).alias(name) for name in _ENVELOPE_NAMES if name != "msg")
    ts = pl.Series("ts", [None] * len(texts), pl.Int64)
    layouts = union.layouts
    for fmt in {layout.ts_format for layout in layouts}:
        rows = found["format"].is_in([i for i, layout in enumerate(layouts) if layout.ts_format == fmt]).fill_null(False).arg_true()
        if len(rows):
            ts.scatter(rows, _parse_column(found["ts"].gather(rows), fmt, zones.gather(rows), zone_by_name))
    return found.drop("format").with_columns(ts=ts)


_ENVELOPE_NAMES = ("level", "logger", "thread", "node", "msg", "ts")


def _headers(envelope: pl.DataFrame, frame: pl.DataFrame, catalog: Catalog, zone_by_name: dict[str, tzinfo]) -> pl.DataFrame:
    """A line without a time takes the time (and a missing logger) from the line before it, when that line
    is a header layout's (java.util.logging writes the time on the line before the message)."""
    import polars as pl

    wanting = (envelope["ts"].is_null() & frame["previous"].is_not_null()).arg_true()
    if not len(wanting) or not any(layout.header for layout in catalog.layouts):
        return envelope
    previous, zones = frame["previous"].gather(wanting), frame["zone"].gather(wanting)
    header = _apply_layouts(_strip_outer(previous, zones, catalog, zone_by_name)["rest"], zones, catalog, zone_by_name, header=True)
    ts = pl.Series([None] * len(envelope), dtype=pl.Int64).scatter(wanting, header["ts"])
    logger = pl.Series([None] * len(envelope), dtype=pl.String).scatter(wanting, header["logger"])
    return envelope.with_columns(ts=envelope["ts"].fill_null(ts), logger=envelope["logger"].fill_null(logger))


_ISO_GROUPS = (
    r"^(?<y>\d{4})-(?<mo>\d\d)-(?<d>\d\d)" + _DATE_TIME_SEPARATOR + r"(?<h>\d\d):(?<mi>\d\d):(?<s>\d\d)(?:[.,](?<frac>\d{1,9}))?\s?(?<off>Z|[+-]\d\d:?\d\d)?"
)
_LOWEST, _HIGHEST = (_micros(datetime(year, 1, 1, tzinfo=UTC)) for year in (EARLIEST_YEAR, LATEST_YEAR + 1))


def _parse_column(texts: pl.Series, fmt: str | None, zones: pl.Series, zone_by_name: dict[str, tzinfo]) -> pl.Series:
    """Timestamps (UTC microseconds) of a column of texts in one layout format, naive ones read in each
    row's zone, as :func:`parse_timestamp` reads them one by one."""
    import polars as pl

    if fmt == "epoch":
        micros = (texts.str.strip_chars().cast(pl.Float64, strict=False) * 1_000_000).round().cast(pl.Int64, strict=False)
    elif fmt in (None, "iso"):
        micros = _iso_column(texts, zones, zone_by_name)
    else:  # a strptime format: a few layouts, read once per distinct text and zone
        pairs = pl.DataFrame({"text": texts, "zone": zones})
        distinct = pairs.unique().filter(pl.col("text").is_not_null())
        parsed = [_micros(parse_timestamp(text, fmt, zone_by_name[zone])) for text, zone in distinct.iter_rows()]
        known = distinct.with_columns(micros=pl.Series(parsed, dtype=pl.Int64))
        micros = pairs.join(known, on=["text", "zone"], how="left", nulls_equal=True, maintain_order="left")["micros"]
    return pl.select(pl.when(micros.is_between(_LOWEST, _HIGHEST, closed="left")).then(micros)).to_series().alias("ts")


def _iso_column(texts: pl.Series, zones: pl.Series, zone_by_name: dict[str, tzinfo]) -> pl.Series:
    import polars as pl

    parts = (
        pl.DataFrame({"text": texts.str.strip_chars().str.replace_many(["–", "—"], ["-", "-"]), "zone": zones})
        .with_row_index("row")
        .with_columns(pl.col("text").str.extract_groups(_ISO_GROUPS).alias("p"))
        .unnest("p")
    )
    naive = pl.concat_str("y", pl.lit("-"), "mo", pl.lit("-"), "d", pl.lit(" "), "h", pl.lit(":"), "mi", pl.lit(":"), "s")
    fraction = pl.col("frac").str.slice(0, 6).str.pad_end(6, "0").cast(pl.Int64).fill_null(0)
    offset = pl.col("off").str.replace(":", "", literal=True)
    offset_minutes = pl.when(pl.col("off") == "Z").then(0).otherwise(
        (offset.str.slice(1, 2).cast(pl.Int64) * 60 + offset.str.slice(3, 2).cast(pl.Int64))
        * pl.when(offset.str.starts_with("-")).then(-1).otherwise(1)
    )
    parts = parts.with_columns(
        local=naive.str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S", strict=False).dt.epoch("us") + fraction,
        offset_minutes=offset_minutes,
    )
    micros = (pl.col("local") - pl.col("offset_minutes") * 60_000_000).alias("micros")
    stamped = parts.filter(pl.col("off").is_not_null()).select("row", micros)
    results = [stamped]
    for zone_name, local in parts.filter(pl.col("off").is_null() & pl.col("local").is_not_null()).group_by("zone"):
        zone = zone_by_name.get(zone_name[0], UTC)
        if zone is UTC or isinstance(zone, timezone):
            shift = int(zone.utcoffset(None).total_seconds()) * 1_000_000
            results.append(local.select("row", (pl.col("local") - shift).alias("micros")))
            continue
        in_zone = local.select("row", "text", pl.col("local").cast(pl.Datetime("us")).dt.replace_time_zone(
            zone.key, ambiguous="earliest", non_existent="null").dt.epoch("us").alias("micros"))
        # a time that does not exist in the zone (the hour a clock skips): as datetime reads it
        gaps = in_zone.filter(pl.col("micros").is_null())
        filled = [_micros(parse_timestamp(text, "iso", zone)) for text in gaps["text"].to_list()]
        results.append(in_zone.filter(pl.col("micros").is_not_null()).select("row", "micros"))
        results.append(gaps.select("row").with_columns(micros=pl.Series(filled, dtype=pl.Int64)))
    table = pl.concat([r.with_columns(pl.col("micros").cast(pl.Int64)) for r in results])
    return parts.select("row").join(table, on="row", how="left", maintain_order="left")["micros"]


def node_prefix(line: str, catalog: Catalog) -> tuple[str, str]:
    """The docker-compose / kubectl / Procfile runner prefix that starts a line, and the node it names
    (('', '') when none): every line of a multi-line record carries it again, a Procfile runner's with its
    own time of day, so continuation is judged after it, on lines of the same node."""
    any_outer = catalog.any_outer_prefix
    if any_outer is None or not any_outer.match(line):  # most lines: one regex instead of one per prefix
        return "", ""
    for prefix in catalog.node_prefixes:
        m = prefix.compiled.match(line)
        if m:
            return m.group(0), m.group("node")
    return "", ""


