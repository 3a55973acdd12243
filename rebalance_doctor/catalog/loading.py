"""Loading catalogs: every Kafka wording, log layout and log-context prefix, read from YAML data.

The Python side only knows the *shape* of a catalog. The words live in ``patterns/``:

- ``patterns/messages/*.yaml`` – one entry per log message (id, kind, component, versions,
  literal anchor, one portable regex with named groups, examples that test themselves);
- ``patterns/layouts.yaml`` – envelopes (timestamp, level, logger, thread) and outer prefixes
  (docker-compose, kubectl, …) that carry the node name;
- ``patterns/context.yaml`` – log-context prefixes inside the message (``[Consumer clientId=…]``);
- ``patterns/relevance.yaml`` – words that make an unmatched line worth reporting.

Every regex must behave the same in Python (``re``; the ``regex`` module for users' catalogs), polars (Rust regex) and the
JVM (Java regex); :func:`portability_problems` enforces the common dialect and loading fails with
``file:line`` on the first bad entry.
"""


from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .dialect import compile_portable, portability_problems
from .entries import (
    BUNDLED_DIR,
    CONTEXT_GROUPS,
    ENVELOPE_GROUPS,
    REASON_GROUPS,
    Catalog,
    ContextPrefix,
    Example,
    IgnoredWording,
    JsonField,
    Layout,
    MessagePattern,
    ReasonRule,
)
from .errors import CatalogError
from .schema import CAUSES, COLUMN_NAMES, COMPONENTS, FIELD_BY_GROUP, KINDS, SYMPTOM
from .yaml_source import read_yaml


def _require(entry: dict, key: str, path: Path, kind: type | tuple = str) -> Any:
    if key not in entry or entry[key] is None or entry[key] == "":
        raise CatalogError(path, entry.line, f"missing '{key}'")
    value = entry[key]
    if not isinstance(value, kind):
        raise CatalogError(path, entry.line, f"'{key}' must be {getattr(kind, '__name__', kind)}")
    return value


def _examples(entry: dict, path: Path, required: bool) -> tuple[Example, ...]:
    raw = entry.get("examples") or []
    if required and not raw:
        raise CatalogError(path, entry.line, "needs at least one example line")
    examples = []
    for item in raw:
        if isinstance(item, str):
            examples.append(Example(item, {}))
        elif isinstance(item, dict) and isinstance(item.get("line"), str):
            fields = dict(item.get("fields") or {})
            examples.append(Example(item["line"], fields))
        else:
            raise CatalogError(path, entry.line, "an example is a line, or a mapping with 'line' and 'fields'")
    return tuple(examples)


def _compile_checked(source: str, allowed: frozenset[str] | set[str], path: Path, line: int) -> None:
    problems = portability_problems(source, allowed)
    if problems:
        raise CatalogError(path, line, "regex is not portable: " + "; ".join(dict.fromkeys(problems)))
    import regex

    try:  # both Python engines: the bundled catalogs run in re, users' in regex (RegexEntry.compiled)
        regex.compile(source)
        compile_portable(source)
    except (regex.error, re.error) as exc:
        raise CatalogError(path, line, f"regex does not compile: {exc}") from None


_VERSION = re.compile(r"\d+(?:\.\d+){1,3}")


def _message_pattern(entry: dict, defaults: dict, path: Path) -> MessagePattern:
    line = entry.line
    pattern_id = _require(entry, "id", path)
    kind = _require(entry, "kind", path)
    if kind not in KINDS:
        raise CatalogError(path, line, f"unknown kind {kind!r} (see rebalance_doctor.schema.KINDS)")
    if entry.get("housekeeping") and entry.get("multiline"):
        raise CatalogError(path, line, "a housekeeping line builds no row: it cannot gather a multi-line record")
    component = entry.get("component", defaults.get("component"))
    if component not in COMPONENTS:
        raise CatalogError(path, line, f"component must be one of {', '.join(COMPONENTS)}")
    since = str(_require(entry, "since", path, (str, int, float)))
    until = entry.get("until")
    for version in (since, until):
        if version is not None and not _VERSION.fullmatch(str(version)):
            raise CatalogError(path, line, f"version {version!r} is not dotted numbers (e.g. 2.8.1)")
    anchor = _require(entry, "anchor", path)
    if len(anchor) < 4:
        raise CatalogError(path, line, "anchor must be a literal of at least 4 characters")
    source = _require(entry, "regex", path)
    _compile_checked(source, set(FIELD_BY_GROUP), path, line)
    constants = dict(entry.get("set") or {})
    for name in constants:
        if name not in FIELD_BY_GROUP.values():
            raise CatalogError(path, line, f"'set' names unknown field {name!r}")
    examples = _examples(entry, path, required=True)
    for example in examples:
        if anchor not in example.line:
            raise CatalogError(path, line, f"example does not contain the anchor {anchor!r}: {example.line!r}")
        for name in example.fields:
            if name not in COLUMN_NAMES:
                raise CatalogError(path, line, f"example expects unknown field {name!r}")
    return MessagePattern(
        id=pattern_id,
        kind=kind,
        component=component,
        level=str(entry.get("level", "INFO")),
        since=since,
        until=None if until is None else str(until),
        anchor=anchor,
        regex=source,
        constants=constants,
        multiline=bool(entry.get("multiline", False)),
        housekeeping=bool(entry.get("housekeeping", False)),
        examples=examples,
        path=str(path),
        line=line,
    )


