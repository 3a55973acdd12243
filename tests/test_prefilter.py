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

from support import FIXTURES, ROOT, SAMPLES

sys.path.insert(0, str(ROOT / "bench"))
import generate  # bench/generate.py: the benchmark corpus generator


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


def test_the_matcher_sees_only_hit_lines(tmp_path: Path, monkeypatch):
    """≤ 1 regex evaluation chain per candidate line, none per noise line: the regression guard for speed."""
    from rebalance_doctor import load
    from rebalance_doctor.reading import kernel

    seen: list[str] = []
    real_match = kernel.match_lines

    def counting_match(lines, rows, patterns, catalog):
        seen.extend(lines)
        return real_match(lines, rows, patterns, catalog)

    monkeypatch.setattr(kernel, "match_lines", counting_match)
    generate.generate(tmp_path, size=2_000_000, files=4, rebalance_ratio=0.01, groups=5, seed=11)
    logs = load([str(tmp_path)])
    catalog = load_catalog()
    assert len(seen) == logs.events.height == logs.buckets["matched"]
    assert all(any(anchor in text for anchor in catalog.anchors) for text in seen)
    assert len(seen) / logs.lines_read < 0.02


def _awkward_block() -> bytes:
    lines = [
        "plain noise line without anything",
        "[2024-01-01 10:00:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance group g1 in state PreparingRebalance",
        "REBALANCING in capitals, HeartBeat in camel case, and Generation capitalised",
        "naïve café — non-ASCII noise before a JoinGroup request",
        "windows line with a heartbeat\r",
        "",
        "x" * 5000 + " rebalance at the end of a long line",
    ]
    return ("\n".join(lines) + "\nlast line without newline: Member consumer-1 left").encode()


def test_hyperscan_and_polars_prefilters_find_the_same_lines():
    """Both prefilters are interchangeable: same lines, same anchors, same relevance-word hits."""
    import pytest

    from rebalance_doctor.reading.prefilter import HyperscanPrefilter, PolarsPrefilter

    pytest.importorskip("hyperscan")
    catalog = load_catalog()
    fast = HyperscanPrefilter(catalog.anchors, catalog.relevance_words)
    portable = PolarsPrefilter(catalog.anchors, catalog.relevance_words)
    blocks = [_awkward_block()] + [p.read_bytes() for p in sorted(SAMPLES.rglob("*.log"))]
    blocks += [p.read_bytes() for p in sorted((FIXTURES / "corpus").glob("*.log"))]
    for block in blocks:
        block = block.decode("utf-8", errors="replace").encode()
        assert fast.hits(block).by_line(block) == portable.hits(block).by_line(block)
    assert len(fast.hits(_awkward_block()).by_line(_awkward_block())) == 5  # not the plain noise, the empty line or the last one


def test_an_anchor_is_a_hit_only_when_it_occurs_whole():
    """Hyperscan looks for each anchor's first 16 bytes and confirms the rest in place: a line holding
    only an anchor's start is no hit, and an anchor after such a start on the same line is found."""
    import pytest

    from rebalance_doctor.reading.prefilter import KEY_BYTES, HyperscanPrefilter, PolarsPrefilter

    pytest.importorskip("hyperscan")
    catalog = load_catalog()
    anchor = " is no longer a coordinator for the group "
    assert anchor in catalog.anchors and len(anchor) > KEY_BYTES
    block = (
        f"broker 1{anchor[:KEY_BYTES]}valid leader\n"
        f"broker 2{anchor[:KEY_BYTES]}valid leader but broker 3{anchor}orders\n"
        f"broker 4{anchor[:-1]}\n"
    ).encode()
    fast = HyperscanPrefilter(catalog.anchors, catalog.relevance_words)
    hits = fast.hits(block).by_line(block)
    lines = {start: block[start:].split(b"\n", 1)[0].decode().split()[1] for start in hits}
    assert [(lines[start], {catalog.anchors[i] for i in found}) for start, found in hits.items()] == [("2", {anchor})]
    assert hits == PolarsPrefilter(catalog.anchors, catalog.relevance_words).hits(block).by_line(block)
