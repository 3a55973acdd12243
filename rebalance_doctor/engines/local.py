"""The local engine's unit of work: one byte block → hit lines → catalog matches → event columns and line buckets.

Irrelevant lines (> 99% of an incident's logs) cost one multi-literal prefilter pass over the raw
block (:mod:`..reading.prefilter`) and a newline count; they are never split, decoded or matched. Full
regexes run only on hit lines, and only those of the anchors the line contains (portable regexes:
the same in Python, Rust and Java — the tests prove it). Small files are read several to a block, so
that 2,000 pods' logs cost what one file of their size costs; :mod:`.parallel` shares the blocks out
over the cores.
"""

from __future__ import annotations

import bisect
import functools
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import tzinfo
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ..catalog import Catalog
from ..reading.accounting import MAX_LINE_BYTES, Accounting
from ..reading.blocks import (
    BINARY_SNIFF,
    BLOCK_SIZE,
    ReadBuffers,
    looks_binary,
    read_blocks,
    read_pack,
)
from ..reading.continuation import record_lines
from ..reading.envelope import EnvelopeReader
from ..reading.lines import LineIndex, count_lines, line_before, line_text, lines_after, readable, unreadable_offsets
from ..reading.prefilter import LineHit, Prefilter, best_prefilter
from ..reading.rows import EventColumns, MessageMatch, build_event, match_message
from ..reading.sources import InputError, Source

if TYPE_CHECKING:
    import numpy as np


Unit = tuple[Source, "tuple[int, int] | None", "bool | None", tzinfo]  # a file or span: source, span, binary? (None: sniff the first block), zone


@dataclass
class Scanned:
    """What scanning one or more parts produced, as it travels back from a scan process: their events
    in one set of columns, and per part its input (by order), its accounting and how many of the
    events are its. A part without its source pickles faster, and many small files make many parts."""

    events: EventColumns = field(default_factory=EventColumns)
    parts: list[tuple[int, Accounting, int]] = field(default_factory=list)

    @classmethod
    def joined(cls, pieces: Iterator[Scanned]) -> Scanned:
        whole = cls()
        for piece in pieces:
            whole.events.extend(piece.events)
            whole.parts += piece.parts
        return whole


