"""What :func:`rebalance_doctor.load` returns: the logs' :class:`~.table.loading.LogSet`, which also gives the
incident's tables (it sits beside the API, above the analysis those tables need)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from .table.loading import LogSet

if TYPE_CHECKING:
    import polars as pl


@dataclass
class LoadedLogs(LogSet):
    """A :class:`LogSet` with :meth:`tables`."""

    @classmethod
    def of(cls, logs: LogSet) -> LoadedLogs:
        return cls(**{field.name: getattr(logs, field.name) for field in fields(logs)})

    def tables(self, **options: Any) -> dict[str, pl.DataFrame]:
        """``events``, ``rebalances``, ``members`` and ``findings`` (docs/sql.md); ``options`` as
        :func:`rebalance_doctor.analyze` takes them."""
        from . import tables

        return tables(self, **options)
