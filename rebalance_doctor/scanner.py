"""The embedded engine: byte blocks → hit lines → catalog matches → event rows and line buckets.

Irrelevant lines (> 99% of an incident's logs) cost one multi-literal prefilter pass over the raw
block (:mod:`.prefilter`) and a newline count; they are never split, decoded or matched. Full
regexes run only on hit lines, and only those of the anchors the line contains (portable regexes:
the same in Python, Rust and Java — the tests prove it). Blocks are scanned on all
cores: large files are cut into spans that this process and spawned scan processes share (the
per-event Python work would serialise threads on the GIL), and small files are read several to a
block, so that 2,000 pods' logs cost what one file of their size costs.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import gc
import multiprocessing
import os
import pickle
import signal
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import tzinfo
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from . import inputs
from .catalog import Catalog
from .collector import collector_paused
from .events import EventColumns, MessageMatch, build_event, match_message
from .extent import record_lines
from .inputs import BINARY_SNIFF, BLOCK_SIZE, InputError, ReadBuffers, Source, looks_binary, read_blocks, read_head, read_pack, spans
from .prefilter import NEWLINE, LineHit, Prefilter, best_prefilter
from .records import EnvelopeReader

if TYPE_CHECKING:
    import numpy as np

REPLACEMENT_CHAR = "\ufffd"
_REPLACEMENT_BYTES = REPLACEMENT_CHAR.encode()
SCAN_PROCESSES = os.cpu_count() or 1
PARALLEL_MIN_BYTES = 32 * 1024 * 1024  # below this, starting worker processes costs more than it saves
BATCH_BYTES = 16 * 1024 * 1024  # small files travel to a scan process together, up to this much
TAIL_BYTES = 4 * 1024 * 1024  # the smallest unit of work, which the last ones shrink to
Unit = tuple[Source, "tuple[int, int] | None", "bool | None", tzinfo]  # a file or span: source, span, binary? (None: sniff the first block), zone


@dataclass
class Accounting:
    """The line accounting of an input or of one part of it (a span, a block): lines per bucket, the
    relevant lines no pattern matched, matched lines cut for matching, and any problem reading it.
    A part's line numbers count from its own first line."""

    buckets: Counter = field(default_factory=Counter)
    unmatched: list[tuple[int, str]] = field(default_factory=list)
    cut_lines: list[tuple[int, int]] = field(default_factory=list)  # (line, bytes) of matched lines longer than MAX_LINE_BYTES
    problem: str | None = None

    @property
    def lines_read(self) -> int:
        return sum(self.buckets.values())

    def append(self, part: Accounting) -> int:
        """Add the input's next part, renumbering its lines after those already read; the offset it
        renumbered them by (the part's events need the same)."""
        offset = self.lines_read
        self.unmatched += [(number + offset, text) for number, text in part.unmatched]
        self.cut_lines += [(number + offset, size) for number, size in part.cut_lines]
        self.buckets.update(part.buckets)
        self.problem = self.problem or part.problem
        return offset


@dataclass
class FileScan(Accounting):
    """One input's accounting (its events went to the table as it was scanned)."""

    source: Source = field(kw_only=True)


@dataclass
class Scanned:
    """What scanning one or more parts produced, as it travels back from a scan process: their events
    in one set of columns, and per part its input (by order), its accounting and how many of the
    events are its. A part without its source pickles in 3 µs instead of 12 (2,000 files' worth)."""

    events: EventColumns = field(default_factory=EventColumns)
    parts: list[tuple[int, Accounting, int]] = field(default_factory=list)

    @classmethod
    def joined(cls, pieces: Iterator[Scanned]) -> Scanned:
        whole = cls()
        for piece in pieces:
            whole.events.extend(piece.events)
            whole.parts += piece.parts
        return whole


ASCII_PIECE = 64 * 1024  # blocks are checked for non-ASCII text this much at a time
MAX_LINE_BYTES = 64 * 1024  # a longer line (an assignment dump, a blob) is matched and kept on its start: bounded regex time


def count_lines(block: bytes) -> int:
    return block.count(NEWLINE) + (not block.endswith(NEWLINE)) if block else 0


