"""Kafka 4.x incidents on the new group coordinator: groups that move by group epochs (KIP-848 consumer groups,
KIP-932 share groups, KIP-1071 streams groups) and a classic group converted online.

The brokers' lines come from reference section 3 (scanned to 4.4) through steps.yaml, like every other simulated
line. At INFO a 4.x coordinator prints, per epoch: the member joining or leaving (or fenced), "Bumped … epoch to E",
"Computed a new target assignment for epoch E", and – for share and streams groups only – each member's new
assignment state (consumer groups print that one at DEBUG). The KIP-848 consumers log their member state machine
(reference section 5.3) and the classic members of the migrated group run 3.9 clients; the share and streams
members' own logs are not simulated.
"""

from __future__ import annotations

import base64
import uuid
from datetime import datetime

from .simulate import Member, Record, Simulation, Unsupported, ms, version_key

EPOCH_SCENARIOS = ("kip848_assignment_timeout", "share_scale_out", "classic_migration", "streams_topology_change")
# Where each scenario can happen: streams groups logged their topology epoch from 4.2 (early access in 4.1),
# the online conversion exists from 4.0, share groups and the transition fencing from 4.0 / 3.8.
SINCE = {"kip848_assignment_timeout": "4.1", "share_scale_out": "4.1", "classic_migration": "4.0", "streams_topology_change": "4.2"}
REBALANCE_TIMEOUT_MS = 300_000  # the member's max.poll.interval.ms, its rebalance timeout under KIP-848


