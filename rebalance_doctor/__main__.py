"""The ``rebalance-doctor`` command and ``python -m rebalance_doctor``.

A scan process started with "spawn" runs the command's script again (as ``__mp_main__``), and with it
the imports of this module: the CLI (typer, rich: slow to import) is imported only when the command runs.
"""


import os

# polars' allocator (jemalloc) keeps freed pages for reuse and never hands back the ones it has zeroed: over
# a large input the command's memory grew with every block it had let go of. Returning them at once bounds
# it by the event table (docs/performance.md); a user's own setting wins. Set before polars is imported,
# here and, through the environment, in the scan processes.
ALLOCATOR_SETTINGS = ("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")


def main() -> None:
    os.environ.setdefault(*ALLOCATOR_SETTINGS)
    from rebalance_doctor.cli.process import main as run

    run()


if __name__ == "__main__":
    main()
