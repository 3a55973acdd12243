"""Rows: matched lines, a column at a time, shaped as event-table rows.

Both engines hand their matched lines (the pattern and its regex groups) to :func:`event_rows`, so the
enrichment every row goes through (envelope, context prefixes, catalog constants, the reason's cause,
column types) is written once, and runs over whole columns: each regex once per batch, never a Python
function per event.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from ..catalog import Catalog, ContextPrefix, MessagePattern
from ..catalog.schema import COLUMN_NAMES, EXTRACTED, FIELD_BY_GROUP, INTEGER_FIELDS, polars_schema
from .envelope import envelopes, matched_regex

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

_MATCHED = "rdMatched"
_LEADER_WORDS = ["true", "1", "yes", "me"]
PREFIX_FIRST = {"group_id", "client_id", "instance_id"}  # ids a client's context prefix states with authority


def candidate_patterns(text: str, catalog: Catalog) -> list[MessagePattern]:
    """Patterns whose literal anchor occurs in ``text``, in priority order."""
    by_anchor, priority = catalog.patterns_by_anchor, catalog.priority
    found = {p.id: p for anchor in catalog.anchors if anchor in text for p in by_anchor[anchor]}
    return sorted(found.values(), key=lambda p: priority[p.id])


def match_lines(lines: list[str], rows: np.ndarray, patterns: np.ndarray, catalog: Catalog) -> pl.DataFrame:
    """The winning pattern of each line that has one: ``rows[i]`` (a position in ``lines``) may be matched
    by pattern ``patterns[i]`` (an index in the catalog, which is its priority). Patterns are tried in
    priority order, each over all its lines, and a line stops at its first match. The result: ``row``,
    ``pattern`` and the extracted fields of each matched line (by column name, null where a group took no
    part), in row order.

    The regexes run in Python's ``re`` (users' in ``regex``, time-limited): with their groups, a catalog
    regex runs faster there than in polars' Rust engine, which also compiles it anew on every call."""
    import numpy as np
    import polars as pl

    order = np.lexsort((rows, patterns))
    rows, patterns = rows[order].tolist(), patterns[order].tolist()
    done: set[int] = set()
    found: list[tuple[int, list[int], list[tuple]]] = []  # each pattern's index, matched rows and groups
    start = 0
    while start < len(patterns):
        stop = bisect.bisect_right(patterns, patterns[start], start)
        search = catalog.patterns[patterns[start]].compiled.search
        matched_rows, groups = [], []
        for row in rows[start:stop]:
            if row not in done and (m := search(lines[row])) is not None:
                done.add(row)
                matched_rows.append(row)
                groups.append(m.groups())
        if matched_rows:
            found.append((patterns[start], matched_rows, groups))
        start = stop
    total = sum(len(matched_rows) for _, matched_rows, _ in found)
    columns: dict[str, list[str | None]] = {}
    offset = 0
    for index, matched_rows, groups in found:
        count = len(matched_rows)
        by_position = list(zip(*groups, strict=True))  # per group of the regex, its value on each line
        for name, position in zip(*_named_groups(catalog.patterns[index]), strict=True):
            column = columns.setdefault(name, [None] * total)
            column[offset : offset + count] = by_position[position]
        offset += count
    matched = pl.DataFrame(
        {
            "row": [row for _, matched_rows, _ in found for row in matched_rows],
            "pattern": [index for index, matched_rows, _ in found for _ in matched_rows],
            **columns,
        },
        schema={"row": pl.Int64, "pattern": pl.Int32, **dict.fromkeys(columns, pl.String)},
    )
    return matched.sort("row")


def _named_groups(pattern: MessagePattern) -> tuple[list[str], list[int]]:
    """The columns a pattern's named groups fill, and the groups' positions in ``Match.groups()``."""
    index = pattern.compiled.groupindex
    names = sorted(index, key=index.__getitem__)
    return [FIELD_BY_GROUP[name] for name in names], [index[name] - 1 for name in names]


_PATTERN_TABLES: dict[int, tuple[Catalog, pl.DataFrame]] = {}  # by the catalog's id (a catalog is not hashable)


def _pattern_table(catalog: Catalog) -> pl.DataFrame:
    """Per pattern (by catalog index): component, kind, id and its constants (as text, typed with the rest)."""
    kept = _PATTERN_TABLES.get(id(catalog))
    if kept is None or kept[0] is not catalog:
        kept = _PATTERN_TABLES[id(catalog)] = (catalog, _patterns_as_table(catalog))
    return kept[1]


