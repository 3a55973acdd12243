"""Every INFO/WARN/ERROR wording in the reference is matched by a catalog entry, or ignored with a reason.

Scenario: a responder points the tool at logs from any Kafka release 0.9 → 4.x. Each wording the
reference lists for the broker, the classic and KIP-848 consumers and Kafka Streams must come out
of the scanner as an event of a pattern whose since/until covers the wording's versions.
"""

from __future__ import annotations

import pytest

from rebalance_doctor.catalog import load_catalog
from rebalance_doctor.reading.rows import match_many

from reference import ReferenceRow, load_reason_rows, load_rows, version_key

ROWS = load_rows()
CATALOG = load_catalog()
IGNORED = {entry.template: entry for entry in CATALOG.ignored}


def _line(row: ReferenceRow, rendered: str) -> str:
    return f"[2024-10-24 12:00:00,123] {row.level} {rendered.split(chr(10), 1)[0]} (org.example.Logger)"


@pytest.fixture(scope="module")
def winners() -> dict[str, str | None]:
    """The pattern each rendered reference line comes out as, every line through one batch as a scan reads a block."""
    lines = sorted({_line(row, rendered) for row in ROWS if row.template not in IGNORED for rendered in row.renderings()})
    return {line: None if event is None else event["pattern_id"] for line, event in zip(lines, match_many(lines, CATALOG), strict=True)}


def row_id(row: ReferenceRow) -> str:
    return f"sec{row.section}-L{row.line}"


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_reference_wording_is_matched_or_ignored(row: ReferenceRow, winners) -> None:
    if row.template in IGNORED:
        assert IGNORED[row.template].reason.strip(), "an ignored wording needs a reason"
        return
    for rendered in row.renderings():
        winner = winners[_line(row, rendered)]
        assert winner is not None, f"no catalog entry matches reference line {row.line}: {rendered.split(chr(10), 1)[0]!r}"
        pattern = CATALOG.by_id[winner]
        assert version_key(pattern.since) <= version_key(row.first_version), (
            f"{pattern.id} ({pattern.where}) starts at {pattern.since} but the wording exists from {row.first_version}"
        )
        if pattern.until is not None:
            assert version_key(row.last_version) <= version_key(pattern.until), (
                f"{pattern.id} ({pattern.where}) ends at {pattern.until} but the wording exists until {row.last_version}"
            )


def test_ignored_wordings_exist_in_the_reference() -> None:
    templates = {row.template for row in load_rows(levels=("INFO", "WARN", "ERROR", "DEBUG", "TRACE"))}
    templates |= {row.template for row in load_reason_rows()}
    stale = [f"{e.path}:{e.line}" for e in CATALOG.ignored if e.template not in templates]
    assert not stale, f"ignored entries that name no reference wording: {stale}"
