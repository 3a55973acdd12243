"""`report --format json`: the incident model as one JSON document (documented in docs/json-report.md)."""

from __future__ import annotations

import json
from typing import IO

from ..analysis.model import Analysis


def write_json(analysis: Analysis, stream: IO[str]) -> None:
    json.dump(analysis.to_dict(), stream, ensure_ascii=False, indent=2)
    stream.write("\n")
