"""The polars engine across cores: inputs cut into work units (whole files, spans of large ones, small
files batched), shared between this process and spawned scan processes, merged back per file in order.
A spawned process runs :class:`~.local.BlockScanner` on its tasks; the per-event Python work would
serialise threads on the GIL."""

from __future__ import annotations

import contextlib
import functools
import gc
import multiprocessing
import os
import pickle
import signal
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING

from ..catalog import Catalog
from ..collector import collector_paused
from ..reading import blocks
from ..reading.accounting import FileScan
from ..reading.blocks import (
    looks_binary,
    read_head,
    spans,
)
from ..reading.kernel import Collected, concat_records
from ..reading.sources import InputError, Source
from .local import BlockScanner, Scanned, Unit

if TYPE_CHECKING:
    from datetime import tzinfo

    import polars as pl

SCAN_PROCESSES = os.cpu_count() or 1
PARALLEL_MIN_BYTES = 32 * 1024 * 1024  # below this, starting worker processes costs more than it saves
BATCH_BYTES = 16 * 1024 * 1024  # small files travel to a scan process together, up to this much
TAIL_BYTES = 4 * 1024 * 1024  # the smallest unit of work, which the last ones shrink to


class LocalScanner(BlockScanner):
    """Scans sources on this machine, on every core (the ``polars`` engine)."""

    @collector_paused()
    def scan(
        self,
        sources: list[Source],
        take_records: Callable[[pl.DataFrame], None],
        progress: Callable[[int], None] | None = None,
        take_rows: Callable[[pl.DataFrame], None] | None = None,
    ) -> list[FileScan]:
        """Every source, split into spans scanned on every core; the accounting is merged back per file.
        ``take_records(records)`` receives the records as they are merged (line numbers final), for the
        caller to make the event table of, and ``take_rows(rows)`` the rows made where a task had many
        records (when the scanner knows the inputs' zones). ``progress(bytes_on_disk)`` is called as each
        file finishes."""
        units = work_units(sources)
        tasks = task_batches(units)
        helpers = min(SCAN_PROCESSES, len(tasks)) - 1  # this process scans too
        in_process = helpers < 1 or sum(s.size for s in sources) < PARALLEL_MIN_BYTES or any(s.path is None for s in sources)
        scans = {source.order: FileScan(source=source) for source in sources}
        remaining = Counter(source.order for source, *_ in units)

        def merge(scanned: Scanned) -> None:
            shifts = [scans[order].append_part(part, self.catalog) for order, part, _ in scanned.parts]  # a later part: lines after those read
            counts = [count for *_, count in scanned.parts]
            if scanned.records is not None:
                take_records(shifted_lines(scanned.records, counts, shifts))
            if scanned.rows is not None and take_rows is not None:
                take_rows(shifted_lines(scanned.rows, counts, shifts))

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
            with _shipped(self.catalog, self.zones) as catalog_file:
                pool = ProcessPoolExecutor(helpers, spawn, _start_worker, (catalog_file, self.collect))
                futures = [pool.submit(_scan_in_worker, task) for task in tasks]
                try:
                    self._share(tasks, futures, merge_task)
                except BaseException:  # Ctrl-C, or a failure: stop now, not after the processes' current tasks
                    _stop(pool)
                    raise
                pool.shutdown(wait=False)  # every result is in: their interpreters' exit need not hold this one
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
                futures[merged] = None  # a finished future holds its result: its rows would stay alive
                merge(tasks[merged], parts)
                merged += 1

        for index, task in enumerate(tasks):
            future = futures[index]
            if future is not None and future.cancel():
                scanned_here[index] = self.made_rows(joined(self.scan_task(task)))
            merge_ready(wait=False)
        merge_ready(wait=True)


def joined(pieces: Iterator[Scanned]) -> Scanned:
    """Several parts' results as one (one DataFrame of records)."""
    pieces = list(pieces)
    return Scanned(concat_records([piece.records for piece in pieces]), [part for piece in pieces for part in piece.parts])


