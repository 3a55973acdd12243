"""The regex dialect every catalog entry is written in: what Python, polars (Rust regex) and the JVM (Java
regex, for matching in Spark SQL) all read the same way (:func:`portability_problems`), the literal text a regex requires (the
prefilter's anchors), and a time limit for users' regexes (:class:`BoundedPattern`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .errors import CatalogError

if TYPE_CHECKING:
    import regex  # imported where users' regexes are compiled: runs with the bundled catalog cached never need it

    from .entries import RegexEntry

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


_NAMED_GROUP = re.compile(r"\\.|\[(?:\\.|[^\]\\])*\]|\(\?<([A-Za-z][A-Za-z0-9]*)>")
_REGEX_SYNTAX = set(".[](){}*+?|^$")


def _named_groups_as(pattern: str, opening: Callable[[str], str]) -> str:
    return _NAMED_GROUP.sub(lambda m: m[0] if m[1] is None else opening(m[1]), pattern)


def uncaptured(pattern: str) -> str:
    """A catalog regex without its named groups and leading anchor, to combine several in one alternation
    (the dialect has no look-behind, so every ``(?<`` outside escapes and classes opens a named group)."""
    return _named_groups_as(pattern.removeprefix("^"), lambda name: "(?:")


def any_of(patterns: Iterable[str]) -> str:
    """Catalog regexes as one alternation without their groups (see :func:`uncaptured`): a test for "one of
    them matches here", each alternative in its own group so that its own ``|`` stays inside it."""
    return "|".join(f"(?:{uncaptured(pattern)})" for pattern in patterns)


_LEADING_FLAGS = re.compile(r"(\^?)\(\?([imsx]+)\)")


def ordered_union(patterns: list[str]) -> str:
    """Several regexes as one alternation, each in a group ``rdAlt<i>`` with its named groups renamed
    ``<name>_<i>``: matched at a line's start it finds what trying each in turn finds (the first that
    matches wins), and a match's ``lastindex`` is the number of the winner's outer group. A leading
    inline flag becomes a scoped one, which an alternation allows."""
    branches = []
    for i, pattern in enumerate(patterns):
        flags = _LEADING_FLAGS.match(pattern)
        if flags:
            pattern = f"{flags[1]}(?{flags[2]}:{pattern[flags.end() :]})"
        body = _named_groups_as(pattern, lambda name, i=i: f"(?P<{name}_{i}>")
        branches.append(f"(?P<rdAlt{i}>{body})")
    return "(?:" + "|".join(branches) + ")"


def compile_portable(pattern: str) -> re.Pattern:
    """A portable regex compiled by Python's ``re``, which spells named groups ``(?P<name>…)``: the dialect
    means the same there, and ``re`` compiles and matches faster than the ``regex`` module (docs/performance.md)."""
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

