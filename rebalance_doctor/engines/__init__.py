"""Engines: the same event table from one machine or a cluster. :mod:`.local` scans one block,
:mod:`.parallel` shares an input's blocks out over this machine's cores (the ``polars`` engine), and
:mod:`.spark` runs the scan on a Spark cluster. Nothing downstream knows which one ran."""
