"""Scenario simulator: writes a realistic multi-file rebalance incident and returns its ground truth.

``simulate(scenario, version, layouts, seed, out_dir)`` plays a consumer-group scenario (start-up,
heartbeat expiry, poll timeout, rolling restart, cooperative scale-out) on a model of the group
coordinator and its members, and logs every step the way the chosen Kafka version does: each
wording is a template of the log-message reference (tests/fixtures/reference/kafka-log-messages.md)
chosen through ``steps.yaml`` for the version, each envelope comes from ``layouts.yaml``. Nothing
here types a Kafka message. Noise lines (application, HTTP, broker housekeeping) are mixed in and
client clocks are skewed by a few hundred milliseconds.

The returned :class:`Truth` is built from the scenario model while it runs (generations, members,
leaders, causes, times, pauses, and the file:line of every Kafka line written), never by reading
the generated files back.
"""

from __future__ import annotations

import json
import random
import re
import sys
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
try:
    from reference import REFERENCE, ReferenceRow, load_reason_rows, load_rows, version_key
except ImportError:  # imported without tests/ on sys.path
    sys.path.insert(0, str(HERE.parent))
    from reference import REFERENCE, ReferenceRow, load_reason_rows, load_rows, version_key

SCENARIOS = ("startup", "heartbeat_expiry", "poll_timeout", "rolling_restart", "scale_out_cooperative", "static_rejoin")
ALL_LEVELS = ("INFO", "WARN", "ERROR", "DEBUG", "TRACE")
SLOT = re.compile(r"\{(alt|opt):((?:\"[^\"]*\",?)+)\}")
PLACEHOLDER = re.compile(r"\{([a-z_0-9]+)(?::([a-z]+))?\}")
# placeholder → the value key holding the member id it prints. A line names one member (the table has one
# member_id per event): its subject; a replaced member's old id counts only when the line prints no other.
MEMBER_PLACEHOLDERS = {"member_id": "member_id", "new_member_id": "new_member_id", "leader_member_id": "leader_member_id",
                       "generation_obj": "member_id", "member": "member_id"}
REPLACED_MEMBER_PLACEHOLDERS = {"old_member_id": "old_member_id", "existing_member_id": "existing_member_id"}
GENERATION_PLACEHOLDERS = ("generation", "generation_obj")

# Applications the simulated consumers belong to (names only; no Kafka wording).
APPS = (
    ("orders-app", "orders-processor", "orders", "orders", "OrdersApplication"),
    ("payments", "payments-settlement", "payments", "payments", "PaymentsApplication"),
    ("inventory", "inventory-sync", "stock-events", "inventory", "InventoryApplication"),
    ("shipping-svc", "shipping-dispatcher", "shipments", "shipping", "ShippingApplication"),
)


class Unsupported(ValueError):
    """The scenario cannot happen on that version (e.g. cooperative-sticky before 2.4)."""


# ------------------------------------------------------------------------------------------ data


def covers(versions: str, tag: str) -> bool:
    """Whether a reference version cell ('2.2.2, 2.3.1–trunk') includes the tag."""
    key = version_key(tag)
    for part in versions.split(","):
        part = part.strip()
        if "–" in part:
            low, high = (p.strip() for p in part.split("–"))
            if version_key(low) <= key <= version_key(high):
                return True
        elif part and version_key(part) == key:
            return True
    return False


def _first_covering(entries: list[dict], tag: str, **match: Any) -> dict | None:
    for entry in entries:
        if covers(entry["versions"], tag) and all(entry.get(k, False) == v for k, v in match.items()):
            return entry
    return None


def _cells(text: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", text)[1:-1]]


def fill(template: str, values: dict[str, Any], choose: Iterable[int] = ()) -> str:
    """Render a reference template: pick {alt:…}/{opt:…} options, fill placeholders, apply escapes."""
    picks = list(choose)
    slot_index = 0

    def slot(match: re.Match) -> str:
        nonlocal slot_index
        options = re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(2)) + ([""] if match.group(1) == "opt" else [])
        pick = picks[slot_index] if slot_index < len(picks) else 0
        slot_index += 1
        return options[pick]

    def value(match: re.Match) -> str:
        name, suffix = match.group(1), match.group(2)
        if name not in values or values[name] is None:
            raise KeyError(f"no value for {{{name}}} in {template!r}")
        item = values[name]
        if isinstance(item, (list, tuple)):
            return ", ".join(map(str, item)) if suffix == "csv" else "[" + ", ".join(map(str, item)) + "]"
        return str(item)

    text = PLACEHOLDER.sub(value, SLOT.sub(slot, template))
    return text.replace("\\n", "\n").replace("\\t", "\t").replace("\\|", "|")


@dataclass(frozen=True)
class Choice:
    """The reference row a step renders from in one version."""

    step: str
    row: ReferenceRow
    template: str
    choose: tuple[int, ...]
    logger: str
    kinds: tuple[str, ...]
    thread: str
    context: str | None = None  # a log context (steps.yaml contexts) printed before the message

    def placeholders(self) -> set[str]:
        return {m.group(1) for m in PLACEHOLDER.finditer(SLOT.sub("", self.template))}


class Wording:
    """steps.yaml + layouts.yaml resolved against the reference."""

    def __init__(self) -> None:
        self.steps_data = yaml.safe_load((HERE / "steps.yaml").read_text(encoding="utf-8"))
        self.layouts_data = yaml.safe_load((HERE / "layouts.yaml").read_text(encoding="utf-8"))
        self.reference_lines = REFERENCE.read_text(encoding="utf-8").splitlines()
        self.rows: dict[str, list[ReferenceRow]] = defaultdict(list)
        for row in load_rows():
            self.rows[row.template].append(row)
        self.reason_rows: dict[str, list] = defaultdict(list)
        for row in load_reason_rows():
            self.reason_rows[row.template].append(row)
        known = {row.template for row in load_rows(levels=ALL_LEVELS)}
        for name, step in self.steps_data["steps"].items():
            for entry in step["templates"]:
                template = entry if isinstance(entry, str) else entry["template"]
                if template not in known:
                    raise ValueError(f"steps.yaml {name}: template not in the reference: {template!r}")
        if f"`{self.steps_data['formats']['empty_client_reason']}`" not in REFERENCE.read_text(encoding="utf-8"):
            raise ValueError("steps.yaml formats.empty_client_reason is not in the reference")
        for name, templates in self.steps_data["reasons"].items():
            for template in templates:
                if template not in self.reason_rows:
                    raise ValueError(f"steps.yaml reason {name}: not in the reference reason tables: {template!r}")

    @property
    def steps(self) -> dict:
        return self.steps_data

    def sections(self, component: str) -> list[str]:
        return self.steps_data["sections"][component]

    def choice(self, step: str, tag: str, component: str) -> Choice | None:
        spec = self.steps_data["steps"][step]
        sections = self.sections(component)
        for entry in spec["templates"]:
            template = entry if isinstance(entry, str) else entry["template"]
            choose = () if isinstance(entry, str) else tuple(entry.get("choose", ()))
            context = None if isinstance(entry, str) else entry.get("context")
            for row in self.rows.get(template, ()):
                if row.section.split(".")[0] in sections and covers(row.versions, tag):
                    return Choice(step, row, template, choose, self.logger(row, tag, component), tuple(spec["kinds"]),
                                  spec.get("thread", "poll"), self.steps_data["contexts"][context] if context else None)
        return None

    def reason(self, name: str, tag: str, component: str, values: dict[str, Any]) -> str | None:
        sections = self.sections(component)
        for template in self.steps_data["reasons"][name]:
            for row in self.reason_rows.get(template, ()):
                if row.section.split(".")[0] in sections and covers(row.versions, tag):
                    return fill(template, values)
        return None

    def logger(self, row: ReferenceRow, tag: str, component: str) -> str:
        """The printed logger (%c): the reference's Logger column for the version, with its package."""
        cell = _cells(self.reference_lines[row.line - 1])[3]
        cell = re.sub(r"\s*\(emitted by [^)]*\)", "", cell).strip()
        package = None
        packaged = re.fullmatch(r"(\S+) \[package (.*)\]", cell)
        if packaged:
            simple = packaged.group(1)
            for option in packaged.group(2).split(" / "):
                m = re.fullmatch(r"(\S+) \(([^)]*)\)", option.strip())
                if m and covers(m.group(2), tag):
                    package = m.group(1)
        else:
            simple = None
            for option in cell.split(" / "):
                m = re.fullmatch(r"(\S+)(?: \(([^)]*)\))?", option.strip())
                if m and (m.group(2) is None or covers(m.group(2), tag)):
                    simple = m.group(1)
                    break
            if simple is None:
                raise ValueError(f"reference line {row.line}: no logger for {tag} in {cell!r}")
        if package is None:
            entry = _first_covering(self.steps_data["packages"][component][simple], tag)
            if entry is None:
                raise ValueError(f"steps.yaml packages: no package for {simple} in {tag}")
            package = entry["package"]
        return f"{package}.{simple}"