class BlockScanner:
    """Scans blocks on this machine with the catalog's prefilter and regexes, one process's share of the ``polars`` engine."""

    def __init__(self, catalog: Catalog, collect_unmatched: bool = False, prefilter: Prefilter | None = None):
        self.catalog = catalog
        self.collect_unmatched = collect_unmatched
        if prefilter is not None:
            self.prefilter = prefilter
        self._read_buffers = ReadBuffers()

    # Both are made on first use, after the scan processes have been started: numpy's import and the
    # Hyperscan database take a while, in which the other processes start.
    @functools.cached_property
    def prefilter(self) -> Prefilter:
        return best_prefilter(self.catalog.anchors, self.catalog.relevance_words)

    @functools.cached_property
    def _newline_scratch(self) -> np.ndarray:
        """LineIndex's mask, block after block."""
        import numpy as np

        return np.empty(BLOCK_SIZE, bool)


    def scan_task(self, task: list[Unit]) -> Iterator[Scanned]:
        """A task's units, a block at a time: small whole files several to a block (see :func:`read_pack`;
        scanned one by one, each small file costs Python overhead), the others block by block."""
        packable = [_packable(unit) for unit in task]
        for pack in _packs([unit for unit, small in zip(task, packable, strict=True) if small]):
            yield from self._scan_pack(pack)
        for unit, small in zip(task, packable, strict=True):
            if not small:
                yield from self.scan_parts(*unit)

    def _scan_pack(self, units: list[Unit]) -> Iterator[Scanned]:
        pack = read_pack([source for source, *_ in units], self._read_buffers)
        zones = {source.order: zone for source, _, _, zone in units}
        if pack.sources:
            yield self.scan_block(pack.block, [(source, zones[source.order]) for source in pack.sources], pack.starts)
        for source in pack.refused:
            yield from self.scan_parts(source, None, None, zones[source.order])

    def scan_parts(self, source: Source, span: tuple[int, int] | None, binary: bool | None, zone: tzinfo) -> Iterator[Scanned]:
        """One file or one span of it, a part per block; a problem reading it ends it with a part that says so.
        A whole file is judged binary on its first block (read once: a FIFO cannot be read twice)."""
        try:
            for block in read_blocks(source, span=span, buffers=self._read_buffers):
                if binary is None:
                    binary = looks_binary(block[:BINARY_SNIFF])
                if binary:
                    yield _part(source, Accounting(Counter(unreadable=count_lines(block))))
                else:
                    yield self.scan_block(block, [(source, zone)], [0])
        except InputError as exc:
            yield _part(source, Accounting(problem=str(exc)))
        if binary:
            yield _part(source, Accounting(problem=f"{source.display}: binary file skipped"))

    def scan_block(self, block: bytes, files: list[tuple[Source, tzinfo]], starts: list[int]) -> Scanned:
        """A block holding one part of a file, or several whole files (``files[i]`` from byte ``starts[i]``
        to the next start, each ending on a newline)."""
        text, suspect = readable(block)
        if text is not block and len(files) > 1:  # undecodable bytes were replaced: the files no longer start where they did
            ends = [*starts[1:], len(block)]
            return Scanned.joined(self.scan_block(bytes(block[a:b]), [file], [0]) for file, a, b in zip(files, starts, ends, strict=True))
        block = text
        hits = self.prefilter.hits(block)
        lines = LineIndex(block, self._newline_scratch)
        offsets = sorted({*starts, *(hit.start for hit in hits)})  # numbered in one pass over the block
        number = dict(zip(offsets, lines.numbers(offsets), strict=True))
        firsts = [number[start] for start in starts]  # each file's first line
        lasts = [*firsts[1:], lines.total]  # and the line after its last
        numbered = {number[hit.start]: hit for hit in hits}
        matches = self._match(block, numbered)
        rows, matched, per_file = self._records(block, numbered, matches, files, starts, firsts, lasts)
        unreadable = set(lines.numbers(unreadable_offsets(block, suspect))) - matched
        relevant = [index for index in numbered if index not in matched and index not in unreadable]
        cut = [index for index, hit in numbered.items() if index in matches and hit.end - hit.start > MAX_LINE_BYTES]
        parts = []
        for (source, _), first, last, (events, matched_here), unreadable_here, relevant_here, cut_here in zip(
            files, firsts, lasts, per_file, *(_by_file(firsts, found) for found in (unreadable, relevant, cut)), strict=True
        ):
            buckets = Counter(matched=matched_here, unreadable=len(unreadable_here), relevant_unmatched=len(relevant_here))
            buckets["irrelevant"] = last - first - sum(buckets.values())
            unmatched = []
            if self.collect_unmatched:
                unmatched = [(index - first + 1, line_text(block, numbered[index].start, numbered[index].end)) for index in relevant_here]
            cut_lines = [(index - first + 1, numbered[index].end - numbered[index].start) for index in cut_here]
            parts.append((source.order, Accounting(buckets, unmatched, cut_lines), events))
        return Scanned(EventColumns(rows), parts)

    def _match(self, block: bytes, numbered: dict[int, LineHit]) -> dict[int, tuple[MessageMatch, str]]:
        """Best catalog match per hit line, with the line's text: only the patterns of the anchors the line contains."""
        matches = {}
        for index, hit in numbered.items():
            if hit.anchors:
                text = line_text(block, hit.start, hit.end)
                match = match_message(text, self.catalog, list(hit.anchors))
                if match is not None:
                    matches[index] = match, text
        return matches

    def _records(
        self,
        block: bytes,
        numbered: dict[int, LineHit],
        matches: dict[int, tuple[MessageMatch, str]],
        files: list[tuple[Source, tzinfo]],
        starts: list[int],
        firsts: list[int],
        lasts: list[int],
    ) -> tuple[list[dict[str, Any]], set[int], list[list[int]]]:
        """One row per matched record (the match and the lines that continue it, up to the next match
        or the end of its file), the line indexes the records cover, and per file its rows and the
        lines its records cover (records never overlap)."""
        rows: list[dict[str, Any]] = []
        matched: set[int] = set()
        counts = [[0, 0] for _ in files]
        file, reader = -1, None
        for index, next_match in pairwise([*matches, lasts[-1]]):
            if file < 0 or index >= lasts[file]:
                file = bisect.bisect_right(firsts, index) - 1
                source, zone = files[file]
                reader = EnvelopeReader(self.catalog, zone)  # one per file: it prefers the layout last seen
            hit, (match, text) = numbered[index], matches[index]
            if match.pattern.housekeeping:  # counted as matched, and nothing more is spent on it
                matched.add(index)
                counts[file][1] += 1
                continue
            followers = lines_after(block, hit.end, min(next_match, lasts[file]) - index - 1)
            raw_lines = record_lines(text, followers, match.pattern.multiline, self.catalog)
            matched.update(range(index, index + len(raw_lines)))
            rows.append(
                build_event(
                    match,
                    raw="\n".join(raw_lines),
                    file=source.display,
                    line=index - firsts[file] + 1,
                    file_node=source.node,
                    reader=reader,
                    previous_line=line_before(block, hit.start, starts[file]),
                )
            )
            counts[file][0] += 1
            counts[file][1] += len(raw_lines)
        return rows, matched, counts


def _by_file(firsts: list[int], indexes: Iterable[int]) -> list[list[int]]:
    """A block's line indexes grouped by the file they are in (``firsts``: each file's first line)."""
    if len(firsts) == 1:
        return [list(indexes)]
    groups: list[list[int]] = [[] for _ in firsts]
    for index in indexes:
        groups[bisect.bisect_right(firsts, index) - 1].append(index)
    return groups


def _part(source: Source, accounting: Accounting) -> Scanned:
    """A part with no events."""
    return Scanned(parts=[(source.order, accounting, 0)])


def _packable(unit: Unit) -> bool:
    """A whole local file small enough to share a block. A size of 0 is not trusted: FIFOs and /proc
    files say 0 (and a FIFO must be opened only once)."""
    source, span, _, _ = unit
    return span is None and source.path is not None and 0 < source.size < BLOCK_SIZE - 1


def _packs(units: list[Unit]) -> Iterator[list[Unit]]:
    """Consecutive units whose files fit one block together (with a newline each)."""
    pack: list[Unit] = []
    size = 0
    for unit in units:
        if pack and size + unit[0].size + 1 > BLOCK_SIZE:
            yield pack
            pack, size = [], 0
        pack.append(unit)
        size += unit[0].size + 1
    if pack:
        yield pack


