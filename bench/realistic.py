"""A benchmark corpus that looks like real logs, not like the catalogs.

What real broker and client logs hold besides rebalance lines, and what the best-case corpus of
generate.py leaves out:

- every Kafka client line carries its log context (`[Consumer clientId=…, groupId=…]`);
- application lines say "group", "generation", "member", "heartbeat" and "rebalancing" about other things;
- brokers log housekeeping lines the catalogs match (`Removed 0 expired offsets in 1 milliseconds.`);
- some clients log at DEBUG (a heartbeat request and response every few seconds);
- a fifth of the client files are JSON lines (logstash), the rest Spring Boot or logback text;
- the rebalance lines are rendered from the reference's templates (tests/fixtures/reference), with
  their log-context prefixes, not taken from the catalogs' own examples.

The shares are per profile (`PROFILES`); `storm` is the same corpus with a fifth of all lines rebalance
lines. The layouts are the simulator's (tests/simulator/layouts.yaml).
"""

from __future__ import annotations

import json
import random
import re
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from reference import ReferenceRow, load_rows, sample_value  # noqa: E402
from simulator.simulate import pad  # noqa: E402

LAYOUTS = yaml.safe_load((HERE.parent / "tests" / "simulator" / "layouts.yaml").read_text(encoding="utf-8"))["layouts"]
# Client files in turn: one in five is JSON.
CLIENT_LAYOUTS = ("spring-boot-3", "logback", "logstash-json", "spring-boot-2", "spring-boot-3")


@dataclass(frozen=True)
class Profile:
    """Shares of all lines of a file (the rest is the node's ordinary noise)."""

    rebalance: float  # rendered from the reference's rebalance wordings
    word_sharing: float  # application lines that share words with rebalance messages (client files)
    kafka_context: float  # Kafka client lines about other things, behind the consumer's log context (client files)
    housekeeping: float  # the coordinator's periodic cleanup lines, which the catalogs match (broker files)
    debug_heartbeat: float  # heartbeat request/response lines of DEBUG client logs (every third client file)


PROFILES = {
    "realistic": Profile(rebalance=0.006, word_sharing=0.12, kafka_context=0.15, housekeeping=0.08, debug_heartbeat=0.05),
    "storm": Profile(rebalance=0.20, word_sharing=0.10, kafka_context=0.12, housekeeping=0.05, debug_heartbeat=0.04),
}