@lru_cache(maxsize=1)
def wording() -> Wording:
    return Wording()


VERSIONS: tuple[str, ...] = tuple(yaml.safe_load((HERE / "steps.yaml").read_text(encoding="utf-8"))["versions"])
EPOCH_VERSIONS: tuple[str, ...] = tuple(yaml.safe_load((HERE / "steps.yaml").read_text(encoding="utf-8"))["epoch_versions"])
LAYOUTS: tuple[str, ...] = tuple(
    name for name in yaml.safe_load((HERE / "layouts.yaml").read_text(encoding="utf-8"))["layouts"] if name != "broker-log4j"
)


# ----------------------------------------------------------------------------------------- truth


@dataclass(frozen=True)
class Citation:
    """A line the truth points at: file (relative to out_dir), 1-based line, acceptable event kinds."""

    file: str
    line: int
    kinds: tuple[str, ...]
    step: str
    node: str
    last_line: int = 0  # last physical line of the record (continuation lines of a multi-line message)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class RebalanceTruth:
    """One rebalance as the model played it. Times are true time (the broker's clock), UTC."""

    group: str
    from_generation: int
    to_generation: int
    cause: str  # schema.CAUSES
    cause_member: str | None  # the member whose join / leave / expiry / revocation started it
    evidence: Citation | None  # the line that proves the cause; None when the version logs nothing that does
    supporting: list[Citation]  # broker start / stabilized / assignment lines and the trigger's other lines
    started_at: datetime  # broker: rebalance start (true / broker clock, UTC)
    stable_at: datetime  # broker: the leader's assignment received
    ended_at: datetime  # last member received its assignment (true time)
    members: list[str]  # member ids of the new generation
    leader: str
    leader_evidence: Citation | None  # a line naming the leader's member id; None when none does (before 2.6.1 / 3.0)
    members_named: bool  # every member of the new generation is named with it in some line
    protocol: str  # eager / cooperative


@dataclass
class StaticRejoin:
    """A static member came back under a new member id without a rebalance."""

    generation: int
    instance_id: str
    old_member_id: str
    new_member_id: str
    evidence: Citation | None


@dataclass
class MembershipTruth:
    """A share group's epoch moving on without a rebalance: who joined (or left) with it, and the line that says so."""

    group_epoch: int
    joined: list[str]
    left: list[str]
    evidence: Citation | None


@dataclass
class FileTruth:
    path: str
    layout: str
    nodes: list[str]
    lines: int
    kafka_lines: list[int]  # every physical line of every Kafka record (message continuation included)


@dataclass
class Truth:
    """The ground truth of one simulated incident, from the model (never read back from the files).

    pause_ms: how long each member held no partitions because of rebalances: eager protocol, from revoking (or
    losing) its partitions to being assigned again; cooperative, only members whose revocation took every partition
    they held, from the revocation to the follow-up round's assignment (a partial revocation is no pause). A member
    that leaves for good, or a static member restarting without a rebalance, is not paused by a rebalance.
    """

    scenario: str
    version: str
    tag: str
    coordinator: str
    layouts: tuple[str, ...]
    seed: int
    root: Path
    group: str
    topic: str
    protocol: str
    generations: list[int]  # in order: the start generation, then one per rebalance
    rebalances: list[RebalanceTruth]
    members_by_generation: dict[int, list[str]]
    leaders: dict[int, str]
    member_nodes: dict[str, str]
    member_clients: dict[str, str]  # member id → client.id
    pause_ms: dict[str, int]  # per member: total time it stopped processing in rebalances (eager revoke/lost → assign)
    pause_intervals: dict[str, list[tuple[datetime, datetime]]]  # per member: each (stopped, resumed), true time
    clock_skew_ms: dict[str, int]  # per node: its clock minus the broker's (true) clock
    broker_node: str
    files: dict[str, FileTruth]
    kafka_records: list[Citation]  # first line of every Kafka record written
    logged_generations: set[int]
    logged_member_ids: set[str]  # member ids some line names (member_id / generation object / leader / dump)
    all_member_ids: set[str]
    variant: str | None = None  # heartbeat_expiry: gc_pause or network_partition
    static_rejoins: list[StaticRejoin] = field(default_factory=list)
    # Kafka 4.x scenarios (epochs.py): the group's types in order, its rebalances numbered by group epoch, a share
    # group's epochs that are membership changes rather than rebalances, and the epochs some line prints
    group_types: list[str] = field(default_factory=lambda: ["classic"])
    membership: list[MembershipTruth] = field(default_factory=list)
    logged_epochs: set[int] = field(default_factory=set)

    @property
    def paths(self) -> list[str]:
        return [str(self.root / name) for name in self.files]

    @property
    def lines_written(self) -> int:
        return sum(f.lines for f in self.files.values())

    def path(self, citation: Citation) -> str:
        return str(self.root / citation.file)

    def cited(self) -> list[Citation]:
        seen: dict[tuple[str, int], Citation] = {}
        for rebalance in self.rebalances:
            for c in [rebalance.evidence, rebalance.leader_evidence, *rebalance.supporting]:
                if c is not None:
                    seen.setdefault((c.file, c.line), c)
        for change in self.membership:
            if change.evidence is not None:
                seen.setdefault((change.evidence.file, change.evidence.line), change.evidence)
        for rejoin in self.static_rejoins:
            if rejoin.evidence is not None:
                seen.setdefault((rejoin.evidence.file, rejoin.evidence.line), rejoin.evidence)
        return list(seen.values())


# ------------------------------------------------------------------------------------------ model


@dataclass
class Node:
    name: str
    layout: str  # layout id as given (spring-boot-3, kubectl, …)
    skew_ms: int
    host: str
    index: int
    kind: str = "client"  # client / broker
    component: str = "consumer"  # whose wording a client node prints: consumer (classic), consumer848 (KIP-848)
    alive: list[list[datetime | None]] = field(default_factory=list)
    silent: list[tuple[datetime, datetime]] = field(default_factory=list)


@dataclass
class Member:
    member_id: str
    node: Node
    client_id: str
    instance_id: str | None = None  # group.instance.id of a static member
    owned: list[str] = field(default_factory=list)
    generation: int | None = None
    # cooperative: the lines of a partition revocation that asks for a follow-up round
    revoked_at: datetime | None = None
    revoked_all: bool = False  # the revocation took every partition the member held: it holds nothing until the next round
    revoke_record: Record | None = None
    need_revoke_record: Record | None = None
    request_record: Record | None = None


@dataclass
class Record:
    t: datetime
    node: Node
    level: str
    logger: str
    thread: str
    message: str
    seq: int
    stack: list[str] = field(default_factory=list)
    choice: Choice | None = None
    values: dict[str, Any] | None = None
    file: str = ""
    line: int = 0
    last_line: int = 0

    def citation(self, kinds: tuple[str, ...] | None = None) -> Citation:
        assert self.choice is not None
        return Citation(self.file, self.line, kinds or self.choice.kinds, self.choice.step, self.node.name, self.last_line)


