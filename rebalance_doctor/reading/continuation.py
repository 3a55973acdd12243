"""Record extent: which lines after a matched line belong to its record (stack traces, Streams
summaries, multi-line messages).

Decided on the lines that follow a match, in the scan kernel that both engines run, so a record's
``raw`` text and the ``matched`` line count are the same whichever engine ran.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..catalog import Catalog, Layout
from .envelope import node_prefix

MAX_CONTINUATION_LINES = 500
STACK_CAUSE = "Caused by: "  # a JVM stack trace's nested exception, unindented
# the first line of a JVM stack trace, unindented under the record that logged it: the exception's class
EXCEPTION_HEADER = r"(?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b"
_EXCEPTION_HEADER = re.compile(EXCEPTION_HEADER)
PYTHON_WHITESPACE = r"[\s\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def _is_continuation(record: str, line: str, prefix: str) -> bool:
    """A line continues the record above when it is indented deeper (stack traces, Streams summaries,
    config dumps) or starts a stack trace (``org.apache…Exception: …``, ``Caused by: …``), after the node
    prefix both lines repeat (kubectl --prefix, docker-compose)."""
    if prefix:
        if not line.startswith(prefix):
            return False
        record, line = record[len(prefix) :], line[len(prefix) :]
    if line[:1].isdigit():  # most lines start with their timestamp: neither indented nor a stack trace
        return False
    if not line.strip():
        return False
    indent = len(record) - len(record.lstrip())
    deeper = line[:indent].strip() == "" and line[indent : indent + 1] in (" ", "\t")
    return deeper or line.lstrip().startswith(STACK_CAUSE) or bool(_EXCEPTION_HEADER.match(line))


@dataclass(frozen=True)
class _StartsLikeRecord:
    """Tells whether a line starts a new record in the layout (and node prefix) of a multi-line record."""

    layout: Layout
    prefix: str

    def match(self, line: str) -> bool:
        if self.prefix and not line.startswith(self.prefix):
            return True  # another node's line (interleaved kubectl/docker output) ends the record
        return bool(self.layout.compiled.match(line[len(self.prefix) :]))


def _record_layout(line: str, catalog: Catalog) -> _StartsLikeRecord | None:
    prefix = node_prefix(line, catalog)
    for layout in catalog.record_layouts:
        if layout.compiled.match(line.removeprefix(prefix)):
            return _StartsLikeRecord(layout, prefix)
    return None


def record_lines(first: str, followers: Iterable[str | None], multiline: bool, catalog: Catalog) -> list[str]:
    """The record's physical lines: ``first`` and the followers that continue it.

    ``followers`` are the lines after ``first``, up to the next matched line; ``None`` stands for a
    line the engine knows cannot continue a record. A multi-line message (2.4's "Updating assignment
    with\\nnow assigned partitions: …") continues on unindented lines too, up to the next line that
    starts a record of the same layout.
    """
    lines = [first]
    prefix = node_prefix(first, catalog)
    layout = _record_layout(first, catalog) if multiline else None
    for line in followers:
        if line is None or len(lines) > MAX_CONTINUATION_LINES:
            break
        continues = _is_continuation(first, line, prefix) or (layout is not None and line.strip() and not layout.match(line))
        if not continues:
            break
        lines.append(line)
    return lines
