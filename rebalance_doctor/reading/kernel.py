"""The scan kernel: one byte block of raw lines → records (a polars DataFrame) plus each file's line accounting.

Engine-neutral: whatever reads the bytes (a scan process of the polars engine, a Spark task) hands blocks
to :meth:`Kernel.scan`. It works a batch at a time, never a Python function per event:

- one literal prefilter pass over the raw block finds the hit lines (:mod:`.prefilter`);
- lines are numbered and cut out of the block with numpy (:class:`.lines.Lines`);
- hit lines are grouped by the patterns their anchors select, and each pattern's regex runs over its whole
  group in one loop, in priority order (:func:`.rows.match_lines`);
- what a record's row needs besides (envelope, context prefixes, constants, causes, types) is worked out
  later over many blocks' records at once (:func:`.rows.event_rows`), where a polars call costs little per row;
- a record's extent is decided on its next line, column-wise; only records whose next line could continue
  them (an indented line, a stack trace, a multi-line wording) are followed line by line;
- housekeeping lines are counted as matched and build no row.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..catalog import Catalog, any_of
from .accounting import MAX_LINE_BYTES, Accounting, ContextSeam, OpenRecord, Seam
from .blocks import BLOCK_SIZE
from .continuation import EXCEPTION_HEADER, MAX_CONTINUATION_LINES, PYTHON_WHITESPACE, STACK_CAUSE, record_lines
from .envelope import node_prefix
from .lines import Lines, lines_after, readable, unreadable_offsets
from .prefilter import Prefilter, best_prefilter
from .rows import match_lines
from .search import LineFinder, TextSearch

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

@dataclass(frozen=True)
class BlockFile:
    """One file whose lines are in a block (from byte ``start`` to the next file's start): its input
    order, its name as shown and its node (from the file name)."""

    order: int
    display: str
    node: str
    start: int = 0


@dataclass
class BlockScan:
    """What a block gave: its records (one per event: the matched pattern, its fields as text, the record's
    lines, file, line number from the file's first line in the block, node and ``reader``, the file's input
    order; file by file, in line order), ready for :func:`.rows.event_rows`, and per file (input order,
    accounting, how many of the records are its)."""

    records: pl.DataFrame | None
    parts: list[tuple[int, Accounting, int]]


@dataclass(frozen=True)
class Collected:
    """The lines a scan hands back besides its events: the relevant lines no pattern matched (``unmatched``),
    and those a text search selects, with their context (``search``)."""

    unmatched: bool = False
    search: TextSearch | None = None


class Kernel:
    """The catalog's prefilter, regexes and row building over blocks; one per process."""

    def __init__(self, catalog: Catalog, collect: Collected = Collected(), prefilter: Prefilter | None = None):
        self.catalog = catalog
        self.collect = collect
        if prefilter is not None:
            self.prefilter = prefilter

    @functools.cached_property
    def finder(self) -> LineFinder | None:
        search = self.collect.search
        return LineFinder(search) if search is not None and search.pattern is not None else None

    # Made on first use, after the scan processes have been started: numpy's import and the Hyperscan
    # database take a while, in which the other processes start.
    @functools.cached_property
    def prefilter(self) -> Prefilter:
        return best_prefilter(self.catalog.anchors, self.catalog.relevance_words)

    @functools.cached_property
    def _newline_scratch(self) -> np.ndarray:
        """The newline mask, block after block."""
        import numpy as np

        return np.empty(BLOCK_SIZE, bool)

    @functools.cached_property
    def _patterns_by_anchor(self) -> tuple[np.ndarray, np.ndarray]:
        """Each anchor's patterns (catalog indexes) as CSR arrays: ``patterns[starts[a]:starts[a + 1]]``."""
        import numpy as np

        index = {p.id: i for i, p in enumerate(self.catalog.patterns)}
        lists = [[index[p.id] for p in self.catalog.patterns_by_anchor[anchor]] for anchor in self.catalog.anchors]
        starts = np.cumsum([0, *map(len, lists)])
        return starts, np.array([i for patterns in lists for i in patterns], dtype=np.int32)

    @functools.cached_property
    def _pattern_flags(self) -> tuple[np.ndarray, np.ndarray]:
        """Per pattern: housekeeping? multi-line?"""
        import numpy as np

        patterns = self.catalog.patterns
        return np.array([p.housekeeping for p in patterns], dtype=bool), np.array([p.multiline for p in patterns], dtype=bool)

    @functools.cached_property
    def _continuation_tests(self) -> tuple[Callable[[str], object], Callable[[str], object]]:
        """Matchers of a line that may continue the record above, and of a record that is itself indented or
        starts with a node prefix (for those, :func:`record_lines` decides)."""
        import re

        prefixes = any_of(p.regex for p in self.catalog.node_prefixes)
        return re.compile(_MAY_CONTINUE).match, re.compile(f"^(?:{PYTHON_WHITESPACE}{'|' + prefixes if prefixes else ''})").match

    def scan(self, block: bytes, files: list[BlockFile]) -> BlockScan:
        """A block holding one part of a file, or several whole files (each ending on a newline)."""
        text, suspect = readable(block)
        if text is not block and len(files) > 1:  # undecodable bytes were replaced: the files no longer start where they did
            ends = [*(file.start for file in files[1:]), len(block)]
            pieces = [self.scan(bytes(block[file.start : end]), [_at_start(file)]) for file, end in zip(files, ends, strict=True)]
            return BlockScan(concat_records([piece.records for piece in pieces]), [part for piece in pieces for part in piece.parts])
        return _BlockWork(self, text, suspect, files).result()


def _at_start(file: BlockFile) -> BlockFile:
    return BlockFile(file.order, file.display, file.node, 0)


def concat_records(frames: list[pl.DataFrame | None]) -> pl.DataFrame | None:
    """Records of several blocks as one frame (each holds the field columns its patterns extracted)."""
    import polars as pl

    frames = [frame for frame in frames if frame is not None]
    return pl.concat(frames, how="diagonal_relaxed") if frames else None


class _BlockWork:
    """One block's scan, step by step (each step over all the block's hits at once)."""

    def __init__(self, kernel: Kernel, block: bytes, suspect: list[tuple[int, int]], files: list[BlockFile]):
        import numpy as np

        self.kernel, self.catalog, self.block, self.suspect, self.files = kernel, kernel.catalog, block, suspect, files
        self.lines = Lines(block, kernel._newline_scratch)
        self.firsts = self.lines.holding(np.array([file.start for file in files], dtype=np.int64))  # each file's first line
        self.lasts = np.append(self.firsts[1:], self.lines.total)  # and the line after its last
        self.event_files = self.event_lines = np.zeros(0, dtype=np.int64)  # the file and line of each event row
        self.last_record: tuple[list[str], np.ndarray, np.ndarray] | None = None  # records' lines, event?, multi-line? (for the seam)
        self.unreadable = self.relevant = np.zeros(0, dtype=np.int64)  # the block's lines in those buckets

    def result(self) -> BlockScan:
        import numpy as np

        hits = self.kernel.prefilter.hits(self.block)
        hit_lines = self.lines.holding(hits.at)
        with_anchor = hits.anchor >= 0
        anchor_count = max(len(self.catalog.anchors), 1)
        candidate_lines, anchors = np.divmod(np.unique(hit_lines[with_anchor].astype(np.int64) * anchor_count + hits.anchor[with_anchor]), anchor_count)
        lines = np.unique(candidate_lines)
        texts = self.lines.texts(lines)
        rows, patterns = self._candidates(np.searchsorted(lines, candidate_lines), anchors)
        matched = match_lines(texts, rows, patterns, self.catalog)
        matched, texts, raws = self._respaced(matched, texts, rows, patterns)
        matched, lines, texts, raws, paired = self._unwrapped(matched, lines, texts, raws, rows, patterns)
        winners = lines[matched["row"].to_numpy()]
        records, covered = self._records(matched, winners, texts, raws, paired)
        overlap = winners[1:] < winners[:-1] + covered[:-1]  # a record that reaches the next match
        dropped = (np.append(overlap, False) | np.insert(overlap, 0, False)) & paired[matched["row"].to_numpy()]
        if dropped.any():  # a wrapped pair inside another record (a dump, a trace) is a part of that record
            matched = matched.filter(~dropped)
            winners = lines[matched["row"].to_numpy()]
            records, covered = self._records(matched, winners, texts, raws, paired)
        parts = self._parts(np.unique(hit_lines), winners, covered)
        if self.kernel.collect.search is not None:
            self._found(parts, self.kernel.collect.search)
        if len(self.files) == 1:  # a part of a file, maybe: its records may run on into the next part
            parts[0][1].seam = self._seam(winners, covered, records)
        return BlockScan(records, parts)

    def _found(self, parts: list[tuple[int, Accounting, int]], search: TextSearch) -> None:
        """Each file's lines the search selects, and their context (within the block: the merge adds what lies
        across the block's edges, from the seam)."""
        import numpy as np

        finder = self.kernel.finder
        selected = finder.matching(self.lines) if finder is not None else self.event_lines
        window = np.arange(-search.before, search.after + 1)
        for i, (_, accounting, _) in enumerate(parts):
            first, last = int(self.firsts[i]), int(self.lasts[i])
            chosen = _within(selected, first, last)
            if search.invert:
                chosen = np.setdiff1d(np.arange(first, last), chosen)
            shown = chosen
            if search.context:
                shown = np.unique((chosen[:, None] + window).ravel())
                shown = shown[(shown >= first) & (shown < last)]
            accounting.found = list(zip((shown - first + 1).tolist(), self.lines.texts(shown), np.isin(shown, chosen).tolist(), strict=True))

    def _candidates(self, rows: np.ndarray, anchors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, pattern) for every pattern of every anchor a line holds, each pair once."""
        import numpy as np

        starts, by_anchor = self.kernel._patterns_by_anchor
        counts = starts[anchors + 1] - starts[anchors]
        row_of_pair = np.repeat(rows, counts)
        first = np.repeat(starts[anchors] - np.cumsum(counts) + counts, counts)  # each pair's position in by_anchor, less its own rank
        patterns = by_anchor[first + np.arange(len(row_of_pair))]
        pattern_count = max(len(self.catalog.patterns), 1)
        rows, patterns = np.divmod(np.unique(row_of_pair.astype(np.int64) * pattern_count + patterns), pattern_count)
        return rows, patterns.astype(np.int32)

    def _respaced(self, matched: pl.DataFrame, texts: list[str], rows: np.ndarray, patterns: np.ndarray
                  ) -> tuple[pl.DataFrame, list[str], list[str]]:
        """Lines whose words a console, a web page or a log shipper set apart by runs of spaces or by tabs: a
        candidate line that no pattern matched is tried again with each such run made one space, with its own
        patterns. A line that then matches is read respaced; its record keeps the line as written.
        Returns the matches (in line order), the texts the rows index and the records' raw texts."""
        import numpy as np
        import polars as pl

        unmatched = np.ones(len(texts), dtype=bool)
        unmatched[matched["row"].to_numpy()] = False
        spread = [row for row in np.flatnonzero(unmatched).tolist() if _SPACE_RUN.search(texts[row])]
        if not spread:
            return matched, texts, texts
        origin = np.array(spread, dtype=np.int64)
        respaced = [_SPACE_RUN.sub(" ", texts[row]) for row in spread]
        extra = match_lines([*texts, *respaced], *_candidates_of(origin, len(texts), rows, patterns), self.catalog)
        if not len(extra):
            return matched, texts, texts
        positions = extra["row"].to_numpy() - len(texts)
        read = list(texts)
        for position in positions.tolist():
            read[spread[position]] = respaced[position]
        extra = extra.with_columns(row=pl.Series(origin[positions], dtype=matched["row"].dtype))
        return pl.concat([matched, extra], how="diagonal_relaxed").sort("row"), read, texts

    def _unwrapped(self, matched: pl.DataFrame, lines: np.ndarray, texts: list[str], raws: list[str], rows: np.ndarray,
                   patterns: np.ndarray) -> tuple[pl.DataFrame, np.ndarray, list[str], list[str], np.ndarray]:
        """Lines a terminal or a web page wrapped in two: a candidate line that no pattern matched is tried joined
        to the line after it and to the line before it (without, then with, the space a wrap may have eaten),
        with its own patterns; of pairs that would share a line, the earlier one is kept. A pair that matches is
        a record of its two lines; its text is the line unwrapped.
        Returns the matches (in line order), the lines, texts and records' raw texts their rows index (the pairs'
        appended) and which rows are pairs."""
        import numpy as np
        import polars as pl

        matched_rows = matched["row"].to_numpy()
        paired = np.zeros(len(lines), dtype=bool)
        unmatched = np.ones(len(lines), dtype=bool)
        unmatched[matched_rows] = False
        failed = np.flatnonzero(unmatched)
        heads = np.concatenate([lines[failed], lines[failed] - 1])  # each pair's first line: the failed one, or the one before it
        origin = np.concatenate([failed, failed])
        file = np.searchsorted(self.firsts, heads + 1, side="right") - 1  # the second half's file
        inside = (heads >= self.firsts[file]) & (heads + 1 < self.lasts[file])
        heads, origin = heads[inside], origin[inside]
        won = lines[matched_rows]
        free = ~np.isin(heads, won) & ~np.isin(heads + 1, won)
        heads, origin = heads[free], origin[free]
        if not len(heads):
            return matched, lines, texts, raws, paired
        both = np.unique(np.concatenate([heads, heads + 1]))
        text_of = dict(zip(both.tolist(), self.lines.texts(both), strict=True))
        repeated = [self._repeated_prefix(text_of[head], text_of[head + 1]) for head in heads.tolist()]
        skip_bytes = np.array([len(prefix.encode()) for prefix in repeated], dtype=np.int64)
        second_half = ~self._record_starts(heads + 1, skip_bytes)  # most failed lines are whole records, beside whole records
        heads, origin = heads[second_half], origin[second_half]
        repeated = [prefix for prefix, kept in zip(repeated, second_half.tolist(), strict=True) if kept]
        pairs = [(text_of[head], text_of[head + 1]) for head in heads.tolist()]
        joined = [first.rstrip() + gap + second[len(prefix) :].strip() for gap in ("", " ")
                  for (first, second), prefix in zip(pairs, repeated, strict=True)]
        heads, origin = np.concatenate([heads, heads]), np.concatenate([origin, origin])
        extra = match_lines([*texts, *joined], *_candidates_of(origin, len(texts), rows, patterns), self.catalog)
        taken: list[int] = []
        last_taken = -2
        for head, row in sorted(zip(heads[extra["row"].to_numpy() - len(texts)].tolist(), extra["row"].to_list(), strict=True)):
            if head > last_taken + 1:  # pairs never share a line
                taken.append(row)
                last_taken = head
        if not taken:
            return matched, lines, texts, raws, paired
        extra = extra.filter(pl.col("row").is_in(taken))
        raws = [*raws, *(first + "\n" + second for first, second in pairs * 2)]  # as ``joined``: each pair once per gap
        lines = np.concatenate([lines, heads])
        paired = np.concatenate([paired, np.ones(len(joined), dtype=bool)])
        matched = pl.concat([matched, extra], how="diagonal_relaxed")
        matched = matched[np.argsort(lines[matched["row"].to_numpy()], kind="stable")]
        return matched, lines, [*texts, *joined], raws, paired

    def _repeated_prefix(self, first: str, second: str) -> str:
        """The node prefix that starts ``second`` when ``first`` starts with one of the same node ('' when not):
        Procfile runners, docker-compose and kubectl repeat theirs on each physical line of a wrapped record."""
        prefix, node = node_prefix(second, self.catalog)
        return prefix if node and node_prefix(first, self.catalog)[1] == node else ""

    def _record_starts(self, lines: np.ndarray, skip_bytes: np.ndarray) -> np.ndarray:
        """Whether each line starts as a record does, by its first two bytes after ``skip_bytes`` (its node
        prefix): a bracket or a brace, or two digits or a digit and a separator (a time). Such a line is a
        record of its own, not the second half of a wrapped one (a wrap can leave a number alone on a line: "8")."""
        import numpy as np

        data = np.frombuffer(self.block, dtype=np.uint8)
        starts = self.lines.starts(lines) + skip_bytes
        first = data[np.minimum(starts, len(data) - 1)]
        second = data[np.minimum(starts + 1, len(data) - 1)]
        digit = (first >= 48) & (first <= 57)
        return np.isin(first, _BRACKETS) | (digit & (((second >= 48) & (second <= 57)) | np.isin(second, _SEPARATORS)))

    def _records(self, matched: pl.DataFrame, winners: np.ndarray, texts: list[str], raws: list[str], paired: np.ndarray
                 ) -> tuple[pl.DataFrame | None, np.ndarray]:
        """The records of the matched lines (the line and the lines that continue it, or a wrapped line's two
        halves), and how many lines each matched line's record covers (1 for a housekeeping line, which makes
        no record)."""
        import numpy as np
        import polars as pl

        housekeeping, multiline = self.kernel._pattern_flags
        pattern = matched["pattern"].to_numpy()
        matched_rows = matched["row"].to_numpy()
        pair = paired[matched_rows]
        file = np.searchsorted(self.firsts, winners, side="right") - 1
        limit = np.minimum(np.append(winners[1:], self.lines.total), self.lasts[file])  # the next match or the file's end
        followers = limit - winners - 1
        covered = np.where(pair, 2, 1).astype(np.int64)
        rows = ~housekeeping[pattern]
        first = [texts[row] for row in matched_rows.tolist()]
        raw = [raws[row] for row in matched_rows.tolist()]
        self.last_record = (raw, rows, multiline[pattern]) if len(winners) else None
        follows = rows & (followers > 0) & ~pair
        if follows.any():
            indexes = np.flatnonzero(follows)
            may_continue = self._may_continue([first[i] for i in indexes.tolist()], self.lines.texts(winners[indexes] + 1))
            chosen = indexes[may_continue | multiline[pattern[indexes]]]
            for i, end, count, several in zip(
                chosen.tolist(), self.lines.ends(winners[chosen]).tolist(), followers[chosen].tolist(), multiline[pattern[chosen]].tolist(), strict=True,
            ):
                record = record_lines(first[i], lines_after(self.block, end, count), several, self.catalog)
                covered[i] = len(record)
                raw[i] = "\n".join(record)
        events = np.flatnonzero(rows)
        self.event_files = file[events]
        self.event_lines = winners[events]
        if not len(events):
            return None, covered
        lines = winners[events]
        first_of_file = self.firsts[file[events]]
        has_previous = lines > first_of_file
        previous: list[str | None] = [None] * len(lines)
        for position, text in zip(np.flatnonzero(has_previous).tolist(), self.lines.texts(lines[has_previous] - 1), strict=True):
            previous[position] = text
        event_rows = events.tolist()
        records = matched[events].with_columns(
            text=pl.Series([first[i] for i in event_rows], dtype=pl.String),
            previous=pl.Series(previous, dtype=pl.String),
            raw=pl.Series([raw[i] for i in event_rows], dtype=pl.String),
            file=self._per_event_file("display", pl.String),
            line=pl.Series(lines - first_of_file + 1, dtype=pl.Int64),
            file_node=self._per_event_file("node", pl.String),
            reader=self._per_event_file("order", pl.Int64),
        )
        return records, covered

    def _seam(self, winners: np.ndarray, covered: np.ndarray, records: pl.DataFrame | None) -> Seam:
        """What the block, one part of a file, shows the parts beside it (see :class:`.accounting.Seam`)."""
        import numpy as np

        first, last = int(self.firsts[0]), int(self.lasts[0])
        head_end = min(int(winners[0]) if len(winners) else last, first + MAX_CONTINUATION_LINES)
        head = np.arange(first, head_end)
        buckets = np.full(len(head), "irrelevant", dtype=object)
        buckets[np.isin(head, self.relevant)] = "relevant_unmatched"
        buckets[np.isin(head, self.unreadable)] = "unreadable"
        seam = Seam(self.lines.texts(head), buckets.tolist(), head_end == last, last_line=self.lines.texts(np.array([last - 1]))[0] if last > first else None)
        search = self.kernel.collect.search
        if search is not None and search.context:
            seam.context = ContextSeam(search.before, search.after, self.lines.texts(np.arange(first, min(first + search.after, last))),
                                       self.lines.texts(np.arange(max(last - search.before, first), last)))
        if self.last_record is not None:
            raw, rows, multiline = self.last_record
            if rows[-1] and winners[-1] + covered[-1] == last:
                seam.open_record = OpenRecord(int(winners[-1]) - first + 1, raw[-1].split("\n"), bool(multiline[-1]))
            if rows[0] and winners[0] == first and records is not None:
                seam.first_record = records[:1]
        return seam

    def _per_event_file(self, attribute: str, dtype: pl.DataType) -> pl.Expr | pl.Series:
        """One attribute of each event's file (a constant when the block holds one file)."""
        import polars as pl

        if len(self.files) == 1:
            return pl.lit(getattr(self.files[0], attribute), dtype)
        return pl.Series([getattr(self.files[f], attribute) for f in self.event_files.tolist()], dtype=dtype)

    def _may_continue(self, firsts: list[str], nexts: list[str]) -> np.ndarray:
        """Whether each record's next line could continue it; when the record itself is indented or starts
        with a node prefix (kubectl, docker-compose), :func:`record_lines` decides."""
        import numpy as np

        continues, awkward = self.kernel._continuation_tests
        return np.array([awkward(first) is not None or continues(next_line) is not None for first, next_line in zip(firsts, nexts, strict=True)],
                        dtype=bool)

    def _parts(self, hit_lines: np.ndarray, winners: np.ndarray, covered: np.ndarray) -> list[tuple[int, Accounting, int]]:
        """Each file's accounting: every line in one bucket."""
        import numpy as np

        matched = np.repeat(winners, covered) + (np.arange(covered.sum()) - np.repeat(np.cumsum(covered) - covered, covered))
        offsets = np.array(unreadable_offsets(self.block, self.suspect), dtype=np.int64)
        unreadable = self.unreadable = np.setdiff1d(np.unique(self.lines.holding(offsets)), matched)
        relevant = self.relevant = np.setdiff1d(np.setdiff1d(hit_lines, matched), unreadable)
        cut = winners[(self.lines.ends(winners) - self.lines.starts(winners)) > MAX_LINE_BYTES]
        event_counts = np.bincount(self.event_files, minlength=len(self.files)).tolist()
        parts = []
        for i, file in enumerate(self.files):
            first, last = int(self.firsts[i]), int(self.lasts[i])
            here = [_within(found, first, last) for found in (matched, unreadable, relevant, cut)]
            buckets = Counter(matched=len(here[0]), unreadable=len(here[1]), relevant_unmatched=len(here[2]))
            buckets["irrelevant"] = last - first - sum(buckets.values())
            unmatched = []
            if self.kernel.collect.unmatched and len(here[2]):
                unmatched = list(zip((here[2] - first + 1).tolist(), self.lines.texts(here[2]), strict=True))
            sizes = self.lines.ends(here[3]) - self.lines.starts(here[3])
            cut_lines = list(zip((here[3] - first + 1).tolist(), sizes.tolist(), strict=True))
            parts.append((file.order, Accounting(buckets, unmatched, cut_lines), event_counts[i]))
        return parts


_BRACKETS = list(b"[{")
# a run of spaces, or a tab, between two words (indentation and trailing blanks stay as they are)
_SPACE_RUN = re.compile(r"(?<=\S)(?: {2,}|[ \t]*\t[ \t]*)(?=\S)")
_SEPARATORS = list(b"-/:.|,")
# a line that may continue the record above (a superset of record_lines' test): indented, or a stack trace's header or cause
_MAY_CONTINUE = f"^(?:{PYTHON_WHITESPACE}|{STACK_CAUSE}|{EXCEPTION_HEADER})"


def _candidates_of(origin: np.ndarray, first: int, rows: np.ndarray, patterns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (row, pattern) pairs to try on texts made anew from candidate lines: the i-th new text, at row
    ``first + i``, gets the patterns of the candidate line ``origin[i]`` (``rows`` sorted, with ``patterns`` beside)."""
    import numpy as np

    starts, stops = np.searchsorted(rows, origin, "left"), np.searchsorted(rows, origin, "right")
    counts = stops - starts
    tried = np.repeat(np.arange(len(origin)) + first, counts)
    return tried, patterns[np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())]


def _within(found: np.ndarray, first: int, last: int) -> np.ndarray:
    """The sorted line indexes of ``found`` in [first, last)."""
    import numpy as np

    return found[np.searchsorted(found, first) : np.searchsorted(found, last)]
