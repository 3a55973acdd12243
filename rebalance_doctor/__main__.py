# A scan process started with "spawn" imports this module again: it must not pull in the CLI (typer, rich).
if __name__ == "__main__":
    from rebalance_doctor.cli import main

    main()
