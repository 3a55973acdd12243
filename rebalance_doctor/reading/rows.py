"""Rows: matched lines, a column at a time, shaped as event-table rows.

Both engines hand their matched lines (the pattern and its regex groups) to :func:`event_rows`, so the
enrichment every row goes through (envelope, context prefixes, catalog constants, the reason's cause,
column types) is written once, and runs over whole columns: each regex once per batch, never a Python
function per event.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from ..catalog import Catalog, MessagePattern
from ..catalog.schema import COLUMN_NAMES, EXTRACTED, FIELD_BY_GROUP, INTEGER_FIELDS, polars_schema
from .envelope import envelopes, matched_regex

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

_MATCHED = "rdMatched"
_LEADER_WORDS = ["true", "1", "yes", "me"]


def candidate_patterns(text: str, catalog: Catalog) -> list[MessagePattern]:
    """Patterns whose literal anchor occurs in ``text``, in priority order."""
    by_anchor, priority = catalog.patterns_by_anchor, catalog.priority
    found = {p.id: p for anchor in catalog.anchors if anchor in text for p in by_anchor[anchor]}
    return sorted(found.values(), key=lambda p: priority[p.id])


def match_lines(texts: pl.Series, rows: np.ndarray, patterns: np.ndarray, catalog: Catalog) -> pl.DataFrame:
    """The winning pattern of each line that has one: ``rows[i]`` (a position in ``texts``) may be matched
    by pattern ``patterns[i]`` (an index in the catalog, which is its priority). Patterns are tried in
    priority order, each over all its lines at once, and a line stops at its first match. The result:
    ``row``, ``pattern`` and the extracted fields of each matched line (by column name, null where a group
    took no part), in row order."""
    import numpy as np
    import polars as pl

    order = np.lexsort((rows, patterns))
    rows, patterns = rows[order], patterns[order]
    done = np.zeros(len(texts), dtype=bool)
    found = [pl.DataFrame(schema={"row": pl.Int64, "pattern": pl.Int32})]
    bounds = (np.flatnonzero(np.diff(patterns)) + 1).tolist()
    for start, stop in zip([0, *bounds], [*bounds, len(patterns)], strict=True) if len(patterns) else ():
        index = int(patterns[start])
        lines = rows[start:stop]
        lines = lines[~done[lines]]
        if not len(lines):
            continue
        pattern = catalog.patterns[index]
        groups = texts.gather(lines).str.extract_groups(matched_regex(pattern.regex)).struct.unnest()
        hit = groups[_MATCHED].is_not_null().to_numpy()
        if not hit.any():
            continue
        done[lines[hit]] = True
        taken = groups.filter(pl.Series(hit)).drop(_MATCHED).rename(FIELD_BY_GROUP, strict=False)
        found.append(taken.with_columns(row=pl.Series(lines[hit], dtype=pl.Int64), pattern=pl.lit(index, pl.Int32)))
    return pl.concat(found, how="diagonal").sort("row")


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


def classify_reasons(reasons: pl.Series, catalog: Catalog) -> pl.DataFrame:
    """The cause each reason text names (the first rule of patterns/reasons.yaml that matches it), with the
    member and instance it names: columns cause, member_id, instance_id (null where no rule matches)."""
    import polars as pl

    named = ("member_id", "instance_id")
    result = pl.DataFrame({"row": pl.int_range(len(reasons), eager=True, dtype=pl.Int64)})
    found = [pl.DataFrame(schema={"row": pl.Int64, "cause": pl.String, **dict.fromkeys(named, pl.String)})]
    pending = pl.DataFrame({"row": result["row"], "reason": reasons}).filter(pl.col("reason") != "")
    for rule in catalog.reasons:
        if not len(pending):
            break
        groups = pending.select("row", pl.col("reason").str.extract_groups(matched_regex(rule.regex)).alias("g")).unnest("g")
        hit = groups[_MATCHED].is_not_null()
        taken = groups.filter(hit).drop(_MATCHED).rename(FIELD_BY_GROUP, strict=False)
        found.append(taken.select("row", *(name for name in named if name in taken.columns)).with_columns(cause=pl.lit(rule.cause)))
        pending = pending.filter(~hit)
    table = pl.concat(found, how="diagonal")
    return result.join(table, on="row", how="left", maintain_order="left").drop("row")


def classify_reason(reason: str, catalog: Catalog) -> tuple[str, dict[str, str]] | None:
    """:func:`classify_reasons` for one reason text: the cause and the fields it names, or None."""
    import polars as pl

    cause, *named = classify_reasons(pl.Series([reason]), catalog).row(0)
    if cause is None:
        return None
    return cause, {name: value for name, value in zip(("member_id", "instance_id"), named, strict=True) if value is not None}


def _context_fields(messages: pl.Series, threads: pl.Series, catalog: Catalog) -> dict[str, pl.Series]:
    """Fields named by log-context prefixes (``[Consumer clientId=…, groupId=…]`` …): per field, the first
    prefix (in catalog order) that names it in the message, else in the envelope's thread name as a log
    prints it (``[orders-app-<uuid>-StreamThread-1]`` names a Streams application)."""
    fields: dict[str, pl.Series] = {}
    for texts in (messages, "[" + threads + "]"):
        for prefix in catalog.context_prefixes:
            groups = texts.str.extract_groups(matched_regex(prefix.regex)).struct.unnest().drop(_MATCHED)
            for group in groups.columns:
                name = FIELD_BY_GROUP[group]
                fields[name] = groups[group] if name not in fields else fields[name].fill_null(groups[group])
    return fields


def event_rows(matched: pl.DataFrame, catalog: Catalog, zones: dict[int, tzinfo]) -> pl.DataFrame:
    """Event-table rows (the schema's columns, in order) for matched records. ``matched`` has per record:
    ``pattern`` (catalog index), its extracted fields (by column name, as text, any subset), ``text`` (the
    first line), ``previous`` (the line before it, or null), ``raw`` (the record), ``file``, ``line``,
    ``file_node`` and ``reader`` (a key of ``zones``, the zone naive times are read in).

    A field's value is the message's own group, else the pattern's constant, else a context prefix in the
    message, a JSON key of the record, or (thread) the envelope; a reason fills the cause (and the member
    it names) where still empty."""
    import polars as pl

    envelope = envelopes(matched, catalog, zones)
    context = _context_fields(envelope["message"], envelope["thread"], catalog)
    table = matched.join(_pattern_table(catalog), on="pattern", how="left", maintain_order="left")
    columns: dict[str, pl.Series] = {}
    for column in EXTRACTED:
        name = column.name
        sources = [table[source] for source in (name, f"constant_{name}") if source in table.columns]
        sources += [series for series in (context.get(name), envelope[name] if name in envelope.columns and name != "thread" else None)
                    if series is not None]
        if name == "thread":
            sources.append(envelope["thread"])
        columns[name] = pl.select(pl.coalesce(sources)).to_series() if sources else pl.Series(name, [None] * len(matched), pl.String)
    reasons = columns["reason"]
    unclassified = (reasons.is_not_null() & (reasons != "") & columns["cause"].is_null()).arg_true()
    if len(unclassified):
        classified = classify_reasons(reasons.gather(unclassified), catalog)
        for name in ("cause", "member_id", "instance_id"):
            columns[name] = columns[name].scatter(unclassified, columns[name].gather(unclassified).fill_null(classified[name]))
    schema = polars_schema()
    typed = {name: _typed(name, values, schema[name]) for name, values in columns.items()}
    rows = pl.DataFrame({
        "ts": envelope["ts"].cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
        "file": table["file"],
        "line": table["line"],
        "node": pl.select(pl.coalesce(pl.when(envelope["node"] != "").then(envelope["node"]), table["file_node"])).to_series(),
        "component": table["component"],
        "kind": table["kind"],
        "pattern_id": table["pattern_id"],
        **typed,
        "level": envelope["level"],
        "logger": envelope["logger"],
        "message": envelope["message"],
        "raw": table["raw"],
    })
    return rows.select(pl.col(name).cast(schema[name]) for name in COLUMN_NAMES)


def _typed(name: str, values: pl.Series, dtype: pl.DataType) -> pl.Series:
    """An extracted column in its schema type: integers from their text (a negative generation is the
    clients' "none yet" placeholder, not a generation), a leader flag from its word."""
    import polars as pl

    if name == "leader":
        return values.str.to_lowercase().is_in(_LEADER_WORDS).alias(name) if values.dtype == pl.String else values.cast(pl.Boolean)
    if name in INTEGER_FIELDS:
        numbers = values.cast(pl.String).str.strip_chars().cast(pl.Int64, strict=False)
        return pl.select(pl.when(numbers >= 0).then(numbers)).to_series().alias(name) if name == "generation" else numbers.alias(name)
    return values.cast(dtype)


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

    texts = pl.Series(list(lines), dtype=pl.String)
    pairs = [(row, catalog.priority[p.id]) for row, line in enumerate(lines) for p in candidate_patterns(line, catalog)]
    rows = np.array([row for row, _ in pairs], dtype=np.int64)
    patterns = np.array([pattern for _, pattern in pairs], dtype=np.int32)
    matched = match_lines(texts, rows, patterns, catalog)
    records = matched.with_columns(
        text=texts.gather(matched["row"]), previous=pl.lit(None, pl.String), raw=texts.gather(matched["row"]),
        file=pl.lit(file), line=pl.lit(1, pl.Int64), file_node=pl.lit(file_node), reader=pl.lit(0, pl.Int64),
    )
    events = event_rows(records, catalog, {0: zone or UTC})
    found: list[dict[str, Any] | None] = [None] * len(lines)
    for row, event in zip(matched["row"].to_list(), events.iter_rows(named=True), strict=True):
        found[row] = event
    return found
