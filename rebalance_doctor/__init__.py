"""rebalance-doctor: log forensics for Apache Kafka consumer-group rebalance incidents.

The library API is :func:`load` (inputs → event table); the CLI is a thin layer over it.
Heavy modules (polars) load on first use so that ``rebalance-doctor --help`` starts instantly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .api import LogSet


def load(paths: Any, **options: Any) -> LogSet:
    """Read logs into a :class:`~rebalance_doctor.api.LogSet` (see :func:`rebalance_doctor.api.load`)."""
    from .api import load as _load

    return _load(paths, **options)




def analyze(events: Any, **options: Any) -> Any:
    """Reconstruct rebalances, causes, pauses and findings (see :func:`rebalance_doctor.analysis.analyze`).

    The bundled catalog's version ranges word the advice for the Kafka versions the logs prove.
    """
    from .analysis import analyze as _analyze
    from .catalog import load_catalog

    if "pattern_versions" not in options:
        options["pattern_versions"] = {p.id: (p.since, p.until) for p in load_catalog().patterns}
    return _analyze(events, **options)


__all__ = ["load", "analyze", "__version__"]
