"""The error every catalog-shaped file raises: a YAML entry that cannot be used, at ``file:line``."""

from __future__ import annotations

from pathlib import Path


class CatalogError(ValueError):
    """A catalog entry that cannot be used, located at ``file:line``."""

    def __init__(self, path: Path | str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = str(path)
        self.line = line
        self.message = message

    def __reduce__(self):  # raised in a scan process, re-raised in the one the user runs
        return CatalogError, (self.path, self.line, self.message)

