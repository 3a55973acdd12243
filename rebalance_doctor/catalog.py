"""Catalogs: every Kafka wording, log layout and log-context prefix, loaded from YAML data.

The Python side only knows the *shape* of a catalog. The words live in ``patterns/``:

- ``patterns/messages/*.yaml`` – one entry per log message (id, kind, component, versions,
  literal anchor, one portable regex with named groups, examples that test themselves);
- ``patterns/layouts.yaml`` – envelopes (timestamp, level, logger, thread) and outer prefixes
  (docker-compose, kubectl, …) that carry the node name;
- ``patterns/context.yaml`` – log-context prefixes inside the message (``[Consumer clientId=…]``);
- ``patterns/relevance.yaml`` – words that make an unmatched line worth reporting.

Every regex must behave the same in Python (``re``; the ``regex`` module for users' catalogs), polars (Rust regex) and Spark
(Java regex); :func:`portability_problems` enforces the common dialect and loading fails with
``file:line`` on the first bad entry.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .schema import CAUSES, COLUMN_NAMES, COMPONENTS, FIELD_BY_GROUP, INTEGER_FIELDS, KINDS, SYMPTOM

if TYPE_CHECKING:
    import regex  # imported where users' regexes are compiled: runs with the bundled catalog cached never need it (12 ms)

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "patterns"

ENVELOPE_GROUPS = frozenset({"ts", "level", "logger", "thread", "node", "msg"})
CONTEXT_GROUPS = frozenset({"groupId", "clientId", "instanceId", "thread", "coordinator", "memberId"})
REASON_GROUPS = frozenset({"memberId", "instanceId"})


class CatalogError(ValueError):
    """A catalog entry that cannot be used, located at ``file:line``."""

    def __init__(self, path: Path | str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = str(path)
        self.line = line
        self.message = message

    def __reduce__(self):  # raised in a scan process, re-raised in the one the user runs
        return CatalogError, (self.path, self.line, self.message)


# --------------------------------------------------------------------------- regex dialect

_ALLOWED_ESCAPE_LETTERS = set("dDsSwWbBtnr")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def portability_problems(source: str, allowed_groups: frozenset[str] | set[str]) -> list[str]:
    """Why ``source`` would not behave the same in Python ``regex``, Rust and Java regex.

    The portable dialect: no look-around, no back-references, no atomic groups or possessive
    quantifiers, named groups spelled ``(?<name>…)`` with Java-legal names, escapes limited to
    punctuation and ``\\d \\s \\w \\b \\t \\n \\r`` (and their negations), no nested character
    classes or class set operations, and no unbounded repetition nested in unbounded repetition.
    """
    problems: list[str] = []
    names: list[str] = []
    i, n = 0, len(source)
    in_class = False
    # per open group: does it contain an unbounded quantifier?
    group_unbounded: list[bool] = [False]
    while i < n:
        ch = source[i]
        if ch == "\\":
            if i + 1 >= n:
                problems.append("trailing backslash")
                break
            nxt = source[i + 1]
            if nxt.isdigit():
                problems.append(f"back-reference or octal escape \\{nxt} is not portable")
            elif nxt.isalpha() and nxt not in _ALLOWED_ESCAPE_LETTERS:
                problems.append(f"escape \\{nxt} is not portable (use \\d \\s \\w \\b \\t \\n \\r or punctuation)")
            i += 2
            continue
        if in_class:
            if ch == "[":
                problems.append("nested '[' inside a character class is not portable (escape it)")
            elif source.startswith("&&", i) or source.startswith("--", i) or source.startswith("~~", i):
                problems.append("character-class set operations are not portable")
            elif ch == "]":
                in_class = False
            i += 1
            continue
        if ch == "[":
            in_class = True
            i += 1
            if i < n and source[i] == "^":
                i += 1
            if i < n and source[i] == "]":  # a leading ']' is literal in Python/Java, not in Rust
                problems.append("a leading ']' in a character class is not portable (escape it)")
                i += 1
            continue
        if ch == "(":
            if source.startswith("(?", i):
                rest = source[i + 2 : i + 4]
                if rest[:1] in ("=", "!") or rest in ("<=", "<!"):
                    problems.append("look-around is not portable")
                elif rest[:1] == ">":
                    problems.append("atomic groups are not portable")
                elif rest[:1] == "P":
                    problems.append("use (?<name>...) rather than (?P<name>...) or (?P=name)")
                elif rest[:1] == "<":
                    end = source.find(">", i + 3)
                    name = source[i + 3 : end] if end > 0 else ""
                    if not _NAME.fullmatch(name):
                        problems.append(f"group name {name!r} is not a Java group name (letters and digits)")
                    elif name not in allowed_groups:
                        problems.append(f"unknown group name {name!r}; known: {', '.join(sorted(allowed_groups))}")
                    names.append(name)
                elif rest[:1] == "#":
                    problems.append("inline comments are not portable")
                elif rest[:1] not in (":", "i", "s", "m", "x", "-"):
                    problems.append(f"group syntax (?{rest[:1]} is not portable")
            group_unbounded.append(False)
            i += 1
            continue
        if ch == ")":
            inner = group_unbounded.pop() if len(group_unbounded) > 1 else False
            quant = source[i + 1 : i + 2]
            unbounded_quant = quant in ("*", "+") or (quant == "{" and re.match(r"\{\d+,\}", source[i + 1 :]))
            if inner and unbounded_quant:
                problems.append("unbounded repetition nested in unbounded repetition can backtrack without end")
            if inner or unbounded_quant:
                group_unbounded[-1] = True
            i += 1
            if i < n and source[i] in "*+?" and i + 1 < n and source[i + 1] == "+":
                problems.append("possessive quantifiers are not portable")
            continue
        if ch in "*+":
            group_unbounded[-1] = True
            if i + 1 < n and source[i + 1] == "+":
                problems.append("possessive quantifiers are not portable")
        elif ch == "{" and re.match(r"\{\d+,\}", source[i:]):
            group_unbounded[-1] = True
        i += 1
    if in_class:
        problems.append("unterminated character class")
    duplicated = {name for name in names if names.count(name) > 1}
    if duplicated:
        problems.append(f"group names used twice: {', '.join(sorted(duplicated))}")
    return problems


# --------------------------------------------------------------------------- YAML with lines


@functools.cache
def _line_loader() -> type:
    """A safe loader (libyaml when available: 8× faster) that records the line of every mapping as
    ``__line__``. Built on first use: runs that find the catalog cached never import yaml (50 ms)."""
    import yaml

    class LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    def mapping_with_line(loader: LineLoader, node: yaml.MappingNode) -> dict[str, Any]:
        mapping = loader.construct_mapping(node, deep=True)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping_with_line)
    return LineLoader


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_line_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise CatalogError(path, (mark.line + 1) if mark else 1, f"not valid YAML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(path, 1, f"cannot read catalog: {exc}") from None
    if data is None:
        return {"__line__": 1}
    if not isinstance(data, dict):
        raise CatalogError(path, 1, "a catalog file must be a mapping")
    return data


# --------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class Example:
    line: str
    fields: dict[str, Any]


# a named group's opening, or what may look like one and is not: an escape, a character class
_NAMED_GROUP = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|\(\?<([A-Za-z][A-Za-z0-9]*)>")
_REGEX_SYNTAX = set(".[](){}*+?|^$")


def _named_groups_as(pattern: str, opening: Callable[[str], str]) -> str:
    return _NAMED_GROUP.sub(lambda m: m[0] if m[1] is None else opening(m[1]), pattern)


def uncaptured(pattern: str) -> str:
    """A catalog regex without its named groups and leading anchor, to combine several in one alternation
    (the dialect has no look-behind, so every ``(?<`` outside escapes and classes opens a named group)."""
    return _named_groups_as(pattern.removeprefix("^"), lambda name: "(?:")


def compile_portable(pattern: str) -> re.Pattern:
    """A portable regex compiled by Python's ``re``, which spells named groups ``(?P<name>…)``: the dialect
    means the same there, and ``re`` compiles 3× and matches 2× faster than the ``regex`` module (measured on
    the catalog and the hit lines of the 1 GB benchmark)."""
    return re.compile(_named_groups_as(pattern, lambda name: f"(?P<{name}>"))


def _syntax(pattern: str) -> Iterator[tuple[int, str, int]]:
    """(index, character, group depth after it) for each character of ``pattern`` outside escapes and classes."""
    depth, escaped, in_class = 0, False, False
    for index, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        else:
            depth += (char == "(") - (char == ")")
            yield index, char, depth


def _has_top_level_alternation(pattern: str) -> bool:
    return any(char == "|" and depth == 0 for _, char, depth in _syntax(pattern))


def _optional_group_end(pattern: str) -> int | None:
    """Where a leading group that may match nothing (``(…)?``, ``(…)*``, lazy or not) ends, or None."""
    if not pattern.startswith("(") or pattern.startswith("(?i)"):
        return None
    for index, char, depth in _syntax(pattern):
        if char == ")" and depth == 0:
            if pattern[index + 1 : index + 2] not in ("?", "*"):
                return None
            return index + 2 + (pattern[index + 2 : index + 3] == "?")
    return None


def required_text(pattern: str) -> str:
    """Literal text every match of ``pattern`` contains ('' when none is found): a cheap substring test
    that spares most regex searches on texts that cannot match. It is the pattern's literal start after
    any leading groups that may match nothing (the optional broker prefix of the reason rules), and
    nothing for a case-insensitive pattern."""
    if pattern.startswith("(?i)"):
        return ""
    while (end := _optional_group_end(pattern)) is not None:
        pattern = pattern[end:]
    return required_prefix(pattern)


def required_prefix(pattern: str) -> str:
    """The literal text every match of ``pattern`` starts with ('' when there is none)."""
    if _has_top_level_alternation(pattern):
        return ""
    literal, i = [], 1 if pattern.startswith("^") else 0
    while i < len(pattern):
        char, step = pattern[i], 1
        if char == "\\":
            char, step = pattern[i + 1 : i + 2], 2
            if not char or char.isalnum():  # \d, \s, \b …: a class, not a literal
                break
        elif char in _REGEX_SYNTAX:
            break
        quantifier = pattern[i + step : i + step + 1]
        if quantifier in ("?", "*", "{"):
            break
        literal.append(char)
        if quantifier == "+":
            break
        i += step
    return "".join(literal)


USER_REGEX_SECONDS = 1.0  # a user regex that needs longer on one line backtracks without end


class BoundedPattern:
    """A user's regex with a time limit per line: a pathological pattern (alternatives that overlap
    under a repetition, ``(a|aa)+b``, pass the dialect check) stops the run with its ``file:line``
    instead of hanging it."""

    def __init__(self, pattern: regex.Pattern, entry: RegexEntry):
        self._pattern = pattern
        self._entry = entry

    def search(self, text: str) -> regex.Match | None:
        return self._bounded(self._pattern.search, text)

    def match(self, text: str) -> regex.Match | None:
        return self._bounded(self._pattern.match, text)

    def __getattr__(self, name: str) -> Any:  # groupindex, pattern …
        if name.startswith("_"):  # not yet set (unpickling): never recurse
            raise AttributeError(name)
        return getattr(self._pattern, name)

    def _bounded(self, method: Any, text: str) -> regex.Match | None:
        try:
            return method(text, timeout=USER_REGEX_SECONDS)
        except TimeoutError:
            raise CatalogError(
                self._entry.path, self._entry.line,
                f"the regex of {self._entry.id} ran over {USER_REGEX_SECONDS:g} s on one {len(text):,}-character line: it "
                "backtracks without end (alternatives that overlap under a repetition, like (a|aa)+); rewrite it",
            ) from None


@dataclass(frozen=True)
class RegexEntry:
    """What every catalog entry has: an id, one portable regex, the examples that test it, and where it is."""

    id: str
    regex: str
    examples: tuple[Example, ...]
    path: str
    line: int

    @functools.cached_property
    def compiled(self) -> re.Pattern | BoundedPattern:
        """The regex; a user's own is time-limited per line by the ``regex`` module (the bundled ones are
        reviewed and tested, and run in the faster ``re``)."""
        if Path(self.path).is_relative_to(BUNDLED_DIR):
            return compile_portable(self.regex)
        import regex

        return BoundedPattern(regex.compile(self.regex), self)

    @functools.cached_property
    def required_text(self) -> str:
        return required_text(self.regex)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class MessagePattern(RegexEntry):
    """One Kafka log message: its wording across versions as one portable regex."""

    kind: str = ""
    component: str = ""
    level: str = "INFO"
    since: str = ""
    until: str | None = None
    anchor: str = ""
    constants: dict[str, Any] = field(default_factory=dict)
    multiline: bool = False

    @property
    def versions(self) -> str:
        return f"{self.since}–{self.until or 'current'}"


@dataclass(frozen=True)
class Layout(RegexEntry):
    """An envelope: where the timestamp, level, logger and thread sit around the message."""

    ts_format: str | None = None
    header: bool = False  # the line before the message carries the timestamp (java.util.logging)


@dataclass(frozen=True)
class ContextPrefix(RegexEntry):
    """A log-context prefix inside the message that names the group, client or thread."""


@dataclass(frozen=True)
class ReasonRule(RegexEntry):
    """Reason text (broker `reason: …`, client `due to: …`) → the cause it names, or ``symptom``."""

    cause: str = ""


@dataclass(frozen=True)
class IgnoredWording:
    """A reference wording deliberately left out of the catalogs, and why."""

    template: str
    reason: str
    path: str
    line: int


@dataclass
class Catalog:
    patterns: list[MessagePattern] = field(default_factory=list)
    layouts: list[Layout] = field(default_factory=list)
    outer_prefixes: list[ContextPrefix] = field(default_factory=list)
    context_prefixes: list[ContextPrefix] = field(default_factory=list)
    relevance_words: list[str] = field(default_factory=list)
    reasons: list[ReasonRule] = field(default_factory=list)
    ignored: list[IgnoredWording] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    @functools.cached_property
    def by_id(self) -> dict[str, MessagePattern]:
        return {p.id: p for p in self.patterns}

    @functools.cached_property
    def layouts_preferring(self) -> dict[str, list[Layout]]:
        """Per layout id: that layout, then the others in catalog order (how a file whose lines have
        had that layout is read). Made once: a reader is made per file and block, 2,000 small files make 2,000."""
        return {first.id: [first, *(layout for layout in self.layouts if layout is not first)] for first in self.layouts}

    @functools.cached_property
    def anchors(self) -> list[str]:
        """Distinct literal anchors, the prefilter's whole vocabulary."""
        return sorted({p.anchor for p in self.patterns})

    @functools.cached_property
    def patterns_by_anchor(self) -> dict[str, list[MessagePattern]]:
        grouped: dict[str, list[MessagePattern]] = {}
        for pattern in self.patterns:
            grouped.setdefault(pattern.anchor, []).append(pattern)
        return grouped

    @functools.cached_property
    def any_outer_prefix(self) -> re.Pattern | None:
        """One regex for "some outer prefix starts this line", so most lines skip the prefix loop."""
        if not self.outer_prefixes:
            return None
        return compile_portable("|".join(f"(?:{uncaptured(p.regex)})" for p in self.outer_prefixes))

    @functools.cached_property
    def node_prefixes(self) -> list[ContextPrefix]:
        """The outer prefixes that name a node (docker-compose, kubectl --prefix)."""
        return [p for p in self.outer_prefixes if "(?<node>" in p.regex]

    @functools.cached_property
    def priority(self) -> dict[str, int]:
        """Catalog order decides between two patterns matching one line: earlier wins."""
        return {p.id: i for i, p in enumerate(self.patterns)}


