"""The scan's floor: the work every command does before a single line is matched.

Two processes (the process you run and one scan process, as the polars engine runs), each importing what
`events` imports, loading the catalogs, building the prefilter, reading its share of the files in blocks,
running the prefilter over every block and numbering the lines to find the hit lines. No line is matched, no
record or row is made, nothing is printed but the totals. `bench/run.py` times it beside rg: the ratio is what
the matching, records, rows and output have left of a target.

    python bench/floor.py DIR
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path


def scan_floor(paths: list[str]) -> tuple[int, int]:
    """Lines and hit lines of the files."""
    import numpy as np
    import polars  # noqa: F401  (imported by every command that scans)

    from rebalance_doctor.catalog import load_catalog
    from rebalance_doctor.reading.blocks import BLOCK_SIZE, ReadBuffers, read_blocks
    from rebalance_doctor.reading.lines import Lines
    from rebalance_doctor.reading.prefilter import best_prefilter
    from rebalance_doctor.reading.sources import Source

    catalog = load_catalog(())
    prefilter = best_prefilter(catalog.anchors, catalog.relevance_words)
    scratch, buffers = np.empty(BLOCK_SIZE, bool), ReadBuffers()
    lines = hit_lines = 0
    for order, path in enumerate(paths):
        for block in read_blocks(Source(path, Path(path), order), buffers=buffers):
            numbered = Lines(block, scratch)
            lines += numbered.total
            hit_lines += len(np.unique(numbered.holding(prefilter.hits(block).at)))
    return lines, hit_lines


def shares(paths: list[str], count: int) -> list[list[str]]:
    """The files dealt out, largest first, each to the share with the fewest bytes so far."""
    dealt: list[list[str]] = [[] for _ in range(count)]
    sizes = [0] * count
    for path in sorted(paths, key=os.path.getsize, reverse=True):
        least = sizes.index(min(sizes))
        dealt[least].append(path)
        sizes[least] += os.path.getsize(path)
    return dealt


def main() -> None:
    directory = Path(sys.argv[1])
    mine, theirs = shares(sorted(str(p) for p in directory.iterdir() if p.is_file()), 2)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        other = pool.apply_async(scan_floor, (theirs,))
        here = scan_floor(mine)
        there = other.get()
    print(f"{here[0] + there[0]:,} lines, {here[1] + there[1]:,} hit lines")


if __name__ == "__main__":
    main()
