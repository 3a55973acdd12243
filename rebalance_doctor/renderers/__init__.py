"""Renderers: the incident model (:class:`~..analysis.model.Analysis`) as a terminal report, JSON,
a post-mortem Markdown document, a self-contained HTML page or a timeline picture; plus the event
lines of ``grep``/``events`` and the CI gate's verdict. Renderers read the model and never the logs.

>>> import io, rebalance_doctor as rd                                          # doctest: +SKIP
>>> analysis = rd.analyze(rd.load(["sample_logs/heartbeat-expiry"]).events)    # doctest: +SKIP
>>> markdown = rd.render(analysis, "markdown")                                 # doctest: +SKIP
"""

from __future__ import annotations

import io
import os
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from ..analysis.model import Analysis

FORMATS = ("terminal", "json", "markdown", "html", "svg", "png")
BINARY_FORMATS = ("png",)
FORMAT_BY_SUFFIX = {".txt": "terminal", ".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html",
                    ".htm": "html", ".svg": "svg", ".png": "png"}


def format_for(path: str | os.PathLike) -> str:
    """The format a file name asks for (``incident.html`` → ``html``); ValueError when its extension names none."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMAT_BY_SUFFIX:
        known = ", ".join(FORMAT_BY_SUFFIX)
        raise ValueError(f"{os.fspath(path)}: cannot tell the report format from the extension {suffix or '(none)'!r} "
                         f"(known: {known}); give --format")
    return FORMAT_BY_SUFFIX[suffix]


def render(analysis: Analysis, format: str = "terminal", out: IO | None = None, *, console: Console | None = None) -> str | bytes | None:
    """Write ``analysis`` as ``format`` to ``out`` (a text stream; a binary one for ``png``), or return it
    when ``out`` is None. The terminal report goes through ``console`` when given (its width and colour),
    else through a plain 100-column console on ``out``."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r} (choose {', '.join(FORMATS)})")
    if out is None:
        buffer: IO = io.BytesIO() if format in BINARY_FORMATS else io.StringIO()
        render(analysis, format, buffer, console=console)
        return buffer.getvalue()
    if format == "terminal":
        from rich.console import Console

        from .terminal import print_report

        print_report(analysis, console or Console(file=out, width=100, color_system=None, highlight=False, soft_wrap=True))
    elif format == "json":
        from .json_document import write_json

        write_json(analysis, out)
    elif format == "markdown":
        from .markdown import render as markdown_document

        out.write(markdown_document(analysis))
    elif format == "html":
        from .html import render as html_page

        out.write(html_page(analysis))
    elif format == "svg":
        from .picture import timeline_svg

        out.write(timeline_svg(analysis))
    else:
        from .picture import timeline_png

        out.write(timeline_png(analysis))
    return None
