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
from typing import Any

import polars as pl

from .catalog import Catalog
from .events import MessageMatch, build_event, match_message
from .inputs import InputError, Source, looks_binary, read_blocks
from .records import EnvelopeReader, node_prefix

TEXT = pl.col("text")
MAX_CONTINUATION_LINES = 500
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


def _lines(block: bytes) -> tuple[pl.DataFrame, bool]:
    """Split a block into lines; invalid UTF-8 is decoded with U+FFFD and flagged."""
    try:
        return pl.scan_lines(block, name="text").collect(), False
    except pl.exceptions.ComputeError:
        repaired = block.decode("utf-8", errors="replace").encode("utf-8")
        return pl.scan_lines(repaired, name="text").collect(), True


def _count_lines(block: bytes) -> int:
    return block.count(b"\n") + (not block.endswith(b"\n"))


def _is_continuation(record: str, line: str, prefix: str) -> bool:
    """A line continues the record above when it is indented deeper (stack traces, Streams summaries,
    config dumps), after the node prefix both lines repeat (kubectl --prefix, docker-compose)."""
    if prefix:
        if not line.startswith(prefix):
            return False
        record, line = record[len(prefix) :], line[len(prefix) :]
    if not line.strip():
        return False
    indent = len(record) - len(record.lstrip())
    deeper = line[:indent].strip() == "" and line[indent : indent + 1] in (" ", "\t")
    return deeper or line.lstrip().startswith("Caused by: ")


@dataclass(frozen=True)
class _StartsLikeRecord:
    """Tells whether a line starts a new record in the layout (and node prefix) of a multi-line record."""

    layout: object
    prefix: str

    def match(self, line: str) -> bool:
        if self.prefix and not line.startswith(self.prefix):
            return True  # another node's line (interleaved kubectl/docker output) ends the record
        return bool(self.layout.compiled.match(line[len(self.prefix):]))


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
        lines, lossy = _lines(block)
        texts = lines.to_series()
        if texts.len() == 0:
            return 0
        candidate = texts.str.contains_any(self.anchors)
        matches = self._match(candidate.arg_true(), texts.filter(candidate))
        matched_positions: list[int] = []
        for idx in sorted(matches):
            raw_lines = [texts[idx]]
            prefix = node_prefix(raw_lines[0], self.catalog)
            # a multi-line message (2.4's "Updating assignment with\nnow assigned partitions: …") continues on
            # unindented lines too, up to the next line that starts a record of the same layout
            layout = self._record_layout(raw_lines[0]) if matches[idx].pattern.multiline else None
            for follower in range(idx + 1, min(idx + 1 + MAX_CONTINUATION_LINES, texts.len())):
                line = texts[follower]
                if follower in matches or not (
                    _is_continuation(raw_lines[0], line, prefix) or (layout is not None and line.strip() and not layout.match(line))
                ):
                    break
                raw_lines.append(line)
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
        unreadable = texts.str.contains(REPLACEMENT_CHAR, literal=True) & unmatched if lossy else None
        readable_unmatched = unmatched & ~unreadable if unreadable is not None else unmatched
        relevant = (candidate | texts.str.contains_any(self.words, ascii_case_insensitive=True)) & readable_unmatched
        counts = {
            "matched": int(matched.sum()),
            "unreadable": int(unreadable.sum()) if unreadable is not None else 0,
            "relevant_unmatched": int(relevant.sum()),
        }
        counts["irrelevant"] = texts.len() - sum(counts.values())
        result.buckets.update(counts)
        if self.collect_unmatched and counts["relevant_unmatched"]:
            result.unmatched.extend(
                (first_line + int(i) + 1, text) for i, text in zip(relevant.arg_true(), texts.filter(relevant), strict=True)
            )
        return texts.len()

    def _record_layout(self, line: str):
        """The timestamped layout a record line starts with (None for message-only logs: then only indented
        lines can be told to continue it)."""
        for layout in self.catalog.layouts:
            if layout.header or "(?<ts>" not in layout.regex or layout.regex.startswith("^.{"):
                continue
            if layout.compiled.match(line.removeprefix(node_prefix(line, self.catalog))):
                return _StartsLikeRecord(layout, node_prefix(line, self.catalog))
        return None

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
