"""Blocks: an input's bytes as decoded text blocks (gzip, byte-order marks, lone CRs), spans of large
files for parallel work, and small files packed several to a block.

Blocks end on a line boundary so that no line is ever split between two blocks; memory stays
bounded by the block size however large a file is.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .accounting import LONG_LINE_READ
from .sources import InputError, Source

BLOCK_SIZE = 8 * 1024 * 1024  # larger blocks cost memory and gain no speed (docs/performance.md)
SPAN_SIZE = 64 * 1024 * 1024  # a large file's unit of parallel work
BINARY_SNIFF = 8192
GZIP_MAGIC = b"\x1f\x8b"


def _open(source: Source) -> BinaryIO:
    """The source as bytes of UTF-8 text with LF (or CRLF) line ends: gzip decompressed, text with a
    byte-order mark (UTF-16 from Windows PowerShell, UTF-8 with BOM) re-encoded, lone-CR line ends
    turned into LF."""
    if source.path is None:
        handle: BinaryIO = sys.stdin.buffer
    else:
        try:
            handle = open(source.path, "rb")  # noqa: SIM115 - closed by read_blocks
        except OSError as exc:
            raise InputError(f"{source.display}: cannot read ({exc.strerror or exc})") from None
    try:
        with _read_errors(source):
            if _peek(handle, 2) == GZIP_MAGIC:
                handle = gzip.GzipFile(fileobj=handle, mode="rb")  # type: ignore[assignment]
            elif source.display.endswith(".gz"):
                raise InputError(f"{source.display}: named .gz but is not gzip data")
            form = text_form(_peek(handle, BINARY_SNIFF))
    except InputError:
        _close(handle)
        raise
    return handle if form == PLAIN else _Recoded(handle, form)  # type: ignore[return-value]


@contextlib.contextmanager
def _read_errors(source: Source) -> Iterator[None]:
    """Read failures as InputErrors that name the file and say what went wrong."""
    try:
        yield
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(f"{source.display}: compressed data is truncated or corrupt ({exc})") from None
    except OSError as exc:
        raise InputError(f"{source.display}: read failed ({exc.strerror or exc})") from None


def _peek(handle: BinaryIO, size: int) -> bytes:
    return handle.peek(size)[:size] if hasattr(handle, "peek") else b""


def _close(handle: BinaryIO) -> None:
    if handle is not sys.stdin.buffer:
        handle.close()


PLAIN, LONE_CR = "plain", "lone-cr"
_BYTE_ORDER_MARKS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def text_form(head: bytes) -> str:
    """How a text must be read, from its first bytes: ``plain`` (UTF-8, LF or CRLF line ends),
    ``lone-cr`` (CR line ends: old Mac tools, some terminal captures), or the codec a byte-order mark names."""
    for mark, codec in _BYTE_ORDER_MARKS:
        if head.startswith(mark):
            return codec
    unmarked = _utf16_without_mark(head)
    if unmarked is not None:
        return unmarked
    if b"\r" in head and b"\n" not in head:
        return LONE_CR
    return PLAIN


def _utf16_without_mark(head: bytes) -> str | None:
    """UTF-16 written without a byte-order mark (some Windows tools): Latin text has a NUL as every other byte,
    the high one — the second of each pair when little-endian, the first when big-endian."""
    sample = head[: len(head) // 2 * 2]
    if len(sample) < 32:
        return None
    first, second = sample[0::2], sample[1::2]
    for text, zeros, codec in ((first, second, "utf-16-le"), (second, first, "utf-16-be")):
        if zeros.count(0) >= 0.95 * len(zeros) and text.count(0) <= 0.05 * len(text):
            return codec
    return None


class _Recoded:
    """A byte stream read as UTF-8 with LF line ends (see :func:`text_form`)."""

    def __init__(self, raw: BinaryIO, form: str):
        self._raw = raw
        self._text = None if form == LONE_CR else io.TextIOWrapper(raw, encoding=form, errors="replace", newline="")  # type: ignore[arg-type]
        self._cr = False  # a CR ended the previous read: an LF starting this one belongs to it

    def read(self, size: int = -1) -> bytes:
        if self._text is not None:
            return self._text.read(size).encode("utf-8")
        data = self._raw.read(size)
        if self._cr and data.startswith(b"\n"):
            data = data[1:]
        self._cr = data.endswith(b"\r")
        return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")

    def close(self) -> None:
        (self._text or self._raw).close()


def looks_binary(head: bytes) -> bool:
    """Like grep, a NUL byte near the start raises suspicion, but a log is still text when the NULs
    are padding at line starts (logrotate copytruncate leaves a run of them where the writer's next
    line lands) or a stray few: binary means over a tenth of the head is neither text nor padding."""
    head = head[:BINARY_SNIFF]
    if b"\x00" not in head:
        return False
    text = _LEADING_NULS.sub(b"\\1", head)
    if not text:
        return False
    decoded = text.decode("utf-8", errors="replace")
    strange = decoded.count("\ufffd") + len(text.translate(None, _TEXT_BYTES))
    return strange * 10 > len(decoded)


_LEADING_NULS = re.compile(rb"(^|\n)\x00+")
_TEXT_BYTES = bytes([9, 10, 11, 12, 13, 27, *range(32, 256)])  # tab, newlines, form feed, ESC (colours) and printable


def read_head(source: Source) -> bytes:
    """The first bytes of a local source as text (decompressed, re-encoded), to tell text from binary before a full read."""
    handle = _open(source)
    try:
        with _read_errors(source):
            return handle.read(BINARY_SNIFF)
    finally:
        _close(handle)


GZIP = "gzip"


def stored_form(head: bytes) -> str:
    """How a file's bytes are stored, from its first bytes: ``gzip``, or its :func:`text_form`."""
    return GZIP if head.startswith(GZIP_MAGIC) else text_form(head)


