"""Generate a benchmark corpus: brokers + consumers + Streams apps.

The `best-case` profile: noise lines that hold no anchor and no relevance word, and rebalance lines
(≤ 1% by default) taken from the catalogs' own example messages, re-stamped and re-wrapped in each
file's layout, with group ids and generations varied — the corpus speaks exactly the wording the
catalogs know. The `realistic` and `storm` profiles (bench/realistic.py) look like real logs instead.

    python bench/generate.py bench/corpus/1g --size 1G
    python bench/generate.py bench/corpus/realistic-1g --size 1G --profile realistic --files 40
"""

from __future__ import annotations

import argparse
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from realistic import PROFILES, write_log
from realistic import generate as generate_like_real_logs

from rebalance_doctor.catalog import load_catalog
from rebalance_doctor.reading.envelope import messages_of
from rebalance_doctor.reading.rows import match_many

BROKER_NOISE = [
    "INFO [ReplicaFetcher replicaId={a}, leaderId={b}, fetcherId=0] Node {b} disconnected. (org.apache.kafka.clients.NetworkClient)",
    "INFO [LocalLog partition=orders-{p}, dir=/var/lib/kafka/data] Rolled new log segment at offset {n} in {ms} ms. (kafka.log.LocalLog)",
    "INFO [ProducerStateManager partition=payments-{p}] Wrote producer snapshot at offset {n} with 0 producer ids in {ms} ms. (kafka.log.ProducerStateManager)",
    "INFO [UnifiedLog partition=events-{p}, dir=/var/lib/kafka/data] Deleting segment LogSegment(baseOffset={n}, size=1073741800, lastModifiedTime=1700000000000, largestRecordTimestamp=Some(1700000000000)) due to retention time 604800000ms breach based on the largest record timestamp in the segment (kafka.log.UnifiedLog)",
    "INFO [Partition orders-{p} broker={a}] ISR updated to {a},{b} and version updated to {ms} (kafka.cluster.Partition)",
    "DEBUG [KafkaApi-{a}] Sending FETCH response to client consumer-orders-{p} of {n} bytes (kafka.server.KafkaApis)",
    "INFO [SocketServer listenerType=BROKER, nodeId={a}] Failed authentication with /10.0.{p}.{ms} (channelId=10.0.0.{a}:9092-10.0.{p}.{ms}-{n}) (SSL handshake failed) (org.apache.kafka.common.network.Selector)",
    "INFO [Controller id={a}, targetBrokerId={b}] Node {b} disconnected. (org.apache.kafka.clients.NetworkClient)",
    "WARN [ReplicaManager broker={a}] Unable to describe replica dirs for orders-{p} (kafka.server.ReplicaManager)",
    "INFO [LogLoader partition=__consumer_offsets-{p}, dir=/var/lib/kafka/data] Producer state recovery took {ms}ms for snapshot load and 0ms for segment recovery from offset {n} (kafka.log.UnifiedLog$)",
]
CLIENT_NOISE = [
    "INFO {pid} --- [nio-8080-exec-{p}] c.e.orders.web.OrderController          : GET /api/orders/{n} 200 {ms}ms",
    "INFO {pid} --- [ntainer#0-0-C-1] c.e.orders.OrderListener                 : processed order id={n} amount={ms}.50 customer=c{p}",
    "DEBUG {pid} --- [ntainer#0-0-C-1] o.a.k.c.consumer.internals.Fetcher      : [Consumer clientId=consumer-orders-{p}, groupId=orders] Fetch READ_UNCOMMITTED at offset {n} for partition orders-{p} returned fetch data (error=NONE, highWaterMark={n}, lastStableOffset = {n}, logStartOffset = 0, preferredReadReplica = absent, abortedTransactions = null, divergingEpoch =Optional.empty, recordsSizeInBytes={ms})",
    "INFO {pid} --- [   scheduling-1] c.e.orders.metrics.LagReporter           : lag orders-{p}={ms} records",
    "WARN {pid} --- [nio-8080-exec-{p}] c.e.orders.web.PaymentClient            : payment service slow: {ms} ms (retry 1/3)",
    "INFO {pid} --- [ntainer#0-0-C-1] o.h.engine.jdbc.batch.internal.BatchingBatch : HHH000010: On release of batch it still contained {p} JDBC statements",
    "DEBUG {pid} --- [ad | producer-1] o.a.k.clients.producer.internals.Sender : [Producer clientId=producer-1] Sending PRODUCE request with header RequestHeader(apiKey=PRODUCE, apiVersion=9, clientId=producer-1, correlationId={n}) and timeout 30000 to node {p}",
]


