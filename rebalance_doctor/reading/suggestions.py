"""Catalog entries for lines the catalogs do not know yet (``rebalance-doctor patterns suggest``).

The relevant-but-unmatched lines of a run are stripped of their envelope and context prefix, and
Drain3 (a maintained log-template miner) groups their messages into templates. Each template becomes an
entry to edit: its longest literal run is the anchor, its variable tokens become regex groups, named
after the word that precedes them the way the bundled catalog's own examples name their fields
("generation 7" → generation), and its kind is that of the bundled entry whose wording is nearest.
What is guessed says so in a comment; the user's catalog is checked against its examples when it loads.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import yaml

from ..catalog import Catalog
from ..catalog.dialect import compile_portable, portability_problems
from ..catalog.entries import MessagePattern, coerce_field
from ..catalog.schema import FIELD_BY_GROUP, INTEGER_FIELDS
from .envelope import messages_of

_WORD = re.compile(r"[A-Za-z]+")
_INTEGER = re.compile(r"-?\d+")
_VALUE_PREFIX = re.compile(r"[^\w\s]*(?:[A-Za-z_][\w.-]*[=:][^\w\s]*)?")
_VALUE_SUFFIX = re.compile(r"[^\w\s]*$")
_IDENTIFIER = re.compile(r"\d|\w[-_.]\w")
# Fields worth naming in a template's variable token; the reason, state and thread of a message are
# free text or enumerations that a single token does not hold.
_NAMEABLE = frozenset({"group_id", "generation", "group_epoch", "member_epoch", "member_id", "instance_id", "client_id",
                       "leader_id", "coordinator", "member_count", "client_count", "duration_ms", "offsets_partition"})
_COLUMN_GROUP = {column: group for group, column in FIELD_BY_GROUP.items()}
# Below it a bundled wording is too far to lend its kind: the entry stays `diagnostic`, which no analyzer reads as
# a cause (a wrong kind would make the report confidently wrong), and the comment lists the nearest kinds to choose from.
MIN_SIMILARITY = 0.6
MIN_MARGIN = 0.15
MIN_NAMING_ENTRIES = 3  # bundled entries that must agree on what the word before a value names
NEAREST_SHOWN = 3
EXAMPLES_PER_ENTRY = 3


@dataclass
class Suggestion:
    """One template of unmatched lines, as a catalog entry to edit."""

    template: str
    lines: list[tuple[str, int, str]]  # (file, line number, raw line) of every line the template covers
    entry: dict = field(default_factory=dict)  # id, kind, since, anchor, regex, examples
    nearest: list[tuple[float, MessagePattern]] = field(default_factory=list)  # (similarity, bundled entry), one per kind


def _messages(raws: list[str], catalog: Catalog) -> list[str]:
    """Each line's message without envelope and leading context prefix: what varies between two lines
    of one wording is then only the wording's own values. The envelopes are read as a scan reads them."""
    return [_wording(message, catalog) for message in messages_of(raws, catalog)]


def _wording(message: str, catalog: Catalog) -> str:
    message = message.strip()
    embedded = message.find(' {"')
    if embedded > 0 and message.endswith("}"):  # a JSON object of fields after the text: not wording
        message = message[:embedded]
    for prefix in catalog.context_prefixes:  # what precedes a context prefix is envelope a layout did not know
        if prefix.required_text and prefix.required_text not in message:
            continue
        m = prefix.compiled.search(message)
        if m and m.end() > 0:
            message = message[m.end():].lstrip(" :-")
    return message


_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_SUFFIXES = ("ing", "ed", "es", "s", "e")


def _stems(text: str) -> list[str]:
    """The words of a wording as comparable stems: camelCase split (joinGroup → join group), lower case, a
    trailing -ing/-ed/-es/-s/-e dropped (joined, joining, join → join; leaving, leave → leav)."""
    stems = []
    for word in _CAMEL.findall(text):
        word = word.lower()
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        if len(word) > 2:
            stems.append(word)
    return stems


def _last_words(text: str, count: int) -> str:
    return " ".join(w.lower() for w in _WORD.findall(text)[-count:])