# Application lines that share words with rebalance messages but are about something else.
WORD_SHARING = (
    "Rebalancing portfolio {n} for customer group c{p}: {ms} positions moved",
    "Heartbeat from payment gateway gw-{p} OK in {ms} ms",
    "Member {n} joined loyalty group gold-{p}",
    "Report generation {n} finished in {ms} ms (member={n}, group=finance)",
    "Session {uuid} of member {n} expired; the user must sign in again",
    "Leaving maintenance window for group {p}: {ms} jobs resumed",
    "Assigned delivery {n} to courier group zone-{p} (epoch {a})",
    "Revoked API token of member {n} (reason: rotated)",
    "Coordinator for batch job {n} elected: node-{a}",
    "Partition {p} of the shard map is rebalancing after node-{a} left",
)
APP_NOISE = (
    "Processed batch of {n} records in {ms} ms",
    "Settled order {uuid} (amount {ms}.{p} EUR)",
    "GET /api/orders/{n} 200 {ms}ms",
    "Cache refresh of price table took {ms} ms ({n} entries)",
    "Retrying payment gateway call for order {uuid} (attempt 2/5)",
)
KAFKA_CONTEXT = (  # what a consumer says about fetching and committing, behind its log context
    "Fetch READ_UNCOMMITTED at offset {n} for partition {topic}-{p} returned fetch data (error=NONE, highWaterMark={n}, "
    "lastStableOffset = {n}, logStartOffset = 0, preferredReadReplica = absent, abortedTransactions = null, "
    "divergingEpoch =Optional.empty, recordsSizeInBytes={ms})",
    "Resetting offset for partition {topic}-{p} to position FetchPosition{{offset={n}, offsetEpoch=Optional.empty, "
    "currentLeader=LeaderAndEpoch{{leader=Optional[kafka-{a}:9092 (id: {a} rack: null)], epoch=0}}}}.",
    "Node {a} sent an incremental fetch response with throttleTimeMs = 0 for session {n} with 1 response partition(s)",
    "Added READ_UNCOMMITTED fetch request for partition {topic}-{p} at position FetchPosition{{offset={n}, "
    "offsetEpoch=Optional[0], currentLeader=LeaderAndEpoch{{leader=Optional[kafka-{a}:9092 (id: {a} rack: null)], epoch=0}}}} to node kafka-{a}:9092",
)
BROKER_NOISE = (
    "[ReplicaFetcher replicaId={a}, leaderId={b}, fetcherId=0] Node {b} disconnected.",
    "[LocalLog partition={topic}-{p}, dir=/var/lib/kafka/data] Rolled new log segment at offset {n} in {ms} ms.",
    "[ProducerStateManager partition={topic}-{p}] Wrote producer snapshot at offset {n} with 0 producer ids in {ms} ms.",
    "[Partition {topic}-{p} broker={a}] ISR updated to {a},{b} and version updated to {ms}",
    "[SocketServer listenerType=BROKER, nodeId={a}] Failed authentication with /10.0.{p}.{b} (SSL handshake failed)",
    "[UnifiedLog partition={topic}-{p}, dir=/var/lib/kafka/data] Incremented log start offset to {n} due to segment deletion",
)
# The coordinator's periodic cleanup, by the reference's wording (classic coordinator, new coordinator).
HOUSEKEEPING = ("Removed {offsets_removed} expired offsets in {elapsed_ms} milliseconds.",
                "Generated {record_count} tombstone records while cleaning up group metadata in {elapsed_ms} milliseconds.")
DEBUG_HEARTBEAT = ("Sending Heartbeat request with generation {generation} and member id {member_id} to coordinator {coordinator}",
                   "Received successful Heartbeat response")
TOPICS = ("orders", "payments", "shipments", "stock-events", "price-updates")
SERVICES = ("orders", "billing", "fraud", "ledger", "pricing", "shipping", "inventory", "audit")
ROLES = ("processor", "enricher", "sink", "aggregator", "router")
PLACEHOLDER = re.compile(r"\{([a-z_0-9]+)(?::[a-z]+)?\}")
SLOT = re.compile(r"\{(alt|opt):((?:\"[^\"]*\",?)+)\}")


class Node:
    """One log file: who writes it, in which layout, and the ids its lines carry."""

    def __init__(self, kind: str, index: int, layout: str, debug: bool, rng: random.Random, groups: int):
        self.kind, self.index, self.layout, self.debug, self.rng = kind, index, layout, debug, rng
        self.spec = LAYOUTS[layout]
        slot = rng.randrange(groups)
        self.service = SERVICES[slot % len(SERVICES)]
        self.group = f"{self.service}-{ROLES[slot % len(ROLES)]}" + (f"-{slot}" if slot >= len(SERVICES) else "")
        self.app = self.group
        self.client_id = f"consumer-{self.group}-{index}"
        self.member_id = f"{self.client_id}-{uuid.UUID(int=rng.getrandbits(128), version=4)}"
        self.thread = f"{self.app}-{uuid.UUID(int=rng.getrandbits(128), version=4)}-StreamThread-{1 + index % 4}"
        self.broker_id = 1 + index
        self.generation = rng.randint(1, 400)
        self.name = f"kafka-{self.broker_id}" if kind == "broker" else f"{self.app}-{index}"

    def values(self) -> dict[str, object]:
        rng = self.rng
        return {"a": rng.randint(1, 6), "b": rng.randint(1, 6), "p": rng.randint(0, 63), "n": rng.randint(1000, 99_999_999),
                "ms": rng.randint(1, 999), "uuid": uuid.UUID(int=rng.getrandbits(128), version=4), "topic": rng.choice(TOPICS),
                "group": self.group, "member_id": self.member_id, "client_id": self.client_id, "thread": self.thread,
                "generation": self.generation, "broker_id": self.broker_id, "node_id": self.broker_id,
                "coordinator": f"kafka-{1 + self.index % 3}:9092 (id: {2147483646 - self.index % 3} rack: null)",
                "offsets_partition": rng.randint(0, 49), "offsets_removed": rng.choice((0, 0, 0, 1, 3)),
                "record_count": rng.choice((0, 0, 0, 2)), "elapsed_ms": rng.randint(0, 3)}


