"""Following inputs as they grow (``--follow``): the lines of files and stdin as they are written.

A file is known by its device, inode and first bytes, as log shippers know it. It is read to its end first,
then polled. When its path names another file (rename rotation: ``app.log`` → ``app.log.1`` and a new
``app.log``), the old file is read to its end before the new one is read from its start. When it shrinks,
or its first bytes change (copytruncate), it is read again from its start. Either way the lines of the new
file are numbered from 1 again. Only whole lines are handed on; a line still being written waits for its
newline. Compressed files are read once: nobody appends to them.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from .blocks import BLOCK_SIZE, read_blocks
from .prefilter import NEWLINE
from .sources import InputError, Source

POLL_SECONDS = 0.2  # how often files are looked at when nothing arrived: a line shows within it, well under 1 s
HEAD_BYTES = 256  # the first bytes that identify a file beside its inode (a file truncated and rewritten keeps it)
GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class Arrival:
    """Whole lines of one input that arrived since the last look: ``first_line`` is the number of the first of
    them in the file (1 for a file's first line; numbering starts again after a rotation or truncation)."""

    source: Source
    first_line: int
    data: bytes


@dataclass
class _Followed:
    """One input being followed: where its reading stands."""

    source: Source
    fd: int | None = None
    identity: tuple[int, int] | None = None
    head: bytes = b""
    position: int = 0
    lines: int = 0
    pending: bytes = b""
    done: bool = False  # stdin at its end, a compressed file read, a file that could not be opened
    problems: list[str] = field(default_factory=list)


class Tail:
    """The inputs followed together. ``rounds()`` yields, round after round, what arrived (an empty list when
    nothing did, so that a caller can redraw); it ends when no input can grow any more (stdin closed)."""

    def __init__(self, sources: list[Source], poll_seconds: float = POLL_SECONDS):
        self.poll_seconds = poll_seconds
        self._inputs = [_Followed(source) for source in sources]

    @property
    def problems(self) -> list[str]:
        return [problem for followed in self._inputs for problem in followed.problems]

    def rounds(self) -> Iterator[list[Arrival]]:
        try:
            for followed in self._inputs:
                self._start(followed)
            while any(not followed.done for followed in self._inputs):
                arrived = [arrival for followed in self._inputs if not followed.done for arrival in self._look(followed)]
                yield arrived
                if not any(len(arrival.data) >= BLOCK_SIZE for arrival in arrived):  # a backlog is read on at once
                    self._wait()
        finally:
            self.close()

    def close(self) -> None:
        for followed in self._inputs:
            if followed.fd is not None and followed.source.path is not None:
                with contextlib.suppress(OSError):
                    os.close(followed.fd)
            followed.fd = None

    def _start(self, followed: _Followed) -> None:
        source = followed.source
        if source.path is None:
            followed.fd = 0  # stdin
            return
        try:
            self._open(followed)
        except OSError as exc:
            followed.problems.append(f"{source.display}: cannot follow ({exc.strerror or exc})")
            followed.done = True

    def _open(self, followed: _Followed) -> None:
        fd = os.open(followed.source.path, os.O_RDONLY)
        status = os.fstat(fd)
        followed.fd, followed.identity = fd, (status.st_dev, status.st_ino)
        followed.head, followed.position, followed.lines, followed.pending = os.pread(fd, HEAD_BYTES, 0), 0, 0, b""

    def _look(self, followed: _Followed) -> Iterator[Arrival]:
        if followed.source.path is None:
            yield from self._lines(followed, self._stdin(followed), final=followed.done)
            return
        if followed.head.startswith(GZIP_MAGIC):  # read once, whole, decompressed
            followed.done = True
            try:
                for block in read_blocks(followed.source):
                    yield from self._lines(followed, bytes(block), final=False)
            except InputError as exc:
                followed.problems.append(str(exc))
            yield from self._lines(followed, b"", final=True)
            return
        yield from self._lines(followed, self._read(followed), final=False)
        moved = self._moved(followed)
        if moved is None:
            return
        if moved:  # renamed away: what was written to it before goes first
            yield from self._lines(followed, self._read(followed, to_end=True), final=True)
            os.close(followed.fd)
            try:
                self._open(followed)
            except OSError:  # not yet recreated: the new file is looked for next round
                followed.fd = os.open(os.devnull, os.O_RDONLY)
                followed.identity = None
                return
        else:  # truncated in place
            followed.position, followed.lines, followed.pending = 0, 0, b""
            followed.head = os.pread(followed.fd, HEAD_BYTES, 0)
        yield from self._lines(followed, self._read(followed), final=False)

    def _moved(self, followed: _Followed) -> bool | None:
        """True when the path now names another file, False when the file was truncated, None when neither."""
        try:
            status = os.stat(followed.source.path)
        except OSError:
            return None  # removed or renamed, not yet recreated: keep reading the old file
        if (status.st_dev, status.st_ino) != followed.identity:
            return True
        if status.st_size < followed.position:
            return False
        length = len(followed.head)
        if length and os.pread(followed.fd, length, 0) != followed.head:
            return False
        if length < HEAD_BYTES:  # the head grows with the file until it is whole
            followed.head = os.pread(followed.fd, HEAD_BYTES, 0)
        return None

    @staticmethod
    def _read(followed: _Followed, to_end: bool = False) -> bytes:
        """What the file holds past the position: at most a block, or all of it."""
        pieces = []
        size = 0
        while to_end or size < BLOCK_SIZE:
            piece = os.pread(followed.fd, BLOCK_SIZE, followed.position)
            if not piece:
                break
            pieces.append(piece)
            size += len(piece)
            followed.position += len(piece)
        return b"".join(pieces)

    @staticmethod
    def _stdin(followed: _Followed) -> bytes:
        """What stdin has ready, without waiting; at its end, the input is done."""
        pieces = []
        while select.select([followed.fd], [], [], 0)[0]:
            piece = os.read(followed.fd, 1 << 20)
            if not piece:
                followed.done = True
                break
            pieces.append(piece)
        return b"".join(pieces)

    @staticmethod
    def _lines(followed: _Followed, data: bytes, final: bool) -> Iterator[Arrival]:
        """The whole lines of what was read (a line without its newline waits, unless the input ends)."""
        data = followed.pending + data
        cut = len(data) if final else data.rfind(NEWLINE) + 1
        followed.pending = data[cut:]
        if cut:
            yield Arrival(followed.source, followed.lines + 1, data[:cut])
            followed.lines += data.count(NEWLINE, 0, cut) + (final and not data[:cut].endswith(NEWLINE))

    def _wait(self) -> None:
        """Until the next look: stdin wakes it as soon as it has data."""
        watching = [followed.fd for followed in self._inputs if followed.source.path is None and not followed.done]
        if watching:
            select.select(watching, [], [], self.poll_seconds)
        else:
            time.sleep(self.poll_seconds)
