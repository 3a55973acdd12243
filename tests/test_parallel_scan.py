"""The polars engine across cores, checked without timing anything: spans and packed small files scanned by
spawned processes give the table one process gives; the processes start without holding this one, leave
quietly, make no reference cycles (so the cycle collector can stay off) and finish together; and the
command starts them before polars is imported.
"""

from __future__ import annotations

import gc
import itertools
import sys
from pathlib import Path

from rebalance_doctor.catalog import load_catalog
from rebalance_doctor.engines import parallel
from rebalance_doctor.reading import blocks
from rebalance_doctor.reading.kernel import Collected
from rebalance_doctor.reading.sources import Source

from support import ROOT, SAMPLES, TRACE_LINES

sys.path.insert(0, str(ROOT / "bench"))
import generate  # bench/generate.py: the benchmark corpus generator


def test_spans_scanned_in_worker_processes_give_the_one_pass_table(tmp_path: Path, monkeypatch):
    """A large file is cut into spans scanned by several processes; lines, events and buckets are
    exactly those of one pass (the spans tile the file at line starts)."""
    from polars.testing import assert_frame_equal

    from rebalance_doctor import load

    generate.generate(tmp_path, size=3_000_000, files=2, rebalance_ratio=0.01, groups=5, seed=5)
    one_pass = load([str(tmp_path)])
    monkeypatch.setattr(blocks, "SPAN_SIZE", 100_000)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "SCAN_PROCESSES", 2)
    spans = load([str(tmp_path)])
    assert sum(len(blocks.spans(s.source)) for s in spans.scans) > 20
    assert_frame_equal(spans.events, one_pass.events)
    assert [s.buckets for s in spans.scans] == [s.buckets for s in one_pass.scans]
    first = spans.events.row(0, named=True)
    assert Path(first["file"]).read_text().splitlines()[first["line"] - 1].endswith(first["raw"].split("\n")[0][-40:])


def test_small_files_packed_by_a_scan_process_give_the_one_pass_table(tmp_path: Path, monkeypatch):
    """300 pods' small logs beside a broker log cut into spans, shared with a scan process in small
    tasks: blocks of whole small files and spans (some not a file's first) travel back from the other
    process and give exactly the table and buckets of one process."""
    from polars.testing import assert_frame_equal

    from rebalance_doctor import load

    generate.generate(tmp_path / "pods", size=12_000_000, files=300, rebalance_ratio=0.02, groups=5, seed=7)
    generate.generate(tmp_path / "brokers", size=3_000_000, files=1, rebalance_ratio=0.02, groups=5, seed=8)
    one_pass = load([str(tmp_path)])
    monkeypatch.setattr(blocks, "SPAN_SIZE", 200_000)
    monkeypatch.setattr(parallel, "TAIL_BYTES", 64 * 1024)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "SCAN_PROCESSES", 2)
    tasks, scanned_here = [], []
    batches, scan_task = parallel.task_batches, parallel.LocalScanner.scan_task
    monkeypatch.setattr(parallel, "task_batches", lambda units: tasks.extend(batches(units)) or tasks)
    monkeypatch.setattr(parallel.LocalScanner, "scan_task", lambda self, task: scanned_here.append(task) or scan_task(self, task))
    shared = load([str(tmp_path)])
    assert any(len(task) > 1 for task in tasks) and any(unit[1] is not None and unit[1][0] > 0 for task in tasks for unit in task)
    assert 0 < len(scanned_here) < len(tasks)  # the scan process took some
    assert_frame_equal(shared.events, one_pass.events)
    assert [s.buckets for s in shared.scans] == [s.buckets for s in one_pass.scans]