def fill(template: str, values: dict[str, object], rng: random.Random) -> str:
    """A reference template with its {alt}/{opt} slots chosen at random and its placeholders filled: the node's
    ids where the template names them, the reference's sample values elsewhere."""
    def slot(match: re.Match) -> str:
        options = re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(2)) + ([""] if match.group(1) == "opt" else [])
        return rng.choice(options)

    def value(match: re.Match) -> str:
        name = match.group(1)
        if name in values:
            return str(values[name])
        if "generation" in name or "epoch" in name:
            return str(values["generation"])
        return sample_value(match.group(0)[1:-1])

    text = PLACEHOLDER.sub(value, SLOT.sub(slot, template))
    return text.replace("\\n", "\n").replace("\\t", "\t").replace("\\|", "|")


def rebalance_rows() -> dict[str, list[ReferenceRow]]:
    """The reference's INFO/WARN/ERROR wordings, by who prints them: broker (sections 2–3), client (4–6)."""
    rows = load_rows()
    return {"broker": [r for r in rows if r.section.split(".")[0] in ("2", "3")],
            "client": [r for r in rows if r.section.split(".")[0] in ("4", "5", "6")]}


def context(section: str, values: dict[str, object]) -> tuple[str, str]:
    """The log-context prefix and the logger (%c) of a reference section's lines (reference 1.3 and 1.4)."""
    major = section.split(".")[0]
    if major == "2":
        return "[GroupCoordinator {broker_id}]: ".format(**values), "kafka.coordinator.group.GroupCoordinator"
    if major == "3":
        return ("[GroupCoordinator id={broker_id} topic=__consumer_offsets partition={offsets_partition}] ".format(**values),
                "org.apache.kafka.coordinator.group.GroupMetadataManager")
    if major == "6":
        return "stream-thread [{thread}] ".format(**values), "org.apache.kafka.streams.processor.internals.StreamThread"
    logger = "ConsumerMembershipManager" if major == "5" else "ConsumerCoordinator"
    return "[Consumer clientId={client_id}, groupId={group}] ".format(**values), f"org.apache.kafka.clients.consumer.internals.{logger}"


def timestamp(at: datetime, spec: dict) -> str:
    """``at`` as a layout of the simulator writes it (``%3f``: milliseconds)."""
    return at.strftime(spec["ts"].replace("%3f", f"{at.microsecond // 1000:03d}"))


def envelope(node: Node, at: datetime, level: str, logger: str, thread: str, message: str) -> str:
    """The record as the node's layout writes it (continuation lines of a multi-line message as they are)."""
    spec = node.spec
    ts = timestamp(at, spec)
    if spec["kind"] == "json":
        keys = spec["keys"]
        return json.dumps({keys["ts"]: ts, keys["version"]: "1", keys["msg"]: message, keys["logger"]: logger,
                           keys["thread"]: thread, keys["level"]: level, keys["level_value"]: spec["level_values"][level]},
                          separators=(",", ":"))
    first, *rest = message.split("\n")
    line = spec["format"].format(ts=ts, level=pad(level, spec.get("level")), thread=pad(thread, spec.get("thread")),
                                 logger=pad(logger, spec.get("logger")), msg=first, pid=1, app=node.app)
    return "\n".join([line, *rest])


