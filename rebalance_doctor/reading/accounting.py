"""Line accounting: every line of every input lands in exactly one bucket (matched, relevant but
unmatched, irrelevant, unreadable), per input and per part of it; shared by both engines."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .sources import Source

REPLACEMENT_CHAR = "\ufffd"  # what an undecodable byte becomes; its line counts as unreadable
MAX_LINE_BYTES = 64 * 1024  # a longer line (an assignment dump, a blob) is matched and kept on its start: bounded regex time
LONG_LINE_READ = 32 * 1024 * 1024  # of a longer line only this much is read at all: bounded memory


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

