"""Full-text search (``grep TEXT``): which lines of a byte block a regex selects, and the lines around them.

The regex is Rust's dialect (rg's, and polars'), smart case as in rg. Like the catalogs' prefilter, the
search runs over the raw block, never line by line: with Hyperscan the regex is compiled into a database
whose matches, over the whole block, name candidate lines; each candidate is then confirmed with the regex
itself (polars), so the two engines' small differences (Unicode classes, case folding) never add a line.
A regex Hyperscan cannot compile is run by polars over every line of the block.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .lines import Lines


@dataclass(frozen=True)
class TextSearch:
    """What ``grep`` selects in every line: lines the regex ``pattern`` matches (those it does not, when
    ``invert``), or, with no pattern, the lines that are events; with ``before`` and ``after`` lines of
    context from the same file. ``ignore_case`` None is smart case: insensitive unless the pattern has a
    capital letter."""

    pattern: str | None = None
    ignore_case: bool | None = None
    invert: bool = False
    before: int = 0
    after: int = 0

    @property
    def regex(self) -> str | None:
        """The pattern as polars runs it, with its case flag."""
        if self.pattern is None:
            return None
        insensitive = not has_capital(self.pattern) if self.ignore_case is None else self.ignore_case
        return f"(?i){self.pattern}" if insensitive else self.pattern

    @property
    def context(self) -> bool:
        return bool(self.before or self.after)

    def check(self) -> None:
        """ValueError when the pattern is not a valid regex (before any log is read)."""
        import polars as pl

        if self.pattern is None:
            if self.invert:
                raise ValueError("-v (--invert-match) needs TEXT: the lines it selects are those TEXT does not match")
            return
        try:
            pl.Series([""]).str.contains(self.regex)
        except pl.exceptions.ComputeError as exc:
            raise ValueError(f"TEXT {self.pattern!r} is not a valid regex: {str(exc).splitlines()[0]}") from None


def has_capital(pattern: str) -> bool:
    """rg's smart case: a capital letter that is not part of an escape (``\\S``, ``\\W``, ``\\P{..}``)."""
    escaped = False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch.isupper():
            return True
    return False


class LineFinder:
    """The lines of a block that a :class:`TextSearch`'s regex matches (its ``pattern`` must be set)."""

    def __init__(self, search: TextSearch):
        self.regex = search.regex
        self._database = _hyperscan_database(search)
        self._scratch = threading.local()  # Hyperscan scratch space is per thread

    def matching(self, lines: Lines) -> np.ndarray:
        """Sorted indexes of the block's lines that the regex matches."""
        import numpy as np
        import polars as pl

        every_line = self._database is None
        candidates = np.arange(lines.total) if every_line else np.unique(lines.holding(self._match_ends(lines.block)))
        if not len(candidates):
            return candidates
        texts = pl.Series(lines.texts(candidates), dtype=pl.String)
        return candidates[texts.str.contains(self.regex).fill_null(False).to_numpy()]

    def _match_ends(self, block: bytes) -> np.ndarray:
        """The last byte of every match Hyperscan reports in the block."""
        import hyperscan
        import numpy as np

        scratch = getattr(self._scratch, "space", None)
        if scratch is None:
            scratch = self._scratch.space = hyperscan.Scratch(self._database)
        ends: list[int] = []

        def on_match(_id: int, _start: int, end: int, _flags: int, _context: object) -> None:
            ends.append(end - 1)

        self._database.scan(block, match_event_handler=on_match, scratch=scratch)
        return np.array(ends, dtype=np.int64)


@functools.lru_cache(maxsize=8)
def _hyperscan_database(search: TextSearch):
    """The regex as a Hyperscan database, or None (no Hyperscan wheel, or a construct it does not compile)."""
    try:
        import hyperscan
    except ImportError:
        return None
    flags = hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_UTF8 | hyperscan.HS_FLAG_UCP
    regex = search.regex
    if regex.startswith("(?i)"):
        regex, flags = regex[4:], flags | hyperscan.HS_FLAG_CASELESS
    # Hyperscan refuses word boundaries with Unicode classes; without them the regex matches more lines, never fewer
    for expression in dict.fromkeys((regex, without_word_boundaries(regex))):
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        try:
            database.compile(expressions=[expression.encode()], ids=[0], elements=1, flags=[flags])
        except hyperscan.error:
            continue
        return database
    return None


def without_word_boundaries(regex: str) -> str:
    """The regex less its ``\\b`` and ``\\B`` assertions (outside character classes)."""
    kept, escaped, in_class = [], False, False
    for ch in regex:
        if escaped:
            escaped = False
            if ch in "bB" and not in_class:
                kept.pop()
                continue
        elif ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        kept.append(ch)
    return "".join(kept)