def record(node: Node, profile: Profile, rows: dict[str, list[ReferenceRow]], rng: random.Random) -> tuple[str, str, str, str]:
    """(level, logger, thread, message) of the node's next line."""
    values = node.values()
    draw = rng.random()
    if draw < profile.rebalance:
        row = rng.choice(rows[node.kind])
        prefix, logger = context(row.section, values)
        return row.level, logger, "kafka-coordinator-heartbeat-thread", prefix + fill(row.template, values, rng)
    draw -= profile.rebalance
    if node.kind == "broker":
        if draw < profile.housekeeping:
            if rng.random() < 0.5:
                return "INFO", "kafka.coordinator.group.GroupMetadataManager", "group-metadata-manager-0", \
                    "[GroupMetadataManager brokerId={broker_id}] ".format(**values) + fill(HOUSEKEEPING[0], values, rng)
            prefix, _ = context("3", values)
            return "INFO", "org.apache.kafka.coordinator.group.GroupCoordinatorShard", "group-coordinator-event-processor-0", \
                prefix + fill(HOUSEKEEPING[1], values, rng)
        return "INFO", "kafka.log.LocalLog", "data-plane-kafka-request-handler-1", rng.choice(BROKER_NOISE).format(**values)
    consumer = "[Consumer clientId={client_id}, groupId={group}] ".format(**values)
    if draw < profile.word_sharing:
        return "INFO", f"com.acme.{node.service}.OrderService", "worker-1", rng.choice(WORD_SHARING).format(**values)
    draw -= profile.word_sharing
    if draw < profile.kafka_context:
        level = "DEBUG" if node.debug else "INFO"
        return level, "org.apache.kafka.clients.consumer.internals.Fetcher", node.app + "-consumer-0", \
            consumer + rng.choice(KAFKA_CONTEXT).format(**values)
    draw -= profile.kafka_context
    if node.debug and draw < profile.debug_heartbeat:
        return "DEBUG", "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator", \
            f"kafka-coordinator-heartbeat-thread | {node.group}", consumer + fill(rng.choice(DEBUG_HEARTBEAT), values, rng)
    return "INFO", f"com.acme.{node.service}.Listener", node.app + "-consumer-0", rng.choice(APP_NOISE).format(**values)


def generate(out: Path, size: int, files: int, profile_name: str, groups: int, seed: int) -> None:
    profile, rng, rows = PROFILES[profile_name], random.Random(seed), rebalance_rows()
    out.mkdir(parents=True, exist_ok=True)
    brokers = max(1, files // 5)
    nodes = [Node("broker", i, "broker-log4j", False, rng, groups) for i in range(brokers)]
    nodes += [Node("client", i, CLIENT_LAYOUTS[i % len(CLIENT_LAYOUTS)], i % 3 == 0, rng, groups) for i in range(files - brokers)]
    per_file = size // len(nodes)
    start = datetime(2025, 3, 18, 8, 0, tzinfo=UTC)
    for node in nodes:
        clock = start + timedelta(seconds=rng.randint(0, 60))

        def next_line(node: Node = node) -> str:
            nonlocal clock
            clock += timedelta(microseconds=rng.randint(200, 4000))
            return envelope(node, clock, *record(node, profile, rows, rng)) + "\n"

        write_log(out / f"{node.name}.log", per_file, next_line)


def write_log(path: Path, size: int, next_line: Callable[[], str]) -> None:
    """``next_line()``'s lines, written in batches until the file holds ``size`` bytes."""
    written, batch = 0, []
    with open(path, "w", encoding="utf-8") as handle:
        while written < size:
            line = next_line()
            batch.append(line)
            written += len(line)
            if len(batch) >= 10000:
                handle.write("".join(batch))
                batch.clear()
        handle.write("".join(batch))
