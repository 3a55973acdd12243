"""Speed by design, checked without timing anything: noise lines never reach a regex.

Incident logs are >99% irrelevant lines. They must be dropped by the one multi-literal anchor pass;
if an anchor is too common (" at offset ", "Starting"), noise lines become candidates, every
one of them costs regex evaluations, and the tool slows down in proportion to the noise.
The benchmark corpus generator's noise lines are the yardstick.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from rebalance_doctor.catalog import load_catalog

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import generate  # noqa: E402  (bench/generate.py: the benchmark corpus generator)


def test_noise_lines_contain_no_anchor_and_no_relevance_word():
    catalog = load_catalog()
    noise = pl.Series([generate._fill(t, __import__("random").Random(n), 4242) for n, t in enumerate(generate.BROKER_NOISE + generate.CLIENT_NOISE * 3)])
    hits = noise.filter(noise.str.contains_any(catalog.anchors))
    assert hits.to_list() == []
    relevant = noise.filter(noise.str.contains_any([w.lower() for w in catalog.relevance_words], ascii_case_insensitive=True))
    assert relevant.to_list() == []


def test_generated_corpus_every_candidate_is_a_rebalance_line(tmp_path: Path):
    """On a mixed corpus, exactly the rebalance lines are candidates: all matched, no noise line examined."""
    from rebalance_doctor import load

    generate.generate(tmp_path, size=2_000_000, files=4, rebalance_ratio=0.01, groups=5, seed=3)
    logs = load([str(tmp_path)])
    buckets = logs.buckets
    assert buckets["relevant_unmatched"] == 0 and buckets["unreadable"] == 0
    assert buckets["matched"] == logs.events.height > 50
    assert buckets["matched"] / logs.lines_read < 0.02
    assert logs.events["group_id"].n_unique() > 3


def test_anchors_are_distinctive_literals():
    """Anchors short enough to hit ordinary prose are the first suspects when the prefilter lets noise through."""
    catalog = load_catalog()
    too_short = [a for a in catalog.anchors if len(a.strip()) < 8 and not any(ch in a for ch in "[]\"(")]
    assert too_short == []