def _messages(component: str) -> list[tuple[str, str | None]]:
    """Rebalance messages (envelope stripped) from the catalogs' examples of one component, with their group id
    (housekeeping lines are no rebalance lines)."""
    catalog = load_catalog()
    examples = [
        (pattern, example.line) for pattern in catalog.patterns if pattern.component == component and not pattern.housekeeping
        for example in pattern.examples if "\n" not in example.line and not example.line.lstrip().startswith("{")
    ]
    messages = messages_of([line for _, line in examples], catalog)
    usable = []
    for (pattern, _), message, event in zip(examples, messages, match_many(messages, catalog), strict=True):
        if event is not None and event["pattern_id"] == pattern.id:  # the message alone still matches: usable
            group = event["group_id"]
            usable.append((message, group if group and len(group) >= 3 else None))
    return usable


def _fill(template: str, rng: random.Random, pid: int) -> str:
    return template.format(a=rng.randint(1, 6), b=rng.randint(1, 6), p=rng.randint(0, 63), n=rng.randint(1000, 99999999),
                           ms=rng.randint(1, 999), pid=pid)


def _vary(message: str, group: str | None, rng: random.Random, groups: int) -> str:
    """Another group and generation, so the table has many groups and generations."""
    if group:
        message = message.replace(group, f"group-{rng.randrange(groups)}")
    return re.sub(r"(generation |generationId=)\d+", lambda m: m.group(1) + str(rng.randint(1, 5000)), message)


def generate(out: Path, size: int, files: int, rebalance_ratio: float, groups: int, seed: int) -> None:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    brokers = max(1, files // 4)
    kinds = [("broker", i) for i in range(brokers)] + [("client", i) for i in range(files - brokers)]
    pools = {"broker": _messages("broker"), "client": _messages("consumer") + _messages("streams")}
    per_file = size // len(kinds)
    start = datetime(2024, 10, 24, 12, 0, tzinfo=UTC)
    for kind, index in kinds:
        path = out / (f"broker-{index + 1}" if kind == "broker" else f"app-{index}")
        path.mkdir(exist_ok=True)
        noise = BROKER_NOISE if kind == "broker" else CLIENT_NOISE
        pool, clock, pid = pools[kind], start, 1000 + index

        def next_line(kind: str = kind, pool: list = pool, noise: list = noise, pid: int = pid) -> str:
            nonlocal clock
            clock += timedelta(microseconds=rng.randint(100, 3000))
            if rng.random() < rebalance_ratio:
                body = _vary(*rng.choice(pool), rng, groups)
                body = f"INFO {body}" if kind == "broker" else f"INFO {pid} --- [ntainer#0-0-C-1] o.a.k.c.c.internals.ConsumerCoordinator  : {body}"
            else:
                body = _fill(rng.choice(noise), rng, pid)
            if kind == "broker":
                return f"[{clock:%Y-%m-%d %H:%M:%S},{clock.microsecond // 1000:03d}] {body}\n"
            return f"{clock:%Y-%m-%d %H:%M:%S}.{clock.microsecond // 1000:03d}  {body}\n"

        write_log(path / ("server.log" if kind == "broker" else "application.log"), per_file, next_line)


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", default="1G", help="total size, e.g. 100M, 1G, 5G")
    parser.add_argument("--files", type=int, default=12, help="number of log files (a quarter are brokers)")
    parser.add_argument("--rebalance-ratio", type=float, default=0.005, help="share of rebalance lines (≤ 0.01)")
    parser.add_argument("--groups", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", choices=("best-case", *PROFILES), default="best-case")
    args = parser.parse_args()
    if args.profile == "best-case":
        generate(args.out, parse_size(args.size), args.files, args.rebalance_ratio, args.groups, args.seed)
    else:
        generate_like_real_logs(args.out, parse_size(args.size), args.files, args.profile, args.groups, args.seed)


if __name__ == "__main__":
    main()
