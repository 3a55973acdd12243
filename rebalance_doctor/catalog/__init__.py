"""The catalogs: every Kafka wording, log layout and log-context prefix, as YAML data in ``patterns/``
(shipped inside the package), loaded and validated into a :class:`Catalog`; and the event-table
schema (:mod:`.schema`) the catalogs extract into. The lowest layer: it imports no other part of the
package."""

from .dialect import any_of, compile_portable, portability_problems, uncaptured
from .entries import Catalog, ContextPrefix, Example, Layout, MessagePattern, ReasonRule, coerce_field
from .errors import CatalogError
from .loading import BUNDLED_DIR, load_catalog

__all__ = [
    "BUNDLED_DIR",
    "Catalog",
    "CatalogError",
    "ContextPrefix",
    "Example",
    "Layout",
    "MessagePattern",
    "ReasonRule",
    "any_of",
    "coerce_field",
    "compile_portable",
    "load_catalog",
    "portability_problems",
    "uncaptured",
]