def _patterns_as_table(catalog: Catalog) -> pl.DataFrame:
    import polars as pl

    constants = sorted({name for p in catalog.patterns for name in p.constants})
    return pl.DataFrame(
        {
            "pattern": list(range(len(catalog.patterns))),
            "component": [p.component for p in catalog.patterns],
            "kind": [p.kind for p in catalog.patterns],
            "pattern_id": [p.id for p in catalog.patterns],
            **{f"constant_{name}": [_text(p.constants.get(name)) for p in catalog.patterns] for name in constants},
        },
        schema_overrides={"pattern": pl.Int32, **{f"constant_{name}": pl.String for name in constants}},
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _present(texts: pl.Series, entries: Sequence[Any]) -> list[Any]:
    """The entries that can match some text: those whose required literal occurs in one (one Aho-Corasick
    pass over the texts), and those that require none."""
    literals = sorted({entry.required_text for entry in entries if entry.required_text})
    found = set(texts.str.extract_many(literals, overlapping=True).explode().drop_nulls().unique().to_list()) if literals and len(texts) else set()
    return [entry for entry in entries if not entry.required_text or entry.required_text in found]


def classify_reasons(reasons: pl.Series, catalog: Catalog) -> pl.DataFrame:
    """The cause each reason text names (the first rule of patterns/reasons.yaml that matches it), with the
    member and instance it names: columns cause, member_id, instance_id (null where no rule matches)."""
    import numpy as np
    import polars as pl

    found = {name: pl.Series(name, [None] * len(reasons), pl.String) for name in ("cause", "member_id", "instance_id")}
    pending = np.flatnonzero((reasons.fill_null("") != "").to_numpy())
    for rule in _present(reasons.gather(pending), catalog.reasons):
        if not len(pending):
            break
        candidates = reasons.gather(pending)
        groups = candidates.str.extract_groups(matched_regex(rule.regex)).struct.unnest()
        hit = groups[_MATCHED].is_not_null().to_numpy()
        if not hit.any():
            continue
        rows, pending = pending[hit], pending[~hit]
        found["cause"].scatter(rows, rule.cause)
        for group in groups.columns:
            if group != _MATCHED and FIELD_BY_GROUP.get(group) in found:
                found[FIELD_BY_GROUP[group]].scatter(rows, groups[group].filter(pl.Series(hit)))
    return pl.DataFrame(list(found.values()))


def classify_reason(reason: str, catalog: Catalog) -> tuple[str, dict[str, str]] | None:
    """:func:`classify_reasons` for one reason text: the cause and the fields it names, or None."""
    import polars as pl

    cause, *named = classify_reasons(pl.Series([reason]), catalog).row(0)
    if cause is None:
        return None
    return cause, {name: value for name, value in zip(("member_id", "instance_id"), named, strict=True) if value is not None}


def context_fields(texts: pl.Series, prefixes: Sequence[ContextPrefix]) -> dict[str, pl.Series]:
    """Fields named by log-context prefixes (``[Consumer clientId=…, groupId=…]`` …) in each text: per field, the
    first of ``prefixes`` (in catalog order) that names it."""
    return _prefix_fields(texts, _present(texts, prefixes))


def _prefix_fields(texts: pl.Series, present: Sequence[ContextPrefix]) -> dict[str, pl.Series]:
    """:func:`context_fields` for prefixes already known to occur in the texts."""
    fields: dict[str, pl.Series] = {}
    for prefix in present:
        groups = texts.str.extract_groups(matched_regex(prefix.regex)).struct.unnest().drop(_MATCHED)
        for group in groups.columns:
            name = FIELD_BY_GROUP[group]
            fields[name] = groups[group] if name not in fields else fields[name].fill_null(groups[group])
    return fields


def thread_fields(threads: pl.Series, catalog: Catalog) -> dict[str, pl.Series]:
    """Fields named by context prefixes in the envelope's thread name as a log prints it
    (``[orders-app-<uuid>-StreamThread-1]`` names a Streams application)."""
    return context_fields("[" + threads + "]", catalog.context_prefixes)


def _with_continuation(messages: pl.Series, raw: pl.Series) -> pl.Series:
    """Each message followed by its record's continuation lines, where it has some: a logger that prints its
    keys on lines of their own (pino-pretty's indented `groupId: "g"`) names the group there."""
    import polars as pl

    tail = raw.str.splitn("\n", 2).struct.field("field_1")
    return pl.select(pl.when(tail.is_null()).then(messages).otherwise(messages + "\n" + tail)).to_series().alias(messages.name)


def event_rows(matched: pl.DataFrame, catalog: Catalog, zones: dict[int, tzinfo]) -> pl.DataFrame:
    """Event-table rows (the schema's columns, in order) for matched records. ``matched`` has per record:
    ``pattern`` (catalog index), its extracted fields (by column name, as text, any subset), ``text`` (the
    first line), ``previous`` (the line before it, or null), ``raw`` (the record), ``file``, ``line``,
    ``file_node`` and ``reader`` (a key of ``zones``, the zone naive times are read in).

    A field's value is the message's own group, else the pattern's constant, else a context prefix in the
    message or its continuation lines, a JSON key of the record, or (thread) the envelope; a reason fills the
    cause (and the member it names) where still empty."""
    import polars as pl

    envelope = envelopes(matched, catalog, zones)
    messages = _with_continuation(envelope["message"], matched["raw"])  # continuation lines too
    present = _present(messages, catalog.context_prefixes)  # one literal pass for the stated and the inferred prefixes
    context = _prefix_fields(messages, [prefix for prefix in present if not prefix.inferred])
    inferred = _prefix_fields(messages, [prefix for prefix in present if prefix.inferred])
    thread_context = thread_fields(envelope["thread"], catalog)
    table = matched.join(_pattern_table(catalog), on="pattern", how="left", maintain_order="left")
    sources = pl.DataFrame([
        *(table[name] for name in table.columns), *(series.alias(f"context_{name}") for name, series in context.items()),
        *(series.alias(f"inferred_{name}") for name, series in inferred.items()),
        *(series.alias(f"thread_{name}") for name, series in thread_context.items()),
        *(envelope[name].alias(f"envelope_{name}") for name in envelope.columns),
    ])
    texts = sources.select(_field_text(column.name, sources.columns) for column in EXTRACTED)
    classified = classify_reasons(texts.select(pl.when(pl.col("cause").is_null()).then("reason")).to_series(), catalog)
    texts = texts.with_columns(pl.col(name).fill_null(classified[name]) for name in classified.columns)
    schema = polars_schema()
    rows = pl.concat([sources, texts.rename(lambda name: f"field_{name}")], how="horizontal").select(
        pl.col("envelope_ts").cast(pl.Datetime("us")).dt.replace_time_zone("UTC").alias("ts"),
        "file", "line",
        pl.coalesce(pl.when(pl.col("envelope_node") != "").then("envelope_node"), "file_node").alias("node"),
        "component", "kind", "pattern_id",
        *(_typed(column.name, pl.col(f"field_{column.name}"), schema[column.name]) for column in EXTRACTED),
        pl.col("envelope_level").alias("level"), pl.col("envelope_logger").alias("logger"), pl.col("envelope_message").alias("message"),
        "raw",
    )
    return rows.select(pl.col(name).cast(schema[name]) for name in COLUMN_NAMES)


def _field_text(name: str, columns: list[str]) -> pl.Expr:
    """A field's text: the message's own group, else the pattern's constant, else a context prefix in the message
    (one that states it, then one that infers it), else one in the thread's name, else the envelope (a JSON key of
    the record; the thread). A prefix the client writes with its group and client names them before the message
    does: what follows an old wording that ended on the group (``(Re-)joining group orders``) may be a logger's
    suffix."""
    import polars as pl

    order = [name, f"constant_{name}", f"context_{name}", f"inferred_{name}", f"thread_{name}", f"envelope_{name}"]
    if name in PREFIX_FIRST:
        order.insert(0, order.pop(2))
    present = [pl.col(source) for source in order if source in columns]
    return (pl.coalesce(present) if present else pl.lit(None, pl.String)).cast(pl.String).alias(name)


def _typed(name: str, value: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """An extracted column in its schema type: integers from their text (a negative generation is the
    clients' "none yet" placeholder, not a generation), a leader flag from its word."""
    import polars as pl

    if name == "leader":
        return value.cast(pl.String).str.to_lowercase().is_in(_LEADER_WORDS).alias(name)
    if name in PREFIX_FIRST:  # a paste's stray space around an id ("groupId= orders") is not part of it
        return value.cast(pl.String).str.strip_chars(" ").alias(name)
    if name in INTEGER_FIELDS:
        number = value.cast(pl.String).str.strip_chars().cast(pl.Int64, strict=False)
        return (pl.when(number >= 0).then(number) if name == "generation" else number).alias(name)
    return value.cast(dtype).alias(name)


def match_one(line: str, catalog: Catalog, zone: tzinfo | None = None, file: str = "-", file_node: str = "stdin") -> dict[str, Any] | None:
    """One line as the event-table row a scan would make of it (None when no pattern matches): for
    ``patterns test``, catalog examples and tests; the same code as a scan, on a one-line batch."""
    rows = match_many([line], catalog, zone, file, file_node)
    return rows[0]


def match_many(lines: Sequence[str], catalog: Catalog, zone: tzinfo | None = None, file: str = "-", file_node: str = "stdin") -> list[dict[str, Any] | None]:
    """Each line (a record of its own) as its event-table row, or None where no pattern matches."""
    from datetime import UTC

    import numpy as np
    import polars as pl

    lines = list(lines)
    texts = pl.Series(lines, dtype=pl.String)
    pairs = [(row, catalog.priority[p.id]) for row, line in enumerate(lines) for p in candidate_patterns(line, catalog)]
    rows = np.array([row for row, _ in pairs], dtype=np.int64)
    patterns = np.array([pattern for _, pattern in pairs], dtype=np.int32)
    matched = match_lines(lines, rows, patterns, catalog)
    records = matched.with_columns(
        text=texts.gather(matched["row"]), previous=pl.lit(None, pl.String), raw=texts.gather(matched["row"]),
        file=pl.lit(file), line=pl.lit(1, pl.Int64), file_node=pl.lit(file_node), reader=pl.lit(0, pl.Int64),
    )
    events = event_rows(records, catalog, {0: zone or UTC})
    found: list[dict[str, Any] | None] = [None] * len(lines)
    for row, event in zip(matched["row"].to_list(), events.iter_rows(named=True), strict=True):
        found[row] = event
    return found