def _require(entry: dict, key: str, path: Path, kind: type | tuple = str) -> Any:
    if key not in entry or entry[key] is None or entry[key] == "":
        raise CatalogError(path, entry["__line__"], f"missing '{key}'")
    value = entry[key]
    if not isinstance(value, kind):
        raise CatalogError(path, entry["__line__"], f"'{key}' must be {getattr(kind, '__name__', kind)}")
    return value


def _examples(entry: dict, path: Path, required: bool) -> tuple[Example, ...]:
    raw = entry.get("examples") or []
    if required and not raw:
        raise CatalogError(path, entry["__line__"], "needs at least one example line")
    examples = []
    for item in raw:
        if isinstance(item, str):
            examples.append(Example(item, {}))
        elif isinstance(item, dict) and isinstance(item.get("line"), str):
            fields = {k: v for k, v in (item.get("fields") or {}).items() if k != "__line__"}
            examples.append(Example(item["line"], fields))
        else:
            raise CatalogError(path, entry["__line__"], "an example is a line, or a mapping with 'line' and 'fields'")
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
    line = entry["__line__"]
    pattern_id = _require(entry, "id", path)
    kind = _require(entry, "kind", path)
    if kind not in KINDS:
        raise CatalogError(path, line, f"unknown kind {kind!r} (see rebalance_doctor.schema.KINDS)")
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
    constants = {k: v for k, v in (entry.get("set") or {}).items() if k != "__line__"}
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
        examples=examples,
        path=str(path),
        line=line,
    )


