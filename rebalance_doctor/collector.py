"""Python's cycle collector, paused where the pipeline makes many objects and no reference cycles.

Each collection walks every container object still alive, and the scan and the analyzers keep what
they make: on a storm log, collecting took a large share of the scan and of the analysis and found
nothing (docs/performance.md). Objects are still freed as their last reference
goes; tests prove the paused stages make no cycles, which alone would stay unfreed.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off, then as the caller had it (usable as a decorator)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
