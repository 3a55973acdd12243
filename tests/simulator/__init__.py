"""Test helper: simulate rebalance incidents over Kafka versions and log layouts, with their ground truth.

    truth = simulate("heartbeat_expiry", "2.3", ["spring-boot-3", "kubectl"], seed=1, out_dir=tmp_path)
    logs = rebalance_doctor.load(truth.paths)

Wording comes from the reference through steps.yaml, envelopes and noise from layouts.yaml.
"""

from .simulate import (
    LAYOUTS,
    SCENARIOS,
    VERSIONS,
    Citation,
    FileTruth,
    RebalanceTruth,
    StaticRejoin,
    Truth,
    Unsupported,
    simulate,
)

__all__ = [
    "LAYOUTS",
    "SCENARIOS",
    "VERSIONS",
    "Citation",
    "FileTruth",
    "RebalanceTruth",
    "StaticRejoin",
    "Truth",
    "Unsupported",
    "simulate",
]
