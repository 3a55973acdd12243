"""Output files that appear complete or not at all: written to a temporary file of their own beside the target,
then renamed into place. The temporary file is created exclusively under a random name and never through a
symbolic link, so a file planted at a predictable name cannot redirect the write, and two runs writing the
same output cannot splice their bytes into one file."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO

CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def check_output(path: Path) -> None:
    """An output names a file: not a directory (``-o logs/``), and not through a trailing separator."""
    if str(path).endswith(os.sep) or path.is_dir():
        raise IsADirectoryError(21, "is a directory: give a file name (e.g. incident.html)", str(path))


@contextlib.contextmanager
def write_atomically(path: Path, binary: bool = False) -> Iterator[IO]:
    """A text (or binary) stream to ``path`` that only appears there complete: a failed or interrupted
    write leaves nothing, and what was there before stays until the new file replaces it."""
    check_output(path)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.partial")
    descriptor = os.open(temp, CREATE_NEW, 0o666)  # the umask applies, as for any file the user creates
    try:
        with os.fdopen(descriptor, "wb") if binary else os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            yield stream
        temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)