class EpochSimulation(Simulation):
    scenarios = EPOCH_SCENARIOS
    versions_key = "epoch_versions"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if version_key(self.tag) < version_key(SINCE[self.scenario]):
            raise Unsupported(f"{self.scenario} needs Kafka {SINCE[self.scenario]}+, not {self.version}")
        self.group_epoch = 0
        self.epochs: list[int] = []
        self.states: dict[str, str] = {}  # KIP-848 consumers: each member's state machine
        if self.scenario != "classic_migration":  # a new group: its epochs start from 0
            self.generations = [0]
        self.topic_id = base64.urlsafe_b64encode(uuid.UUID(int=self.rng.getrandbits(128)).bytes).decode().rstrip("=")

    # ----------------------------------------------------------------------------- members and epochs

    def epoch_member(self, component: str = "consumer") -> Member:
        """A member of a consumer, share or streams group: the id is a UUID the client made (4.0+). A
        ``consumer848`` member logs its own state machine."""
        node = self.new_node(self.client_count)
        node.component = component
        node.alive.append([self.start, None])  # its application logs from its first Kafka line on (steady noise)
        self.client_count += 1
        raw = uuid.UUID(int=self.rng.getrandbits(128), version=4)
        member_id = base64.urlsafe_b64encode(raw.bytes).decode().rstrip("=") if self.scenario != "streams_topology_change" else str(raw)
        member = Member(member_id, node, f"{self.app}-{node.index}")
        self.all_member_ids.add(member_id)
        self.member_nodes[member_id] = node.name
        self.member_clients[member_id] = member.client_id
        return member

    def transition(self, member: Member, t: datetime, epoch: int, after: str) -> Record | None:
        """The KIP-848 consumer's own line: its state machine moves on (from the state it was in)."""
        before = self.states.get(member.member_id, "UNSUBSCRIBED")
        self.states[member.member_id] = after
        return self.client_says(member, "client848.transition", t, member_epoch=epoch, member_state=before, new_member_state=after)

    def reconcile(self, member: Member, t: datetime) -> datetime:
        """A member takes the coordinator's new target: RECONCILING, ACKNOWLEDGING, STABLE at the group epoch."""
        for state in ("RECONCILING", "ACKNOWLEDGING", "STABLE"):
            t = ms(t, self.jitter(2, 40))
            self.transition(member, t, self.group_epoch, state)
        return t

    def metadata_hash(self) -> int:
        return self.rng.randint(-(2**63), 2**63 - 1)

    def bump(self, t: datetime, step: str = "epoch.epoch_bumped", member: Member | None = None, **extra) -> Record | None:
        previous = self.group_epoch
        self.group_epoch = 2 if step == "streams.epoch_bumped" and previous == 0 else previous + 1
        return self.broker_says(step, t, member, group_epoch=self.group_epoch, metadata_hash=self.metadata_hash(), **extra)

    def target(self, t: datetime, assignor: str) -> Record | None:
        return self.broker_says("epoch.target_assignment", t, group_epoch=self.group_epoch, assignor=assignor,
                                assignor_time_ms=self.rng.randint(0, 4))

    def spread(self, members: list[Member]) -> dict[str, list[str]]:
        """The coordinator's assignment: partitions (topic id - partition) dealt round-robin over the members."""
        partitions = [f"{self.topic_id}-{i}" for i in range(6)]
        return {m.member_id: partitions[i::len(members)] for i, m in enumerate(members)}

    def record_epoch(self, t0: datetime, end: datetime, members: list[Member], cause: str, cause_member: Member | None,
                     evidence: Record | None, supporting: list[Record | None]) -> None:
        previous = self.epochs[-1] if self.epochs else 0
        self.epochs.append(self.group_epoch)
        self.generations.append(self.group_epoch)
        self.members_by_generation[self.group_epoch] = [m.member_id for m in members]
        self.rebalances.append({
            "from_generation": previous, "to_generation": self.group_epoch, "cause": cause,
            "cause_member": cause_member.member_id if cause_member else None, "evidence": evidence,
            "supporting": [r for r in supporting if r is not None], "started_at": t0, "stable_at": end, "ended_at": end,
            "members": [m.member_id for m in members], "leader": "", "leader_evidence": None, "members_named": True,
        })

    # ----------------------------------------------------------------------------- scenarios

    def scenario_kip848_assignment_timeout(self) -> None:
        """Three consumers join a KIP-848 group one after another; when the third joins, the first must give
        partitions up but its revocation callback hangs: after its rebalance timeout the coordinator fences it,
        the others go on, and it comes back as a new member."""
        self.group_types = ["consumer"]
        members: list[Member] = []
        t = self.start
        slow: Member | None = None
        for count in range(3):
            t = ms(t, self.jitter(1500, 6000))
            member = self.epoch_member("consumer848")
            end = self.join_epoch(member, members, t, stuck=slow if count == 2 else None)
            slow = slow or member
        t_fence = ms(t, REBALANCE_TIMEOUT_MS + self.jitter(5, 3000))  # the first member's revocation callback hangs
        fenced = self.broker_says("epoch.fenced_transition", t_fence, slow, member_epoch=self.group_epoch - 1,
                                  rebalance_timeout_ms=REBALANCE_TIMEOUT_MS)
        members.remove(slow)
        bumped = self.bump(ms(t_fence, 1))
        target = self.target(ms(t_fence, self.jitter(20, 3000)), "uniform")
        end = max(self.reconcile(m, ms(t_fence, self.jitter(100, 3000))) for m in members)
        self.record_epoch(t_fence, end, list(members), "assignment_timeout", slow, fenced, [bumped, target])
        t = ms(t_fence, self.jitter(20, 3000))  # its next heartbeat is answered FENCED_MEMBER_EPOCH
        self.transition(slow, t, self.group_epoch - 2, "FENCED")
        t = ms(t, self.jitter(3000, 9000))  # the callback returns at last: it joins again with epoch 0
        self.end = self.join_epoch(slow, members, t)

    def join_epoch(self, member: Member, members: list[Member], t: datetime, stuck: Member | None = None) -> datetime:
        """A KIP-848 consumer joins (or rejoins with epoch 0): the coordinator admits it and bumps the group epoch,
        the newcomer reconciles and the others take the new target at their next heartbeat – except ``stuck``,
        whose revocation never completes."""
        self.transition(member, ms(t, -self.jitter(5, 40)), 0, "JOINING")
        joined = self.broker_says("epoch.member_joins", t, member)
        members.append(member)
        bumped = self.bump(ms(t, 1))
        target = self.target(ms(t, 2), "uniform")
        end = self.reconcile(member, ms(t, self.jitter(5, 50)))
        for other in members[:-1]:
            heartbeat = ms(t, self.jitter(100, 3000))
            if other is stuck:
                self.transition(other, heartbeat, self.group_epoch, "RECONCILING")
            else:
                end = max(end, self.reconcile(other, heartbeat))
        self.record_epoch(t, end, list(members), "member_join", member, joined, [bumped, target])
        return end

    def scenario_share_scale_out(self) -> None:
        """A share group of two members scales out to four. Each join moves the group epoch and the coordinator
        hands every member its partitions at once: no revocation, no rebalance, nobody pauses."""
        self.group_types = ["share"]
        members: list[Member] = []
        owned: dict[str, list[str]] = {}
        t = self.start
        for count in range(4):
            t = ms(t, self.jitter(1500, 5000) if count != 2 else self.jitter(60000, 180000))
            member = self.epoch_member()
            joined = self.broker_says("share.member_joins", t, member)
            members.append(member)
            previous_epoch = self.group_epoch
            self.bump(ms(t, 1))
            self.target(ms(t, 2), "simple")
            assignment = self.spread(members)
            for i, m in enumerate(members):
                if assignment[m.member_id] != owned.get(m.member_id):
                    self.broker_says("share.member_state", ms(t, 3 + i), m, member_epoch=self.group_epoch,
                                     previous_member_epoch=previous_epoch if m is not member else 0, member_state="STABLE",
                                     assigned_partitions=assignment[m.member_id])
            owned = assignment
            self.epochs.append(self.group_epoch)
            self.generations.append(self.group_epoch)
            self.membership.append({"group_epoch": self.group_epoch, "joined": [member.member_id], "left": [], "evidence": joined})
        self.end = t

    def scenario_classic_migration(self) -> None:
        """A classic group of two 3.9 consumers; a consumer with group.protocol=consumer joins it, and the
        coordinator converts the group to a consumer group online: the group epoch continues from the generation,
        and the classic members rejoin the converted group."""
        t = self.form_group(2, self.start)
        self.group_types = ["classic", "consumer"]
        t = ms(t, self.jitter(20000, 60000))
        newcomer = self.epoch_member()
        converted = self.broker_says("epoch.converted_to_consumer", t, newcomer)
        joined = self.broker_says("epoch.member_joins", ms(t, 1), newcomer)
        self.group_epoch = self.generation  # the consumer group takes over the classic generation as its epoch
        bumped = self.bump(ms(t, 2))
        target = self.target(ms(t, 3), "uniform")
        for m in self.members:  # the classic members learn of it by their heartbeats and rejoin
            self.rejoin(m, t)
        self.members.append(newcomer)
        self.epochs.append(self.group_epoch)
        self.generations.append(self.group_epoch)
        self.members_by_generation[self.group_epoch] = [m.member_id for m in self.members]
        self.rebalances.append({
            "from_generation": self.generation, "to_generation": self.group_epoch, "cause": "group_conversion",
            "cause_member": newcomer.member_id, "evidence": converted, "supporting": [r for r in (joined, bumped, target) if r],
            "started_at": t, "stable_at": ms(t, 3), "ended_at": ms(t, 3000), "members": [m.member_id for m in self.members],
            "leader": "", "leader_evidence": None, "members_named": False,
        })
        self.end = ms(t, 3000)

    def scenario_streams_topology_change(self) -> None:
        """Two instances of a Streams application join a new streams group before its internal topics exist: the
        group forms but gets no tasks. Once the topics are created the coordinator configures the topology again,
        validates topology epoch 0 and rebalances to hand out the tasks."""
        self.group_types = ["streams"]
        members: list[Member] = []
        changelog = [f"{self.group}-store-changelog", f"{self.group}-agg-repartition"]
        t = self.start
        no_tasks = "(active=[], standby=[], warmup=[])"
        for count in range(2):
            t = ms(t, self.jitter(1500, 5000))
            member = self.epoch_member()
            joined = self.broker_says("streams.member_joins", t, member)
            members.append(member)
            supporting = []
            if count == 0:  # the first member brings the topology; its internal topics do not exist yet
                supporting.append(self.broker_says("streams.topology_initialized", ms(t, 1), member, topology_epoch=0))
                supporting.append(self.broker_says("streams.configuring_topology", ms(t, 1), member, topology_epoch=0))
                self.broker_says("streams.internal_topics_missing", ms(t, 2), member, topology_epoch=0,
                                 elapsed_ms=self.rng.randint(1, 9), topics=changelog)
            previous_epoch = self.group_epoch
            supporting.append(self.bump(ms(t, 3), "streams.epoch_bumped", member, topology_epoch=-1))
            supporting.append(self.target(ms(t, 4), "sticky"))
            self.broker_says("streams.member_state", ms(t, 5), member, member_epoch=self.group_epoch, previous_member_epoch=0,
                             member_state="STABLE", assigned_tasks=no_tasks, revoked_tasks=no_tasks)
            for other in members[:-1]:
                self.broker_says("streams.member_state", ms(t, self.jitter(100, 2900)), other, member_epoch=self.group_epoch,
                                 previous_member_epoch=previous_epoch, member_state="STABLE", assigned_tasks=no_tasks,
                                 revoked_tasks=no_tasks)
            self.record_epoch(t, ms(t, 3000), list(members), "member_join", member, joined, supporting)
        # the first instance creates the internal topics; at its next heartbeat the coordinator sees them
        t = ms(t, self.jitter(4000, 15000))
        first = members[0]
        self.broker_says("streams.metadata_hash", t, first, metadata_hash=self.metadata_hash())
        configuring = self.broker_says("streams.configuring_topology", ms(t, 1), first, topology_epoch=0)
        ready = self.broker_says("streams.topology_ready", ms(t, 2), first, topology_epoch=0, elapsed_ms=self.rng.randint(1, 9))
        previous_epoch = self.group_epoch
        bumped = self.bump(ms(t, 3), "streams.epoch_bumped", first, topology_epoch=0)
        target = self.target(ms(t, 4), "sticky")
        tasks = [f"0-{i}" for i in range(4)]
        for i, m in enumerate(members):
            mine = tasks[i::len(members)]
            if version_key(self.tag) >= version_key("4.3.0"):  # 4.3+ prints each active task with its assignment epoch
                mine = [f"{task}@{self.group_epoch}" for task in mine]
            assigned = f"(active=[{', '.join(mine)}], standby=[], warmup=[])"
            self.broker_says("streams.member_state", ms(t, self.jitter(5, 2900)), m, member_epoch=self.group_epoch,
                             previous_member_epoch=previous_epoch, member_state="STABLE", assigned_tasks=assigned,
                             revoked_tasks=no_tasks)
        self.record_epoch(t, ms(t, 3000), list(members), "topology_change", None, ready, [configuring, bumped, target])
        self.end = t