def test_a_storms_rows_are_made_where_it_was_scanned_and_give_the_one_pass_table(tmp_path: Path, monkeypatch):
    """A rebalance storm: tasks with many events make their rows on the core that scanned them, instead of
    sending every record to this process to be made into rows one after another; the table is the same."""
    from polars.testing import assert_frame_equal

    from rebalance_doctor import load
    from rebalance_doctor.engines.local import BlockScanner
    from rebalance_doctor.table.event_table import TableBuilder

    generate.generate(tmp_path, size=16_000_000, files=2, rebalance_ratio=0.2, groups=5, seed=11)
    one_pass = load([str(tmp_path)], tz="Europe/Paris")
    monkeypatch.setattr(parallel, "TAIL_BYTES", 8 * 1024 * 1024)  # a task per file: 8,000 events each
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "SCAN_PROCESSES", 2)
    made_in_place = []
    add_rows = TableBuilder.add_rows
    monkeypatch.setattr(TableBuilder, "add_rows", lambda self, rows: made_in_place.append(len(rows)) or add_rows(self, rows))
    shared = load([str(tmp_path)], tz="Europe/Paris")
    assert min(made_in_place) >= BlockScanner.ROWS_IN_PLACE and sum(made_in_place) == shared.events.height
    assert_frame_equal(shared.events, one_pass.events)


