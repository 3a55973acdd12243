"""Real excerpts pasted by users in public places: the tool recovers what their annotations say.

Each `tests/fixtures/corpus/NNN-*.log` comes with a `.yaml` naming its source URL, client family, layout,
and what a Kafka engineer reading the lines concludes: the groups, the generations and epochs, the root
cause and the lines that decide it. An excerpt that cannot show its cause is annotated `unknown`, and the
tool must then say `unknown` too rather than guess. `python tests/corpus_score.py` prints the same
comparisons as a table, per client family.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from corpus_score import CORPUS, score

from rebalance_doctor.catalog.schema import CAUSES

CASES = sorted(CORPUS.glob("*.yaml"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_real_excerpt_yields_annotated_groups_generations_and_root_cause(case: Path) -> None:
    meta = yaml.safe_load(case.read_text())
    assert meta.get("source_url"), "every real excerpt names where it came from"
    assert meta["annotation"]["root_cause"] in CAUSES
    result = score(case)
    assert result.groups[1] == result.groups[0]
    assert result.generations[1] == result.generations[0]
    assert result.epochs[1] == result.epochs[0]
    assert result.cause[1] == result.cause[0], f"the report's root cause is {result.cause[1]}, the excerpt shows {result.cause[0]}"
    assert result.undecided_lines == [], "the lines that decide the cause are events"
    assert result.lines[1] == result.lines[0], "every line is read"


def test_corpus_covers_every_client_family() -> None:
    families = [yaml.safe_load(case.read_text())["client"] for case in CASES]
    assert len(CASES) >= 24
    assert all(families)
