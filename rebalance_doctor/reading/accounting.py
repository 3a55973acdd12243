"""Line accounting: every line of every input lands in exactly one bucket (matched, relevant but
unmatched, irrelevant, unreadable), per input and per part of it; shared by both engines.

Parts of a file (the polars engine's blocks and spans, Spark's splits) are scanned apart, in any order,
and merged in file order. A record that runs from one part into the next (a stack trace, a config dump)
is made whole at the merge: each part shows its neighbours its :class:`Seam`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .sources import Source

if TYPE_CHECKING:
    import polars as pl

    from ..catalog import Catalog

REPLACEMENT_CHAR = "\ufffd"  # what an undecodable byte becomes; its line counts as unreadable
MAX_LINE_BYTES = 64 * 1024  # a longer line (an assignment dump, a blob) is matched and kept on its start: bounded regex time
LONG_LINE_READ = 32 * 1024 * 1024  # of a longer line only this much is read at all: bounded memory


@dataclass
class OpenRecord:
    """A record that runs to the end of its part: its first line (numbered in its part) and its lines so far."""

    line: int
    lines: list[str]
    multiline: bool


@dataclass
class ContextSeam:
    """For a text search with context: how many lines of context it shows before and after a selected line, and
    this part's first ``after`` and last ``before`` lines (a selected line near its edge takes them)."""

    before: int
    after: int
    head: list[str]
    tail: list[str]


@dataclass
class Seam:
    """What a part of a file shows the parts beside it.

    ``head``: its first lines up to its first matched line (at most as many as a record may continue on),
    with the bucket each was counted in, and whether they are all its lines. ``open_record``: its last
    record, when that runs to its end. ``last_line``: its last line. ``first_record``: the record of its
    first line when that line is an event (a java.util.logging record's time is on the line before)."""

    head: list[str]
    head_buckets: list[str]
    head_whole: bool
    open_record: OpenRecord | None = None
    last_line: str | None = None
    first_record: pl.DataFrame | None = None
    context: ContextSeam | None = None


@dataclass
class Accounting:
    """The line accounting of an input or of one part of it (a span, a block): lines per bucket, the
    relevant lines no pattern matched, matched lines cut for matching, and any problem reading it; with a
    text search, the lines it selected and their context (``found``: line, text, selected?).
    A part's line numbers count from its own first line."""

    buckets: Counter = field(default_factory=Counter)
    unmatched: list[tuple[int, str]] = field(default_factory=list)
    cut_lines: list[tuple[int, int]] = field(default_factory=list)  # (line, bytes) of matched lines longer than MAX_LINE_BYTES
    problem: str | None = None
    seam: Seam | None = None  # parts of a file, for the merge
    found: list[tuple[int, str, bool]] = field(default_factory=list)

    @property
    def lines_read(self) -> int:
        return sum(self.buckets.values())

    def append(self, part: Accounting) -> int:
        """Add the input's next part, renumbering its lines after those already read; the offset it
        renumbered them by (the part's events need the same)."""
        offset = self.lines_read
        self.unmatched += [(number + offset, text) for number, text in part.unmatched]
        self.cut_lines += [(number + offset, size) for number, size in part.cut_lines]
        self.found += [(number + offset, text, selected) for number, text, selected in part.found]
        self.buckets.update(part.buckets)
        self.problem = self.problem or part.problem
        return offset


@dataclass
class FileScan(Accounting):
    """One input's accounting (its events went to the table as it was scanned), and what the merge of its
    parts changes in those events: lines to add to a record's ``raw`` (by its line) and records to make
    again with the line before them (``previous``)."""

    source: Source = field(kw_only=True)
    raw_tails: list[tuple[int, str]] = field(default_factory=list, kw_only=True)
    remade: list[pl.DataFrame] = field(default_factory=list, kw_only=True)
    _open: OpenRecord | None = field(default=None, kw_only=True, repr=False)
    _last_line: str | None = field(default=None, kw_only=True, repr=False)
    _last_selected: int | None = field(default=None, kw_only=True, repr=False)  # a text search's last selected line so far
    _tail: list[str] = field(default_factory=list, kw_only=True, repr=False)  # the last lines so far, context for the next part
    _shown_to: int = field(default=0, kw_only=True, repr=False)  # the last line a text search showed so far

    def append_part(self, part: Accounting, catalog: Catalog) -> int:
        """Add the file's next part (see :meth:`Accounting.append`), joined to the parts before it: a record they
        left open takes the lines of this part's head that continue it (they move from this part's buckets to
        matched), and an event on this part's first line is made again with the line before it when that
        line is a header (java.util.logging)."""
        offset = self.lines_read
        seam = part.seam
        if seam is None:  # a part that shows nothing of its lines (a binary file's count, a read error)
            self._open = self._last_line = self._last_selected = None
            self._tail = []
        else:
            if seam.context is not None:
                self._add_context(part, seam.context, offset)
            if self._open is not None:
                self._continue_record(part, seam, catalog)
            if seam.first_record is not None and self._last_line is not None and _is_header(self._last_line, catalog):
                import polars as pl

                self.remade.append(seam.first_record.with_columns(previous=pl.lit(self._last_line, pl.String), line=pl.col("line") + offset))
            if seam.open_record is not None:
                record = seam.open_record
                self._open = OpenRecord(record.line + offset, record.lines, record.multiline)
            if seam.last_line is not None:
                self._last_line = seam.last_line
            part.seam = None
        self.append(part)
        return offset

    def _add_context(self, part: Accounting, context: ContextSeam, offset: int) -> None:
        """The context across the seam: this part's first lines after a selected line of the parts before, the
        parts' last lines before a selected line of this one, unless the parts before showed them already."""
        owed = []
        if self._last_selected is not None:
            owed = context.head[: max(self._last_selected + context.after - offset, 0)]
            self.found += [(offset + 1 + n, text, False) for n, text in enumerate(owed)]
        selected = [number for number, _, chosen in part.found if chosen]
        if selected:
            wanted = context.before - selected[0] + 1
            lines = self._tail[-wanted:] if wanted > 0 else []
            first = offset - len(lines) + 1
            self.found += [(first + n, text, False) for n, text in enumerate(lines) if first + n > self._shown_to]
            self._last_selected = offset + selected[-1]
        self._shown_to = max(self._shown_to, offset + len(owed), offset + part.found[-1][0] if part.found else 0)
        self._tail = [*self._tail, *context.tail][-context.before :] if context.before else []

    def _continue_record(self, part: Accounting, seam: Seam, catalog: Catalog) -> None:
        """The open record takes what continues it of this part's head; it stays open only if it took the
        whole part."""
        from .continuation import record_lines

        record, self._open = self._open, None
        lines = record_lines(record.lines[0], [*record.lines[1:], *seam.head], record.multiline, catalog)
        taken = len(lines) - len(record.lines)
        if not taken:
            return
        if taken == len(seam.head) and seam.head_whole:
            self._open = OpenRecord(record.line, lines, record.multiline)
        self.raw_tails.append((record.line, "\n".join(lines[len(record.lines) :])))
        part.buckets.subtract(Counter(seam.head_buckets[:taken]))
        part.buckets["matched"] += taken
        part.unmatched = [(number, text) for number, text in part.unmatched if number > taken]


def _is_header(line: str, catalog: Catalog) -> bool:
    headers = catalog.header_layouts
    return bool(headers.layouts) and headers.pattern.match(line) is not None
