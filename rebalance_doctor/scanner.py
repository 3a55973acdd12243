"""The polars engine: byte blocks → candidate lines → catalog matches → event rows and line buckets.

Irrelevant lines (>99% of an incident's logs) cost one multi-literal prefilter pass
(Aho-Corasick over every catalog anchor, in Rust) and a keyword pass for the bucket count.
Full regexes run only on candidate lines, and only those of the anchors the line contains
(portable regexes: the same in the ``regex`` module, Rust and Java — the tests prove it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import tzinfo
from itertools import pairwise
from typing import Any

import polars as pl

from .catalog import Catalog
from .events import MessageMatch, build_event, match_message
from .extent import record_lines
from .inputs import InputError, Source, looks_binary, read_blocks
from .records import EnvelopeReader

TEXT = pl.col("text")
REPLACEMENT_CHAR = "\ufffd"


@dataclass
class FileScan:
    """What one input produced: its events, its line buckets, and any problem reading it."""

    source: Source
    rows: list[dict[str, Any]] = field(default_factory=list)
    buckets: Counter = field(default_factory=Counter)
    unmatched: list[tuple[int, str]] = field(default_factory=list)
    problem: str | None = None

    @property
    def lines_read(self) -> int:
        return sum(self.buckets.values())


def _lines(block: bytes) -> pl.DataFrame:
    """Split a block into lines; invalid UTF-8 is decoded with U+FFFD (such lines count as unreadable)."""
    try:
        return pl.scan_lines(block, name="text").collect()
    except pl.exceptions.ComputeError:
        return pl.scan_lines(block.decode("utf-8", errors="replace").encode("utf-8"), name="text").collect()


def _count_lines(block: bytes) -> int:
    return block.count(b"\n") + (not block.endswith(b"\n"))


class PolarsScanner:
    """Scans sources with the catalog's anchors and regexes, in polars (Rust regex)."""

    def __init__(self, catalog: Catalog, collect_unmatched: bool = False):
        self.catalog = catalog
        self.collect_unmatched = collect_unmatched
        self.anchors = catalog.anchors
        self.words = [w.lower() for w in catalog.relevance_words]

    def scan(self, source: Source, zone: tzinfo) -> FileScan:
        result = FileScan(source)
        reader = EnvelopeReader(self.catalog, zone)
        first_line = 0
        try:
            blocks = read_blocks(source)
            for number, block in enumerate(blocks):
                if number == 0 and looks_binary(block):
                    result.problem = f"{source.display}: binary file skipped"
                    result.buckets["unreadable"] += sum(_count_lines(b) for b in (block, *blocks))
                    break
                first_line += self._scan_block(block, first_line, result, reader)
        except InputError as exc:
            result.problem = str(exc)
        return result

    def _scan_block(self, block: bytes, first_line: int, result: FileScan, reader: EnvelopeReader) -> int:
        lines = _lines(block)
        texts = lines.to_series()
        if texts.len() == 0:
            return 0
        candidate = texts.str.contains_any(self.anchors)
        matches = self._match(candidate.arg_true(), texts.filter(candidate))
        matched_positions: list[int] = []
        for idx, next_match in pairwise([*sorted(matches), texts.len()]):
            following = range(idx + 1, next_match)
            raw_lines = record_lines(texts[idx], (texts[i] for i in following), matches[idx].pattern.multiline, self.catalog)
            matched_positions.extend(range(idx, idx + len(raw_lines)))
            result.rows.append(
                build_event(
                    matches[idx],
                    raw="\n".join(raw_lines),
                    file=result.source.display,
                    line=first_line + idx + 1,
                    file_node=result.source.node,
                    reader=reader,
                    previous_line=texts[idx - 1] if idx > 0 else None,
                )
            )
        matched = pl.zeros(texts.len(), pl.Boolean, eager=True).scatter(matched_positions, True)
        unmatched = ~matched
        unreadable = texts.str.contains(REPLACEMENT_CHAR, literal=True) & unmatched
        relevant = (candidate | texts.str.contains_any(self.words, ascii_case_insensitive=True)) & unmatched & ~unreadable
        counts = {
            "matched": int(matched.sum()),
            "unreadable": int(unreadable.sum()),
            "relevant_unmatched": int(relevant.sum()),
        }
        counts["irrelevant"] = texts.len() - sum(counts.values())
        result.buckets.update(counts)
        if self.collect_unmatched and counts["relevant_unmatched"]:
            result.unmatched.extend(
                (first_line + int(i) + 1, text) for i, text in zip(relevant.arg_true(), texts.filter(relevant), strict=True)
            )
        return texts.len()

    def _match(self, positions: pl.Series, texts: pl.Series) -> dict[int, MessageMatch]:
        """Best catalog match per candidate line: only the patterns of the anchors the line contains."""
        if texts.len() == 0:
            return {}
        anchors = texts.str.extract_many(self.anchors, overlapping=True)
        matches = {}
        for idx, text, found in zip(positions, texts.str.strip_suffix("\r"), anchors, strict=True):
            match = match_message(text, self.catalog, found)
            if match is not None:
                matches[idx] = match
        return matches
