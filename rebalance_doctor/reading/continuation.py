"""Record extent: which lines after a matched line belong to its record (stack traces, Streams
summaries, multi-line messages).

Decided on the lines that follow a match, in the scan kernel that both engines run, so a record's
``raw`` text and the ``matched`` line count are the same whichever engine ran.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..catalog import Catalog, Layout
from .envelope import node_prefix

MAX_CONTINUATION_LINES = 500
STACK_CAUSE = "Caused by: "  # a JVM stack trace's nested exception, unindented
# the first line of a JVM stack trace, unindented under the record that logged it: the exception's class
EXCEPTION_HEADER = r"(?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b"
_EXCEPTION_HEADER = re.compile(EXCEPTION_HEADER)
PYTHON_WHITESPACE = r"[\s\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def _is_continuation(record: str, line: str) -> bool:
    """A line continues the record above when it is indented deeper (stack traces, Streams summaries,
    config dumps) or starts a stack trace (``org.apache…Exception: …``, ``Caused by: …``); both are read
    after their node prefixes (kubectl --prefix, docker-compose, Procfile runners)."""
    if line[:1].isdigit():  # most lines start with their timestamp: neither indented nor a stack trace
        return False
    if not line.strip():
        return False
    indent = len(record) - len(record.lstrip())
    deeper = line[:indent].strip() == "" and line[indent : indent + 1] in (" ", "\t")
    return deeper or line.lstrip().startswith(STACK_CAUSE) or bool(_EXCEPTION_HEADER.match(line))


def _record_layout(record: str, catalog: Catalog) -> Layout | None:
    """The layout of a timestamped record (read after its node prefix), whose next record starts alike."""
    return next((layout for layout in catalog.record_layouts if layout.compiled.match(record)), None)


def record_lines(first: str, followers: Iterable[str | None], multiline: bool, catalog: Catalog) -> list[str]:
    """The record's physical lines: ``first`` and the followers that continue it.

    ``followers`` are the lines after ``first``, up to the next matched line; ``None`` stands for a
    line the engine knows cannot continue a record. A multi-line message (2.4's "Updating assignment
    with\\nnow assigned partitions: …") continues on unindented lines too, up to the next line that
    starts a record of the same layout. Another node's line (interleaved kubectl/docker output) ends it.
    """
    lines = [first]
    prefix, node = node_prefix(first, catalog)
    record = first[len(prefix) :]
    layout = _record_layout(record, catalog) if multiline else None
    for line in followers:
        if line is None or len(lines) > MAX_CONTINUATION_LINES:
            break
        line_prefix, line_node = node_prefix(line, catalog)
        if line_node != node:
            break
        rest = line[len(line_prefix) :]
        continues = _is_continuation(record, rest) or (layout is not None and rest.strip() and not layout.compiled.match(rest))
        if not continues:
            break
        lines.append(line)
    return lines
