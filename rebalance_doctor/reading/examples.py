"""Catalog entries prove themselves: each example line must come out as its own entry's event, with the
fields the example states, through the same matching and row building a scan uses."""

from __future__ import annotations

from pathlib import Path

from ..catalog import BUNDLED_DIR, Catalog, CatalogError, load_catalog
from ..catalog.entries import MessagePattern
from .rows import match_many


def example_problems(catalog: Catalog, patterns: list[MessagePattern]) -> dict[tuple[str, int], str]:
    """What is wrong with the patterns' examples (no match, another entry wins, a field differs), by
    (pattern id, example index); all examples go through one batch, as a block's lines do."""
    examples = [(pattern, index, example) for pattern in patterns for index, example in enumerate(pattern.examples)]
    events = match_many([example.line for _, _, example in examples], catalog, file="example.log", file_node="example")
    problems = {}
    for (pattern, index, example), event in zip(examples, events, strict=True):
        problem = None
        if event is None:
            problem = f"example {index} matches no entry: {example.line!r}"
        elif event["pattern_id"] != pattern.id:
            problem = f"example {index} is taken by {event['pattern_id']} ({catalog.by_id[event['pattern_id']].where}): {example.line!r}"
        else:
            wrong = next((name for name, expected in example.fields.items() if event[name] != expected), None)
            if wrong is not None:
                problem = f"example {index} gives {wrong} {event[wrong]!r}, the example says {example.fields[wrong]!r}"
        if problem:
            problems[(pattern.id, index)] = problem
    return problems


def checked_catalog(pattern_dirs: tuple[str, ...] = ()) -> Catalog:
    """The catalog with the user's directories, whose entries' examples are checked as the bundled ones are
    in the project's tests: an entry that does not match its own examples is a CatalogError at its file:line."""
    catalog = load_catalog(pattern_dirs)
    if pattern_dirs:
        bundled = Path(BUNDLED_DIR).resolve()
        users = [pattern for pattern in catalog.patterns if not Path(pattern.path).resolve().is_relative_to(bundled)]
        problems = example_problems(catalog, users)
        for pattern in users:
            for index in range(len(pattern.examples)):
                if (pattern.id, index) in problems:
                    raise CatalogError(pattern.path, pattern.line, f"{pattern.id}: {problems[(pattern.id, index)]}")
    return catalog