def raw_head(source: Source) -> bytes:
    """The first bytes of a local file as stored (b'' when it cannot be read: its scan says why)."""
    try:
        with open(source.path, "rb") as handle:  # type: ignore[arg-type]
            return handle.read(BINARY_SNIFF)
    except OSError:
        return b""


def spans(source: Source, span_size: Callable[[int], int] | None = None) -> list[tuple[int, int] | None]:
    """Byte ranges of a plain local file that can be scanned in parallel (``[None]``: one pass over the
    whole input — stdin, gzip, re-encoded text, small files). ``span_size(offset)`` is the size of the
    span starting at ``offset`` (SPAN_SIZE when not given). A line belongs to the span holding its
    first byte, so spans tile the file's lines exactly."""
    size_at = span_size or (lambda offset: SPAN_SIZE)
    size = source.size
    if source.path is None or size <= size_at(0):
        return [None]
    if stored_form(raw_head(source)) != PLAIN or not source.path.is_file():
        return [None]
    ranges, start = [], 0
    while start < size:
        ranges.append((start, min(start + size_at(start), size)))
        start = ranges[-1][1]
    return ranges


PROBE_SIZE = 64 * 1024  # how far a block boundary looks for a newline per read


def _line_start_at(fd: int, offset: int, stop: int) -> int:
    """The first line start at or after ``offset`` (``stop`` when none before it)."""
    if offset <= 0:
        return 0
    position = offset - 1
    while position < stop:
        probe = os.pread(fd, min(PROBE_SIZE, stop - position), position)
        if not probe:
            break
        newline = probe.find(b"\n")
        if newline >= 0:
            return position + newline + 1
        position += len(probe)
    return stop


def _block_end(fd: int, start: int, end: int, stop: int) -> int:
    """Where a block starting at ``start`` ends: after the last newline before ``end``, or, for a
    line longer than a block, after the line's own newline (``stop`` when it has none)."""
    if end >= stop:
        return stop
    position = end
    while position > start:
        low = max(start, position - PROBE_SIZE)
        newline = os.pread(fd, position - low, low).rfind(b"\n")
        if newline >= 0:
            return low + newline + 1
        position = low
    return _line_start_at(fd, end, stop)


