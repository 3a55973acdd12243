"""The event table: one schema for every engine, analyzer and renderer.

Everything downstream of the catalogs speaks in these columns and event kinds.
Regex named groups in ``patterns/`` use the camelCase spelling of a column
(Java accepts only letters and digits in group names); :data:`FIELD_BY_GROUP`
maps them back.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # str, int, bool or datetime (UTC, microseconds): see polars_schema()
    doc: str
    extracted: bool = False  # may be filled by a catalog regex group or constant

    @property
    def group_name(self) -> str:
        """The regex group name for this column (``group_id`` → ``groupId``)."""
        head, *rest = self.name.split("_")
        return head + "".join(part.title() for part in rest)


COLUMNS: tuple[Column, ...] = (
    Column("ts", "datetime", "event time in UTC; null when the line carries no timestamp"),
    Column("file", "str", "input file the line came from ('-' for stdin)"),
    Column("line", "int", "1-based line number of the record's first line in its file"),
    Column("node", "str", "broker or client node: log prefix (docker/kubectl/CSV host) or file name"),
    Column("component", "str", "broker, consumer, streams, connect, librdkafka, a client library (COMPONENTS) or jvm"),
    Column("kind", "str", "event kind, one of KINDS"),
    Column("pattern_id", "str", "id of the catalog entry that matched"),
    Column("group_id", "str", "consumer group id (Streams application.id, Connect group)", True),
    Column("generation", "int", "classic generation id (the OLD generation for rebalance_start)", True),
    Column("group_epoch", "int", "KIP-848 group epoch", True),
    Column("member_epoch", "int", "KIP-848 member epoch", True),
    Column("topology_epoch", "int", "Kafka Streams group (KIP-1071) topology epoch", True),
    Column("member_id", "str", "group member id as printed", True),
    Column("instance_id", "str", "group.instance.id of a static member", True),
    Column("client_id", "str", "client.id (from the log-context prefix or the message)", True),
    Column("thread", "str", "thread name (envelope, or Streams stream-thread prefix)", True),
    Column("reason", "str", "rebalance / leave / join reason or cause as printed", True),
    Column("state", "str", "new state (group, member, thread or client state)", True),
    Column("prev_state", "str", "previous state in a state transition", True),
    Column("leader", "bool", "true when the line shows this member leading the group", True),
    Column("leader_id", "str", "member id of the group leader when printed", True),
    Column("protocol", "str", "the member's protocol: classic, consumer (KIP-848), streams (KIP-1071) or share (KIP-932); eager / "
           "cooperative when printed", True),
    Column("group_type", "str", "the group's type when the line names it: classic, consumer, streams or share (Kafka 4.x)", True),
    Column("assignor", "str", "partition assignor / selected protocol name", True),
    Column("supported_protocols", "str", "the assignors a classic member offers, in its order of preference, as printed", True),
    Column("partitions", "str", "partitions or tasks as printed", True),
    Column("member_count", "int", "members (consumers) in the generation", True),
    Column("client_count", "int", "Streams client nodes in the rebalance", True),
    Column("coordinator", "str", "coordinator as printed (broker id on broker lines)", True),
    Column("offsets_partition", "int", "__consumer_offsets partition hosting the group", True),
    Column("error", "str", "error name or message", True),
    Column("duration_ms", "int", "a duration the line reports, in milliseconds", True),
    Column("scheduled_for", "str", "time a followup/probing rebalance is scheduled for, as printed", True),
    Column("cause", "str", "what the reason says started a rebalance (CAUSES), 'symptom', or null (patterns/reasons.yaml)", True),
    Column("level", "str", "log level from the envelope (or librdkafka syslog level)"),
    Column("logger", "str", "logger / class name from the envelope"),
    Column("message", "str", "the first line's message without its envelope (time, level, thread, logger)"),
    Column("raw", "str", "the record as read: first line plus continuation lines"),
)

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
EXTRACTED: tuple[Column, ...] = tuple(c for c in COLUMNS if c.extracted)
FIELD_BY_GROUP: dict[str, str] = {c.group_name: c.name for c in EXTRACTED}
INTEGER_FIELDS = frozenset(c.name for c in EXTRACTED if c.dtype == "int")

# Client libraries that are not Kafka's own (their entries carry the library's versions) sit beside Kafka's components.
COMPONENTS = ("broker", "consumer", "streams", "connect", "librdkafka", "kafka-python", "kafkajs", "sarama", "franz-go", "kafka-go",
              "ruby-kafka", "streamiz", "arroyo", "karafka", "rust-rdkafka", "kafka-node", "brod", "masstransit", "smallrye", "jvm")
# What the application's runtime says about itself: evidence for a cause, not a Kafka wording with Kafka versions.
RUNTIME_COMPONENTS = ("jvm",)

KINDS: dict[str, str] = {
    # coordinator (broker) view of a group
    "rebalance_start": "the coordinator starts a rebalance (generation = old generation, reason)",
    "group_stabilized": "join phase complete: a new generation is formed (generation, member_count)",
    "assignment_received": "the leader's SyncGroup assignment is stored; the group is Stable",
    "group_state_change": "the group becomes Empty, Dead or another state outside a rebalance",
    "rebalance_failed": "the join phase ends without the group moving to a next generation",
    "member_joined": "the coordinator admits a member (new member id, or a rejoin)",
    "member_left": "a member leaves through an explicit LeaveGroup",
    "member_expired": "the coordinator removes a member whose session (heartbeat) expired",
    "member_removed": "the coordinator removes a member for another reason (join/sync timeout, admin)",
    "member_fenced": "a member is fenced (static member replaced, epoch mismatch, rebalance timeout)",
    "static_member_rejoined": "a static member rejoins with its group.instance.id (possibly without a rebalance)",
    "rebalance_skipped": "the coordinator admits a member without a rebalance (a static member back in a Stable group)",
    "group_epoch_bumped": "KIP-848: the group epoch is bumped (subscription or membership changed)",
    "target_assignment": "KIP-848: a new target assignment is computed",
    "member_assignment": "KIP-848: a member's assignment / epoch changes (broker view)",
    "group_converted": "the coordinator converts the group to another type (classic ↔ consumer, online migration; group_type = the new type)",
    "topology_configured": "streams group (KIP-1071): the coordinator initializes or configures a topology epoch",
    "topology_ready": "streams group (KIP-1071): the topology epoch is validated against its topics: tasks can be assigned",
    "topology_not_ready": "streams group (KIP-1071): the topology cannot be configured (internal or source topics missing, "
                          "partition counts): no tasks are assigned",
    "coordinator_elected": "a broker becomes coordinator of a __consumer_offsets partition and loads it",
    "coordinator_resigned": "a broker gives up a __consumer_offsets partition and unloads it",
    "group_loaded": "a group is loaded into the coordinator cache (failover target side)",
    "group_unloaded": "a group is unloaded from the coordinator cache (failover source side)",
    "coordinator_error": "the coordinator fails to load, store or serve group metadata",
    "coordinator_lifecycle": "group coordinator component starts up or shuts down",
    # member (client) view
    "join_requested": "a member decides to (re)join, with its reason",
    "join_start": "a member sends JoinGroup ((Re-)joining group) / rebalance started",
    "join_succeeded": "JoinGroup succeeded: the member is in generation N",
    "join_failed": "JoinGroup failed",
    "sync_succeeded": "SyncGroup succeeded: the member received its assignment",
    "sync_failed": "SyncGroup failed (e.g. the group began another rebalance)",
    "leader_assignment": "this member is the leader and computes the assignment",
    "partitions_assigned": "partitions (or tasks) assigned to the member",
    "partitions_revoked": "partitions revoked from the member",
    "partitions_lost": "partitions lost by the member (no longer in the group)",
    "heartbeat_failed": "a heartbeat failed (rebalancing, unknown member, illegal generation, …)",
    "session_timeout": "the member's session timed out without a heartbeat response",
    "poll_timeout": "max.poll.interval.ms expired: the member leaves the group",
    "leave_group": "the member sends LeaveGroup (close, unsubscribe, poll timeout)",
    "generation_reset": "the member resets its generation / member id",
    "member_state_change": "member state machine transition (KIP-848 consumer, librdkafka cgrp)",
    "reconciliation": "KIP-848 client reconciles a new target assignment",
    "coordinator_discovered": "the member found its group coordinator",
    "coordinator_lost": "the member marks its coordinator dead / unavailable",
    "commit_failed": "an offset commit failed because of a rebalance or fencing",
    "subscription_changed": "the member's subscription changed",
    "consumer_started": "a consumer or client starts: its group management, its first member id, a Streams client or "
                        "thread starting",
    "consumer_lifecycle": "a consumer or client closes, stops or restarts",
    "client_config": "a client's construction: its configuration dump (session.timeout.ms, max.poll.interval.ms, … in raw) "
                     "or its version line",
    # Kafka Streams
    "streams_client_state": "KafkaStreams client state transition (RUNNING, REBALANCING, …)",
    "streams_thread_state": "StreamThread state transition",
    "streams_participants": "Streams leader: how many client nodes and consumers take part in the rebalance",
    "streams_assignment": "Streams leader computed an assignment (stable or not)",
    "followup_rebalance": "a followup rebalance is requested or triggered (tasks changing ownership)",
    "probing_rebalance": "a probing rebalance is scheduled (warm-up tasks catching up)",
    "version_probing": "version probing rebalance (rolling upgrade of the subscription version)",
    "shutdown_requested": "a Streams client requests the application to shut down",
    "thread_replaced": "a stream thread is replaced or added after an error",
    "thread_failed": "a stream thread died with an uncaught exception",
    "record_failed": "a stream task failed on one record: task, processor, topic, partition and offset (partitions), the exception (error)",
    "task_migrated": "tasks migrated / fenced / closed as zombies during a rebalance",
    "task_handling": "tasks created, suspended, closed or resumed around a rebalance",
    # the application's runtime
    "jvm_pause": "the JVM (or its host) stopped the application: a full GC or a pause detector's report (duration_ms)",
    # anything else the catalogs keep for the reader
    "diagnostic": "rebalance-related detail analyzers do not need (config, assignor internals, …)",
}

# Why a rebalance happened: the vocabulary of root causes (patterns/reasons.yaml maps reason texts onto it).
CAUSES: dict[str, str] = {
    "heartbeat_expiry": "the coordinator expired a member whose heartbeats stopped (session.timeout.ms)",
    "poll_timeout": "a member exceeded max.poll.interval.ms between polls and left the group",
    "member_join": "a member joined (start-up, scale-out, restart with a new member id)",
    "member_leave": "a member left on purpose (close, unsubscribe, admin removal)",
    "cooperative_followup": "a cooperative rebalance's second round, after partitions were revoked",
    "probing_rebalance": "Kafka Streams probing rebalance to move caught-up warm-up tasks (probing.rebalance.interval.ms)",
    "version_probing": "Kafka Streams version probing during a rolling upgrade",
    "host_endpoint_change": "a Kafka Streams instance changed its application.server endpoint",
    "shutdown_requested": "a Kafka Streams client requested the application to shut down",
    "enforced": "a client asked for a rebalance for another reason (enforceRebalance, task corruption, topology change)",
    "metadata_change": "subscription, partition count or topic metadata changed",
    "coordinator_change": "the group coordinator moved (broker restart, __consumer_offsets leadership change)",
    "static_member_fencing": "a static member (group.instance.id) was fenced or replaced",
    "assignment_timeout": "a member of a consumer or streams group did not revoke and acknowledge its assignment within its "
                          "rebalance timeout and was fenced",
    "topology_change": "the coordinator configured a Kafka Streams group's (KIP-1071) topology anew: a new or newly validated "
                       "topology epoch",
    "group_conversion": "the coordinator converted the group between the classic and consumer types (online migration)",
    "failed_rebalance_retry": "a previous rebalance failed and is retried (sync timeout, storage error, rebalance timeout)",
    "unknown": "the logs at hand do not say",
}
SYMPTOM = "symptom"  # a reason that only reports a rebalance started elsewhere ("group is already rebalancing")

BUCKETS = ("matched", "relevant_unmatched", "irrelevant", "unreadable")


@functools.cache
def polars_schema() -> dict[str, pl.DataType]:
    """The columns as polars types (polars is imported here, not by the scan processes, which never need it)."""
    import polars as pl

    types = {"str": pl.Utf8, "int": pl.Int64, "bool": pl.Boolean, "datetime": pl.Datetime("us", "UTC")}
    return {c.name: types[c.dtype] for c in COLUMNS}


def spark_schema() -> str:
    """The columns as a Spark DDL schema (the Spark engine's executors hand their rows over in it)."""
    types = {"str": "string", "int": "bigint", "bool": "boolean", "datetime": "timestamp"}
    return ", ".join(f"`{c.name}` {types[c.dtype]}" for c in COLUMNS)


def arrow_schema() -> pa.Schema:
    """The columns as Arrow types, as Spark takes them from Python (plain strings, UTC microseconds)."""
    import pyarrow as pa

    types = {"str": pa.string(), "int": pa.int64(), "bool": pa.bool_(), "datetime": pa.timestamp("us", tz="UTC")}
    return pa.schema([(c.name, types[c.dtype]) for c in COLUMNS])


def empty_table() -> pl.DataFrame:
    """An event table with no rows, for inputs where nothing matched."""
    import polars as pl

    return pl.DataFrame(schema=polars_schema())