def _prefix(entry: dict, path: Path, allowed: frozenset[str]) -> ContextPrefix:
    source = _require(entry, "regex", path)
    _compile_checked(source, allowed, path, entry.line)
    return ContextPrefix(
        id=_require(entry, "id", path),
        regex=source,
        examples=_examples(entry, path, required=True),
        path=str(path),
        line=entry.line,
        inferred=bool(entry.get("inferred", False)),
    )


def _layout(entry: dict, path: Path) -> Layout:
    source = _require(entry, "regex", path)
    _compile_checked(source, ENVELOPE_GROUPS, path, entry.line)
    return Layout(
        id=_require(entry, "id", path),
        regex=source,
        ts_format=entry.get("ts_format"),
        examples=_examples(entry, path, required=True),
        path=str(path),
        line=entry.line,
        header=bool(entry.get("header", False)),
        last_resort=bool(entry.get("last_resort", False)),
    )


def _reason_rule(entry: dict, path: Path) -> ReasonRule:
    cause = _require(entry, "cause", path)
    if cause not in CAUSES and cause != SYMPTOM:
        raise CatalogError(path, entry.line, f"cause must be one of {', '.join(CAUSES)} or {SYMPTOM}")
    source = _require(entry, "regex", path)
    _compile_checked(source, REASON_GROUPS, path, entry.line)
    return ReasonRule(
        id=_require(entry, "id", path),
        cause=cause,
        regex=source,
        examples=_examples(entry, path, required=True),
        path=str(path),
        line=entry.line,
    )


def _json_field(entry: dict, path: Path) -> JsonField:
    name = _require(entry, "field", path)
    if name not in FIELD_BY_GROUP:
        raise CatalogError(path, entry.line, f"field must be a named group of the message regexes, not {name!r}")
    keys = _require(entry, "keys", path, list)
    if not keys or not all(isinstance(k, str) and k for k in keys):
        raise CatalogError(path, entry.line, "keys must be a list of JSON key names")
    return JsonField(name, tuple(keys), str(path), entry.line)


def _add_file(catalog: Catalog, path: Path, user: bool) -> None:
    data = read_yaml(path, "catalog")
    if not isinstance(data, dict):
        raise CatalogError(path, 1, "a catalog file must be a mapping")
    catalog.sources.append(str(path))
    defaults = {"component": data.get("component")}
    new_patterns = [_message_pattern(e, defaults, path) for e in data.get("patterns") or []]
    if user:
        replaced = {p.id for p in new_patterns}
        before = {p.id: p for p in catalog.patterns if p.id in replaced}
        catalog.replaced += [f"{p.where}: {p.id} replaces the entry of that id at {before[p.id].where}"
                             for p in new_patterns if p.id in before]
        catalog.patterns[:] = new_patterns + [p for p in catalog.patterns if p.id not in replaced]
    else:
        catalog.patterns.extend(new_patterns)
    for entry in data.get("ignored") or []:
        catalog.ignored.append(
            IgnoredWording(_require(entry, "template", path), _require(entry, "reason", path), str(path), entry.line)
        )
    layouts = [_layout(e, path) for e in data.get("layouts") or []]
    outer = [_prefix(e, path, ENVELOPE_GROUPS) for e in data.get("outer_prefixes") or []]
    context = [_prefix(e, path, CONTEXT_GROUPS) for e in data.get("context_prefixes") or []]
    if user:
        catalog.layouts[:0], catalog.outer_prefixes[:0], catalog.context_prefixes[:0] = layouts, outer, context
    else:
        catalog.layouts += layouts
        catalog.outer_prefixes += outer
        catalog.context_prefixes += context
    catalog.relevance_words += [str(w) for w in data.get("relevance_words") or []]
    json_fields = [_json_field(e, path) for e in data.get("json_fields") or []]
    rules = [_reason_rule(e, path) for e in data.get("reasons") or []]
    if user:  # the user's entries are tried first
        catalog.reasons[:0], catalog.json_fields[:0] = rules, json_fields
    else:
        catalog.reasons += rules
        catalog.json_fields += json_fields


def _check_unique_ids(catalog: Catalog) -> None:
    seen: dict[str, MessagePattern] = {}
    for pattern in catalog.patterns:
        if pattern.id in seen:
            raise CatalogError(pattern.path, pattern.line, f"duplicate id {pattern.id!r} (also {seen[pattern.id].where})")
        seen[pattern.id] = pattern


