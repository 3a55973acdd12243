"""A coordinator's log of a rebalance storm: many groups rebalancing back to back, generation after generation.

What it measures is the analysis and the report, not the scan: every line is a rebalance line (the coordinator's
"Preparing to rebalance" and "Stabilized group" wordings of Kafka 2.8+, rendered from the reference), so the
model holds one rebalance per two lines. `python bench/run.py --rebalances 200000` writes 200,000 rebalances
of 50 groups and reports the peak memory of `report -o x.json` on them.

    python bench/rebalance_storm.py OUT_DIR --rebalances 200000 --groups 50
"""

from __future__ import annotations

import argparse
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from realistic import LAYOUTS, context, fill, rebalance_rows, timestamp

# The two coordinator rows of one classic rebalance, as the reference writes them since Kafka 2.8.
STARTED, STABILIZED = "Preparing to rebalance group {group} in state", "Stabilized group {group} generation {generation} ("
MEMBERS = 3


def storm_lines(rebalances: int, groups: int, seed: int = 7) -> list[str]:
    """The coordinator's lines, in time order: groups take turns, 20 ms apart, each a generation further."""
    rng = random.Random(seed)
    rows = rebalance_rows()["broker"]
    started = next(r for r in rows if r.template.startswith(STARTED) and r.last_version == "trunk")
    stabilized = next(r for r in rows if r.template.startswith(STABILIZED) and r.last_version == "trunk" and "member_count" in r.template)
    spec = LAYOUTS["broker-log4j"]
    at = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    generations = [0] * groups
    lines = []
    for number in range(rebalances):
        index = number % groups
        values = {"broker_id": 1, "offsets_partition": 7, "group": f"orders-{index}", "generation": generations[index],
                  "member_count": MEMBERS, "state": "PreparingRebalance"}
        for row in (started, stabilized):
            prefix, logger = context(row.section, values)
            lines.append(spec["format"].format(ts=timestamp(at, spec), level=row.level, msg=prefix + fill(row.template, values, rng), logger=logger))
            values["generation"] += 1
            at += timedelta(milliseconds=20)
        generations[index] += 1
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rebalances", type=int, default=200_000)
    parser.add_argument("--groups", type=int, default=50)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kafka-1-server.log").write_text("\n".join(storm_lines(args.rebalances, args.groups)) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