def _prefix(entry: dict, path: Path, allowed: frozenset[str]) -> ContextPrefix:
    source = _require(entry, "regex", path)
    _compile_checked(source, allowed, path, entry["__line__"])
    return ContextPrefix(
        id=_require(entry, "id", path),
        regex=source,
        examples=_examples(entry, path, required=True),
        path=str(path),
        line=entry["__line__"],
    )


def _layout(entry: dict, path: Path) -> Layout:
    source = _require(entry, "regex", path)
    _compile_checked(source, ENVELOPE_GROUPS, path, entry["__line__"])
    return Layout(
        id=_require(entry, "id", path),
        regex=source,
        ts_format=entry.get("ts_format"),
        examples=_examples(entry, path, required=True),
        path=str(path),
        line=entry["__line__"],
        header=bool(entry.get("header", False)),
    )


def _reason_rule(entry: dict, path: Path) -> ReasonRule:
    cause = _require(entry, "cause", path)
    if cause not in CAUSES and cause != SYMPTOM:
        raise CatalogError(path, entry["__line__"], f"cause must be one of {', '.join(CAUSES)} or {SYMPTOM}")
    source = _require(entry, "regex", path)
    _compile_checked(source, REASON_GROUPS, path, entry["__line__"])
    return ReasonRule(
        id=_require(entry, "id", path),
        cause=cause,
        regex=source,
        examples=_examples(entry, path, required=True),
        path=str(path),
        line=entry["__line__"],
    )