def _non_ascii_lines(block: bytes) -> list[tuple[int, int]]:
    """Byte ranges (whole lines) holding non-ASCII text. Logs are almost all ASCII, so only these
    few lines need UTF-8 validation and a search for U+FFFD."""
    ranges: list[tuple[int, int]] = []
    if block.isascii():  # one pass, twice as fast as the pieces
        return ranges
    for piece in range(0, len(block), ASCII_PIECE):
        if block[piece : piece + ASCII_PIECE].isascii():
            continue
        start = block.rfind(NEWLINE, 0, piece) + 1
        stop = block.find(NEWLINE, piece + ASCII_PIECE)
        stop = len(block) if stop < 0 else stop + 1
        if ranges and start <= ranges[-1][1]:
            start = ranges.pop()[0]
        ranges.append((start, stop))
    return ranges


def readable(block: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """The block as valid UTF-8 (undecodable bytes become U+FFFD; such lines count as unreadable),
    and the ranges where U+FFFD can occur."""
    ranges = _non_ascii_lines(block)
    try:
        for start, stop in ranges:
            block[start:stop].decode("utf-8")
        return block, ranges
    except UnicodeDecodeError:
        block = block.decode("utf-8", errors="replace").encode("utf-8")
        return block, [(0, len(block))]


def _text(block: bytes, start: int, end: int) -> str:
    """One line's text: a CR before the newline and NUL padding before the text (logrotate
    copytruncate) are not part of it, and it is cut at MAX_LINE_BYTES."""
    return block[start : min(end, start + MAX_LINE_BYTES)].decode("utf-8", errors="ignore").removesuffix("\r").lstrip("\x00")


def _lines_after(block: bytes, newline: int, count: int) -> Iterator[str]:
    """Up to ``count`` lines following the line that ends at ``newline``."""
    start = newline + 1
    for _ in range(count):
        stop = block.find(NEWLINE, start)
        stop = len(block) if stop < 0 else stop
        yield _text(block, start, stop)
        start = stop + 1


def _line_before(block: bytes, start: int, file_start: int) -> str | None:
    if start == file_start:
        return None
    return _text(block, block.rfind(NEWLINE, 0, start - 1) + 1, start - 1)


def _unreadable_offsets(block: bytes, ranges: list[tuple[int, int]]) -> list[int]:
    offsets = []
    for start, stop in ranges:
        at = block.find(_REPLACEMENT_BYTES, start, stop)
        while at >= 0:
            offsets.append(at)
            at = block.find(_REPLACEMENT_BYTES, at + 1, stop)
    return offsets


class LineIndex:
    """Line numbers of byte offsets in a block, counting its newlines with numpy (3× faster than
    ``bytes.count``). The newline mask is written into ``scratch`` when it is large enough: a fresh
    8 MB mask per block tripled the cost (page faults). numpy is imported on first use: the scan
    processes are started before its 40–70 ms import."""

    def __init__(self, block: bytes, scratch: np.ndarray | None = None):
        import numpy as np

        data = np.frombuffer(block, np.uint8)
        out = scratch[: len(data)] if scratch is not None and len(scratch) >= len(data) else None
        self._newline = np.equal(data, NEWLINE[0], out=out)
        self.total = int(np.count_nonzero(self._newline)) + (bool(block) and not block.endswith(NEWLINE))

    def numbers(self, offsets: list[int]) -> list[int]:
        """0-based line index of each byte offset (ascending)."""
        import numpy as np

        numbers, count, position = [], 0, 0
        for offset in offsets:
            count += int(np.count_nonzero(self._newline[position:offset]))
            position = offset
            numbers.append(count)
        return numbers


class LocalScanner:
    """Scans sources on this machine with the catalog's prefilter and regexes (the ``polars`` engine)."""

    def __init__(self, catalog: Catalog, collect_unmatched: bool = False, prefilter: Prefilter | None = None):
        self.catalog = catalog
        self.collect_unmatched = collect_unmatched
        if prefilter is not None:
            self.prefilter = prefilter
        self._read_buffers = ReadBuffers()

    # Both are made on first use, after the scan processes have been started: numpy's import and the
    # Hyperscan database take 60–90 ms, in which the other processes start.
    @functools.cached_property
    def prefilter(self) -> Prefilter:
        return best_prefilter(self.catalog.anchors, self.catalog.relevance_words)

    @functools.cached_property
    def _newline_scratch(self) -> np.ndarray:
        """LineIndex's mask, block after block."""
        import numpy as np

        return np.empty(BLOCK_SIZE, bool)

    @collector_paused()
    def scan(
        self,
        sources: list[Source],
        zones: dict[int, tzinfo],
        take_events: Callable[[EventColumns], None],
        progress: Callable[[int], None] | None = None,
    ) -> list[FileScan]:
        """Every source, split into spans scanned on every core; the accounting is merged back per file.
        ``take_events(events)`` receives the events as they are merged (line numbers final), for the
        caller to make a table of (5 GB of logs made 1 GB of rows as dicts). ``progress(bytes_on_disk)``
        is called as each file finishes."""
        units = work_units(sources, zones)
        tasks = _batches(units)
        helpers = min(SCAN_PROCESSES, len(tasks)) - 1  # this process scans too
        in_process = helpers < 1 or sum(s.size for s in sources) < PARALLEL_MIN_BYTES or any(s.path is None for s in sources)
        scans = {source.order: FileScan(source=source) for source in sources}
        remaining = Counter(source.order for source, *_ in units)

        def merge(scanned: Scanned) -> None:
            position = 0
            for order, part, count in scanned.parts:
                offset = scans[order].append(part)
                if count and offset:  # a later part of its input
                    scanned.events.shift_lines(position, position + count, offset)
                position += count
            take_events(scanned.events)

        def task_done(task: list[Unit]) -> None:
            for source, *_ in task:
                remaining[source.order] -= 1
                if not remaining[source.order] and progress is not None:
                    progress(source.size)

        def merge_task(task: list[Unit], scanned: Scanned) -> None:
            merge(scanned)
            task_done(task)

        if in_process:
            for task in tasks:  # block by block: a 5 GB stdin or .gz never holds more than a block's rows
                for scanned in self.scan_task(task):
                    merge(scanned)
                task_done(task)
        else:
            spawn = multiprocessing.get_context("spawn")  # never fork a process whose threads hold locks
            with _shipped(self.catalog) as catalog_file:
                pool = ProcessPoolExecutor(helpers, spawn, _start_worker, (catalog_file, self.collect_unmatched))
                futures = [pool.submit(_scan_in_worker, task) for task in tasks]
                try:
                    self._share(tasks, futures, merge_task)
                except BaseException:  # Ctrl-C, or a failure: stop now, not after the processes' current tasks
                    _stop(pool)
                    raise
                pool.shutdown(wait=False)  # every result is in: their interpreters' exit need not hold this one (40–70 ms)
        return list(scans.values())

    def _share(self, tasks: list[list[Unit]], futures: list[Future | None], merge: Callable[[list[Unit], Scanned], None]) -> None:
        """Scan here too, in task order beside the scan processes: a task whose future can still be
        cancelled has not been handed to a process yet, so this process takes it. Results merge in
        task order as they arrive, so only a few tasks' events wait to be merged. This process needs no
        start-up, so it is at work while the scan process is still starting."""
        scanned_here: dict[int, Scanned] = {}
        merged = 0

        def merge_ready(wait: bool) -> None:
            nonlocal merged
            while merged < len(tasks) and (wait or merged in scanned_here or futures[merged].done()):  # type: ignore[union-attr]
                parts = scanned_here.pop(merged) if merged in scanned_here else futures[merged].result()  # type: ignore[union-attr]
                futures[merged] = None  # a finished future holds its result: 5 GB of logs kept 100 MB of rows alive
                merge(tasks[merged], parts)
                merged += 1

        for index, task in enumerate(tasks):
            future = futures[index]
            if future is not None and future.cancel():
                scanned_here[index] = Scanned.joined(self.scan_task(task))
            merge_ready(wait=False)
        merge_ready(wait=True)

    def scan_task(self, task: list[Unit]) -> Iterator[Scanned]:
        """A task's units, a block at a time: small whole files several to a block (see :func:`read_pack`;
        2,000 files scanned one by one cost 250 µs of Python each), the others block by block."""
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
        unreadable = set(lines.numbers(_unreadable_offsets(block, suspect))) - matched
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
                unmatched = [(index - first + 1, _text(block, numbered[index].start, numbered[index].end)) for index in relevant_here]
            cut_lines = [(index - first + 1, numbered[index].end - numbered[index].start) for index in cut_here]
            parts.append((source.order, Accounting(buckets, unmatched, cut_lines), events))
        return Scanned(EventColumns(rows), parts)

    def _match(self, block: bytes, numbered: dict[int, LineHit]) -> dict[int, tuple[MessageMatch, str]]:
        """Best catalog match per hit line, with the line's text: only the patterns of the anchors the line contains."""
        matches = {}
        for index, hit in numbered.items():
            if hit.anchors:
                text = _text(block, hit.start, hit.end)
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
            followers = _lines_after(block, hit.end, min(next_match, lasts[file]) - index - 1)
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
                    previous_line=_line_before(block, hit.start, starts[file]),
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


def work_units(sources: list[Source], zones: dict[int, tzinfo]) -> list[Unit]:
    """The inputs as units of parallel work: whole files, or spans of large ones (see ``_guided_size``)."""
    units: list[Unit] = []
    remaining = sum(source.size for source in sources)
    for source in sources:
        parts = spans(source, functools.partial(_guided_size, remaining))
        binary = _is_binary(source) if len(parts) > 1 else None  # a span cannot tell: sniff the file's head once
        units += [(source, span, binary, zones[source.order]) for span in parts]
        remaining -= source.size
    return units


def _is_binary(source: Source) -> bool:
    """The head of a file cut into spans (a span cannot see it). An input that cannot be read is not
    binary; its scan reports why it cannot be read."""
    try:
        return looks_binary(read_head(source))
    except InputError:
        return False


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel what is queued and terminate the scan processes: one busy with a 64 MB span (or blocked
    handing back its result, which nobody reads any more) would otherwise hold the exit for as long as
    it takes (measured: 42 s on a dense log). The processes are taken before ``shutdown`` forgets them."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public API before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()


@contextlib.contextmanager
def _shipped(catalog: Catalog) -> Iterator[str]:
    """The catalog pickled into a temporary file for the scan processes. Handed over as a start-up
    argument instead, its 500 KB would overflow the pipe to a starting process and hold this one
    until that process had started and read it all (measured: 0.26 s in which this one scans nothing)."""
    with tempfile.NamedTemporaryFile(prefix="rebalance-doctor-catalog-", suffix=".pickle") as file:
        pickle.dump(catalog, file, protocol=pickle.HIGHEST_PROTOCOL)
        file.flush()
        yield file.name


_worker: LocalScanner | None = None


def _start_worker(catalog_file: str, collect_unmatched: bool) -> None:
    """A scan process: Ctrl-C is the parent's to handle (it stops the pool and exits 130). When the
    catalog file is gone, the parent scanned everything before this process started: nothing to do.
    The process only scans and hands back results, so its cycle collector stays off (see
    :mod:`.collector`; handing back the results alone set off 170 collections on a storm log)."""
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()
    try:
        with open(catalog_file, "rb") as file:
            _worker = LocalScanner(pickle.load(file), collect_unmatched)
    except FileNotFoundError:
        return


def _scan_in_worker(task: list[Unit]) -> Scanned:
    assert _worker is not None, "scan process not started"
    return Scanned.joined(_worker.scan_task(task))


def _guided_size(remaining: int, offset: int = 0) -> int:
    """The size of a unit of work that starts ``remaining - offset`` bytes before the end of the input:
    a share of what remains, down to TAIL_BYTES, so that the processes finish together. (With
    64 MB spans to the end, one process sat idle for up to 0.45 s of a 2.5 s run while another
    scanned the last spans: a scan process has two tasks committed that no other process can take.)"""
    share = (remaining - offset) // (4 * SCAN_PROCESSES)
    return min(inputs.SPAN_SIZE, max(TAIL_BYTES, share))


def _batches(units: list[Unit]) -> list[list[Unit]]:
    """Consecutive units grouped to about one span's worth of bytes (less towards the end: see
    ``_guided_size``): 2,000 small files from a 300-pod deployment cost a few hand-offs to the scan
    processes, not 2,000."""
    sizes = [span[1] - span[0] if span else source.size for source, span, *_ in units]
    remaining = sum(sizes)
    tasks: list[list[Unit]] = []
    size = 0
    for unit, unit_size in zip(units, sizes, strict=True):
        if not tasks or size + unit_size > min(BATCH_BYTES, _guided_size(remaining)):
            tasks.append([])
            size = 0
        tasks[-1].append(unit)
        size += unit_size
        remaining -= unit_size
    return tasks
