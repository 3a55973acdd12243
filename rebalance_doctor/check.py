"""The CI gate: rules over the incident model, and their verdict as a terminal table, JUnit XML and
GitHub Actions annotations.

Four rules, each checked per consumer group:

- ``fail_on``: no rebalance of the group may have one of these root causes (``schema.CAUSES``);
- ``max_rebalances``: at most N rebalances in the group;
- ``max_failed``: at most N rebalances of the group that never reached a stable generation;
- ``max_pause``: at most this much *total* pause in the group: the sum over its members and rebalances
  (the report's "pause by member" added up), not one member's nor one rebalance's.

A rules file (YAML) sets them for every group and overrides them per group id or glob; see
``examples/rebalance-rules.yaml``. Like every renderer this reads
:class:`~rebalance_doctor.analysis.model.Analysis` and never the logs.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .analysis.model import Analysis, Evidence, GroupAnalysis, Rebalance
from .catalog import CatalogError
from .durations import parse_duration
from .printers import visible
from .report import evidence_line, duration, generation_label, member_label, plural
from .schema import CAUSES

SUITE = "rebalance-doctor"
MAX_EVIDENCE = 10  # lines per rule result: a storm of 500 rebalances needs its first lines, not all of them
SHOWN_EVIDENCE = 3  # lines per violation in the terminal
FAILED_FINDING = "failed_rebalances"  # the finding whose evidence shows JoinGroup/SyncGroup failures


class RulesError(CatalogError):
    """A rules file that cannot be used, located at ``file:line``."""


# --------------------------------------------------------------------------- rules


@dataclass
class Rules:
    """Limits for every group (None / empty: not checked), and per-group overrides.

    ``groups`` maps a group id or glob (``orders-*``) to the limits it replaces, keyed by field name;
    a None value lifts that limit for the group.
    """

    fail_on: frozenset[str] = frozenset()
    max_rebalances: int | None = None
    max_failed: int | None = None
    max_pause_ms: int | None = None
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)

    def for_group(self, group_id: str) -> Rules:
        """The limits of one group: the override of its exact id, else of the first glob (in file order) it matches."""
        override = self.groups.get(group_id)
        if override is None:
            override = next((o for key, o in self.groups.items() if _is_glob(key) and fnmatchcase(group_id, key)), {})
        return replace(self, groups={}, **override)

    @property
    def empty(self) -> bool:
        """Nothing to check, for any group."""
        return not any(_checks_something(replace(self, groups={}, **o)) for o in [{}, *self.groups.values()])


def _checks_something(rules: Rules) -> bool:
    limits = (rules.max_rebalances, rules.max_failed, rules.max_pause_ms)
    return bool(rules.fail_on) or any(limit is not None for limit in limits)


def _is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


def _causes(value: Any) -> frozenset[str]:
    """Cause kinds from a list, a comma-separated string, or a list of comma-separated strings."""
    if value is None:
        return frozenset()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple, set, frozenset)) or not all(isinstance(item, str) for item in items):
        raise ValueError("must be a list of cause kinds, e.g. [heartbeat_expiry, poll_timeout]")
    names = {name.strip() for item in items for name in item.split(",") if name.strip()}
    unknown = sorted(names - set(CAUSES))
    if unknown:
        raise ValueError(f"unknown cause {', '.join(map(repr, unknown))} (known: {', '.join(CAUSES)})")
    return frozenset(names)


def _count(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"must be a whole number ≥ 0, not {value!r}")
    return value


def _pause(value: Any) -> int | None:
    return None if value is None else parse_duration(value)


# A rule's key in rules files, results and CLI options → (Rules field, parser of its value).
RULE_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "fail_on": ("fail_on", _causes),
    "max_rebalances": ("max_rebalances", _count),
    "max_failed": ("max_failed", _count),
    "max_pause": ("max_pause_ms", _pause),
}


class _Mapping(dict):
    """A YAML mapping that remembers its line and the line of each of its keys."""

    line: int
    key_lines: dict[Any, int]


class _RulesLoader(yaml.SafeLoader):
    """A safe loader whose errors can point at the key that is wrong; duplicate keys are errors, not overrides."""


def _mapping_with_lines(loader: _RulesLoader, node: yaml.MappingNode) -> _Mapping:
    own_keys = [key for key, _ in node.value if key.tag != "tag:yaml.org,2002:merge"]
    mapping = _Mapping(loader.construct_mapping(node, deep=True))
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    for key_node in own_keys:
        key = loader.construct_object(key_node)
        if key in mapping.key_lines:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        mapping.key_lines[key] = key_node.start_mark.line + 1
    return mapping


_RulesLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_with_lines)


def load_rules(path: str | Path) -> Rules:
    """Read a rules file; anything unknown or malformed is a :class:`RulesError` at ``file:line``."""
    try:
        data = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_RulesLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RulesError(path, mark.line + 1 if mark else 1, f"not valid YAML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesError(path, 1, f"cannot read the rules file: {getattr(exc, 'strerror', None) or exc}") from None
    if data is None:
        return Rules()
    if not isinstance(data, _Mapping):
        raise RulesError(path, 1, "a rules file is a mapping of rule: limit (see examples/rebalance-rules.yaml)")
    overrides = data.pop("groups", None)
    rules = Rules(**_limits(data, path))
    if overrides is None:
        return rules
    line = data.key_lines["groups"]
    if not isinstance(overrides, _Mapping):
        raise RulesError(path, line, "groups: must map group ids (or globs) to their limits")
    for group, limits in overrides.items():
        line = overrides.key_lines.get(group, overrides.line)
        if not isinstance(group, str):
            raise RulesError(path, line, f"group id {group!r} must be text (quote it)")
        if limits is not None and not isinstance(limits, _Mapping):
            raise RulesError(path, line, f"groups: {group}: must be a mapping of rule: limit")
        rules.groups[group] = _limits(limits, path) if limits else {}
    return rules


def _limits(mapping: _Mapping, path: str | Path) -> dict[str, Any]:
    limits = {}
    for key, value in mapping.items():
        line = mapping.key_lines.get(key, mapping.line)
        if key not in RULE_FIELDS:
            known = ", ".join(RULE_FIELDS)
            raise RulesError(path, line, f"unknown key {key!r} (known: {known}, and groups at the top)")
        name, parse = RULE_FIELDS[key]
        try:
            limits[name] = parse(value)
        except ValueError as exc:
            raise RulesError(path, line, f"{key}: {exc}") from None
    return limits


def merge(rules_file: Rules | None, cli_options: Mapping[str, Any]) -> Rules:
    """The rules of a run: the file's, where each rule given on the command line replaces the file's limit
    for every group (per-group overrides of that rule included).

    ``cli_options`` maps rule keys (fail_on, max_rebalances, max_failed, max_pause) to the values as typed:
    ``'heartbeat_expiry,poll_timeout'`` (or a list of such), counts, ``'30s'``. None or empty: not given.
    """
    rules = rules_file or Rules()
    given = {}
    for key, value in cli_options.items():
        if value is None or (isinstance(value, (str, list, tuple)) and not value):
            continue
        name, parse = RULE_FIELDS[key]
        try:
            given[name] = parse(value)
        except ValueError as exc:
            raise ValueError(f"--{key.replace('_', '-')}: {exc}") from None
    groups = {group: {k: v for k, v in limits.items() if k not in given} for group, limits in rules.groups.items()}
    merged = replace(rules, groups=groups, **given)
    if merged.empty:
        raise ValueError("nothing to check: give --fail-on, --max-rebalances, --max-failed, --max-pause or --rules")
    return merged


# --------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class RuleResult:
    """One rule on one group: the verdict, the value against the limit, and the log lines behind the value."""

    rule: str  # a key of RULE_FIELDS
    group: str
    passed: bool
    actual: int  # rebalances, or milliseconds for max_pause
    limit: int  # fail_on: 0 rebalances with a forbidden cause
    actual_text: str
    limit_text: str
    summary: str
    evidence: tuple[Evidence, ...] = ()


@dataclass
class CheckResult:
    results: list[RuleResult]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def violations(self) -> list[RuleResult]:
        return [r for r in self.results if not r.passed]


def evaluate(analysis: Analysis, rules: Rules, groups: tuple[str, ...] = ()) -> CheckResult:
    """Every rule on every group of the analysis (only those ``groups`` name: ids or globs, when given).

    A group named exactly but absent from the logs is still checked (it had no rebalance), so that CI
    reports keep the same test cases from run to run and a misspelt name shows.
    """
    checked = [g for g in analysis.groups if not groups or any(fnmatchcase(g.group_id, p) for p in groups)]
    present = {g.group_id for g in analysis.groups}
    absent = [p for p in dict.fromkeys(groups) if not _is_glob(p) and p not in present]
    results = []
    for group in checked + [_no_events(group_id) for group_id in absent]:
        limits = rules.for_group(group.group_id)
        for rule in (_fail_on, _max_rebalances, _max_failed, _max_pause):
            result = rule(group, limits)
            if result is not None:
                results.append(replace(result, summary=result.summary + " (no events of this group in the logs)")
                               if group.group_id in absent else result)
    return CheckResult(results)


def _no_events(group_id: str) -> GroupAnalysis:
    return GroupAnalysis(group_id=group_id, coordinator=None, protocol=None, generations=[], rebalances=[],
                         leader_changes=[], probing=None, findings=[], pause_by_member={})


def _evidence(lines: list[Evidence]) -> tuple[Evidence, ...]:
    return tuple(dict.fromkeys(lines))[:MAX_EVIDENCE]


def _first_lines(rebalances: list[Rebalance]) -> list[Evidence]:
    """Where each rebalance started (its cause's first line)."""
    return [r.cause.evidence[0] for r in rebalances if r.cause.evidence]


def _listing(rebalances: list[Rebalance], shown: int = 3) -> str:
    names = ", ".join(generation_label(r) for r in rebalances[:shown])
    return names + (f" and {len(rebalances) - shown} more" if len(rebalances) > shown else "")


def _fail_on(group: GroupAnalysis, limits: Rules) -> RuleResult | None:
    if not limits.fail_on:
        return None
    forbidden = ", ".join(sorted(limits.fail_on))
    hits = [r for r in group.rebalances if r.cause.kind in limits.fail_on]
    if hits:
        causes = ", ".join(sorted({r.cause.kind for r in hits}))
        summary = f"{plural(len(hits), 'rebalance')} caused by {causes}: " + "; ".join(
            f"{generation_label(r)} {r.cause.kind}: {r.cause.summary}" for r in hits[:3])
        summary += f"; and {len(hits) - 3} more" if len(hits) > 3 else ""
    else:
        summary = f"no rebalance caused by {forbidden}"
    return RuleResult(rule="fail_on", group=group.group_id, passed=not hits, actual=len(hits), limit=0,
                      actual_text=plural(len(hits), "rebalance"), limit_text=f"no {forbidden}", summary=summary,
                      evidence=_evidence([e for r in hits for e in r.cause.evidence]))


def _max_rebalances(group: GroupAnalysis, limits: Rules) -> RuleResult | None:
    limit = limits.max_rebalances
    if limit is None:
        return None
    count = len(group.rebalances)
    beyond = group.rebalances[limit:]
    summary = f"{plural(count, 'rebalance')} (limit {limit})"
    summary += f"; over the limit: {_listing(beyond)}" if beyond else ""
    return RuleResult(rule="max_rebalances", group=group.group_id, passed=not beyond, actual=count, limit=limit,
                      actual_text=str(count), limit_text=f"≤ {limit}", summary=summary,
                      evidence=_evidence(_first_lines(beyond)))


def _max_failed(group: GroupAnalysis, limits: Rules) -> RuleResult | None:
    limit = limits.max_failed
    if limit is None:
        return None
    failed = [r for r in group.rebalances if r.failed]
    summary = f"{plural(len(failed), 'failed rebalance')} (limit {limit})" + (f": {_listing(failed)}" if failed else "")
    failures = [e for f in group.findings if f.kind == FAILED_FINDING for e in f.evidence] if failed else []
    return RuleResult(rule="max_failed", group=group.group_id, passed=len(failed) <= limit, actual=len(failed),
                      limit=limit, actual_text=str(len(failed)), limit_text=f"≤ {limit}", summary=summary,
                      evidence=_evidence(_first_lines(failed) + failures))


def _max_pause(group: GroupAnalysis, limits: Rules) -> RuleResult | None:
    """The group's total pause; the evidence is where the member that paused longest was stopped, longest first."""
    limit = limits.max_pause_ms
    if limit is None:
        return None
    total = group.total_pause_ms
    summary = f"total pause {duration(total)} (limit {duration(limit)})"
    evidence: list[Evidence] = []
    if group.pause_by_member:
        member, longest = max(group.pause_by_member.items(), key=lambda item: item[1])
        paused = [(p.pause_ms, r) for r in group.rebalances for p in r.pauses if p.member == member and p.pause_ms]
        paused.sort(key=lambda item: -item[0])
        summary += f"; longest: {member_label(member, group)} {duration(longest)}"
        summary += f" over {plural(len(paused), 'rebalance')}"
        evidence = _first_lines([r for _, r in paused])
    return RuleResult(rule="max_pause", group=group.group_id, passed=total <= limit, actual=total, limit=limit,
                      actual_text=duration(total), limit_text=f"≤ {duration(limit)}", summary=summary,
                      evidence=_evidence(evidence))


# --------------------------------------------------------------------------- renderers


def print_check(result: CheckResult, console: Console) -> None:
    """The verdict table, then each violation with its first evidence lines."""
    if not result.results:
        console.print(Text("No consumer group to check.", style="yellow"))
        return
    table = Table(header_style="bold", pad_edge=False, show_edge=False)
    for column in ("rule", "group", "limit", "actual", "result"):
        table.add_column(column, justify="right" if column in ("limit", "actual") else "left", overflow="fold")
    for r in result.results:
        table.add_row(Text(r.rule), Text(visible(r.group)), Text(r.limit_text), Text(r.actual_text),
                      Text("PASS", style="bold green") if r.passed else Text("FAIL", style="bold red"))
    console.print(table)
    for r in result.violations:
        console.print(Text.assemble(("✗ ", "bold red"), (r.rule, "bold"), " ", (visible(r.group), "bold cyan"), ": ",
                                    visible(r.summary)))
        for evidence in r.evidence[:SHOWN_EVIDENCE]:
            console.print(evidence_line(evidence, "    "))
    violated = len(result.violations)
    console.print(Text(f"{violated} of {plural(len(result.results), 'rule')} violated", style="bold red") if violated
                  else Text("the rule holds" if len(result.results) == 1 else f"all {len(result.results)} rules hold", style="bold green"))


_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """Text XML 1.0 accepts: control characters shown as ``^X`` (they are illegal even escaped), the rest replaced."""
    return _NOT_XML.sub("\ufffd", visible(text))


def _failure_text(r: RuleResult) -> str:
    return "\n".join([r.summary, *(f"{e.file}:{e.line} {e.text}" for e in r.evidence)])


def junit_xml(result: CheckResult) -> str:
    """One test suite, one test case per rule and group (classname = group, name = rule); a violation is a
    ``<failure>`` whose message is the summary and whose text adds the evidence lines."""
    counts = {"tests": str(len(result.results)), "failures": str(len(result.violations)), "errors": "0"}
    suites = ET.Element("testsuites", name=SUITE, **counts, time="0")
    suite = ET.SubElement(suites, "testsuite", name=SUITE, **counts, skipped="0", time="0")
    for r in result.results:
        case = ET.SubElement(suite, "testcase", classname=_xml_text(r.group), name=r.rule, time="0")
        if not r.passed:
            failure = ET.SubElement(case, "failure", message=_xml_text(r.summary), type=r.rule)
            failure.text = _xml_text(_failure_text(r))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _command_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _command_property(text: str) -> str:
    return _command_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(result: CheckResult) -> list[str]:
    """One ``::error`` workflow command per violation, placed on its first evidence line (none for stdin)."""
    commands = []
    for r in result.violations:
        where = next((e for e in r.evidence if e.file != "-"), None)
        properties = {"file": where.file, "line": str(where.line)} if where else {}
        properties["title"] = f"{SUITE} {r.rule} ({r.group})"
        listed = ",".join(f"{key}={_command_property(visible(value))}" for key, value in properties.items())
        commands.append(f"::error {listed}::{_command_data(visible(_failure_text(r)))}")
    return commands
