"""The realistic benchmark corpus (bench/realistic.py) has the properties real logs have, measured by the tool
that is benchmarked on it: the speed rows of docs/performance.md are only as honest as this corpus.

Scenario: someone tunes the scanner on the benchmark; the benchmark must not be easier than production logs.
"""

from __future__ import annotations

import gc
import json
import re
import sys
import tracemalloc
from pathlib import Path

import pytest

import rebalance_doctor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import realistic  # bench/realistic.py
import rebalance_storm  # bench/rebalance_storm.py

# Words of rebalance messages that other lines use about other things.
REBALANCE_WORDS = re.compile(r"group|generation|member|heartbeat|rebalanc|coordinator|assign|revok|session|epoch|partition", re.I)
CONTEXT = re.compile(r"\[Consumer clientId=[^\]]*\]")


@pytest.fixture(scope="module", params=["realistic", "storm"])
def corpus(request, tmp_path_factory):
    """(profile, files, loaded logs) of a 6 MB corpus in 20 files."""
    out = tmp_path_factory.mktemp(request.param)
    realistic.generate(out, size=6_000_000, files=20, profile_name=request.param, groups=8, seed=5)
    files = sorted(out.glob("*.log"))
    return request.param, files, rebalance_doctor.load([str(f) for f in files], collect_unmatched=True)


HOUSEKEEPING = re.compile("tombstone records while cleaning up group metadata|Heartbeat request with generation|Received successful Heartbeat")


def test_the_corpus_is_not_easier_than_real_logs(corpus):
    """At least one line in ten shares words with rebalance messages without being one (its log context aside);
    every Kafka client line carries its log context; a fifth of the client files are JSON; some log at DEBUG;
    the housekeeping lines (the brokers' cleanup, the clients' heartbeat responses) are matched, build no event, and
    outnumber the events."""
    profile, files, logs = corpus
    texts = {f: f.read_text(encoding="utf-8").splitlines() for f in files}
    events = set(zip(logs.events["file"], logs.events["line"], strict=True))
    sharing = sum(1 for f in files for n, line in enumerate(texts[f], 1)
                  if (str(f), n) not in events and REBALANCE_WORDS.search(CONTEXT.sub("", line)))
    assert sharing >= 0.10 * logs.lines_read, (sharing, logs.lines_read)
    clients = [f for f in files if not f.name.startswith("kafka-")]
    kafka_lines = [line for f in clients for line in texts[f] if "kafka.clients.consumer" in line or "o.a.k.c.c" in line]
    assert kafka_lines and all("[Consumer clientId=" in line for line in kafka_lines)
    json_files = [f for f in clients if texts[f][0].startswith("{")]
    assert len(json_files) >= len(clients) // 5
    assert all(json.loads(texts[f][0])["message"] for f in json_files)
    assert any(" DEBUG " in line for f in clients for line in texts[f][:200])
    housekeeping = sum(1 for f in files for line in texts[f] if HOUSEKEEPING.search(line))
    assert logs.buckets["matched"] >= housekeeping + logs.events.height
    assert housekeeping > logs.events.height if profile == "realistic" else housekeeping > 0


def test_rebalance_lines_come_from_the_reference_at_the_profile_rate(corpus):
    """About 0.6 % of the lines are rebalance lines (a fifth in a storm), rendered from the reference, and the
    catalogs recognise most of them."""
    profile, _, logs = corpus
    share = realistic.PROFILES[profile].rebalance
    rebalance = logs.events.height
    assert 0.5 * share * logs.lines_read <= rebalance <= 1.5 * share * logs.lines_read, (rebalance, logs.lines_read)


def test_a_storm_of_rebalances_is_analysed_without_holding_every_event_at_once(tmp_path):
    """20,000 rebalances of 50 groups, one after another (bench/rebalance_storm.py at a tenth of the bench's size):
    every rebalance is found, and the analysis makes the events of a batch of groups at a time. Python's memory
    at its peak stays near what the incident model keeps; all events at once took 2.5 KB a rebalance, and put a
    200,000-rebalance storm over 1 GB."""
    (tmp_path / "kafka-1-server.log").write_text("\n".join(rebalance_storm.storm_lines(20_000, 50)) + "\n", encoding="utf-8")
    logs = rebalance_doctor.load(str(tmp_path))
    logs.events  # noqa: B018 (the table is made before the analysis is measured)
    gc.collect()
    tracemalloc.start()
    try:
        analysis = rebalance_doctor.analyze(logs)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(analysis.groups) == 50 and sum(len(g.rebalances) for g in analysis.groups) == 20_000
    assert [r.to_generation for r in analysis.groups[0].rebalances] == list(range(1, 401))
    assert peak < 2_000 * 20_000 and peak < 1.4 * kept, (peak, kept)
