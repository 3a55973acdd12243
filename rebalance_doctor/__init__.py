"""rebalance-doctor: log forensics for Apache Kafka consumer-group rebalance incidents.

The library API, which the command line is a thin layer over:

>>> import rebalance_doctor as rd                                   # doctest: +SKIP
>>> logs = rd.load(["sample_logs/heartbeat-expiry"])                # inputs → the event table
>>> analysis = rd.analyze(logs.events)                              # → the incident model
>>> print(rd.render(analysis, "markdown"))                          # → a report
>>> rd.load(["logs/"], search=rd.TextSearch("row lock", before=2)).lines   # grep: every line, events marked
>>> rd.load(["logs/"]).tables()["rebalances"]                      # the incident as tables, for SQL

Heavy modules (polars) load on first use so that ``rebalance-doctor --help`` starts at once.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

from .reading.search import TextSearch

__version__ = "0.1.0"

if TYPE_CHECKING:
    import polars as pl

    from .analysis.model import Analysis
    from .loaded import LoadedLogs
    from .table.loading import LogSet


def load(paths: Any, **options: Any) -> LoadedLogs:
    """Read logs into a :class:`~rebalance_doctor.table.loading.LogSet`: the event table and its line
    accounting (see :func:`rebalance_doctor.table.loading.load` for the options), and its ``tables()``."""
    from .loaded import LoadedLogs
    from .table.loading import load as load_logs

    return LoadedLogs.of(load_logs(paths, **options))


def analyze(events: pl.DataFrame | LogSet, *, patterns: tuple[str, ...] = (), **options: Any) -> Analysis:
    """Reconstruct rebalances, causes, pauses and findings from an event table, or from what :func:`load`
    returned (see :func:`rebalance_doctor.analysis.analyze` for the options).

    The catalogs' version ranges (the bundled ones, plus the ``patterns`` directories) word the advice
    for the Kafka versions the logs prove. Anything but an event table raises TypeError, a table that lacks
    columns of the schema (docs/event-table.md) ValueError.
    """
    import polars as pl

    from .analysis import analyze as analyze_events
    from .catalog import load_catalog
    from .catalog.schema import COLUMN_NAMES
    from .table.loading import LogSet

    if isinstance(events, LogSet):
        options.setdefault("buckets", dict(events.buckets))
        events = events.events
    if not isinstance(events, pl.DataFrame):
        raise TypeError(f"analyze() takes the event table (load(...).events, a polars DataFrame), not {type(events).__name__}")
    missing = [name for name in COLUMN_NAMES if name not in events.columns]
    if missing:
        raise ValueError(f"analyze(): the event table lacks the columns {', '.join(missing)} (see docs/event-table.md)")

    options.setdefault("pattern_versions", load_catalog(tuple(patterns)).pattern_versions)
    return analyze_events(events, **options)


def tables(logs: LogSet | pl.DataFrame, **options: Any) -> dict[str, pl.DataFrame]:
    """The incident as tables, for SQL and notebooks (columns in docs/sql.md): ``events`` (the event table),
    ``rebalances``, ``members`` and ``findings``, from what :func:`load` returned or an event table (``options``
    as :func:`analyze` takes them).

    >>> import polars as pl                                                              # doctest: +SKIP
    >>> pl.SQLContext(rd.load(["logs/"]).tables()).execute("SELECT cause, count(*) FROM rebalances GROUP BY cause", eager=True)
    """
    from .analysis.tables import incident_tables
    from .table.loading import LogSet

    events = logs.events if isinstance(logs, LogSet) else logs
    return {"events": events, **incident_tables(analyze(logs, **options))}


def render(analysis: Analysis, format: str = "terminal", out: IO | None = None, **options: Any) -> str | bytes | None:
    """Write the incident as ``terminal``, ``json``, ``markdown``, ``html``, ``svg`` or ``png`` to ``out``,
    or return it when ``out`` is None (see :func:`rebalance_doctor.renderers.render`)."""
    from .renderers import render as render_analysis

    return render_analysis(analysis, format, out, **options)


__all__ = ["TextSearch", "__version__", "analyze", "load", "render", "tables"]
