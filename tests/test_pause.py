"""Pause means what it says: a member is paused while it holds no partitions because of a rebalance.

Scenarios from the bundled incidents, against pauses computed by hand from their logs (per pod, since a pod
that was removed from the group resumes under a new member id):

- eager (rolling bounce, heartbeat expiry): from each revocation of everything to the next assignment;
- a failed SyncGroup: the idle time until the next generation that completes counts, not just the first
  attempt's seconds;
- a poll timeout: the member that timed out is paused from losing its partitions to its next assignment;
- cooperative: a member that revokes some of its partitions keeps processing the rest, so it is not paused.
"""

from __future__ import annotations

from collections import Counter

import pytest

HAND_COMPUTED_MS = {  # per pod, computed by hand from the incidents' logs when the incidents were written
    "unstable-leader-failed-rebalances": {"scorer-0": 63_222 + 37_077, "scorer-1": 111_360, "scorer-3": 82_652 + 28_309},
    "heartbeat-expiry": {"orders-app-0": 2_531, "orders-app-1": 175, "orders-app-2": 2_697},
    "rolling-bounce-eager": {"invoice-writer-0": 12_234, "invoice-writer-1": 117 + 3_277, "invoice-writer-2": 234},
    "poll-timeout-cooperative": {"payments-6f7c9d-m4tbh": 4_797, "payments-6f7c9d-xk2lp": 0, "payments-6f7c9d-q8wzn": 0},
    "static-member-fencing": {"ledger-sync-0": 3_718, "ledger-sync-1": 1_431},
}


def pause_by_pod(result) -> Counter:
    paused: Counter = Counter()
    for group in result.groups:
        for rebalance in group.rebalances:
            for pause in rebalance.pauses:
                paused[pause.node or group.member_nodes.get(pause.member)] += pause.pause_ms
    return paused


@pytest.mark.parametrize("name", HAND_COMPUTED_MS)
def test_each_pods_pause_is_the_time_it_held_no_partitions(analysis, name):
    paused = pause_by_pod(analysis(name))

    for pod, expected in HAND_COMPUTED_MS[name].items():
        assert paused[pod] == pytest.approx(expected, abs=max(50, expected * 0.01)), pod


def test_cooperative_rebalances_stop_nobody_who_kept_partitions(analysis):
    """A scale-out with cooperative-sticky: the owners revoke a few partitions for the newcomers and go on."""
    result = analysis("scale-out-cooperative-followup")

    assert sum(pause_by_pod(result).values()) < 100  # only a member that gave up all it held, for a moment
    assert result.verdict.impact["pause_ms"] < 100
