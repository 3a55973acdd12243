"""Rows of the Kafka log-message reference, rendered into log lines a real client would print.

The reference (tests/fixtures/reference/kafka-log-messages.md, copied from shared/reference)
lists every rebalance-relevant wording of Kafka 0.9 → 4.0 with its versions. The coverage test
renders each INFO/WARN/ERROR template with realistic placeholder values and asks the catalogs
to match it (or to list it as ignored with a reason).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from support import FIXTURES

REFERENCE = FIXTURES / "reference" / "kafka-log-messages.md"
SECTIONS = ("2", "3", "4", "5", "6")

MEMBER = "consumer-orders-app-1-4b1f0a2e-5c3d-4e8f-9a7b-1c2d3e4f5a6b"
# Placeholder name (regex, first match wins) → the value a real log would print there.
SAMPLE_VALUES: list[tuple[str, str]] = [
    (r"generation_obj", f"Generation{{generationId=7, memberId='{MEMBER}', protocol='range'}}"),
    (r"^datetime$", "2024-10-24 12:00:00,000 +02:00"),
    (r"epoch_ms$", "1729764000000"),
    (r"^is_disconnected$", "true"),
    (r"^current_epoch_option$", "Some(6)"),
    (r"^metadata_hash$", "-3316871417424513387"),
    (r"(_ms|count|_size|bytes|version|generation|epoch|^num_|^offset$|offsets_partition|correlation|index|code|removed|needed)$", "7"),
    (r"^(broker_id|node_id|coordinator_id)$", "2"),
    (r"^groups?(_ids)?$", "orders-app"),
    (r"^groups:csv$", "orders-app, billing-app"),
    (r"member_ids$", f"[{MEMBER}, consumer-orders-app-2-9e8d7c6b-5a4f-3e2d-1c0b-a9f8e7d6c5b4]"),
    (r"member_id$", MEMBER),
    (r"^(member|new_leader_member)$",
     f"MemberMetadata(memberId={MEMBER}, groupInstanceId=None, clientId=consumer-orders-app-1, "
     "clientHost=/10.0.0.5, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range))"),
    (r"instance_id_option$", "Some(orders-0)"),
    (r"instance_id_optional$", "Optional[orders-0]"),
    (r"instance_id$", "orders-0"),
    (r"^partition$", "__consumer_offsets-12"),
    (r"partitions?:csv$", "orders-0, orders-1"),
    (r"partitions", "[orders-0, orders-1]"),
    (r"^task_id$", "0_1"),
    (r"^task_type$", "active"),
    (r"tasks", "[0_1, 1_2]"),
    (r"member_state$|^target_state$", "RECONCILING"),
    (r"^(old_state|thread_state|client_state)$", "RUNNING"),
    (r"^new_state$", "REBALANCING"),
    (r"state$", "PreparingRebalance"),
    (r"^(coordinator|node)$", "broker-2:9092 (id: 2147483645 rack: null)"),
    (r"^(error|error_name)$", "REBALANCE_IN_PROGRESS"),
    (r"^exception$", "org.apache.kafka.common.errors.RebalanceInProgressException: The group is rebalancing, so a rejoin is needed."),
    (r"(message|msg|cause)$", "The group is rebalancing, so a rejoin is needed."),
    (r"reason$", "cached metadata has changed from (version 1) to (version 2)"),
    (r"^thread$", "orders-app-9f0c2a1e-StreamThread-1"),
    (r"^client_id$", "orders-app-9f0c2a1e"),
    (r"^process_id$", "9f0c2a1e-7b6d-4c5e-8f9a-0b1c2d3e4f5a"),
    (r"^application_id$", "orders-app"),
    (r"protocol_name$|^assignor$", "range"),
    (r"^protocol_type$|^group_type$", "consumer"),
    (r"^topic$", "orders"),
    (r"^topics:csv$", "orders, payments"),
    (r"^topics$|^topic_ids$", "[orders, payments]"),
    (r"^operation$", "join-group"),
    (r"^callback_method$", "onPartitionsRevoked"),
    (r"class$", "com.example.OrdersRebalanceListener"),
    (r"^host_port$", "10.0.0.5:8080"),
    (r"^(regex|pattern)$", "orders-.*"),
]


@dataclass(frozen=True)
class ReferenceRow:
    section: str  # e.g. "4.2"
    level: str
    template: str
    versions: str
    line: int  # line in the reference file

    @property
    def first_version(self) -> str:
        return re.split(r"[–,]\s*", self.versions)[0].strip()

    @property
    def last_version(self) -> str:
        return re.split(r"[–,]\s*", self.versions)[-1].strip()

    def renderings(self) -> list[str]:
        """The template with every {alt:…}/{opt:…} choice, placeholders filled, escapes applied."""
        choices: list[list[str]] = []

        def choice_slot(match: re.Match) -> str:
            kind, body = match.group(1), match.group(2)
            options = re.findall(r'"((?:[^"\\]|\\.)*)"', body)
            choices.append(options + ([""] if kind == "opt" else []))
            return f"\x00{len(choices) - 1}\x00"

        skeleton = re.sub(r"\{(alt|opt):((?:\"[^\"]*\",?)+)\}", choice_slot, self.template)
        skeleton = re.sub(r"\{([a-z_0-9]+(?::[a-z]+)?)\}", lambda m: sample_value(m.group(1)), skeleton)
        skeleton = skeleton.replace("\\n", "\n").replace("\\t", "\t").replace("\\|", "|")
        lines = []
        for combination in itertools.product(*choices) if choices else [()]:
            text = re.sub(r"\x00(\d+)\x00", lambda m, chosen=combination: chosen[int(m.group(1))], skeleton)
            lines.append(text)
        return lines


def sample_value(name: str) -> str:
    if name.endswith(":multiline"):
        return "\n\tclient 9f0c2a1e: [0_1, 1_2]"
    for pattern, value in SAMPLE_VALUES:
        if re.search(pattern, name):
            return value
    return "some-value"


def version_key(version: str) -> tuple[int, ...]:
    """'2.8.1' → (2, 8, 1); 'trunk' (toward 4.0) sorts after every release."""
    version = version.split("-")[0]
    if version == "trunk":
        return (4, 0)
    return tuple(int(part) for part in version.split("."))


def load_rows(levels: tuple[str, ...] = ("INFO", "WARN", "ERROR")) -> list[ReferenceRow]:
    rows: list[ReferenceRow] = []
    section = ""
    for number, text in enumerate(REFERENCE.read_text(encoding="utf-8").splitlines(), 1):
        heading = re.match(r"^#{2,3} (\d+(?:\.\d+)?)[ .]", text)
        if heading:
            section = heading.group(1)
            continue
        if section.split(".")[0] not in SECTIONS or not text.startswith("| "):
            continue
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", text)[1:-1]]
        if len(cells) < 3 or cells[0] not in levels:
            continue
        template = cells[1]
        template = template[2:-2].strip() if template.startswith("``") else template[1:-1]
        rows.append(ReferenceRow(section, cells[0], template, cells[2], number))
    return rows


@dataclass(frozen=True)
class ReasonRow:
    """A reason string from the reference's reason tables (2.10, 3.11, 4.11, 5.8, 6.8) and where it appears."""

    section: str
    template: str
    versions: str
    appears_in: str
    line: int

    def renderings(self) -> list[str]:
        return ReferenceRow(self.section, "INFO", self.template, self.versions, self.line).renderings()


def load_reason_rows() -> list[ReasonRow]:
    rows: list[ReasonRow] = []
    section, in_reason_table = "", False
    for number, text in enumerate(REFERENCE.read_text(encoding="utf-8").splitlines(), 1):
        heading = re.match(r"^#{2,3} (\d+(?:\.\d+)?)[ .]", text)
        if heading:
            section = heading.group(1)
        if text.startswith("| Reason text"):
            in_reason_table = True
            continue
        if not text.startswith("|"):
            in_reason_table = False
            continue
        if not in_reason_table or text.startswith("|---"):
            continue
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", text)[1:-1]]
        template = cells[0]
        template = template[2:-2].strip() if template.startswith("``") else template[1:-1]
        rows.append(ReasonRow(section, template, cells[1], cells[3] if len(cells) > 3 else "", number))
    return rows
