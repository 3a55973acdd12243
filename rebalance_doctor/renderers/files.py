"""Output files that appear complete or not at all: written beside the target, then renamed into place."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def write_atomically(path: Path, binary: bool = False) -> Iterator[IO]:
    """A text (or binary) stream to ``path`` that only appears there complete: a failed or interrupted
    write leaves nothing."""
    temp = path.with_name(f".{path.name}.partial")
    try:
        with temp.open("wb") if binary else temp.open("w", encoding="utf-8") as stream:
            yield stream
        temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)
