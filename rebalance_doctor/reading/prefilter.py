"""Literal prefilter: which lines of a byte block contain a catalog anchor or a relevance word.

This is the only stage that touches every byte, so it runs one multi-literal pass over the raw
block and never splits it into lines. With Hyperscan (the ``hyperscan`` wheel, x86-64) all
anchors (by their starts, confirmed in place) and the case-insensitive relevance words go through one
SIMD automaton (faster per core than ripgrep on the same anchors: docs/performance.md); without it
polars' Aho-Corasick searches the block as one string. Both report the same hits.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

NEWLINE = b"\n"
WORD = -1  # the anchor index of a relevance word's occurrence


@dataclass
class Hits:
    """A block's prefilter hits, as columns: per occurrence a byte offset inside the line that holds it
    (``at``) and the index of its anchor in the catalog's anchors (``anchor``; WORD for a relevance word).
    Lines are found from the offsets by the kernel, with numpy, not per hit."""

    at: np.ndarray
    anchor: np.ndarray

    @classmethod
    def of(cls, at: list[int] | np.ndarray, anchor: list[int] | np.ndarray) -> Hits:
        import numpy as np

        return cls(np.asarray(at, dtype=np.int64), np.asarray(anchor, dtype=np.int32))

    def by_line(self, block: bytes) -> dict[int, set[int]]:
        """Per hit line (by its first byte) the anchors it holds (WORD included): how tests compare prefilters."""
        lines: dict[int, set[int]] = {}
        for at, anchor in zip(self.at.tolist(), self.anchor.tolist(), strict=True):
            lines.setdefault(block.rfind(NEWLINE, 0, at) + 1, set()).add(anchor)
        return lines


class Prefilter(Protocol):
    name: str

    def hits(self, block: bytes) -> Hits:
        """Hits in any order. ``block`` is valid UTF-8."""
        ...


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

        keys: dict[bytes, list[tuple[bytes, int]]] = {}
        for index, anchor in enumerate(anchors):
            encoded = anchor.encode()
            keys.setdefault(encoded[:KEY_BYTES], []).append((encoded, index))
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

    def hits(self, block: bytes) -> Hits:
        scratch = getattr(self._scratch, "space", None)
        if scratch is None:
            scratch = self._scratch.space = self._hyperscan.Scratch(self._database)
        at: list[int] = []
        found: list[int] = []
        anchors_by_key, key_lengths, keys = self._anchors_by_key, self._key_lengths, len(self._key_lengths)

        def on_match(literal_id: int, _start: int, end: int, _flags: int, _context: object) -> None:
            if literal_id >= keys:
                at.append(end - 1)
                found.append(WORD)
                return
            start = end - key_lengths[literal_id]
            for encoded, anchor in anchors_by_key[literal_id]:
                if block.startswith(encoded, start):
                    at.append(start)
                    found.append(anchor)

        self._database.scan(block, match_event_handler=on_match, scratch=scratch)
        return Hits.of(at, found)


class PolarsPrefilter:
    """The same hits with polars' Aho-Corasick (Rust), searching the block as one string."""

    name = "polars"

    def __init__(self, anchors: list[str], words: list[str]):
        self.anchors = anchors
        self.words = [w.lower() for w in words]

    def hits(self, block: bytes) -> Hits:
        import polars as pl

        text = pl.Series([block.decode("utf-8")])
        # find_many gives byte offsets: an occurrence's start is inside its line
        anchor_starts = text.str.find_many(self.anchors, overlapping=True)[0]
        anchor_texts = text.str.extract_many(self.anchors, overlapping=True)[0].replace_strict(self._index, return_dtype=pl.Int32)
        word_starts = text.str.find_many(self.words, ascii_case_insensitive=True, overlapping=True)[0]
        words = pl.repeat(WORD, len(word_starts), dtype=pl.Int32, eager=True)
        return Hits.of(pl.concat([anchor_starts, word_starts]).to_numpy(), pl.concat([anchor_texts, words]).to_numpy())

    @functools.cached_property
    def _index(self) -> dict[str, int]:
        return {anchor: index for index, anchor in enumerate(self.anchors)}


def best_prefilter(anchors: list[str], words: list[str]) -> Prefilter:
    """Hyperscan where its wheel is installed, else polars."""
    try:
        return HyperscanPrefilter(anchors, words)
    except ImportError:
        return PolarsPrefilter(anchors, words)