class ReadBuffers:
    """Memory that blocks are read into, kept from block to block and from file to file: a fresh 8 MB
    ``bytes`` per block costs a page fault per 4 KB (docs/performance.md). One buffer per power-of-two size
    class, because CPython gives a bytearray's memory back when it shrinks below half of it (a file's
    short last block would do that, and the next file's blocks would fault again)."""

    SMALLEST = 64 * 1024

    def __init__(self, largest: int = BLOCK_SIZE):
        self.largest = largest
        self._by_class: dict[int, bytearray] = {}

    def read(self, fd: int, size: int, offset: int) -> bytes:
        """``size`` bytes at ``offset`` (fewer at the end of the file), valid until the next read."""
        if size > self.largest:  # a line longer than a block: read once, not kept
            return os.pread(fd, size, offset)
        buffer = self.buffer(size)
        with memoryview(buffer) as whole, whole[:size] as view:
            read = os.preadv(fd, [view], offset)
        del buffer[read:]
        return buffer

    def buffer(self, size: int) -> bytearray:
        """A kept buffer of at least ``size`` bytes (``size`` ≤ ``largest``): the caller cuts it to what it filled."""
        capacity = max(self.SMALLEST, 1 << (size - 1).bit_length())
        buffer = self._by_class.get(capacity)
        if buffer is None:
            buffer = self._by_class[capacity] = bytearray(capacity)
        elif len(buffer) < size:
            buffer += bytes(size - len(buffer))
        return buffer


NEWLINE_BYTE = ord("\n")


@dataclass
class Pack:
    """Small files read whole into one block, one after another (``starts[i]`` is where ``sources[i]``
    begins), each ending on a newline so that no line runs into the next file. ``refused`` are those
    that need :func:`read_blocks` (gzip, re-encoded text, binary-looking, grown past the room left, or
    not readable: reading them again says why)."""

    block: bytes
    sources: list[Source]
    starts: list[int]
    refused: list[Source]


def read_pack(sources: list[Source], buffers: ReadBuffers) -> Pack:
    """The sources (whose listed sizes fit a block together) as one :class:`Pack`. Per file this is an
    open, a stat, one read and a close, where ``read_blocks`` makes nine system calls."""
    room = min(buffers.largest, sum(source.size for source in sources) + len(sources))  # + a newline each
    block = buffers.buffer(room)
    pack = Pack(block, [], [], [])
    used = 0
    with memoryview(block) as whole:
        for source in sources:
            size = _read_whole(source, whole[used:room])
            if size < 0 or not _plain_text(source, bytes(whole[used : used + min(size, BINARY_SNIFF)])):
                pack.refused.append(source)
                continue
            pack.sources.append(source)
            pack.starts.append(used)
            used += size
            if size and whole[used - 1] != NEWLINE_BYTE:
                whole[used] = NEWLINE_BYTE
                used += 1
    del block[used:]
    return pack


def _plain_text(source: Source, head: bytes) -> bool:
    """Whether a file starting with ``head`` is read as it is stored: not gzip, UTF-8 with LF line ends, not binary."""
    return stored_form(head) == PLAIN and not source.display.endswith(".gz") and not looks_binary(head)


def _read_whole(source: Source, into: memoryview) -> int:
    """A regular file read whole into ``into``, leaving a byte for a newline: its size, or -1 when it
    cannot be read so (too large for the room, empty by its size as /proc files are, not regular, an
    error)."""
    try:
        fd = os.open(source.path, os.O_RDONLY | os.O_CLOEXEC)  # type: ignore[arg-type]
    except OSError:
        return -1
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or not 0 < status.st_size < len(into):
            return -1
        with into[: status.st_size] as view:
            return os.preadv(fd, [view], 0)
    except OSError:
        return -1
    finally:
        os.close(fd)


