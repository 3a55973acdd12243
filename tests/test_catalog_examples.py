"""Catalogs test themselves: every example line comes out as its own pattern with the expected fields.

Scenario: someone edits a regex in patterns/. The examples written next to it (real wording from
the Kafka source at the versions the entry claims) must still produce exactly that entry's event,
with the fields an analyzer will read.
"""

from __future__ import annotations

import pytest

from rebalance_doctor.catalog import load_catalog
from rebalance_doctor.reading.examples import example_problems

CATALOG = load_catalog()
EXAMPLES = [(p, i, e) for p in CATALOG.patterns for i, e in enumerate(p.examples)]


@pytest.fixture(scope="module")
def problems() -> dict[tuple[str, int], str]:
    """Every example through one batch, as a scan reads a block."""
    return example_problems(CATALOG, CATALOG.patterns)


@pytest.mark.parametrize(("pattern", "index", "example"), EXAMPLES, ids=[f"{p.id}#{i}" for p, i, _ in EXAMPLES])
def test_example_matches_its_own_pattern(pattern, index, example, problems) -> None:
    assert (pattern.id, index) not in problems, f"{pattern.where}: {problems[(pattern.id, index)]}"


@pytest.mark.parametrize("layout", CATALOG.layouts, ids=lambda layout: layout.id)
def test_layout_examples_read_their_envelope(layout) -> None:
    for example in layout.examples:
        m = layout.compiled.match(_strip_outer(example.line))
        assert m, f"{layout.path}:{layout.line}: example does not match: {example.line!r}"
        for name, expected in example.fields.items():
            assert m.group(name) == expected, f"{layout.path}:{layout.line}: {name}: {m.group(name)!r} != {expected!r}"


@pytest.mark.parametrize("prefix", CATALOG.outer_prefixes + CATALOG.context_prefixes, ids=lambda p: p.id)
def test_prefix_examples_yield_their_fields(prefix) -> None:
    from rebalance_doctor.catalog.schema import FIELD_BY_GROUP

    for example in prefix.examples:
        m = prefix.compiled.search(example.line)
        assert m, f"{prefix.path}:{prefix.line}: example does not match: {example.line!r}"
        got = {FIELD_BY_GROUP.get(k, k): v for k, v in m.groupdict().items() if v is not None}
        for name, expected in example.fields.items():
            assert got.get(name) == expected, f"{prefix.path}:{prefix.line}: {name}: {got.get(name)!r} != {expected!r}"


def _strip_outer(line: str) -> str:
    for _ in range(4):
        for prefix in CATALOG.outer_prefixes:
            m = prefix.compiled.match(line)
            if m and m.end() > 0:
                line = line[m.end():]
                break
        else:
            break
    return line


@pytest.mark.parametrize("entry", CATALOG.reasons + CATALOG.context_prefixes, ids=lambda e: e.id)
def test_the_literal_that_spares_a_search_is_in_every_text_the_regex_finds(entry) -> None:
    """Reason rules and context prefixes are searched only in texts holding their required literal (the
    start of the regex after an optional broker prefix): it must be in every example the regex finds."""
    for example in entry.examples:
        if entry.compiled.search(example.line):
            assert entry.required_text in example.line, f"{entry.where}: {entry.required_text!r} not in {example.line!r}"
