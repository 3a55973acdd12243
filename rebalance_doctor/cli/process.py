"""The process the command runs in: allocator and thread settings made before polars and numpy load, exit
statuses for Ctrl-C (and SIGTERM, SIGHUP: the same clean stop) and typer's exits, and a fast exit once the
output is out."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import NoReturn

from .app import app
from .console import ExitStatus

# polars' allocator (jemalloc) keeps freed pages for seconds; a command that builds one large table and
# exits gains nothing from that, and its peak RSS is lower when pages go back at once (docs/performance.md).
POLARS_ALLOCATOR = ("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
# numpy's OpenBLAS starts a thread per core on import that spins while idle; nothing here multiplies
# matrices, and the spinning takes CPU from the scan.
SINGLE_BLAS_THREAD = ("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    for name in ("stdout", "stderr"):  # started with a stream closed (`>&-`): its output goes nowhere, quietly
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - for the life of the process
    for setting in (POLARS_ALLOCATOR, SINGLE_BLAS_THREAD):  # before polars and numpy are first imported; the scan processes inherit them
        os.environ.setdefault(*setting)
    for stop in (signal.SIGTERM, signal.SIGHUP):  # a CI runner's or a closed terminal's stop: stop as Ctrl-C does
        signal.signal(stop, _interrupted)
    try:
        app()  # typer ends with sys.exit
    except KeyboardInterrupt:
        sys.stderr.write("rebalance-doctor: interrupted\n")
        _leave(int(ExitStatus.INTERRUPTED))
    except SystemExit as done:
        if done.code is not None and not isinstance(done.code, int):
            raise
        _leave(done.code or 0)


def _interrupted(signum: int, frame: object) -> None:
    """SIGTERM or SIGHUP: the scan processes are stopped and partial outputs removed, as for Ctrl-C."""
    raise KeyboardInterrupt


def _leave(status: int) -> NoReturn:
    """Exit once the output is out, without the interpreter's teardown: freeing the event table, the
    catalog and the modules object by object is slow after a large run. A run that started Spark
    gets the ordinary exit, so that PySpark's own exit handlers run."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (| head) or stream
            stream.flush()
    if "pyspark" in sys.modules:
        sys.exit(status)
    os._exit(status)