def _file_blocks(fd: int, block_size: int, span: tuple[int, int] | None, buffers: ReadBuffers, source: Source) -> Iterator[bytes]:
    """A regular file read with positional reads of exactly one block each: no carried partial
    line, no concatenation, no slicing copy (faster than carrying partial lines).
    The file is read up to the size it had when opened, so a log still being written is a snapshot. A file
    replaced since it was listed (a rotation), or cut shorter, stops with an InputError after the lines read."""
    status = os.fstat(fd)
    if source.listed_identity is not None and (status.st_dev, status.st_ino) != source.listed_identity:
        raise InputError(f"{source.display}: replaced while being read (a log rotation?); the lines read before are kept")
    size = status.st_size
    start, stop = (0, size) if span is None else (_line_start_at(fd, span[0], size), _line_start_at(fd, span[1], size))
    while start < stop:
        end = _block_end(fd, start, start + block_size, stop)
        if end - start > LONG_LINE_READ:  # one line longer than any block (a blob without newlines): its head stands for it
            yield os.pread(fd, LONG_LINE_READ, start) + (b"\n" if os.pread(fd, 1, end - 1) == b"\n" else b"")
            start = end
            continue
        block = buffers.read(fd, end - start, start)
        if len(block) < end - start:
            if block:
                yield block
            raise InputError(f"{source.display}: truncated while being read; the lines read before are kept")
        yield block
        start += len(block)
    if span is not None and source.listed_size is not None and size < min(span[1], source.listed_size):
        raise InputError(f"{source.display}: truncated while being read; the lines read before are kept")


STREAM_READ = 256 * 1024  # largest read from a stream


def _stream_blocks(handle: BinaryIO, block_size: int) -> Iterator[bytes]:
    """A stream (stdin, a pipe, gzip or re-encoded text): small reads gathered into blocks; the
    partial last line of a block waits for the next."""
    read = getattr(handle, "read1", handle.read)  # what is there now: a pipe need not fill a read, gzip loses less
    pieces: list[bytes] = []
    size = 0
    skipping = False  # the rest of a line longer than LONG_LINE_READ, whose head was given: read past, not kept
    while True:
        try:
            chunk = read(STREAM_READ)
        except (EOFError, zlib.error, gzip.BadGzipFile):
            if pieces:
                yield b"".join(pieces)  # the lines before the damage are still evidence
            raise
        if not chunk:
            break
        if skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                continue
            chunk, skipping = chunk[newline + 1 :], False
        pieces.append(chunk)
        size += len(chunk)
        if size > LONG_LINE_READ and b"\n" not in chunk:  # a line without end so far: its head stands for it
            data = b"".join(pieces)
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut]
            yield data[cut : cut + LONG_LINE_READ] + b"\n"
            pieces, size, skipping = [], 0, True
            continue
        if size >= block_size:
            data = b"".join(pieces)
            cut = data.rfind(b"\n") + 1
            if cut:
                yield data[:cut]
            pieces = [data[cut:]] if cut < len(data) else []
            size = len(data) - cut
    if pieces:
        yield b"".join(pieces)


def _is_regular_file(handle: BinaryIO) -> bool:
    """A file on disk with a size (positional reads), not a pipe, FIFO, terminal, decoded stream or a
    /proc-like file that reports size 0."""
    if not isinstance(handle, io.BufferedReader):
        return False
    try:
        status = os.fstat(handle.fileno())
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(status.st_mode) and status.st_size > 0


def read_blocks(
    source: Source, block_size: int = BLOCK_SIZE, span: tuple[int, int] | None = None, buffers: ReadBuffers | None = None
) -> Iterator[bytes]:
    """Yield the bytes of the source (or of the lines starting in ``span``, a regular file's byte
    range) in blocks that end on a newline (the last may not). A regular file's blocks are read into
    ``buffers`` (reused from file to file when the caller keeps them): each block is valid until the
    next is asked for."""
    handle = _open(source)
    try:
        with _read_errors(source):
            if _is_regular_file(handle):
                yield from _file_blocks(handle.fileno(), block_size, span, buffers or ReadBuffers(block_size), source)
            else:
                yield from _stream_blocks(handle, block_size)
    finally:
        _close(handle)