def _yaml_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise CatalogError(directory, 1, "patterns directory not found")
    return sorted(p for p in directory.rglob("*.y*ml") if p.suffix in (".yaml", ".yml"))


CACHED_CATALOGS = 16  # validated catalogs kept in the cache directory: each user catalog's edits add one


_ENTRY_TYPES = {"patterns": MessagePattern, "layouts": Layout, "outer_prefixes": ContextPrefix,
                 "context_prefixes": ContextPrefix, "reasons": ReasonRule, "ignored": IgnoredWording, "json_fields": JsonField}


def _as_data(catalog: Catalog) -> dict[str, Any]:
    """A validated catalog as plain JSON data: the cache holds nothing that could run when it is read."""
    def entry(item: Any) -> dict[str, Any]:
        values = {f.name: getattr(item, f.name) for f in dataclasses.fields(item)}
        if "examples" in values:
            values["examples"] = [[e.line, e.fields] for e in values["examples"]]
        return values

    data: dict[str, Any] = {name: [entry(item) for item in getattr(catalog, name)] for name in _ENTRY_TYPES}
    return data | {"relevance_words": catalog.relevance_words, "sources": catalog.sources, "replaced": catalog.replaced}


def _from_data(data: dict[str, Any]) -> Catalog:
    """The catalog again, from :func:`_as_data`'s data (a foreign or damaged file raises KeyError, TypeError…)."""
    def entry(kind: type, values: dict[str, Any]) -> Any:
        if "examples" in values:
            values = values | {"examples": tuple(Example(line, dict(fields)) for line, fields in values["examples"])}
        if "keys" in values:
            values = values | {"keys": tuple(values["keys"])}
        return kind(**values)

    lists = {name: [entry(kind, values) for values in data[name]] for name, kind in _ENTRY_TYPES.items()}
    return Catalog(**lists, relevance_words=list(data["relevance_words"]), sources=list(data["sources"]),
                   replaced=list(data["replaced"]))


def _validated(files: list[Path], build: Callable[[], Catalog]) -> Catalog:
    """The catalog ``build`` makes of ``files``, validated once per install and content: later runs read the
    result back, much faster than validating again. The cache is JSON data, never code: a planted, foreign
    or damaged file is rebuilt, not executed."""
    digest = hashlib.sha256()
    validator = sorted(Path(__file__).parent.glob("*.py"))  # the validating code is part of the key
    for path in (*validator, *files):
        digest.update(str(path).encode() + b"\0" + path.read_bytes())  # with the path: entries name their files
    directory = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rebalance-doctor"
    cache = directory / f"catalog-{digest.hexdigest()[:24]}.json"
    try:
        return _from_data(json.loads(cache.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    catalog = build()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(json.dumps(_as_data(catalog)), encoding="utf-8")
        partial.replace(cache)
        _prune(directory)
    except OSError:
        pass  # a read-only home only costs the validation time on every run
    return catalog


def _prune(directory: Path) -> None:
    """Keep the newest CACHED_CATALOGS validated catalogs (another process may be pruning too)."""
    cached = sorted(directory.glob("catalog-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for stale in cached[CACHED_CATALOGS:]:
        stale.unlink(missing_ok=True)


def _assemble(catalog: Catalog, files: list[Path], user: bool) -> Catalog:
    for path in files:
        _add_file(catalog, path, user)
    catalog.layouts.sort(key=lambda layout: layout.last_resort)  # a client family's own layouts go before the catch-alls
    _check_unique_ids(catalog)
    return catalog


def load_catalog(extra_dirs: tuple[str, ...] = ()) -> Catalog:
    """Load the bundled catalogs, then user directories that override (same id) or extend them."""
    bundled = _yaml_files(BUNDLED_DIR)
    user = [path for directory in extra_dirs for path in _yaml_files(Path(directory))]
    # Kept per process for the same files as they are now: a notebook that edits its catalog gets the edit.
    return _catalog_of(tuple(_signature(p) for p in bundled), tuple(_signature(p) for p in user))


def _signature(path: Path) -> tuple[Path, int, int]:
    status = path.stat()
    return path, status.st_mtime_ns, status.st_size


@functools.lru_cache(maxsize=8)
def _catalog_of(bundled_files: tuple[tuple[Path, int, int], ...], user_files: tuple[tuple[Path, int, int], ...]) -> Catalog:
    bundled = [path for path, _, _ in bundled_files]
    user = [path for path, _, _ in user_files]

    def bundled_catalog() -> Catalog:
        return _validated(bundled, lambda: _assemble(Catalog(), bundled, user=False))

    if not user:
        return bundled_catalog()
    return _validated(bundled + user, lambda: _assemble(bundled_catalog(), user, user=True))