def _add_file(catalog: Catalog, path: Path, user: bool) -> None:
    data = _read_yaml(path)
    catalog.sources.append(str(path))
    defaults = {"component": data.get("component")}
    new_patterns = [_message_pattern(e, defaults, path) for e in data.get("patterns") or []]
    if user:
        replaced = {p.id for p in new_patterns}
        catalog.patterns[:] = new_patterns + [p for p in catalog.patterns if p.id not in replaced]
    else:
        catalog.patterns.extend(new_patterns)
    for entry in data.get("ignored") or []:
        catalog.ignored.append(
            IgnoredWording(_require(entry, "template", path), _require(entry, "reason", path), str(path), entry["__line__"])
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
    rules = [_reason_rule(e, path) for e in data.get("reasons") or []]
    if user:
        catalog.reasons[:0] = rules
    else:
        catalog.reasons += rules


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


def _validated(files: list[Path], build: Callable[[], Catalog]) -> Catalog:
    """The catalog ``build`` makes of ``files``, validated once per install and content: later runs
    unpickle the result (~10 ms where validating 100 user patterns took 0.1 s, the bundled ones 0.5 s)."""
    digest = hashlib.sha256()
    for path in (Path(__file__), Path(__file__).with_name("schema.py"), *files):  # the validator is part of the key
        digest.update(str(path).encode() + b"\0" + path.read_bytes())  # with the path: entries name their files
    directory = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rebalance-doctor"
    cache = directory / f"catalog-{digest.hexdigest()[:24]}.pickle"
    try:
        with cache.open("rb") as handle:
            return pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError):
        pass
    catalog = build()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(f".{os.getpid()}.partial")
        partial.write_bytes(pickle.dumps(catalog, protocol=pickle.HIGHEST_PROTOCOL))
        partial.replace(cache)
        _prune(directory)
    except OSError:
        pass  # a read-only home only costs the validation time on every run
    return catalog


