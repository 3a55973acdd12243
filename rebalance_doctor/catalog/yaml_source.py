"""YAML that remembers where things are: every mapping knows its line and the line of each key, so that a
bad catalog entry or rules file is reported at ``file:line``. Duplicate keys are errors, not silent
overrides. Aliases (``*name``) and nesting deeper than a catalog ever needs are refused before anything
is built: a few hundred bytes of aliases can stand for gigabytes. Shared by the catalogs and the ``check``
rules file."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from .errors import CatalogError


class LineMapping(dict):
    """A YAML mapping with the line it starts on and the line of each of its own keys."""

    line: int = 1
    key_lines: dict[Any, int]

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.key_lines = {}

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


@functools.cache
def _line_loader() -> type:
    """A safe loader (libyaml's parser when available) whose mappings are :class:`LineMapping`. Built on
    first use: runs that find the catalog cached never import yaml."""
    import yaml

    class LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    def mapping_with_lines(loader: LineLoader, node: yaml.MappingNode) -> LineMapping:
        mapping = LineMapping(loader.construct_mapping(node, deep=True))
        mapping.line = node.start_mark.line + 1
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node)
            if key in mapping.key_lines:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            mapping.key_lines[key] = key_node.start_mark.line + 1
        return mapping

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping_with_lines)
    return LineLoader


MAX_DEPTH = 32  # catalogs and rules files nest a few levels; far deeper is a mistake or an attack


def _check_shape(text: str, path: str | Path, error: type[CatalogError]) -> None:
    """Refuse aliases and deep nesting, from the parser's events (nothing is built yet)."""
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if isinstance(event, yaml.AliasEvent):
            raise error(path, event.start_mark.line + 1, "aliases (*name) are not allowed: write the value out")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise error(path, event.start_mark.line + 1, f"nested deeper than {MAX_DEPTH} levels")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def read_yaml(path: str | Path, what: str, error: type[CatalogError] = CatalogError) -> Any:
    """The document in ``path`` (an empty mapping for an empty file); unreadable or invalid YAML raises
    ``error`` at the line it was found on. ``what`` names the file in messages ("catalog", "rules file")."""
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
        _check_shape(text, path, error)
        data = yaml.load(text, Loader=_line_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise error(path, (mark.line + 1) if mark else 1, f"not valid YAML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(path, 1, f"cannot read the {what}: {getattr(exc, 'strerror', None) or exc}") from None
    return LineMapping() if data is None else data
