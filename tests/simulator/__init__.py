"""Test helper: simulate rebalance incidents over Kafka versions and log layouts, with their ground truth.

    truth = simulate("heartbeat_expiry", "2.3", ["spring-boot-3", "kubectl"], seed=1, out_dir=tmp_path)
    logs = rebalance_doctor.load(truth.paths)

Wording comes from the reference through steps.yaml, envelopes and noise from layouts.yaml. The classic-protocol
scenarios (SCENARIOS, over VERSIONS) are in simulate.py; the Kafka 4.x ones on the new group coordinator
(EPOCH_SCENARIOS, over EPOCH_VERSIONS) in epochs.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .epochs import EPOCH_SCENARIOS, EpochSimulation
from .simulate import (
    EPOCH_VERSIONS,
    LAYOUTS,
    SCENARIOS,
    VERSIONS,
    Citation,
    FileTruth,
    MembershipTruth,
    RebalanceTruth,
    Simulation,
    StaticRejoin,
    Truth,
    Unsupported,
)


@dataclass(frozen=True)
class Case:
    """One simulated incident a test plays: the scenario, the release, the clients' layouts in turn, the seed.
    A test file says in ``__str__`` how its cases read in a failure message."""

    scenario: str
    version: str
    layouts: tuple[str, ...]
    seed: int

    @property
    def id(self) -> str:
        return f"{self.scenario}-{self.version}-{'+'.join(self.layouts)}"

    def simulate(self, out_dir: str | Path) -> Truth:
        return simulate(self.scenario, self.version, self.layouts, self.seed, out_dir)


def simulate(scenario: str, version: str, layouts: str | Iterable[str], seed: int, out_dir: str | Path) -> Truth:
    """Write one simulated incident into out_dir (a broker log + client logs) and return its ground truth.

    layouts: one client layout for every consumer, or several used in turn (see ``LAYOUTS``).
    Raises :class:`Unsupported` for a scenario the version cannot produce (cooperative before 2.4).
    """
    chosen = (layouts,) if isinstance(layouts, str) else tuple(layouts)
    for layout in chosen:
        if layout not in LAYOUTS:
            raise ValueError(f"unknown layout {layout!r} (one of {LAYOUTS})")
    simulation = EpochSimulation if scenario in EPOCH_SCENARIOS else Simulation
    sim = simulation(scenario, version, chosen, seed, Path(out_dir))
    getattr(sim, f"scenario_{scenario}")()
    return sim.write()


__all__ = [
    "EPOCH_SCENARIOS",
    "EPOCH_VERSIONS",
    "LAYOUTS",
    "SCENARIOS",
    "VERSIONS",
    "Case",
    "Citation",
    "FileTruth",
    "MembershipTruth",
    "RebalanceTruth",
    "StaticRejoin",
    "Truth",
    "Unsupported",
    "simulate",
]
