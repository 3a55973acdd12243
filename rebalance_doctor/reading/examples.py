"""Catalog entries prove themselves: each example line must come out as its own entry's event, with the
fields the example states, through the same matching and row building a scan uses."""

from __future__ import annotations

from pathlib import Path

from ..catalog import BUNDLED_DIR, Catalog, CatalogError, load_catalog
from ..catalog.entries import Example, MessagePattern
from .envelope import EnvelopeReader
from .rows import build_event, match_message


def example_problem(catalog: Catalog, pattern: MessagePattern, index: int, example: Example) -> str | None:
    """What is wrong with ``pattern``'s example ``index`` (no match, another entry wins, a field differs), or None."""
    match = match_message(example.line, catalog)
    if match is None:
        return f"example {index} matches no entry: {example.line!r}"
    if match.pattern.id != pattern.id:
        return f"example {index} is taken by {match.pattern.id} ({match.pattern.where}): {example.line!r}"
    event = build_event(match, raw=example.line, file="example.log", line=1, file_node="example", reader=EnvelopeReader(catalog))
    for name, expected in example.fields.items():
        if event[name] != expected:
            return f"example {index} gives {name} {event[name]!r}, the example says {expected!r}"
    return None


def checked_catalog(pattern_dirs: tuple[str, ...] = ()) -> Catalog:
    """The catalog with the user's directories, whose entries' examples are checked as the bundled ones are
    in the project's tests: an entry that does not match its own examples is a CatalogError at its file:line."""
    catalog = load_catalog(pattern_dirs)
    if pattern_dirs:
        bundled = Path(BUNDLED_DIR).resolve()
        for pattern in catalog.patterns:
            if Path(pattern.path).resolve().is_relative_to(bundled):
                continue
            for index, example in enumerate(pattern.examples):
                problem = example_problem(catalog, pattern, index, example)
                if problem:
                    raise CatalogError(pattern.path, pattern.line, f"{pattern.id}: {problem}")
    return catalog