def shifted_lines(records: pl.DataFrame, counts: list[int], shifts: list[int]) -> pl.DataFrame:
    """Records of consecutive parts (``counts[i]`` of them from part i), part i's line numbers raised by
    ``shifts[i]``: a later part of a file counted its lines from its own first line."""
    import polars as pl

    if not any(shift for shift, count in zip(shifts, counts, strict=True) if count):
        return records
    return records.with_columns(pl.col("line") + pl.Series([shift for shift, count in zip(shifts, counts, strict=True) for _ in range(count)],
                                                           dtype=pl.Int64))


def work_units(sources: list[Source], unit_size: Callable[[int, int], int] | None = None) -> list[Unit]:
    """The inputs as units of parallel work: whole files, or spans of large ones, of ``unit_size(remaining,
    offset)`` bytes where that much of the input remains (``_guided_size`` by default)."""
    units: list[Unit] = []
    remaining = sum(source.size for source in sources)
    for source in sources:
        parts = spans(source, functools.partial(unit_size or _guided_size, remaining))
        binary = _is_binary(source) if len(parts) > 1 else None  # a span cannot tell: sniff the file's head once
        units += [(source, span, binary) for span in parts]
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
    it takes. The processes are taken before ``shutdown`` forgets them."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # no public API before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()


@contextlib.contextmanager
def _shipped(catalog: Catalog, zones: dict[int, tzinfo] | None = None) -> Iterator[str]:
    """The catalog and the inputs' zones pickled into a temporary file for the scan processes. Handed over
    as start-up arguments instead, they would overflow the pipe to a starting process and hold this one,
    scanning nothing, until that process had started and read them all."""
    with tempfile.NamedTemporaryFile(prefix="rebalance-doctor-catalog-", suffix=".pickle") as file:
        pickle.dump((catalog, zones), file, protocol=pickle.HIGHEST_PROTOCOL)
        file.flush()
        yield file.name


_worker: BlockScanner | None = None


def _start_worker(catalog_file: str, collect: Collected) -> None:
    """A scan process: Ctrl-C is the parent's to handle (it stops the pool and exits 130). When the
    catalog file is gone, the parent scanned everything before this process started: nothing to do.
    The process only scans and hands back results, so its cycle collector stays off (see
    :mod:`.collector`; handing back the results alone set off many collections on a storm log)."""
    global _worker
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()
    try:
        with open(catalog_file, "rb") as file:
            catalog, zones = pickle.load(file)
    except FileNotFoundError:
        return
    _worker = BlockScanner(catalog, collect, zones=zones)


def _scan_in_worker(task: list[Unit]) -> Scanned:
    assert _worker is not None, "scan process not started"
    return _worker.made_rows(joined(_worker.scan_task(task)))


def _guided_size(remaining: int, offset: int = 0) -> int:
    """The size of a unit of work that starts ``remaining - offset`` bytes before the end of the input:
    a share of what remains, down to TAIL_BYTES, so that the processes finish together. (With
    64 MB spans to the end, one process sat idle at the end of a run while another
    scanned the last spans: a scan process has two tasks committed that no other process can take.)"""
    share = (remaining - offset) // (4 * SCAN_PROCESSES)
    return min(blocks.SPAN_SIZE, max(TAIL_BYTES, share))


def task_batches(units: list[Unit], task_size: Callable[[int], int] | None = None) -> list[list[Unit]]:
    """Consecutive units grouped to about ``task_size(remaining)`` bytes (by default a batch's worth, less towards
    the end: see ``_guided_size``): 2,000 small files from a 300-pod deployment cost a few hand-offs to the scan
    processes, not 2,000."""
    sizes = [span[1] - span[0] if span else source.size for source, span, *_ in units]
    remaining = sum(sizes)
    tasks: list[list[Unit]] = []
    size = 0
    for unit, unit_size in zip(units, sizes, strict=True):
        if not tasks or size + unit_size > (task_size(remaining) if task_size else min(BATCH_BYTES, _guided_size(remaining))):
            tasks.append([])
            size = 0
        tasks[-1].append(unit)
        size += unit_size
        remaining -= unit_size
    return tasks