def test_a_small_file_that_grew_after_it_was_listed_is_read_whole(tmp_path: Path):
    """A pod's log listed at 100 bytes has grown by the time it is read: its block kept room for what
    the listing said, so the file that no longer fits is left to the ordinary reader, which reads all
    of it; every file is read whole."""

    import polars as pl

    from rebalance_doctor.engines.parallel import LocalScanner

    log = (SAMPLES / "heartbeat-expiry" / "orders-app-0.log").read_bytes()
    sources = []
    for order, listed in enumerate((len(log), 100, len(log))):
        path = tmp_path / f"pod-{order}.log"
        path.write_bytes(log)
        sources.append(Source(str(path), path, order, listed_size=listed))
    pack = blocks.read_pack(sources, blocks.ReadBuffers())
    assert len(pack.sources) == 2 and len(pack.refused) == 1  # the room ran out at the last file
    assert pack.block.count(b"\n") == 2 * log.count(b"\n")
    frames: list = []
    scans = LocalScanner(load_catalog()).scan(sources, frames.append)
    assert [scan.lines_read for scan in scans] == [log.count(b"\n")] * 3
    files = pl.concat(frames)["file"].to_list()
    assert [files.count(source.display) for source in sources] == [len(files) // 3] * 3


def test_blocks_are_read_into_buffers_kept_from_file_to_file(tmp_path: Path):
    """Blocks land in a few buffers kept by the scanner, one per size class: a fresh block per read cost
    a page fault per 4 KB, and a file's short last block must not make the next file's blocks fault
    again. Blocks end on newlines, and together they are each file."""

    generate.generate(tmp_path, size=1_200_000, files=2, rebalance_ratio=0.01, groups=2, seed=3)
    paths = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    buffers, kept = blocks.ReadBuffers(largest=256 * 1024), set()
    for order, path in enumerate(paths):
        read = []
        for block in blocks.read_blocks(Source(str(path), path, order), block_size=256 * 1024, buffers=buffers):
            assert block.endswith(b"\n")
            read.append(bytes(block))
            kept.add(id(block))
        assert len(read) > 2 and len(read[-1]) < 128 * 1024 < len(read[0])
        assert b"".join(read) == path.read_bytes()
    assert len(kept) == 2  # the 256 KB class and the class of the two last blocks


def test_a_scan_process_starts_without_holding_this_one():
    """What a scan process is handed at start-up fits in a pipe's 64 KB buffer, so starting it never
    waits for it to read; the 500 KB catalog travels through a file it reads itself."""
    import pickle
    import signal


    catalog = load_catalog()
    assert len(pickle.dumps(catalog)) > 64 * 1024  # what used to be handed over
    interrupt = signal.getsignal(signal.SIGINT)  # a scan process ignores Ctrl-C; this test process must not
    try:
        with parallel._shipped(catalog) as catalog_file:
            assert len(pickle.dumps((parallel._start_worker, (catalog_file, False)))) < 4096
            parallel._start_worker(catalog_file, False)
        assert parallel._worker is not None
        assert [p.id for p in parallel._worker.catalog.patterns] == [p.id for p in catalog.patterns]
        assert not gc.isenabled()  # a scan process only scans: see the test below
    finally:
        signal.signal(signal.SIGINT, interrupt)
        gc.enable()
        parallel._worker = None


def test_a_scan_makes_no_reference_cycles_so_the_cycle_collector_can_stay_off(tmp_path: Path):
    """Scans run with Python's cycle collector off (on a storm log it spent 1.4 s of 13 s walking the
    events kept so far). That is safe only while scanning makes no reference cycles: their memory
    would stay taken. Every kind of input, the unreadable ones too (their errors are exceptions)."""
    import gzip

    from rebalance_doctor.collector import collector_paused
    from rebalance_doctor.reading.sources import expand

    generate.generate(tmp_path / "corpus", size=600_000, files=3, rebalance_ratio=0.02, groups=3, seed=5)
    (tmp_path / "binary.log").write_bytes(bytes(range(256)) * 40)
    (tmp_path / "not-gzip.log.gz").write_text("plain text named .gz\n")
    (tmp_path / "cut.log.gz").write_bytes(gzip.compress((SAMPLES / "heartbeat-expiry" / "orders-app-0.log").read_bytes())[:2000])
    (tmp_path / "windows.log").write_text("Revoke previously assigned partitions\n", encoding="utf-16")
    (tmp_path / "invalid-utf8.log").write_bytes(b"\xff\xfe Revoke previously assigned partitions\n")
    sources = expand([str(SAMPLES), str(tmp_path)]).sources
    gc.collect()
    with collector_paused():
        assert not gc.isenabled()
        frames: list = []
        scans = parallel.LocalScanner(load_catalog(), Collected(unmatched=True)).scan(sources, frames.append)
        assert sum(len(frame) for frame in frames) > 2000
        assert len([scan.problem for scan in scans if scan.problem]) == 3  # binary, not gzip, cut short
        del scans, frames
        assert gc.collect() == 0
    assert gc.isenabled()


def test_the_analysis_makes_no_reference_cycles_so_the_cycle_collector_can_stay_off(tmp_path: Path):
    """The analyzers run with the collector off too (a storm log's analysis: 4.8 → 3.2 s): every
    sample incident and a storm of rebalances across groups, analyzed without making a cycle."""
    import rebalance_doctor
    from rebalance_doctor.collector import collector_paused

    generate.generate(tmp_path, size=1_500_000, files=4, rebalance_ratio=0.2, groups=6, seed=9)
    logs = rebalance_doctor.load([str(SAMPLES), str(tmp_path)])
    rebalance_doctor.analyze(rebalance_doctor.load([str(SAMPLES / "heartbeat-expiry")]))  # imports the analyzers: classes hold cycles
    gc.collect()
    with collector_paused():  # no collection may run before the count below
        analysis = rebalance_doctor.analyze(logs.events)
        assert not gc.isenabled()
        assert sum(len(group.rebalances) for group in analysis.groups) > 50
        assert any(group.findings for group in analysis.groups)
        del analysis
        assert gc.collect() == 0
    assert gc.isenabled()


def test_the_last_units_of_work_are_small_so_the_scan_processes_finish_together(tmp_path: Path, monkeypatch):
    """Scenario: the 1 GB benchmark's layout, 12 files of 85 MB. Work starts in 64 MB spans and ends in
    4 MB ones: a scan process has two tasks committed that no other process can take, so 64 MB spans
    to the end left one process idle while another scanned them. The units still tile every file."""


    monkeypatch.setattr(parallel, "SCAN_PROCESSES", 2)
    sources = []
    for order in range(12):
        path = tmp_path / f"app-{order}.log"
        with path.open("wb") as handle:  # sparse: sizes are what matter here
            handle.write(b"2024-05-01 10:00:00,000 INFO noise\n")
            handle.truncate(85 * 1024 * 1024)
        sources.append(Source(str(path), path, order))
    units = parallel.work_units(sources)

    sizes = [stop - start for _, (start, stop), _ in units]
    assert max(sizes) == blocks.SPAN_SIZE == sizes[0]
    assert sizes[-3:-1] == [parallel.TAIL_BYTES] * 2 and sizes[-1] <= parallel.TAIL_BYTES
    for source in sources:
        ranges = [span for unit_source, span, _ in units if unit_source is source]
        assert ranges[0][0] == 0 and ranges[-1][1] == source.size
        assert all(previous[1] == span[0] for previous, span in itertools.pairwise(ranges))
    tasks = parallel.task_batches(units)
    assert [len(task) for task in tasks] == [1] * len(units)  # no span is large enough to batch with another


def _imports_when(argv: list[str], moment: str) -> dict[str, bool]:
    """Which heavy modules a fresh ``rebalance-doctor ARGV`` process has imported at ``moment``:
    "pool" (its scan processes start; every input is a task of its own) or "exit"."""
    import json
    import subprocess

    probe_pool = """
import rebalance_doctor.engines.parallel as parallel
start_pool = parallel.ProcessPoolExecutor
def probed(*args, **kwargs):
    seen.setdefault("pool", heavy())
    return start_pool(*args, **kwargs)
parallel.ProcessPoolExecutor = probed
parallel.PARALLEL_MIN_BYTES = parallel.BATCH_BYTES = 0
"""
    probe = f"""
import json, sys
heavy = lambda: {{name: name in sys.modules for name in ("polars", "pyspark", "numpy")}}
seen = {{}}
{probe_pool if moment == "pool" else ""}
sys.argv = ["rebalance-doctor", *{argv!r}]
from rebalance_doctor import cli
try:
    cli.app()
except SystemExit:
    pass
seen["exit"] = heavy()
sys.__stderr__.write("PROBE" + json.dumps(seen) + "\\n")
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    return json.loads(done.stderr.rsplit("PROBE", 1)[1])[moment]


def test_help_starts_without_the_table_or_spark_libraries():
    """`--help` answers at once: polars, pyspark and numpy are never imported for it."""
    assert _imports_when(["--help"], "exit") == {"polars": False, "pyspark": False, "numpy": False}


def test_the_scan_processes_start_before_polars_is_imported(tmp_path: Path):
    """polars takes 0.2 s to import: `events`, `grep` and `report` start their scan processes first,
    so that those spend the time starting up instead of waiting for it."""
    generate.generate(tmp_path, size=400_000, files=2, rebalance_ratio=0.01, groups=3, seed=3)
    for command in (["events"], ["grep", "-c"], ["report"]):
        assert _imports_when([*command, str(tmp_path)], "pool")["polars"] is False, command


def test_a_scan_process_that_starts_after_the_scan_ended_leaves_quietly(tmp_path: Path):
    """Scenario: 40 MB of logs; this process scans every span before the spawned one has started and
    moves on without waiting for it. The late process finds the catalog file gone and does nothing:
    no traceback on stderr, the same table."""
    import signal


    interrupt = signal.getsignal(signal.SIGINT)
    try:
        parallel._start_worker(str(tmp_path / "already-removed.pickle"), False)
        assert parallel._worker is None
    finally:
        signal.signal(signal.SIGINT, interrupt)



def _assert_whole_records(logs, records: int) -> None:
    """Every record keeps its whole stack trace, and every line is counted once."""
    assert logs.events.height == records
    assert set(logs.events["raw"].str.count_matches("\n").to_list()) == {TRACE_LINES}
    assert +logs.buckets == {"matched": records * (TRACE_LINES + 1), "irrelevant": records}


def test_a_record_that_runs_across_8_mib_blocks_is_whole(traced_log):
    """A 20 MB consumer log, every rebalance line followed by a 90-line stack trace, is read in 8 MiB blocks:
    the records cut by the blocks' ends are joined again."""
    from rebalance_doctor import load

    path = traced_log(4000)
    assert path.stat().st_size > 2 * blocks.BLOCK_SIZE
    _assert_whole_records(load([str(path)]), 4000)


def test_a_record_that_runs_across_spans_scanned_by_other_processes_is_whole(traced_log, monkeypatch):
    """The same log in 100 KB spans shared between two processes: every record whole, as one pass reads it."""
    from polars.testing import assert_frame_equal

    from rebalance_doctor import load

    path = traced_log(600)
    one_pass = load([str(path)])
    monkeypatch.setattr(blocks, "SPAN_SIZE", 100_000)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "SCAN_PROCESSES", 2)
    spans = load([str(path)])
    assert len(blocks.spans(spans.scans[0].source)) > 20
    _assert_whole_records(spans, 600)
    assert_frame_equal(spans.events, one_pass.events)
