"""The local engine's unit of work: one byte block → hit lines → catalog matches → event columns and line buckets.

Irrelevant lines (> 99% of an incident's logs) cost one multi-literal prefilter pass over the raw
block (:mod:`..reading.prefilter`) and a newline count; they are never split, decoded or matched. Full
regexes run only on hit lines, and only those of the anchors the line contains (portable regexes:
the same in Python, Rust and Java — the tests prove it). Small files are read several to a block, so
that 2,000 pods' logs cost what one file of their size costs; :mod:`.parallel` shares the blocks out
over the cores.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING

from ..catalog import Catalog
from ..reading.accounting import Accounting
from ..reading.blocks import (
    BINARY_SNIFF,
    BLOCK_SIZE,
    ReadBuffers,
    looks_binary,
    read_blocks,
    read_pack,
)
from ..reading.kernel import BlockFile, Collected, Kernel
from ..reading.lines import count_lines
from ..reading.prefilter import Prefilter
from ..reading.rows import event_rows
from ..reading.sources import InputError, Source

if TYPE_CHECKING:
    import polars as pl


Unit = tuple[Source, "tuple[int, int] | None", "bool | None"]  # a file or span: source, span, binary? (None: sniff the first block)


@dataclass
class Scanned:
    """What scanning one or more parts produced, as it travels back from a scan process: their records
    (events before their rows are made: see :class:`~..reading.kernel.BlockScan`) as one DataFrame (None:
    no events), or their rows when there were enough records to make them where they were scanned (see
    :meth:`BlockScanner.made_rows`), and per part its input (by order), its accounting and how many of the
    records are its. A part without its source pickles faster, and many small files make many parts."""

    records: pl.DataFrame | None = None
    parts: list[tuple[int, Accounting, int]] = field(default_factory=list)
    rows: pl.DataFrame | None = None


class BlockScanner:
    """Reads blocks on this machine for the scan kernel, one process's share of the ``polars`` engine."""

    # Rows are made where the records were scanned (on every core) once a task has this many; fewer are sent
    # on, to be made with other tasks' records, where each polars call costs less per row.
    ROWS_IN_PLACE = 5_000

    def __init__(self, catalog: Catalog, collect: Collected = Collected(), prefilter: Prefilter | None = None,
                 zones: dict[int, tzinfo] | None = None):
        self.catalog = catalog
        self.collect = collect
        self.zones = zones
        self.kernel = Kernel(catalog, collect, prefilter)
        self._read_buffers = ReadBuffers()

    def made_rows(self, scanned: Scanned) -> Scanned:
        """A task's result with its rows made here when it has many records (and the inputs' zones are known)."""
        if self.zones is None or scanned.records is None or len(scanned.records) < self.ROWS_IN_PLACE:
            return scanned
        return Scanned(parts=scanned.parts, rows=event_rows(scanned.records, self.catalog, self.zones))

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
        if pack.sources:
            files = [BlockFile(source.order, source.display, source.node, start) for source, start in zip(pack.sources, pack.starts, strict=True)]
            yield self.scan_block(pack.block, files)
        for source in pack.refused:
            yield from self.scan_parts(source, None, None)

    def scan_parts(self, source: Source, span: tuple[int, int] | None, binary: bool | None) -> Iterator[Scanned]:
        """One file or one span of it, a part per block; a problem reading it ends it with a part that says so.
        A whole file is judged binary on its first block (read once: a FIFO cannot be read twice)."""
        try:
            for block in read_blocks(source, span=span, buffers=self._read_buffers):
                if binary is None:
                    binary = looks_binary(block[:BINARY_SNIFF])
                if binary:
                    yield _part(source, Accounting(Counter(unreadable=count_lines(block))))
                else:
                    yield self.scan_block(block, [BlockFile(source.order, source.display, source.node)])
        except InputError as exc:
            yield _part(source, Accounting(problem=str(exc)))
        if binary:
            yield _part(source, Accounting(problem=f"{source.display}: binary file skipped"))

    def scan_block(self, block: bytes, files: list[BlockFile]) -> Scanned:
        """A block holding one part of a file, or several whole files (each from its ``start``, ending on a newline)."""
        scanned = self.kernel.scan(block, files)
        return Scanned(scanned.records, scanned.parts)


def _part(source: Source, accounting: Accounting) -> Scanned:
    """A part with no events."""
    return Scanned(parts=[(source.order, accounting, 0)])


def _packable(unit: Unit) -> bool:
    """A whole local file small enough to share a block. A size of 0 is not trusted: FIFOs and /proc
    files say 0 (and a FIFO must be opened only once)."""
    source, span, _ = unit
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


