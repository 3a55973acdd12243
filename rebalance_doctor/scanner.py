"""The polars engine: byte blocks → candidate lines → catalog matches → event rows and line buckets.

Irrelevant lines (>99% of an incident's logs) cost one multi-literal prefilter pass
(Aho-Corasick over every catalog anchor, in Rust) and a keyword pass for the bucket count.
Full regexes run only on candidates, and only the patterns whose anchor a block contains.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

import polars as pl

from .catalog import Catalog
from .events import MessageMatch, build_event
from .inputs import InputError, Source, looks_binary, read_blocks
from .records import EnvelopeReader

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


def _is_continuation(record: str, line: str) -> bool:
    """A line continues the record above when it is indented deeper (stack traces, Streams summaries)."""
    if not line.strip():
        return False
    indent = len(record) - len(record.lstrip())
    return line[:indent].strip() == "" and line[indent : indent + 1] in (" ", "\t") or line.startswith("Caused by: ")


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
        if lines.height == 0:
            return 0
        lines = lines.with_row_index("idx").with_columns(
            candidate=TEXT.str.contains_any(self.anchors),
            relevant=TEXT.str.contains_any(self.words, ascii_case_insensitive=True),
            unreadable=TEXT.str.contains(REPLACEMENT_CHAR, literal=True) if lossy else pl.lit(False),
        )
        texts = lines["text"]
        matches = self._match(lines.filter("candidate"))
        matched_idx: set[int] = set()
        for idx in sorted(matches):
            match = matches[idx]
            raw_lines = [texts[idx]]
            for follower in range(idx + 1, min(idx + 1 + MAX_CONTINUATION_LINES, lines.height)):
                if follower in matches or not _is_continuation(raw_lines[0], texts[follower]):
                    break
                raw_lines.append(texts[follower])
            matched_idx.update(range(idx, idx + len(raw_lines)))
            result.rows.append(
                build_event(
                    match,
                    raw="\n".join(raw_lines),
                    file=result.source.display,
                    line=first_line + idx + 1,
                    file_node=result.source.node,
                    reader=reader,
                    previous_line=texts[idx - 1] if idx > 0 else None,
                )
            )
        bucketed = lines.with_columns(matched=pl.col("idx").is_in(list(matched_idx))).select(
            pl.when("matched")
            .then(pl.lit("matched"))
            .when("unreadable")
            .then(pl.lit("unreadable"))
            .when(pl.col("candidate") | pl.col("relevant"))
            .then(pl.lit("relevant_unmatched"))
            .otherwise(pl.lit("irrelevant"))
            .alias("bucket"),
            "idx",
            "text",
        )
        for bucket, count in bucketed["bucket"].value_counts().iter_rows():
            result.buckets[bucket] += count
        if self.collect_unmatched:
            unmatched = bucketed.filter(pl.col("bucket") == "relevant_unmatched")
            result.unmatched.extend((first_line + i + 1, t) for i, t in unmatched.select("idx", "text").iter_rows())
        return lines.height

    def _match(self, candidates: pl.DataFrame) -> dict[int, MessageMatch]:
        """Best catalog match per candidate line: regexes run only for anchors the block contains."""
        if candidates.height == 0:
            return {}
        candidates = candidates.with_columns(TEXT.str.strip_suffix("\r"))
        present = (
            candidates.select(TEXT.str.extract_many(self.anchors, overlapping=True).explode().unique().drop_nulls())
            .to_series()
            .to_list()
        )
        priority = self.catalog.priority
        best: dict[int, tuple[int, MessageMatch]] = {}
        for anchor in present:
            holders = candidates.filter(TEXT.str.contains(anchor, literal=True))
            for pattern in self.catalog.patterns_by_anchor.get(anchor, ()):
                rank = priority[pattern.id]
                hits = holders.filter(TEXT.str.contains(pattern.regex))
                if hits.height == 0:
                    continue
                groups = hits.select("idx", TEXT.str.extract_groups(pattern.regex).alias("groups")).unnest("groups")
                for row in groups.iter_rows(named=True):
                    idx = row.pop("idx")
                    if idx not in best or rank < best[idx][0]:
                        best[idx] = (rank, MessageMatch(pattern, {k: v for k, v in row.items() if v is not None}))
        return {idx: match for idx, (_, match) in best.items()}