class _Vocabulary:
    """What the bundled catalog teaches: which word precedes which field in its examples, and the
    wording of each entry (as word weights) to find the entry nearest a new template."""

    def __init__(self, catalog: Catalog):
        self.names: dict[str, Counter] = defaultdict(Counter)  # words before a value → its column, counted in entries
        self._seen: set[tuple[str, str, str]] = set()
        documents: list[tuple[MessagePattern, Counter]] = []
        messages = iter(_messages([example.line for pattern in catalog.patterns for example in pattern.examples], catalog))
        for pattern in catalog.patterns:
            words: Counter = Counter()
            for example in pattern.examples:
                message = next(messages)
                values = {str(v) for v in example.fields.values() if isinstance(v, (str, int)) and not isinstance(v, bool)}
                for column, value in example.fields.items():
                    if column in _NAMEABLE and str(value):
                        self._learn(example.line, str(value), column, pattern.id)
                for value in values:  # a field's value is not wording
                    message = message.replace(value, " ")
                words.update(_stems(message))
            documents.append((pattern, words))
        frequency = Counter(word for _, words in documents for word in words)
        self.idf = {word: math.log(len(documents) / count) for word, count in frequency.items()}
        self.documents = [(pattern, self._weights(words)) for pattern, words in documents]

    def _learn(self, line: str, value: str, column: str, entry: str) -> None:
        """Count, once per entry, the words before each whole occurrence of a field's value (not a group id
        inside a partition name that starts with it)."""
        for m in re.finditer(rf"(?<![\w.-]){re.escape(value)}(?![\w.-])", line):
            before = line[: m.start()]
            for count in (2, 1):
                key = _last_words(before, count)
                if (key, column, entry) not in self._seen:
                    self._seen.add((key, column, entry))
                    self.names[key][column] += 1

    def _weights(self, words: Counter) -> dict[str, float]:
        weights = {word: count * self.idf.get(word, 1.0) for word, count in words.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {word: w / norm for word, w in weights.items()}

    def field_after(self, text: str, integer: bool) -> str | None:
        """The column a value placed after ``text`` holds, when the catalog's examples agree on it."""
        for count in (2, 1):
            votes = self.names.get(_last_words(text, count))
            if not votes:
                continue
            column, n = votes.most_common(1)[0]
            if n >= MIN_NAMING_ENTRIES and n >= 0.7 * sum(votes.values()) and (column in INTEGER_FIELDS) == integer:
                return column
        return None

    def nearest(self, wording: str) -> list[tuple[float, MessagePattern]]:
        """The bundled entries whose wording is nearest, most similar first, one per kind."""
        query = self._weights(Counter(_stems(wording)))
        scored = sorted(((sum(w * weights.get(word, 0.0) for word, w in query.items()), pattern) for pattern, weights in self.documents),
                        key=lambda item: -item[0])
        by_kind: dict[str, tuple[float, MessagePattern]] = {}
        for similarity, pattern in scored:
            if similarity > 0 and pattern.kind not in by_kind:
                by_kind[pattern.kind] = (similarity, pattern)
            if len(by_kind) == NEAREST_SHOWN:
                break
        return list(by_kind.values())


def _common_edges(values: list[str]) -> tuple[str, str]:
    """What every value starts and ends with that is not the value itself: punctuation (quotes, brackets,
    a trailing comma) and a ``key=`` or ``key:`` before it."""
    prefix = values[0]
    for value in values[1:]:
        while not value.startswith(prefix):
            prefix = prefix[:-1]
    suffix = values[0]
    for value in values[1:]:
        while not value.endswith(suffix):
            suffix = suffix[1:]
    prefix = _VALUE_PREFIX.match(prefix)[0]
    suffix = _VALUE_SUFFIX.search(suffix)[0]
    if len(prefix) + len(suffix) >= min(len(v) for v in values):
        return "", ""
    return prefix, suffix


def _value_like(token: str) -> bool:
    """A token that holds a value rather than a word of the wording: a number, an id, a quoted or keyed value."""
    prefix, suffix = _common_edges([token])
    inner = token[len(prefix): len(token) - len(suffix)]
    return bool(prefix.strip("([{") or suffix.strip(",.;:)]}") or _IDENTIFIER.search(inner)) and bool(inner)


def _escape(text: str) -> str:
    return re.sub(r"([.\[\](){}*+?|^$\\])", r"\\\1", text)


def _entry_for(suggestion: Suggestion, messages: list[str], vocabulary: _Vocabulary, taken_ids: set[str]) -> dict | None:
    tokens = suggestion.template.split()
    split = [m.split() for m in messages]
    parts: list[str] = []
    literal_runs: list[list[str]] = [[]]
    fields_used: set[str] = set()
    literal_text = ""
    for index, token in enumerate(tokens):
        if token != "<*>" and not _value_like(token):
            parts.append(_escape(token))
            literal_runs[-1].append(token)
            literal_text += " " + token
            continue
        values = [words[index] for words in split if len(words) == len(tokens)] or [token]
        prefix, suffix = _common_edges(values)
        inner = [v[len(prefix): len(v) - len(suffix)] for v in values]
        integer = all(_INTEGER.fullmatch(v) for v in inner)
        column = vocabulary.field_after(literal_text + " " + prefix, integer)
        value_regex = r"-?\d+" if integer else (r"\S+?" if suffix else r"\S+")
        if column and column not in fields_used:
            fields_used.add(column)
            name = _COLUMN_GROUP[column]
            # one line may quote an id that another does not: the quotes are not part of it, nor the "\n" a logger that
            # quotes the message writes for the format's newline
            value_regex = f"(?<{name}>{value_regex})" if integer else f"[\"']?(?<{name}>[^\\s\"'\\\\]+)[\"']?"
        parts.append(_escape(prefix) + value_regex + _escape(suffix))
        literal_runs.append([prefix] if prefix.strip() else [])
        if suffix.strip():
            literal_runs.append([suffix])
        literal_text += " " + prefix + " " + suffix
    regex = r"\s+".join(parts)
    if portability_problems(regex, set(FIELD_BY_GROUP)):
        return None
    compiled = compile_portable(regex)
    examples = [raw for _, _, raw in suggestion.lines if compiled.search(raw)][:EXAMPLES_PER_ENTRY]
    anchors = sorted((" ".join(run) for run in literal_runs if run), key=len, reverse=True)
    anchor = next((a for a in anchors if len(a) >= 4 and all(a in raw for raw in examples)), None)
    if not examples or anchor is None:
        return None
    suggestion.nearest = vocabulary.nearest(" ".join(run for runs in literal_runs for run in runs))
    best = suggestion.nearest[0][0] if suggestion.nearest else 0.0
    runner_up = suggestion.nearest[1][0] if len(suggestion.nearest) > 1 else 0.0
    close = best >= MIN_SIMILARITY and best - runner_up >= MIN_MARGIN  # near one kind, and nearer it than any other
    slug = "-".join(w.lower() for w in _WORD.findall(anchor)[:5]) or "template"
    entry_id, n = f"suggested.{slug}", 2
    while entry_id in taken_ids:
        entry_id, n = f"suggested.{slug}-{n}", n + 1
    taken_ids.add(entry_id)
    return {
        "id": entry_id,
        "kind": suggestion.nearest[0][1].kind if close else "diagnostic",
        "since": "0.0",
        "anchor": anchor,
        "regex": regex,
        "examples": [
            {"line": raw, "fields": {FIELD_BY_GROUP[k]: coerce_field(FIELD_BY_GROUP[k], v)
                                     for k, v in compiled.search(raw).groupdict().items() if v is not None}}
            for raw in examples
        ],
    }


def suggest(unmatched: list[tuple[str, int, str]], catalog: Catalog, limit: int = 50) -> list[Suggestion]:
    """Templates of the relevant lines no entry matched, each as a catalog entry; the most specific first (the
    order in which they must be tried), at most ``limit`` of them, keeping the most frequent."""
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()
    config.profiling_enabled = False
    miner = TemplateMiner(config=config)
    members: dict[int, list[tuple[tuple[str, int, str], str]]] = defaultdict(list)
    for (file, number, raw), message in zip(unmatched, _messages([raw for *_, raw in unmatched], catalog), strict=True):
        if message:
            result = miner.add_log_message(message)
            members[result["cluster_id"]].append(((file, number, raw), message))
    vocabulary = _Vocabulary(catalog)
    clusters = sorted(miner.drain.clusters, key=lambda c: (-c.size, c.cluster_id))
    suggestions, taken = [], {p.id for p in catalog.patterns}
    for cluster in clusters:
        lines = [line for line, _ in members[cluster.cluster_id]]
        suggestion = Suggestion(cluster.get_template(), lines)
        entry = _entry_for(suggestion, [m for _, m in members[cluster.cluster_id]], vocabulary, taken)
        if entry:
            suggestion.entry = entry
            suggestions.append(suggestion)
    frequent = {id(s) for s in sorted(suggestions, key=lambda s: -len(s.lines))[:limit]}
    return _each_matching_its_own([s for s in suggestions if id(s) in frequent])


def _each_matching_its_own(suggestions: list[Suggestion]) -> list[Suggestion]:
    """The suggestions in the order a catalog needs, where the first entry listed wins a line: the most
    literal text first. An entry whose examples an earlier one takes is dropped, as that one covers its lines."""
    def literal_length(s: Suggestion) -> int:
        return sum(len(t) for t in s.template.split() if t != "<*>")

    ordered = sorted(suggestions, key=lambda s: (-literal_length(s), -len(s.lines)))
    compiled = {id(s): compile_portable(s.entry["regex"]) for s in ordered}
    kept: list[Suggestion] = []
    for suggestion in ordered:
        examples = [e["line"] for e in suggestion.entry["examples"]]
        if all(not any(o.entry["anchor"] in line and compiled[id(o)].search(line) for o in kept) for line in examples):
            kept.append(suggestion)
    return kept


def _scalar(value: object) -> str:
    text = yaml.safe_dump(value, default_style="'" if isinstance(value, str) else None, width=1 << 30, allow_unicode=True)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def suggestions_yaml(suggestions: list[Suggestion], component: str) -> str:
    """The suggestions as a catalog file for ``--patterns DIR``, each entry with a comment saying where
    its lines are and what was guessed."""
    out = [
        "# Suggested by `rebalance-doctor patterns suggest`: templates of relevant lines no catalog entry matched.",
        "# Before using it: check each kind (guessed from the nearest bundled wording), name the fields the regex",
        "# leaves unnamed, give the ids and since/until the library's own versions (docs/catalogs.md).",
        f"component: {component}",
        "patterns:",
    ]
    for s in suggestions:
        where = ", ".join(f"{file}:{number}" for file, number, _ in s.lines[:3])
        nearest = ", ".join(f"{pattern.kind} ({pattern.id}, {similarity:.2f})" for similarity, pattern in s.nearest) or "none"
        guess = (f"kind of the nearest bundled wording; nearest kinds: {nearest}" if s.entry["kind"] != "diagnostic"
                 else f"no bundled wording is close enough to lend its kind; nearest kinds: {nearest}")
        out += [
            f"  # {len(s.lines)} line{'s' if len(s.lines) != 1 else ''} ({where}{', …' if len(s.lines) > 3 else ''})",
            f"  # template: {s.template}",
            f"  # {guess}",
            f"  - id: {_scalar(s.entry['id'])}",
            f"    kind: {s.entry['kind']}",
            f"    since: {_scalar(s.entry['since'])}",
            f"    anchor: {_scalar(s.entry['anchor'])}",
            f"    regex: {_scalar(s.entry['regex'])}",
            "    examples:",
        ]
        for example in s.entry["examples"]:
            out.append(f"      - line: {_scalar(example['line'])}")
            fields = ", ".join(f"{name}: {_scalar(value)}" for name, value in example["fields"].items())
            out.append(f"        fields: {{{fields}}}")
    return "\n".join(out) + "\n"
