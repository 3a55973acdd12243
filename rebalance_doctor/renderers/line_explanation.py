"""``patterns test``: show which entry a line matches and what it extracts, or why nothing matches."""

from __future__ import annotations

from datetime import tzinfo

from rich.console import Console
from rich.text import Text

from ..catalog import Catalog
from ..reading.rows import candidate_patterns, match_one
from .words import iso_utc, visible

_SHOWN = ("ts", "node", "level", "logger", "component", "kind")


def explain_line(line: str, catalog: Catalog, zone: tzinfo, out: Console) -> bool:
    """Print the match (fields the event table would hold) or the reason there is none."""
    out.print(Text.assemble(("line: ", "bold"), visible(line)))
    candidates = candidate_patterns(line, catalog)
    event = match_one(line, catalog, zone)
    if event is None:
        if not candidates:
            words = [w for w in catalog.relevance_words if w.lower() in line.lower()]
            bucket = f"relevant but unmatched (mentions {', '.join(map(repr, words))})" if words else "irrelevant"
            out.print(Text(f"no match: no catalog anchor occurs in the line, so the prefilter skips it → bucket: {bucket}", style="yellow"))
        else:
            out.print(Text("no match: the anchor of these entries occurs, but their regex does not match:", style="yellow"))
            for pattern in candidates:
                out.print(Text(f"  {pattern.id} ({pattern.where}) anchor {pattern.anchor!r}"))
                out.print(Text(f"    regex: {pattern.regex}", style="dim"))
            out.print(Text("→ bucket: relevant but unmatched (listed by --unmatched)", style="yellow"))
        return False
    pattern = catalog.by_id[event["pattern_id"]]
    out.print(Text.assemble(("match: ", "bold green"), (pattern.id, "bold"), f"  ({pattern.versions}, {pattern.where})"))
    for name in _SHOWN + tuple(k for k in event if k not in _SHOWN and k not in ("file", "line", "raw", "pattern_id")):
        value = event[name]
        if value is None:
            continue
        out.print(Text.assemble((f"  {name:>17}: ", "bold"), visible(iso_utc(value) if name == "ts" else str(value))))
    others = [p.id for p in candidates if p is not pattern and p.compiled.search(line)]
    if others:
        out.print(Text(f"  also matched (lower priority): {', '.join(others)}", style="dim"))
    return True
