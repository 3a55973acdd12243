"""Nothing is lost: on any input, matched + relevant-but-unmatched + irrelevant + unreadable = the lines
read, and every event points at the line it came from.

Inputs are random mixtures of real log lines (every layout of the sample incidents, with docker/kubectl
prefixes, CRLF ends, NUL padding), random bytes and broken UTF-8, read whole and cut into parallel
spans. The default profile (tests/conftest.py) tries a few hundred mixtures; `make test` also runs
this file alone under the `accounting` profile: 10,000.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rebalance_doctor.catalog import load_catalog
from rebalance_doctor.engines.parallel import LocalScanner
from rebalance_doctor.reading import blocks
from rebalance_doctor.reading.sources import Source

from support import SAMPLES


def _real_lines() -> list[bytes]:
    lines: list[bytes] = []
    for path in sorted(SAMPLES.rglob("*")):
        if path.is_file() and path.suffix != ".md":
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            lines += data.splitlines()
    return lines


REAL = _real_lines()
SCANNER = LocalScanner(load_catalog())

real_line = st.sampled_from(REAL)
dressed_line = st.tuples(st.sampled_from([b"", b"broker-1  | ", b"orders-app-0 ", b"\x00\x00\x00"]), real_line).map(b"".join)
garbage = st.binary(max_size=120).map(lambda data: data.replace(b"\n", b" ").replace(b"\r", b" "))
piece = st.one_of(dressed_line, dressed_line, garbage, st.just(b""), st.sampled_from([b"\tat org.apache.kafka.Foo(Foo.java:1)", b"Caused by: x"]))
ending = st.sampled_from([b"\n", b"\r\n"])


@st.composite
def log_files(draw) -> bytes:
    """A log: a real first line (so no accidental byte-order mark), then any mixture; maybe no final newline."""
    first = draw(real_line)
    rest = draw(st.lists(st.tuples(piece, ending).map(b"".join), max_size=60))
    tail = draw(st.sampled_from([b"\n", b"", b"\r\n"]))
    return first + tail + b"".join(rest) if rest else first + tail


def expected_lines(data: bytes) -> list[str]:
    """The input's lines as the scanner must number them (CRLF ends one line; undecodable bytes are U+FFFD)."""
    count = data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))
    return [line.removesuffix(b"\r").decode("utf-8", errors="replace") for line in data.split(b"\n")][:count]


def scan(*paths: Path) -> list[tuple[int, dict[str, int], list[tuple[int, str]]]]:
    """Per file: lines read, line buckets and each event's (line, raw record)."""
    sources = [Source(str(path), path, order) for order, path in enumerate(paths)]
    frames: list = []
    results = SCANNER.scan(sources, frames.append)
    rows = [row for frame in frames for row in frame.select("file", "line", "raw").iter_rows()]
    return [
        (result.lines_read, dict(result.buckets), [(line, raw) for file, line, raw in rows if file == result.source.display])
        for result in results
    ]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("accounting")


@given(data=log_files(), span_size=st.sampled_from([None, 64, 700, 4096]))
def test_every_line_is_accounted_for_and_every_event_points_at_its_line(workdir, data, span_size):
    path = workdir / "mixture.log"
    path.write_bytes(data)
    lines = expected_lines(data)
    whole_file = blocks.SPAN_SIZE
    blocks.SPAN_SIZE = span_size or whole_file  # cut as large files are cut for the scan processes
    try:
        ((total, buckets, events),) = scan(path)
    finally:
        blocks.SPAN_SIZE = whole_file
    assert_accounted_for(lines, total, buckets, events)


def assert_accounted_for(lines: list[str], total: int, buckets: dict[str, int], events: list[tuple[int, str]]) -> None:
    assert total == len(lines)
    assert sum(buckets.values()) == total
    assert buckets.get("matched", 0) >= len(events)
    for line, raw in events:
        assert lines[line - 1].lstrip("\x00") == raw.split("\n", 1)[0]


@given(logs=st.lists(st.one_of(log_files(), st.just(b"")), min_size=2, max_size=6))
def test_small_files_read_into_one_block_are_each_accounted_for_as_if_read_alone(workdir, logs):
    """300 pods' small logs are scanned several to a block: no record runs into the next file, and
    each file's lines, buckets and events are what it has scanned alone."""
    paths = []
    for number, data in enumerate(logs):
        paths.append(workdir / f"pod-{number}.log")
        paths[-1].write_bytes(data)
    together = scan(*paths)
    for path, data, result in zip(paths, logs, together, strict=True):
        assert_accounted_for(expected_lines(data), *result)
        assert [result] == scan(path)
