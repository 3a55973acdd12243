"""`patterns suggest`: a client library the catalogs do not know, taught from its own logs.

Scenario: a team runs a Go service on segmentio/kafka-go, and their rebalance-doctor has no kafka-go
catalog. They run `patterns suggest` over the logs, save the catalog file it writes, and run the report
again with `--patterns`. The test removes the bundled kafka-go catalog from a copy of the package and
does exactly that over the real kafka-go excerpts of the corpus.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from corpus_score import CORPUS, annotated_group

from support import ROOT, ExitStatus

FAMILY_CATALOG = "kafka-go.yaml"
EXCERPTS = sorted(p for p in CORPUS.glob("*.yaml") if yaml.safe_load(p.read_text())["client"] == "kafka-go")


@pytest.fixture(scope="module")
def without_the_family(tmp_path_factory) -> dict[str, str]:
    """The environment of a rebalance-doctor whose bundled catalogs lack the kafka-go file."""
    home = tmp_path_factory.mktemp("install")
    shutil.copytree(ROOT / "rebalance_doctor", home / "rebalance_doctor", ignore=shutil.ignore_patterns("__pycache__"))
    (home / "rebalance_doctor" / "catalog" / "patterns" / "messages" / FAMILY_CATALOG).unlink()
    return {**os.environ, "PYTHONPATH": str(home), "XDG_CACHE_HOME": str(home / "cache")}


def rebalance_doctor(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rebalance_doctor", *arguments], env=env, capture_output=True, text=True,
                          timeout=300, cwd=env["PYTHONPATH"])


def test_suggested_entries_bring_back_the_groups_and_generations_of_an_unknown_client(without_the_family, tmp_path: Path):
    assert len(EXCERPTS) >= 5
    logs = [str(case.with_suffix(".log")) for case in EXCERPTS]
    before = [json.loads(rebalance_doctor(without_the_family, "report", log, "-f", "json").stdout) for log in logs]
    assert all(not report["groups"] for report in before), "without its catalog, kafka-go's lines are not events"

    suggested = tmp_path / "ours" / "suggested.yaml"
    suggested.parent.mkdir()
    run = rebalance_doctor(without_the_family, "patterns", "suggest", *logs, "-o", str(suggested))
    assert run.returncode == ExitStatus.OK, run.stderr
    catalog = yaml.safe_load(suggested.read_text())
    assert catalog["patterns"] and all(entry["examples"] for entry in catalog["patterns"])
    assert any("(?<generation>" in entry["regex"] for entry in catalog["patterns"])

    recovered, wrong = 0, []
    for case, log in zip(EXCERPTS, logs, strict=True):
        annotation = yaml.safe_load(case.read_text())["annotation"]
        events = rebalance_doctor(without_the_family, "events", log, "--patterns", str(suggested.parent), "-f", "ndjson")
        assert events.returncode in (ExitStatus.OK, ExitStatus.NOTHING_FOUND), events.stderr  # the examples were checked on load
        rows = [json.loads(line) for line in events.stdout.splitlines()]
        groups = {r["group_id"] for r in rows if r["group_id"]}
        generations = {r["generation"] for r in rows if r["generation"] is not None}
        recovered += groups == {annotated_group(g) for g in annotation["group_ids"]} and generations == set(annotation["generations"])
        report = json.loads(rebalance_doctor(without_the_family, "report", log, "-f", "json", "--patterns", str(suggested.parent)).stdout)
        cause = report["verdict"]["root_cause"]
        if cause not in ("unknown", annotation["root_cause"]):
            wrong.append(f"{case.stem}: {cause}")
    assert recovered >= len(EXCERPTS) - 1
    assert wrong == [], "a guessed kind must not make the report confidently wrong"


def test_suggest_exits_1_when_every_relevant_line_is_known(cli):
    result = cli("patterns", "suggest", str(ROOT / "sample_logs" / "heartbeat-expiry"))
    assert result.exit_code == ExitStatus.NOTHING_FOUND
    assert "no relevant unmatched line" in result.stderr
