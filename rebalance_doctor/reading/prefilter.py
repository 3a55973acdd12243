"""Literal prefilter: which lines of a byte block contain a catalog anchor or a relevance word.

This is the only stage that touches every byte, so it runs one multi-literal pass over the raw
block and never splits it into lines. With Hyperscan (the ``hyperscan`` wheel, x86-64) all
anchors (by their starts, confirmed in place) and the case-insensitive relevance words go through one
SIMD automaton (faster per core than ripgrep on the same anchors: docs/performance.md); without it
polars' Aho-Corasick searches the block as one string. Both report the same hits.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol

NEWLINE = b"\n"


@dataclass
class LineHit:
    """One hit line of a block: its byte span (``end`` is its newline or the block's end) and what hit it."""

    start: int
    end: int
    anchors: set[str] = field(default_factory=set)
    word: bool = False


class Prefilter(Protocol):
    name: str

    def hits(self, block: bytes) -> list[LineHit]:
        """Hit lines in block order. ``block`` is valid UTF-8."""
        ...


def _line_hits(block: bytes, found: list[tuple[int, str | None]]) -> list[LineHit]:
    """Group (match end offset, anchor or None for a word) by the line that holds them."""
    lines: dict[int, LineHit] = {}
    current: LineHit | None = None
    for end, anchor in sorted(found, key=lambda item: item[0]):
        if current is None or end > current.end:
            start = block.rfind(NEWLINE, 0, end) + 1
            stop = block.find(NEWLINE, end)
            current = lines.setdefault(start, LineHit(start, len(block) if stop < 0 else stop))
        if anchor is None:
            current.word = True
        else:
            current.anchors.add(anchor)
    return list(lines.values())


KEY_BYTES = 16  # how much of an anchor's start Hyperscan looks for


class HyperscanPrefilter:
    """Anchors (case-sensitive) and relevance words (ASCII case-insensitive) in one Hyperscan database.

    Anchors are looked for by their first KEY_BYTES bytes, and each occurrence is confirmed in place:
    with whole anchors, many of which end on a space or a quote, Hyperscan's literal matcher ran
    slower than with their starts, which mostly end inside a word.
    """

    name = "hyperscan"

    def __init__(self, anchors: list[str], words: list[str]):
        import hyperscan

        keys: dict[bytes, list[tuple[bytes, str]]] = {}
        for anchor in anchors:
            encoded = anchor.encode()
            keys.setdefault(encoded[:KEY_BYTES], []).append((encoded, anchor))
        self._anchors_by_key = list(keys.values())  # by literal id; ids past the keys are words
        self._key_lengths = [len(key) for key in keys]
        self._database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        expressions = [*keys, *(w.encode() for w in words)]
        self._database.compile(
            expressions=expressions,
            ids=list(range(len(expressions))),
            elements=len(expressions),
            flags=[0] * len(keys) + [hyperscan.HS_FLAG_CASELESS] * len(words),
            literal=True,
        )
        self._scratch = threading.local()  # Hyperscan scratch space is per thread
        self._hyperscan = hyperscan

    def hits(self, block: bytes) -> list[LineHit]:
        scratch = getattr(self._scratch, "space", None)
        if scratch is None:
            scratch = self._scratch.space = self._hyperscan.Scratch(self._database)
        found: list[tuple[int, str | None]] = []
        anchors_by_key, key_lengths, keys = self._anchors_by_key, self._key_lengths, len(self._key_lengths)

        def on_match(literal_id: int, _start: int, end: int, _flags: int, _context: object) -> None:
            if literal_id >= keys:
                found.append((end, None))
                return
            start = end - key_lengths[literal_id]
            for encoded, anchor in anchors_by_key[literal_id]:
                if block.startswith(encoded, start):
                    found.append((start + len(encoded), anchor))

        self._database.scan(block, match_event_handler=on_match, scratch=scratch)
        return _line_hits(block, found)


class PolarsPrefilter:
    """The same hits with polars' Aho-Corasick (Rust), searching the block as one string."""

    name = "polars"

    def __init__(self, anchors: list[str], words: list[str]):
        self.anchors = anchors
        self.words = [w.lower() for w in words]

    def hits(self, block: bytes) -> list[LineHit]:
        import polars as pl

        text = pl.Series([block.decode("utf-8")])
        found: list[tuple[int, str | None]] = []
        # a match's first byte + 1 is an end offset inside its line, all _line_hits needs
        anchor_starts = text.str.find_many(self.anchors, overlapping=True)[0]
        anchor_texts = text.str.extract_many(self.anchors, overlapping=True)[0]
        found += [(start + 1, anchor) for start, anchor in zip(anchor_starts, anchor_texts, strict=True)]
        word_starts = text.str.find_many(self.words, ascii_case_insensitive=True, overlapping=True)[0]
        found += [(start + 1, None) for start in word_starts]
        return _line_hits(block, found)


def best_prefilter(anchors: list[str], words: list[str]) -> Prefilter:
    """Hyperscan where its wheel is installed, else polars."""
    try:
        return HyperscanPrefilter(anchors, words)
    except ImportError:
        return PolarsPrefilter(anchors, words)
