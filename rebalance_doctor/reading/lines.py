"""Lines in a byte block: numbering (numpy over the newlines), decoding only the few non-ASCII lines,
and the texts of many lines at once (and of a record's followers), NUL padding and CRs left out."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .accounting import MAX_LINE_BYTES, REPLACEMENT_CHAR
from .prefilter import NEWLINE

if TYPE_CHECKING:
    import numpy as np


_REPLACEMENT_BYTES = REPLACEMENT_CHAR.encode()
ASCII_PIECE = 64 * 1024  # blocks are checked for non-ASCII text this much at a time


def count_lines(block: bytes) -> int:
    return block.count(NEWLINE) + (not block.endswith(NEWLINE)) if block else 0


def _non_ascii_lines(block: bytes) -> list[tuple[int, int]]:
    """Byte ranges (whole lines) holding non-ASCII text. Logs are almost all ASCII, so only these
    few lines need UTF-8 validation and a search for U+FFFD."""
    ranges: list[tuple[int, int]] = []
    if block.isascii():  # one pass, faster than the pieces
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


def line_text(block: bytes, start: int, end: int) -> str:
    """One line's text: a CR before the newline and NUL padding before the text (logrotate
    copytruncate) are not part of it, and it is cut at MAX_LINE_BYTES."""
    return block[start : min(end, start + MAX_LINE_BYTES)].decode("utf-8", errors="ignore").removesuffix("\r").lstrip("\x00")


def lines_after(block: bytes, newline: int, count: int) -> Iterator[str]:
    """Up to ``count`` lines following the line that ends at ``newline``."""
    start = newline + 1
    for _ in range(count):
        stop = block.find(NEWLINE, start)
        stop = len(block) if stop < 0 else stop
        yield line_text(block, start, stop)
        start = stop + 1


def unreadable_offsets(block: bytes, ranges: list[tuple[int, int]]) -> list[int]:
    offsets = []
    for start, stop in ranges:
        at = block.find(_REPLACEMENT_BYTES, start, stop)
        while at >= 0:
            offsets.append(at)
            at = block.find(_REPLACEMENT_BYTES, at + 1, stop)
    return offsets


class Lines:
    """A block's lines by index, from its newline offsets (numpy): the line holding a byte offset, where a
    line starts and ends, and the texts of many lines at once as a polars column. The newline mask is
    written into ``scratch`` when it is large enough: a fresh 8 MB mask per block was slower (page
    faults). numpy is imported on first use: the scan processes are started before its slow import."""

    def __init__(self, block: bytes, scratch: np.ndarray | None = None):
        import numpy as np

        self.block = block
        data = np.frombuffer(block, np.uint8)
        out = scratch[: len(data)] if scratch is not None and len(scratch) >= len(data) else None
        self.newlines = np.flatnonzero(np.equal(data, NEWLINE[0], out=out))
        self.total = len(self.newlines) + (bool(block) and not block.endswith(NEWLINE))

    def holding(self, offsets: np.ndarray) -> np.ndarray:
        """The index of the line that holds each byte offset (a line start included)."""
        import numpy as np

        return np.searchsorted(self.newlines, offsets, side="left")

    @functools.cached_property
    def _starts(self) -> np.ndarray:
        import numpy as np

        return np.concatenate(([0], self.newlines + 1))

    @functools.cached_property
    def _ends(self) -> np.ndarray:
        import numpy as np

        return np.append(self.newlines, len(self.block))

    def starts(self, indexes: np.ndarray) -> np.ndarray:
        return self._starts[indexes]

    def ends(self, indexes: np.ndarray) -> np.ndarray:
        """Where each line ends: its newline, or the block's end."""
        return self._ends[indexes]

    def texts(self, indexes: np.ndarray) -> list[str]:
        """The text of each line (ascending, distinct indexes) as :func:`line_text` reads it, sliced and decoded
        in one comprehension: a numpy gather and a polars split cost more than the work at the hundreds of
        lines a block has, and so does a polars column of lines that are only matched by ``re``."""
        import numpy as np

        starts = self.starts(indexes)
        ends = np.minimum(self.ends(indexes), starts + MAX_LINE_BYTES)
        block = self.block
        return [block[a:b].decode("utf-8", errors="ignore").removesuffix("\r").lstrip("\x00") for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
