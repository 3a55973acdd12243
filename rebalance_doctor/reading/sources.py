"""Sources: what the user typed (files, directories, globs, ``.gz``, ``-``, URIs) turned into an ordered
list of input files, each with the node it came from."""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

STDIN_NAME = "-"
DOCUMENT_SUFFIXES = (".md", ".markdown")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

# File names that say nothing about the node: use the directory name instead.
_GENERIC_STEMS = {"server", "stdout", "stderr", "app", "application", "kafka", "log", "logs", "output", "console", "current"}


class InputError(Exception):
    """An input that cannot be read at all (missing, unreadable, not gzip, binary)."""


@dataclass(frozen=True)
class Source:
    """One input file (or stdin), in the order the user gave it."""

    display: str  # path as shown in evidence (file:line)
    path: Path | None  # None for stdin and remote files
    order: int
    uri: str | None = None  # a Hadoop-compatible URI (s3a://, hdfs://) only the Spark engine reads
    listed_size: int | None = None  # the size the listing saw (a remote file's, or the stat that found a local one)
    listed_identity: tuple[int, int] | None = None  # (device, inode) the listing saw: a rotated file has another

    @functools.cached_property
    def size(self) -> int:
        """Bytes on disk when the inputs were listed (0 for stdin or an unreadable file): for progress
        and for sharing out the work, not for accounting (a file is read up to the size it has when opened)."""
        if self.listed_size is not None:
            return self.listed_size
        try:
            return self.path.stat().st_size if self.path is not None else 0
        except OSError:
            return 0

    @functools.cached_property
    def node(self) -> str:
        """A node name from the file name: ``logs/broker-1/server.log.2`` → ``broker-1`` (asked per block)."""
        path = PurePosixPath(unquote(urlparse(self.uri).path)) if self.uri else self.path
        if path is None:
            return "stdin"
        name = path.name
        for suffix in (".gz", ".log", ".txt", ".out", ".json", ".ndjson", ".csv"):
            name = name.removesuffix(suffix)
        stem = name.split(".")[0] if name.split(".")[0] else name
        if stem.lower() in _GENERIC_STEMS and path.parent.name:
            return path.parent.name
        return stem or path.parent.name or "unknown"


@dataclass
class Expansion:
    sources: list[Source] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def is_uri(text: str) -> bool:
    """``s3a://bucket/x``, ``hdfs://…``, ``file:///…`` (a Windows-free world: ``C:\\`` never occurs here)."""
    return bool(_URI.match(text))


RemoteLister = Callable[[str], list[tuple[str, int]]]


def expand(paths: list[str], list_remote: RemoteLister | None = None) -> Expansion:
    """Resolve files, directories (recursively), globs and ``-`` into sources, keeping order.

    ``file://`` URIs are local paths; other URIs (``s3a://``, ``hdfs://``) go to ``list_remote``
    (the Spark engine's Hadoop file system), which returns (URI, size) per file.
    """
    result = Expansion()
    seen: set[object] = set()

    def add(display: str, path: Path | None, uri: str | None = None, size: int | None = None, status: os.stat_result | None = None) -> None:
        """A source, unless the same file is already one (named twice, or through a link)."""
        if path is not None and status is None:
            with contextlib.suppress(OSError):
                status = os.stat(path)
        key = uri or (display if path is None else (status.st_dev, status.st_ino) if status else str(path.resolve()))
        if key not in seen:
            seen.add(key)
            identity = (status.st_dev, status.st_ino) if status else None
            result.sources.append(Source(display, path, len(result.sources), uri, status.st_size if status else size, identity))

    for raw in paths:
        if raw == STDIN_NAME:
            add(STDIN_NAME, None)
            continue
        if is_uri(raw):
            scheme = raw.split(":", 1)[0].lower()
            if scheme == "file":
                raw = unquote(urlparse(raw).path)
            elif list_remote is None:
                result.problems.append(f"{raw}: {scheme}:// inputs are read by the Spark engine (--engine spark)")
                continue
            else:
                try:
                    files = list_remote(raw)
                except OSError as exc:
                    result.problems.append(f"{raw}: {exc}")
                    continue
                if not files:
                    result.problems.append(f"{raw}: no such file or directory")
                for uri, size in files:
                    add(uri, None, uri, size)
                continue
        candidates = [raw] if os.path.lexists(raw) else _glob(raw)
        if not candidates:
            result.problems.append(f"{raw}: no such file or directory")
            continue
        for candidate in candidates:
            path = Path(candidate)
            if path.is_dir():
                files = sorted((p for p in _files_under(path, result.problems) if _is_log_candidate(p)), key=lambda p: p.parts)
                if not files:
                    result.problems.append(f"{candidate}: directory holds no files")
                for file in files:  # one stat each, not one per question: listing many files stays quick
                    try:
                        status = os.stat(file)
                    except OSError:
                        status = None
                    if status is None and os.path.islink(file):
                        result.problems.append(f"{file}: broken symbolic link, skipped")
                    elif status is None or not stat.S_ISREG(status.st_mode):  # a FIFO nobody writes to would wait forever
                        result.problems.append(f"{file}: not a regular file, skipped")
                    else:
                        add(str(file), file, status=status)
            elif path.is_symlink() and not path.exists():
                result.problems.append(f"{candidate}: broken symbolic link to {os.readlink(path)}")
            else:
                add(candidate, path)  # named explicitly: a FIFO (<(kubectl logs …)) is read as a stream
    return result


def _glob(pattern: str) -> list[str]:
    """The files a glob names. ``**`` does not descend through links to directories (a link back up would
    repeat the tree without end), as a directory given by name is not walked through them either."""
    found = sorted(glob.glob(pattern, recursive=True))
    if "**" not in pattern:
        return found
    root = Path(pattern)
    while glob.has_magic(str(root)):
        root = root.parent
    depth = len(root.parts)

    def through_link(candidate: str) -> bool:
        parents = Path(candidate).parents
        return any(parent.is_symlink() for parent in list(parents)[: max(0, len(Path(candidate).parts) - depth - 1)])

    return [candidate for candidate in found if not through_link(candidate)]


def _files_under(directory: Path | str, problems: list[str]) -> Iterator[Path]:
    """Every entry under ``directory`` that is not a directory (links to directories are not followed,
    as in ``os.walk``, which also took a stat per directory); a subdirectory that cannot be read is named."""
    try:
        with os.scandir(directory) as listing:
            entries = list(listing)
    except OSError as exc:
        problems.append(f"{exc.filename}: cannot read directory ({exc.strerror or exc})")
        return
    for entry in entries:
        try:
            is_directory = entry.is_dir()
        except OSError as exc:  # a link that loops (ELOOP) or cannot be followed (EACCES): named, skipped
            problems.append(f"{entry.path}: cannot read ({exc.strerror or exc})")
            continue
        if not is_directory:
            yield Path(entry.path)
        elif not entry.is_symlink():
            yield from _files_under(entry.path, problems)


def _is_log_candidate(path: Path) -> bool:
    """Inside a directory: everything but hidden files and Markdown notes (an incident folder's
    EXPECTED.md or README.md is documentation, not a log). A file named explicitly is always read."""
    return not path.name.startswith(".") and path.suffix.lower() not in DOCUMENT_SUFFIXES