def ms(t: datetime, milliseconds: float) -> datetime:
    return t + timedelta(milliseconds=milliseconds)


def abbreviate(name: str, target: int) -> str:
    """logback %logger{N}: shorten package segments to their first letter, left to right, until it fits."""
    parts = name.split(".")
    for i in range(len(parts) - 1):
        if len(".".join(parts)) <= target:
            break
        parts[i] = parts[i][0]
    return ".".join(parts)


def pad(text: str, spec: dict | None) -> str:
    if not spec:
        return text
    if "abbreviate" in spec:
        text = abbreviate(text, spec["abbreviate"])
    if "keep" in spec and len(text) > spec["keep"]:
        text = text[-spec["keep"] :]
    width = spec.get("width", 0)
    return text.rjust(width) if spec.get("align") == "right" else text.ljust(width)


class Simulation:
    scenarios: tuple[str, ...] = SCENARIOS
    versions_key = "versions"

    def __init__(self, scenario: str, version: str, layouts: tuple[str, ...], seed: int, out_dir: Path):
        if scenario not in self.scenarios:
            raise ValueError(f"unknown scenario {scenario!r} (one of {self.scenarios})")
        self.w = wording()
        spec = self.w.steps[self.versions_key].get(version)
        if spec is None:
            raise ValueError(f"unknown version {version!r} (one of {tuple(self.w.steps[self.versions_key])})")
        self.scenario, self.version, self.layouts, self.seed, self.root = scenario, version, layouts, seed, out_dir
        self.tag, self.coordinator = str(spec["tag"]), spec["coordinator"]
        self.client_tag = str(spec.get("client_tag", self.tag))  # the classic consumers' release
        self.broker_component = "broker-classic" if self.coordinator == "classic" else "broker-new"
        self.rng = random.Random(f"{scenario}|{version}|{'+'.join(layouts)}|{seed}")
        self.settings = _first_covering(self.w.steps["settings"], self.client_tag)
        self.protocol = "cooperative" if scenario == "scale_out_cooperative" else "eager"
        assignor = self.w.steps["assignors"][self.protocol]
        if version_key(self.client_tag) < version_key(assignor["since"]):
            raise Unsupported(f"{assignor['name']} needs Kafka {assignor['since']}+, not {version}")
        app, group, topic, package, app_class = self.rng.choice(APPS)
        self.app, self.group, self.topic, self.app_package, self.app_class = app, group, topic, package, app_class
        self.broker_id = self.rng.randint(1, 3)
        self.base = {
            "group": group,
            "topic": topic,
            "topics": [topic],
            "broker_id": self.broker_id,
            "offsets_partition": self.rng.randint(0, 49),
            "assignor": assignor["name"],
            "assignor_class": assignor["class"],
            "static_member_count": 0,
            "host": f"kafka-{self.broker_id}",
            "connection_id": 2147483647 - self.broker_id,
            "instance_id_option": self.w.steps["formats"]["instance_id_option"]["absent"],
            "instance_id_optional": self.w.steps["formats"]["instance_id_optional"]["absent"],
            **{k: v for k, v in self.settings.items() if k != "versions"},
        }
        if self.coordinator == "new":
            self.base["instance_id"] = self.w.steps["formats"]["instance_id_new_coordinator"]["absent"]
        self.base["coordinator"] = fill(self.w.steps["formats"]["coordinator"], self.base)
        self.partitions = [f"{topic}-{i}" for i in range(6)]
        self.start = datetime(2024, 5, 14, 8, 0, tzinfo=UTC) + timedelta(
            minutes=self.rng.randint(0, 600), milliseconds=self.rng.randint(0, 59999)
        )
        self.records: list[Record] = []
        self.seq = 0
        self.broker = Node(f"kafka-{self.broker_id}", self.w.layouts_data["broker"], 0, f"10.0.0.{10 + self.broker_id}", 0, "broker")
        self.broker.alive.append([self.start - timedelta(seconds=30), None])
        self.nodes: list[Node] = [self.broker]
        self.client_count = 0
        # group state
        self.generation = self.rng.choice([0, self.rng.randint(2, 40)])
        self.members: list[Member] = []  # in join order
        self.leader: Member | None = None
        self.generations = [self.generation]
        self.rebalances: list[dict] = []
        self.members_by_generation: dict[int, list[str]] = {}
        self.leaders: dict[int, str] = {}
        self.pause_intervals: dict[str, list[tuple[datetime, datetime]]] = defaultdict(list)
        self.all_member_ids: set[str] = set()
        self.member_nodes: dict[str, str] = {}
        self.member_clients: dict[str, str] = {}
        self.variant: str | None = None
        self.static_rejoins: list[dict] = []
        self.group_types = ["classic"]
        self.membership: list[dict] = []

    # ----------------------------------------------------------------------------- emission

    def jitter(self, low: float, high: float) -> float:
        return self.rng.uniform(low, high)

    def values(self, member: Member | None = None, **extra: Any) -> dict[str, Any]:
        v = dict(self.base)
        if member is not None:
            v.update(member_id=member.member_id, client_id=member.client_id, client_host=member.node.host)
            if member.instance_id is not None:
                formats = self.w.steps["formats"]
                v.update(instance_id=member.instance_id, _static=True,
                         instance_id_option=fill(formats["instance_id_option"]["present"], {"instance_id": member.instance_id}),
                         instance_id_optional=fill(formats["instance_id_optional"]["present"], {"instance_id": member.instance_id}))
        v["static_member_count"] = sum(1 for m in self.members if m.instance_id is not None)
        v.update({k: x for k, x in extra.items() if x is not None})
        if "generation" in v and "member_id" in v:
            v["generation_obj"] = fill(self.w.steps["formats"]["generation_obj"], v)
        if member is not None:
            member_format = _first_covering(self.w.steps["formats"]["member"], self.tag)
            if member_format is not None:  # the Scala coordinator's MemberMetadata dump (gone in 4.x)
                v["member"] = fill(member_format["format"], v)
        return v

    def emit(self, node: Node, step: str, t: datetime, values: dict[str, Any], thread: str | None = None) -> Record | None:
        component = self.broker_component if node.kind == "broker" else node.component
        choice = self.w.choice(step, self.tag_of(component), component)
        if choice is None:
            return None  # this version does not log the step at INFO or above
        prefix_entry = _first_covering(self.w.steps["prefixes"][component], self.tag_of(component),
                                       static=component == "consumer" and bool(values.get("_static")))
        context = fill(choice.context, values) if choice.context else ""
        message = fill(prefix_entry["prefix"], values) + context + fill(choice.template, values, choice.choose)
        record = Record(t, node, choice.row.level, choice.logger, thread or choice.thread, message, self.next_seq(), choice=choice,
                        values=values)
        self.records.append(record)
        return record

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def broker_says(self, step: str, t: datetime, member: Member | None = None, **extra: Any) -> Record | None:
        return self.emit(self.broker, step, t, self.values(member, **extra))

    def client_says(self, member: Member, step: str, t: datetime, thread: str | None = None, **extra: Any) -> Record | None:
        return self.emit(member.node, step, t, self.values(member, **extra), thread)

    def reason(self, name: str, component: str = "consumer", member: Member | None = None, **extra: Any) -> str | None:
        component = self.broker_component if component == "broker" else component
        return self.w.reason(name, self.tag_of(component), component, self.values(member, **extra))

    def tag_of(self, component: str) -> str:
        """The release whose wording a component prints: the consumers' own, the brokers' for everything else."""
        return self.client_tag if component == "consumer" else self.tag

    def noise(self, node: Node, when: str, t: datetime, member: Member | None = None) -> datetime:
        """Write the node's start-up or shutdown noise in order from t; returns the time after it."""
        for entry in self.noise_entries(node, when):
            t = ms(t, self.jitter(5, 400))
            self.noise_record(node, entry, t, member)
        return t

    # ----------------------------------------------------------------------------- nodes and members

    def layout_spec(self, layout: str) -> dict:
        return self.w.layouts_data["layouts"][layout]

    def inner_layout(self, layout: str) -> str:
        spec = self.layout_spec(layout)
        return spec["inner"] if spec["kind"] == "wrap" else layout

    def new_node(self, index: int, layout: str | None = None) -> Node:
        layout = layout or self.layouts[index % len(self.layouts)]
        spec = self.layout_spec(layout)
        if spec["kind"] == "wrap" and "pod_suffix" in spec["node_names"]:
            letters = "bcdfghjklmnpqrstvwxz2456789"
            name = fill(spec["node_names"], {"app": self.app, "replicaset": "".join(self.rng.choices(letters, k=9)),
                                             "pod_suffix": "".join(self.rng.choices(letters, k=5))})
        elif spec["kind"] == "wrap":
            name = fill(spec["node_names"], {"app": self.app, "index1": index + 1})
        else:
            name = f"{self.app}-{index}"
        skew = self.rng.choice([-1, 1]) * self.rng.randint(80, 450)
        node = Node(name, layout, skew, f"10.0.{self.rng.randint(1, 9)}.{self.rng.randint(2, 250)}", index)
        self.nodes.append(node)
        return node

    def new_member(self, node: Node, instance_id: str | None = None) -> Member:
        formats, static = self.w.steps["formats"], instance_id is not None
        client_format = _first_covering(formats["client_id"], self.client_tag, static=static) or \
            _first_covering(formats["client_id"], self.client_tag, static=False)
        fields = {"group": self.group, "n": 1, "instance_id": instance_id,
                  "uuid": str(uuid.UUID(int=self.rng.getrandbits(128), version=4))}
        fields["client_id"] = client_id = fill(client_format["format"], fields)
        member_format = _first_covering(formats["member_id"], self.client_tag, static=static) or \
            _first_covering(formats["member_id"], self.client_tag, static=False)
        member_id = fill(member_format["format"], fields)
        member = Member(member_id, node, client_id, instance_id)
        self.all_member_ids.add(member_id)
        self.member_nodes[member_id] = node.name
        self.member_clients[member_id] = client_id
        return member

    def boot(self, node: Node, t: datetime, instance_id: str | None = None) -> tuple[Member, datetime]:
        """A consumer process starts: application and client start-up noise, subscribe, find the coordinator."""
        node.alive.append([t, None])
        member = self.new_member(node, instance_id)
        t = self.noise(node, "startup", t, member)
        t = ms(t, self.jitter(50, 300))
        self.client_says(member, "client.subscribed", t, thread="main")
        t = ms(t, self.jitter(80, 400))
        self.client_says(member, "client.coordinator_discovered", t)
        return member, ms(t, self.jitter(5, 40))

    # ----------------------------------------------------------------------------- protocol steps

    def join_new(self, member: Member, t: datetime, state: str) -> tuple[datetime, dict[str, Record | None]]:
        """A member without a member id joins (KIP-394 dance from 2.2); returns when the broker has its join."""
        lines: dict[str, Record | None] = {}
        lines["joining"] = self.client_says(member, "client.joining", t)
        if member.instance_id is not None:  # a static member is added at once (no MEMBER_ID_REQUIRED round)
            t = ms(t, self.jitter(3, 15))
            lines["id_required"] = self.broker_says("broker.static_member_join", t, member, new_member_id=member.member_id,
                                                    state=state)
            lines["pending_added"] = self.broker_says("broker.static_member_added", ms(t, 1), member)
        elif self.settings["member_id_required"]:
            t = ms(t, self.jitter(3, 15))
            lines["id_required"] = self.broker_says("broker.member_join_id_required", t, member, new_member_id=member.member_id,
                                                    state=state)
            t = ms(t, self.jitter(3, 15))
            self.client_says(member, "client.request_rejoin", t,
                             reason=self.reason("client.rejoin_with_member_id", member=member))
            t = ms(t, self.jitter(1, 5))
            lines["joining"] = self.client_says(member, "client.joining", t) or lines["joining"]
            t = ms(t, self.jitter(3, 15))
            lines["pending_added"] = self.broker_says("broker.member_join_pending_added", t, member, state=state)
        return ms(t, self.jitter(1, 5)), lines

    def prepare(self, t: datetime, reason: str | None) -> Record | None:
        return self.broker_says("broker.rebalance_start", t, generation=self.generation, state="PreparingRebalance",
                                reason=reason)

    def adding_reason(self, member: Member) -> str | None:
        if member.instance_id is not None:  # its only JoinGroup carries no reason
            client_reason = self.w.steps["formats"]["empty_client_reason"]
        else:
            client_reason = self.reason("client.rejoin_with_member_id", member=member)
        return self.reason("broker.adding_member", "broker", member, client_reason=client_reason)

    def rejoin(self, member: Member, t0: datetime, via_heartbeat: bool = True) -> tuple[datetime, datetime | None]:
        """An existing member learns of the rebalance (heartbeat) and rejoins; returns (join time, pause start)."""
        t = ms(t0, self.jitter(50, self.settings["heartbeat_interval_ms"])) if via_heartbeat else t0
        if via_heartbeat:
            self.client_says(member, "client.heartbeat_rebalancing", t)
            self.client_says(member, "client.request_rejoin", ms(t, 1), thread="heartbeat",
                             reason=self.reason("client.group_rebalancing", member=member))
        t = ms(t, self.jitter(5, 400))
        pause_start = None
        if self.protocol == "eager" and member.owned:
            self.client_says(member, "client.revoke", t, revoked_partitions=member.owned, assigned_partitions=member.owned)
            pause_start = t
            t = ms(t, self.jitter(2, 30))
        self.client_says(member, "client.joining", t)
        return ms(t, self.jitter(2, 12)), pause_start

    def quotas(self, members: list[Member]) -> dict[str, int]:
        base, extra = divmod(len(self.partitions), len(members))
        order = sorted(members, key=lambda m: (-len(m.owned), m.member_id))
        return {m.member_id: base + (1 if i < extra else 0) for i, m in enumerate(order)}

    def assign(self, members: list[Member], followup: bool) -> dict[str, list[str]]:
        if self.protocol == "eager":  # range: consumers sorted by member id, contiguous ranges
            ordered = sorted(members, key=lambda m: m.member_id)
            base, extra = divmod(len(self.partitions), len(ordered))
            result, start = {}, 0
            for i, m in enumerate(ordered):
                size = base + (1 if i < extra else 0)
                result[m.member_id] = self.partitions[start : start + size]
                start += size
            return result
        quotas = self.quotas(members)
        keep = {m.member_id: sorted(m.owned, key=self.partitions.index)[: quotas[m.member_id]] for m in members}
        taken = {p for ps in keep.values() for p in ps}
        owned_by_members = {p for m in members for p in m.owned}
        free = [p for p in self.partitions if p not in taken and (followup or p not in owned_by_members)]
        for m in sorted(members, key=lambda m: m.member_id):
            while free and len(keep[m.member_id]) < quotas[m.member_id]:
                keep[m.member_id].append(free.pop(0))
        return {k: sorted(v, key=self.partitions.index) for k, v in keep.items()}

    def complete(self, t0: datetime, joins: dict[str, datetime], pauses: dict[str, datetime | None], *, cause: str,
                 cause_member: Member | None, evidence: list[Record | None], supporting: list[Record | None],
                 prepare_record: Record | None, initial: bool = False, followup: bool = False) -> tuple[datetime, list[Member]]:
        """Join phase end → new generation, leader assignment, SyncGroup, partition callbacks. Returns (end, revokers)."""
        members = [m for m in self.members if m.member_id in joins]
        last_join = max(joins.values())
        if initial:  # group.initial.rebalance.delay.ms, extended while members keep joining
            delay = self.settings["initial_rebalance_delay_ms"]
            first = min(joins.values())
            stable = ms(first, delay)
            window = timedelta(milliseconds=delay)
            while any(stable - window < j <= stable for j in joins.values() if j != first) and stable < last_join + window:
                stable = ms(stable, delay)
            t = max(stable, ms(last_join, 5))
        else:
            t = ms(last_join, self.jitter(3, 25))
        old_generation = self.generation
        self.generation += 1
        generation = self.generation
        if self.leader is None or self.leader not in members:
            self.leader = members[0]
        leader = self.leader
        stabilized = self.broker_says("broker.stabilized", t, generation=generation, member_count=len(members))
        joined_at = {}
        named = set()
        for m in members:
            joined_at[m.member_id] = ms(t, self.jitter(1, 15))
            rec = self.client_says(m, "client.joined", joined_at[m.member_id], generation=generation)
            if rec is not None and {"generation_obj"} & rec.choice.placeholders():
                named.add(m.member_id)
        assignment = self.assign(members, followup)
        fmt = self.w.steps["formats"]["assignments"]
        assignments_text = fmt["open"] + fmt["separator"].join(
            fill(fmt["entry"], {"member_id": m.member_id, "partitions": assignment[m.member_id]}) for m in members) + fmt["close"]
        t_leader = ms(joined_at[leader.member_id], self.jitter(5, 40))
        leader_line = self.client_says(leader, "client.leader_assignment", t_leader, generation=generation, assignments=assignments_text)
        t_sync = ms(t_leader, self.jitter(2, 10))
        received = self.broker_says("broker.assignment_received", t_sync, generation=generation, member_count=len(members),
                                    leader_member_id=leader.member_id)
        end = t_sync
        revokers: list[Member] = []
        for m in members:
            t = ms(max(t_sync, joined_at[m.member_id]), self.jitter(2, 20))
            new = assignment[m.member_id]
            self.client_says(m, "client.synced", t, generation=generation)
            t = ms(t, self.jitter(0, 3))
            self.client_says(m, "client.notify_assignor", t, assignment_obj=fill(self.w.steps["formats"]["assignment_obj"], {"partitions": new}))
            added = [p for p in new if p not in m.owned]
            revoked = [p for p in m.owned if p not in new]
            if self.protocol == "cooperative":
                t = ms(t, self.jitter(0, 3))
                self.client_says(m, "client.updating_assignment", t, assigned_partitions=new, owned_partitions=m.owned,
                                 added_partitions=added, revoked_partitions=revoked)
                if revoked:
                    m.revoked_all = set(revoked) == set(m.owned)
                    t = ms(t, self.jitter(1, 5))
                    m.revoke_record = self.client_says(m, "client.revoke", t, revoked_partitions=revoked)
                    t = ms(t, self.jitter(5, 60))
                    m.need_revoke_record = self.client_says(m, "client.need_revoke", t, revoked_partitions=revoked)
                    m.request_record = self.client_says(
                        m, "client.request_rejoin", ms(t, 1),
                        reason=self.reason("client.need_revoke_full", member=m, revoked_partitions=revoked))
                    m.revoked_at = t
                    revokers.append(m)
            t = ms(t, self.jitter(1, 8))
            self.client_says(m, "client.assigned", t, assigned_partitions=new if self.protocol == "eager" else added)
            if pauses.get(m.member_id) is not None:
                self.paused(m, pauses[m.member_id], t)
            m.owned = new
            m.generation = generation
            end = max(end, t)
        self.generations.append(generation)
        self.members_by_generation[generation] = [m.member_id for m in members]
        self.leaders[generation] = leader.member_id
        self.rebalances.append({
            "from_generation": old_generation, "to_generation": generation, "cause": cause,
            "cause_member": cause_member.member_id if cause_member else None,
            "evidence": next((r for r in evidence if r is not None), None),
            "supporting": [r for r in [prepare_record, stabilized, received, *supporting] if r is not None],
            "started_at": t0, "stable_at": t_sync, "ended_at": end, "members": [m.member_id for m in members], "leader": leader.member_id,
            # the leader is named when the broker prints its id (3.0+), or when its own leader line sits next to a
            # line naming its member id for this generation (2.6.1+ Generation{…}); before, no line says who led
            "leader_evidence": (received if received and "leader_member_id" in received.choice.placeholders() else None)
            or (leader_line if leader_line and leader.member_id in named else None),
            "members_named": named == {m.member_id for m in members},
        })
        return end, revokers

    # ----------------------------------------------------------------------------- scenarios

    def form_group(self, count: int, t: datetime, static: bool = False) -> datetime:
        """Start-up: `count` consumers boot within a few seconds and join the (empty) group."""
        joins: dict[str, datetime] = {}
        prepare_record = None
        first_lines: dict[str, Record | None] = {}
        first: Member | None = None
        boots = sorted(ms(t, self.jitter(0, 2500)) for _ in range(count))
        booted = []
        for boot_at in boots:
            node = self.new_node(self.client_count)
            self.client_count += 1
            member, t_ready = self.boot(node, boot_at, f"{self.app}-{node.index}" if static else None)
            booted.append((t_ready, member))
        for t_ready, member in sorted(booted, key=lambda x: x[0]):
            state = "Empty" if first is None else "PreparingRebalance"
            t_join, lines = self.join_new(member, t_ready, state)
            self.members.append(member)
            joins[member.member_id] = t_join
            if first is None:
                first, first_lines = member, lines
                prepare_record = self.prepare(t_join, self.adding_reason(member))
        evidence = self.join_evidence(prepare_record, first_lines)
        end, _ = self.complete(joins[first.member_id], joins, {}, cause="member_join", cause_member=first, evidence=evidence,
                               supporting=[], prepare_record=prepare_record, initial=True)
        return end

    def join_evidence(self, prepare_record: Record | None, lines: dict[str, Record | None]) -> list[Record | None]:
        """What proves a member_join: the broker's reason (2.1+) or its line admitting a new member (3.0+ / static).
        Before that only the joiner's own '(Re-)joining group' shows up: inference, not proof."""
        with_reason = prepare_record if prepare_record and "reason" in prepare_record.choice.placeholders() else None
        return [with_reason, lines.get("id_required"), lines.get("pending_added")]

    def member_joins_stable_group(self, member: Member, t: datetime) -> datetime:
        """A member with no member id joins a Stable group: member_join rebalance."""
        t_join, lines = self.join_new(member, t, "Stable")
        self.members.append(member)
        t0 = t_join
        prepare_record = self.prepare(t0, self.adding_reason(member))
        joins = {member.member_id: t_join}
        pauses: dict[str, datetime | None] = {}
        for other in self.members:
            if other is not member:
                joins[other.member_id], pauses[other.member_id] = self.rejoin(other, t0)
        end, revokers = self.complete(t0, joins, pauses, cause="member_join", cause_member=member,
                                      evidence=self.join_evidence(prepare_record, lines), supporting=[], prepare_record=prepare_record)
        if revokers:
            end = self.followup(revokers)
        return end

    def followup(self, revokers: list[Member]) -> datetime:
        """Cooperative: members that revoked partitions rejoin at once → a second round hands them out."""
        first = min(revokers, key=lambda m: m.revoked_at)
        t0 = ms(first.revoked_at, self.jitter(5, 30))
        short = self.reason("client.need_revoke_short", member=first)
        if first is self.leader:
            reason = self.reason("broker.leader_rejoin", "broker", first, state="Stable", client_reason=short)
        else:
            reason = self.reason("broker.member_update", "broker", first, state="Stable", client_reason=short)
        joins: dict[str, datetime] = {}
        for m in revokers:
            t = ms(m.revoked_at, self.jitter(3, 20))
            self.client_says(m, "client.joining", t)
            joins[m.member_id] = ms(t, self.jitter(2, 8))
        t0 = min(t0, min(joins.values()))
        prepare_record = self.prepare(t0, reason)
        for m in self.members:
            if m.member_id not in joins:
                joins[m.member_id], _ = self.rejoin(m, t0)
        # proof: the member asks to rejoin to finish the revocation (3.0+ reason, 2.7–2.8 line), the broker prints
        # that client reason (3.2+), or – before – the revocation after SyncGroup itself (cooperative only revokes
        # then, and always rejoins after); the bare broker reason "Updating metadata for member X" proves nothing
        with_client_reason = prepare_record if prepare_record and short and short in str(prepare_record.values.get("reason")) else None
        evidence = [first.request_record, first.need_revoke_record, with_client_reason, first.revoke_record]
        # cooperative: a member that revoked some partitions keeps processing the rest, no pause; one whose revocation
        # took everything holds nothing until the second round hands it partitions again
        revoked_from = {m.member_id: (m.revoke_record.t if m.revoke_record else m.revoked_at) for m in revokers if m.revoked_all}
        end, _ = self.complete(t0, joins, revoked_from, cause="cooperative_followup", cause_member=first, evidence=evidence,
                               supporting=[m.revoke_record for m in revokers], prepare_record=prepare_record, followup=True)
        return end

    def scenario_startup(self) -> None:
        self.end = self.form_group(self.rng.randint(2, 4), self.start)

    def scenario_heartbeat_expiry(self) -> None:
        """A member stops heartbeating (a long GC pause, or a network partition); the broker expires it after
        session.timeout.ms, the others rejoin, and the member comes back later with a new member id."""
        t = self.form_group(3, self.start)
        t = ms(t, self.jitter(20000, 60000))
        victim = self.rng.choice(self.members)
        self.variant = self.rng.choice(["gc_pause", "network_partition"])
        last_heartbeat = ms(t, -self.jitter(0, self.settings["heartbeat_interval_ms"]))
        t_expire = ms(last_heartbeat, self.settings["session_timeout_ms"] + self.jitter(0, 300))
        t_back = ms(t_expire, self.jitter(2000, 8000))
        if self.variant == "gc_pause":
            victim.node.silent.append((t, t_back))  # stop-the-world: the process logs nothing at all
        else:  # the client's own session timer runs out too: it marks the coordinator unknown
            t_lost = ms(t_expire, self.jitter(-200, 200))
            self.client_says(victim, "client.coordinator_lost", t_lost, cause=self.reason("client.session_timed_out", member=victim),
                             is_disconnected="false")
            self.client_says(victim, "client.disconnect_requested", ms(t_lost, 1))
        expired = self.broker_says("broker.member_expired", t_expire, victim)
        self.members.remove(victim)
        t0 = ms(t_expire, 1)
        prepare_record = self.prepare(t0, self.reason("broker.heartbeat_expiration", "broker", victim))
        joins, pauses = {}, {}
        for m in self.members:
            joins[m.member_id], pauses[m.member_id] = self.rejoin(m, t0)
        with_reason = prepare_record if prepare_record and "reason" in prepare_record.choice.placeholders() else None
        self.complete(t0, joins, pauses, cause="heartbeat_expiry", cause_member=victim, evidence=[expired, with_reason],
                      supporting=[expired], prepare_record=prepare_record)
        # the member is back: its heartbeat is refused, it resets and joins again with a new member id
        t = ms(t_back, self.jitter(5, 50))
        if self.variant == "network_partition":
            self.client_says(victim, "client.coordinator_discovered", t)
            t = ms(t, self.jitter(20, 400))
        self.client_says(victim, "client.heartbeat_unknown_member", t, generation=victim.generation, error="UNKNOWN_MEMBER_ID")
        encountered = self.reason("client.encountered_error", member=victim, error="UNKNOWN_MEMBER_ID", api="HEARTBEAT")
        self.client_says(victim, "client.resetting_generation", ms(t, 1), thread="heartbeat", reason=encountered)
        self.client_says(victim, "client.request_rejoin", ms(t, 2), thread="heartbeat", reason=encountered)
        self.end = self.comeback(victim, ms(t, self.jitter(20, 300)))

    def comeback(self, old: Member, t: datetime) -> datetime:
        """A process whose member left the group (expired / left on poll timeout) polls again and rejoins."""
        self.client_says(old, "client.commit_not_in_group", t)  # it commits what it was processing: refused
        t = ms(t, self.jitter(1, 20))
        pause_start = t
        if old.owned:
            if self.client_says(old, "client.giving_away_lost", t) is not None:
                self.client_says(old, "client.lost", ms(t, self.jitter(0, 3)), lost_partitions=old.owned)
            else:  # before 2.4 a reset member revokes (eager) before rejoining
                self.client_says(old, "client.revoke", t, revoked_partitions=old.owned, assigned_partitions=old.owned)
        newcomer = self.new_member(old.node)
        end = self.member_joins_stable_group(newcomer, ms(t, self.jitter(2, 30)))
        if old.owned:  # the process stopped when it gave its partitions up, and resumed under its new member id
            self.paused(newcomer, pause_start, self.assigned_time(newcomer))
        return end

    def paused(self, member: Member, start: datetime, end: datetime) -> None:
        self.pause_intervals[member.member_id].append((start, end))

    def scenario_static_rejoin(self) -> None:
        """Static members (group.instance.id): one restarts within session.timeout.ms and takes its place back
        under a new member id: the broker replaces the member and does NOT rebalance."""
        if version_key(self.tag) < version_key("2.3.0"):
            raise Unsupported(f"static membership (KIP-345) needs Kafka 2.3+, not {self.version}")
        t = self.form_group(3, self.start, static=True)
        t = ms(t, self.jitter(20000, 60000))
        returning_leader = version_key(self.tag) >= version_key("3.2.0")  # KIP-814: a returning static leader skips assignment
        old = self.leader if returning_leader else self.rng.choice([m for m in self.members if m is not self.leader])
        node = old.node
        if old.owned and version_key(self.tag) >= version_key("2.4.0"):  # onLeavePrepare revokes on close; no LeaveGroup
            self.client_says(old, "client.revoke", t, thread="main", revoked_partitions=old.owned, assigned_partitions=old.owned)
        proactive = self.reason("client.leaving_proactively", member=old)
        self.client_says(old, "client.resetting_generation", ms(t, 1), thread="main", reason=proactive)
        self.client_says(old, "client.request_rejoin", ms(t, 2), thread="main", reason=proactive)
        t_down = self.noise(node, "shutdown", ms(t, 5), old)
        node.alive[-1][1] = ms(t_down, 1)
        t_boot = ms(t, self.settings["session_timeout_ms"] * self.jitter(0.2, 0.5))
        spec = self.layout_spec(node.layout)
        if spec["kind"] == "wrap" and "pod_suffix" in spec["node_names"]:
            node = self.new_node(node.index, node.layout)
        new, t = self.boot(node, t_boot, old.instance_id)
        self.client_says(new, "client.joining", t)
        t = ms(t, self.jitter(3, 15))
        replaced = self.broker_says("broker.static_member_replaced", t, new, state="Stable", new_member_id=new.member_id,
                                    old_member_id=old.member_id, existing_member_id=old.member_id)
        self.broker_says("broker.static_no_rebalance", ms(t, 1), new, state="Stable")
        self.members[self.members.index(old)] = new
        if self.leader is old:
            self.leader = new
        new.owned, new.generation = old.owned, old.generation
        t = ms(t, self.jitter(2, 10))
        self.client_says(new, "client.joined", t, generation=self.generation)
        if self.leader is new:
            t = ms(t, self.jitter(1, 5))
            self.client_says(new, "client.skipped_static_leader", t, generation=self.generation)
        t = ms(t, self.jitter(3, 15))
        self.client_says(new, "client.synced", t, generation=self.generation)
        self.client_says(new, "client.notify_assignor", ms(t, 1),
                         assignment_obj=fill(self.w.steps["formats"]["assignment_obj"], {"partitions": new.owned}))
        self.client_says(new, "client.assigned", ms(t, 3), assigned_partitions=new.owned)
        self.static_rejoins.append({"generation": self.generation, "instance_id": new.instance_id, "old_member_id": old.member_id,
                                        "new_member_id": new.member_id, "evidence": replaced})
        self.end = t

    def assigned_time(self, member: Member) -> datetime:
        for record in reversed(self.records):
            if record.choice and record.choice.step == "client.assigned" and record.values.get("member_id") == member.member_id:
                return record.t
        return self.rebalances[-1]["ended_at"]

    def scenario_poll_timeout(self) -> None:
        t = self.form_group(3, self.start)
        t = ms(t, self.jitter(20000, 60000))
        victim = self.rng.choice(self.members)
        t_expire = ms(t, self.settings["max_poll_interval_ms"])
        t_back = ms(t_expire, self.jitter(5000, 20000))
        victim.node.silent.append((t, t_back))  # stuck in a slow call: the application logs nothing
        warn = self.client_says(victim, "client.poll_timeout", t_expire)
        poll_reason = self.reason("client.poll_timeout", member=victim)
        leave = self.client_says(victim, "client.leave", ms(t_expire, 1), thread="heartbeat", reason=poll_reason)
        proactive = self.reason("client.leaving_proactively", member=victim)
        self.client_says(victim, "client.resetting_generation", ms(t_expire, 2), thread="heartbeat", reason=proactive)
        self.client_says(victim, "client.request_rejoin", ms(t_expire, 3), thread="heartbeat", reason=proactive)
        t0 = ms(t_expire, self.jitter(2, 10))
        left = self.broker_says("broker.member_left", t0, victim, reason=poll_reason)
        self.members.remove(victim)
        reason = self.reason("broker.leave_group", "broker", victim, client_reason=poll_reason, member_ids=[victim.member_id])
        prepare_record = self.prepare(ms(t0, 1), reason)
        joins, pauses = {}, {}
        for m in self.members:
            joins[m.member_id], pauses[m.member_id] = self.rejoin(m, t0)
        logs_client_reason = prepare_record and "client_reason" in prepare_record.values and "client reason" in prepare_record.message
        client_reason_logged = prepare_record if logs_client_reason else None
        leave_with_reason = leave if leave and "reason" in leave.choice.placeholders() else None
        self.complete(t0, joins, pauses, cause="poll_timeout", cause_member=victim, evidence=[warn, leave_with_reason, client_reason_logged],
                      supporting=[leave, left], prepare_record=prepare_record)
        self.end = self.comeback(victim, ms(t_back, self.jitter(5, 50)))

    def scenario_rolling_restart(self) -> None:
        t = self.form_group(3, self.start)
        for old in list(self.members):
            t = ms(t, self.jitter(15000, 40000))
            node = old.node
            if old.owned and version_key(self.tag) >= version_key("2.4.0"):  # KIP-429 onLeavePrepare revokes on close
                self.client_says(old, "client.revoke", t, thread="main", revoked_partitions=old.owned, assigned_partitions=old.owned)
            t = ms(t, self.jitter(2, 30))
            closing = self.reason("client.closing", member=old)
            leave = self.client_says(old, "client.leave", t, thread="main", reason=closing)
            proactive = self.reason("client.leaving_proactively", member=old)
            self.client_says(old, "client.resetting_generation", ms(t, 1), thread="main", reason=proactive)
            self.client_says(old, "client.request_rejoin", ms(t, 2), thread="main", reason=proactive)
            t_down = self.noise(node, "shutdown", ms(t, 5), old)
            node.alive[-1][1] = ms(t_down, 1)
            t0 = ms(t, self.jitter(2, 10))
            left = self.broker_says("broker.member_left", t0, old, reason=closing)
            self.members.remove(old)
            reason = self.reason("broker.leave_group", "broker", old, client_reason=closing, member_ids=[old.member_id])
            prepare_record = self.prepare(ms(t0, 1), reason)
            joins, pauses = {}, {}
            for m in self.members:
                joins[m.member_id], pauses[m.member_id] = self.rejoin(m, t0)
            client_reason_logged = prepare_record if prepare_record and "client reason" in prepare_record.message else None
            leave_with_reason = leave if leave and "reason" in leave.choice.placeholders() else None
            t, _ = self.complete(t0, joins, pauses, cause="member_leave", cause_member=old,
                                 evidence=[leave_with_reason, client_reason_logged, left, leave], supporting=[leave, left],
                                 prepare_record=prepare_record)
            # the new process of the restarted instance (a new pod for kubectl) boots and joins
            t_boot = ms(t_down, self.jitter(8000, 20000))
            spec = self.layout_spec(node.layout)
            if spec["kind"] == "wrap" and "pod_suffix" in spec["node_names"]:
                node = self.new_node(node.index, node.layout)
            member, t_ready = self.boot(node, t_boot)
            t = self.member_joins_stable_group(member, t_ready)
        self.end = t

    def scenario_scale_out_cooperative(self) -> None:
        t = self.form_group(2, self.start)
        t = ms(t, self.jitter(20000, 60000))
        node = self.new_node(self.client_count)
        self.client_count += 1
        member, t_ready = self.boot(node, t)
        self.end = self.member_joins_stable_group(member, t_ready)

    # ----------------------------------------------------------------------------- noise and writing

    def noise_entries(self, node: Node, when: str) -> list[dict]:
        kinds = self.layout_spec(node.layout if node.kind == "broker" else self.inner_layout(node.layout))["noise"]
        entries = []
        for kind in kinds:
            for entry in self.w.layouts_data["noise"][kind]:
                if entry["when"] != when:
                    continue
                if "since" in entry and version_key(self.tag if node.kind == "broker" else self.client_tag) < version_key(entry["since"]):
                    continue
                entries.append(entry)
        return entries

    def noise_values(self, node: Node, member: Member | None) -> dict[str, Any]:
        pool = self.w.layouts_data["noise_values"]
        client_id = member.client_id if member else fill(_first_covering(self.w.steps["formats"]["client_id"], self.client_tag, static=False)["format"],
                                                         {"group": self.group, "n": 1})
        return {
            **self.base, "node": node.name, "app": self.app, "app_package": self.app_package, "app_class": self.app_class,
            "app_version": "4.2.0", "pid": 1, "client_id": client_id, "kafka_version": self.client_tag.replace("trunk", "4.0.0"),
            "commit_id": f"{self.rng.getrandbits(64):016x}", "epoch_ms": int(self.start.timestamp() * 1000),
            "cluster_id": "q3Zt0f6xSm2mPoV1rKx9dA", "n": self.rng.randint(20, 500), "n1": self.rng.randint(1, 10),
            "ms": self.rng.randint(1, 900), "offset": self.rng.randint(1000, 900000), "partition": self.rng.randint(0, 5),
            "uuid": str(uuid.UUID(int=self.rng.getrandbits(128), version=4)), "amount": f"{self.rng.uniform(5, 900):.2f}",
            "path": self.rng.choice(pool["path"]), "status": self.rng.choice(pool["status"]),
        }

    def noise_record(self, node: Node, entry: dict, t: datetime, member: Member | None = None) -> None:
        values = self.noise_values(node, member)
        message = fill(entry["msg"], values)
        if entry.get("prefix") == "consumer":
            prefix = _first_covering(self.w.steps["prefixes"]["consumer"], self.client_tag, static=False)["prefix"]
            message = fill(prefix, values) + message
        logger = fill(entry["logger"], values)
        thread = entry.get("thread", "poll")
        self.records.append(Record(t, node, entry["level"], logger, fill(thread, values) if "{" in thread else thread, message,
                                   self.next_seq(), stack=list(entry.get("stack", []))))

    def steady_noise(self, window_end: datetime) -> None:
        kafka_per_node: dict[str, int] = defaultdict(int)
        for record in self.records:
            if record.choice is not None:
                kafka_per_node[record.node.name] += 1
        for node in self.nodes:
            node_entries = self.noise_entries(node, "steady")
            if not node_entries:
                continue
            spans = [(a, b or window_end) for a, b in node.alive]
            if node.kind == "client":  # the application's steady chatter starts once its consumer is up
                firsts = [min((r.t for r in self.records if r.node is node and r.choice and a <= r.t <= b), default=b)
                          for a, b in spans]
                spans = [(first, b) for first, (_, b) in zip(firsts, spans, strict=True)]
            total = sum((b - a).total_seconds() for a, b in spans)
            if total <= 0:
                continue
            count = max(20, int(kafka_per_node[node.name] * self.jitter(2.0, 3.0)))
            weights = [e.get("weight", 1) for e in node_entries]
            for _ in range(count):
                offset = self.rng.uniform(0, total)
                for a, b in spans:
                    length = (b - a).total_seconds()
                    if offset <= length:
                        t = a + timedelta(seconds=offset)
                        break
                    offset -= length
                if any(s <= t <= e for s, e in node.silent):
                    continue
                entry = self.rng.choices(node_entries, weights)[0]
                self.noise_record(node, entry, t)

    def thread_name(self, node: Node, thread: str) -> str:
        spec = self.layout_spec(self.inner_layout(node.layout))
        threads = spec.get("threads", {})
        if thread in threads:
            return fill(threads[thread], {"group": self.group, "app": self.app})
        return thread

    def envelope(self, layout: str, record: Record, message_lines: list[str]) -> list[str]:
        spec = self.layout_spec(layout)
        local = record.t + timedelta(milliseconds=record.node.skew_ms)
        ts = local.strftime(spec["ts"].replace("%3f", f"{local.microsecond // 1000:03d}"))
        thread = self.thread_name(record.node, record.thread) if record.node.kind == "client" else record.thread
        if spec["kind"] == "json":
            keys = spec["keys"]
            doc = {keys["ts"]: ts, keys["version"]: "1", keys["msg"]: "\n".join(message_lines), keys["logger"]: record.logger,
                   keys["thread"]: thread, keys["level"]: record.level, keys["level_value"]: spec["level_values"][record.level]}
            if record.stack:
                doc[keys["stack_trace"]] = "\n".join(record.stack)
            return [json.dumps(doc, ensure_ascii=False, separators=(",", ":"))]
        first = spec["format"].format(ts=ts, level=pad(record.level, spec.get("level")), thread=pad(thread, spec.get("thread")),
                                      logger=pad(record.logger, spec.get("logger")), msg=message_lines[0], pid=1, app=self.app)
        return [first, *message_lines[1:], *record.stack]

    def write(self) -> Truth:
        window_end = ms(max(r.t for r in self.records), self.jitter(5000, 15000))
        for node in self.nodes:
            for span in node.alive:
                span[1] = span[1] or window_end
        self.steady_noise(window_end)
        files: dict[str, list[Record]] = defaultdict(list)
        file_layout: dict[str, str] = {}
        for record in self.records:
            spec = self.layout_spec(record.node.layout)
            name = fill(spec["file"], {"node": record.node.name, "broker_id": self.broker_id})
            record.file = name
            files[name].append(record)
            file_layout[name] = record.node.layout
        self.root.mkdir(parents=True, exist_ok=True)
        file_truths: dict[str, FileTruth] = {}
        for name, records in files.items():
            records.sort(key=lambda r: (r.t, r.seq))
            spec = self.layout_spec(file_layout[name])
            inner = self.inner_layout(file_layout[name])
            width = max(len(r.node.name) for r in records)
            lines: list[str] = []
            kafka_lines: list[int] = []
            for record in records:
                physical = self.envelope(inner, record, record.message.split("\n"))
                if spec["kind"] == "wrap":
                    prefix = fill(spec["prefix"], {"node": record.node.name, "node_padded": record.node.name.ljust(width),
                                                   "container": "app"})
                    physical = [prefix + line for line in physical]
                record.line = len(lines) + 1
                record.last_line = len(lines) + len(physical)
                if record.choice is not None:
                    kafka_lines.extend(range(record.line, record.last_line + 1))
                lines.extend(physical)
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
            file_truths[name] = FileTruth(name, file_layout[name], sorted({r.node.name for r in records}), len(lines), kafka_lines)
        return self.truth(file_truths)

    def truth(self, files: dict[str, FileTruth]) -> Truth:
        kafka = [r for r in self.records if r.choice is not None]
        logged_generations: set[int] = set()
        logged_epochs: set[int] = set()
        logged_members: set[str] = set()
        for r in kafka:
            component = "broker-new" if r.node.kind == "broker" and self.coordinator == "new" else \
                "broker-classic" if r.node.kind == "broker" else "consumer"
            used = r.choice.placeholders() | {m.group(1) for m in PLACEHOLDER.finditer(
                _first_covering(self.w.steps["prefixes"][component], self.tag_of(component), static=False)["prefix"] + (r.choice.context or ""))}
            if used & set(GENERATION_PLACEHOLDERS):
                logged_generations.add(int(r.values["generation"]))
            if "group_epoch" in used:
                logged_epochs.add(int(r.values["group_epoch"]))
            named = {r.values[key] for name, key in MEMBER_PLACEHOLDERS.items() if name in used}
            if not named and "reason" in used:  # reasons name the member they are about ("removing member X on …")
                named = {m for m in self.all_member_ids if m in str(r.values["reason"])}
            if not named:
                named = {r.values[key] for name, key in REPLACED_MEMBER_PLACEHOLDERS.items() if name in used}
            logged_members |= named
        rebalances = [
            RebalanceTruth(
                group=self.group, from_generation=rb["from_generation"], to_generation=rb["to_generation"], cause=rb["cause"],
                cause_member=rb["cause_member"], evidence=rb["evidence"].citation() if rb["evidence"] else None,
                supporting=[r.citation() for r in rb["supporting"]], started_at=rb["started_at"], stable_at=rb["stable_at"],
                ended_at=rb["ended_at"], members=rb["members"], leader=rb["leader"],
                leader_evidence=rb["leader_evidence"].citation() if rb["leader_evidence"] else None,
                members_named=rb["members_named"], protocol=self.protocol)
            for rb in self.rebalances
        ]
        return Truth(
            scenario=self.scenario, version=self.version, tag=self.tag, coordinator=self.coordinator, layouts=self.layouts,
            seed=self.seed, root=self.root, group=self.group, topic=self.topic, protocol=self.protocol,
            generations=self.generations, rebalances=rebalances, members_by_generation=self.members_by_generation,
            leaders=self.leaders, member_nodes=self.member_nodes, member_clients=self.member_clients,
            pause_ms={k: sum(round((b - a).total_seconds() * 1000) for a, b in spans) for k, spans in self.pause_intervals.items()},
            pause_intervals=dict(self.pause_intervals),
            clock_skew_ms={n.name: n.skew_ms for n in self.nodes}, broker_node=self.broker.name, files=files,
            kafka_records=[r.citation() for r in kafka], logged_generations=logged_generations,
            logged_member_ids=logged_members, all_member_ids=set(self.all_member_ids), variant=self.variant,
            static_rejoins=[StaticRejoin(sr["generation"], sr["instance_id"], sr["old_member_id"], sr["new_member_id"],
                                         sr["evidence"].citation() if sr["evidence"] else None) for sr in self.static_rejoins],
            group_types=list(self.group_types),
            membership=[MembershipTruth(m["group_epoch"], m["joined"], m["left"], m["evidence"].citation() if m["evidence"] else None)
                        for m in self.membership],
            logged_epochs=logged_epochs,
        )
