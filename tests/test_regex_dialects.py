"""One regex dialect for every engine: each catalog regex extracts the same fields from its examples
in Python's `re` (the bundled catalogs on the polars engine), the `regex` module (users' catalogs,
for its time limit), polars (Rust `regex`) and java.util.regex (Spark's dialect).

Scenario: a catalog author writes a pattern that works in Python but that Rust or Java reads
differently (a look-around, a possessive quantifier, `\\Z`, a leading `]` in a class…). The polars
engine would then silently miss lines, or Spark would produce a different event table.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from rebalance_doctor.catalog import compile_portable, load_catalog, portability_problems
from rebalance_doctor.catalog.dialect import ordered_union
from rebalance_doctor.catalog.schema import FIELD_BY_GROUP

from support import ROOT

CATALOG = load_catalog()
JAVA_CHECK = ROOT / "tests" / "java" / "RegexCheck.java"


def _cases():
    """(case id, regex, group names, text) for every message pattern, layout and prefix example."""
    cases = []
    for pattern in CATALOG.patterns:
        for i, example in enumerate(pattern.examples):
            cases.append((f"{pattern.id}#{i}", pattern.regex, example.line.split("\n")[0]))
    for entry in CATALOG.context_prefixes + CATALOG.outer_prefixes + CATALOG.layouts + CATALOG.reasons:
        for i, example in enumerate(entry.examples):
            cases.append((f"{entry.id}#{i}", entry.regex, example.line))
    return cases


CASES = _cases()


def _groups(regex: str) -> list[str]:
    return list(compile_portable(regex).groupindex)


def _python(regex: str, text: str) -> dict[str, str | None] | None:
    m = compile_portable(regex).search(text)
    return None if m is None else {name: m.group(name) for name in _groups(regex)}


def test_regex_module_extracts_what_re_extracts():
    """A user's catalog runs in the `regex` module (time-limited), the bundled one in `re`: one meaning."""
    import regex as regex_module

    mismatches = []
    for case_id, regex, text in CASES:
        m = regex_module.search(regex, text)
        got = None if m is None else {name: m.group(name) for name in _groups(regex)}
        if got != _python(regex, text):
            mismatches.append(f"{case_id}: re {_python(regex, text)} regex {got}")
    assert not mismatches, "\n".join(mismatches[:20])


def test_rust_regex_extracts_what_python_extracts():
    mismatches = []
    frame = pl.DataFrame({"text": [c[2] for c in CASES]})
    for row, (case_id, regex, text) in enumerate(CASES):
        expected = _python(regex, text)
        single = frame.slice(row, 1)
        matched = single.select(pl.col("text").str.contains(regex)).item()
        if not matched:
            got = None
        elif _groups(regex):
            got = single.select(pl.col("text").str.extract_groups(regex)).item()
        else:
            got = {}
        if got != expected:
            mismatches.append(f"{case_id}: python {expected} rust {got}")
    assert not mismatches, "\n".join(mismatches[:20])


def test_java_regex_extracts_what_python_extracts():
    assert shutil.which("java"), "needs a JDK 17+ on PATH (make test installs openjdk-17-jdk-headless)"
    def esc(value: str) -> str:
        return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")

    lines = [f"{esc(cid)}\t{esc(rx)}\t{','.join(_groups(rx))}\t{esc(text)}" for cid, rx, text in CASES]
    result = subprocess.run(
        ["java", str(JAVA_CHECK)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300, check=True
    )
    mismatches = []
    for (case_id, regex, text), out in zip(CASES, result.stdout.splitlines(), strict=True):
        cells = out.split("\t")[1:]
        expected = _python(regex, text)
        if cells and cells[0].startswith("error:"):
            mismatches.append(f"{case_id}: java cannot compile: {cells[0]}")
            continue
        got = None if cells == ["nomatch"] else {
            name: (None if value == "\\0" else value.replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r").replace("\\\\", "\\"))
            for name, value in zip(_groups(regex), cells, strict=True)
        }
        if got != expected:
            mismatches.append(f"{case_id}: python {expected} java {got}")
    assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize(
    ("regex", "problem"),
    [
        (r"(?<=Member )\w+", "look-around"),
        (r"(?!x)group", "look-around"),
        (r"(a)\1", "back-reference"),
        (r"(?P<groupId>\w+)", "(?<name>"),
        (r"(?<group_id>\w+)", "not a Java group name"),
        (r"(?<nosuch>\w+)", "unknown group name"),
        (r"a++", "possessive"),
        (r"(?>a)", "atomic"),
        (r"x\Z", "escape \\Z"),
        (r"[]a]", "leading ']'"),
        (r"[a[b]]", "nested '['"),
        (r"(a+)+b", "unbounded repetition nested"),
        (r"(?:x\s*)*y", "unbounded repetition nested"),
    ],
)
def test_non_portable_constructs_are_rejected(regex: str, problem: str):
    problems = portability_problems(regex, set(FIELD_BY_GROUP))
    assert any(problem in p for p in problems), problems


def test_portable_constructs_are_accepted():
    regex = r"Preparing to re(?:balance|stabilize) group (?<groupId>.+?) with old generation (?<generation>-?\d+)(?: \(reason: (?<reason>[^)]*)\))?[\s*]*$"
    assert portability_problems(regex, set(FIELD_BY_GROUP)) == []


def test_a_regex_that_does_not_compile_stops_loading_at_its_line(tmp_path: Path):
    """Checked at load time in both Python engines (bundled catalogs run in `re`, users' in `regex`),
    never at the first line that would reach it mid-scan."""
    from rebalance_doctor.catalog import CatalogError

    (tmp_path / "site.yaml").write_text(
        "component: consumer\npatterns:\n  - id: site.bad\n    kind: diagnostic\n    since: 3.0.0\n"
        "    anchor: 'Site notice '\n    regex: 'Site notice for group (?<groupId>\\S+'\n"
        "    examples:\n      - line: 'Site notice for group g1'\n"
    )
    with pytest.raises(CatalogError, match=r"site\.yaml:3: regex does not compile"):
        load_catalog((str(tmp_path),))


def _first_layout(line: str, layouts) -> tuple[int, dict] | None:
    for index, layout in enumerate(layouts):
        m = layout.compiled.match(line)
        if m is not None:
            return index, m.groupdict()
    return None


def test_the_layouts_as_one_regex_pick_the_layout_trying_each_in_turn_picks():
    """Scenario: a line's envelope. The scan tries every layout in one regex; it must pick the first layout in
    catalog order that matches, with the same groups, as trying the layouts one by one would."""
    lines = [text for _, _, text in CASES]
    lines += [line for path in sorted((ROOT / "tests" / "fixtures" / "corpus").glob("*.log")) for line in path.read_text(errors="replace").splitlines()[:300]]
    for union in (CATALOG.line_layouts, CATALOG.header_layouts):
        picked = 0
        for line in lines:
            m = union.pattern.match(line)
            index = None if m is None else union.layout_of[m.lastindex]
            found = None if m is None else (index, {name: m.group(number) for name, number in union.groups[index].items()})
            assert found == _first_layout(line, union.layouts), line
            picked += found is not None
        assert picked


def test_a_leading_inline_flag_still_applies_inside_the_union():
    union = re.compile(ordered_union(["^(?i)broker (?<msg>.*)", "^(?<msg>.*)"]))
    m = union.match("BROKER says hi")
    assert (m.lastgroup, m["msg_0"]) == ("rdAlt0", "says hi")
