"""The ``rebalance-doctor`` command and ``python -m rebalance_doctor``.

A scan process started with "spawn" runs the command's script again (as ``__mp_main__``), and with it
the imports of this module: the CLI (typer, rich: slow to import) is imported only when the command runs.
"""


def main() -> None:
    from rebalance_doctor.cli.process import main as run

    run()


if __name__ == "__main__":
    main()