def _prune(directory: Path) -> None:
    """Keep the newest CACHED_CATALOGS validated catalogs (another process may be pruning too)."""
    cached = sorted(directory.glob("catalog-*.pickle"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for stale in cached[CACHED_CATALOGS:]:
        stale.unlink(missing_ok=True)


def _assemble(catalog: Catalog, files: list[Path], user: bool) -> Catalog:
    for path in files:
        _add_file(catalog, path, user)
    _check_unique_ids(catalog)
    return catalog


@functools.lru_cache(maxsize=8)
def load_catalog(extra_dirs: tuple[str, ...] = ()) -> Catalog:
    """Load the bundled catalogs, then user directories that override (same id) or extend them."""
    bundled = _yaml_files(BUNDLED_DIR)
    user = [path for directory in extra_dirs for path in _yaml_files(Path(directory))]

    def bundled_catalog() -> Catalog:
        return _validated(bundled, lambda: _assemble(Catalog(), bundled, user=False))

    if not user:
        return bundled_catalog()
    return _validated(bundled + user, lambda: _assemble(bundled_catalog(), user, user=True))


_CONVERTED_FIELDS = INTEGER_FIELDS | {"leader"}  # the columns whose text becomes another type


def coerce_field(name: str, value: Any) -> Any:
    """Turn an extracted string into the column's Python type (ints for integer columns)."""
    if value.__class__ is str and name not in _CONVERTED_FIELDS:  # most fields of every event: first, and cheap
        return value
    if value is None:
        return None
    if name == "leader":
        return value if isinstance(value, bool) else str(value).lower() in ("true", "1", "yes", "me")
    if name in INTEGER_FIELDS:
        try:
            return int(str(value).strip())
        except ValueError:
            return None
    return str(value)
