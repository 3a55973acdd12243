"""The CI gate's rules: loaded from options and a rules file, evaluated per consumer group over the
incident model. The verdict is numbers; :mod:`.renderers.verdict` words it for the terminal, JUnit XML and
GitHub Actions.

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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from .analysis.model import Analysis, Evidence, GroupAnalysis, Rebalance
from .catalog import CatalogError
from .catalog.schema import CAUSES
from .catalog.yaml_source import LineMapping, read_yaml
from .durations import parse_duration
from .near_misses import did_you_mean

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
        hints = "".join(did_you_mean(name, CAUSES) for name in unknown)
        raise ValueError(f"unknown cause {', '.join(map(repr, unknown))}{hints} (known: {', '.join(CAUSES)})")
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


def load_rules(path: str | Path) -> Rules:
    """Read a rules file; anything unknown or malformed is a :class:`RulesError` at ``file:line``."""
    data = read_yaml(path, "rules file", RulesError)
    if not isinstance(data, LineMapping):
        raise RulesError(path, 1, "a rules file is a mapping of rule: limit (see examples/rebalance-rules.yaml)")
    overrides = data.pop("groups", None)
    rules = Rules(**_limits(data, path))
    if overrides is None:
        return rules
    line = data.key_lines["groups"]
    if not isinstance(overrides, LineMapping):
        raise RulesError(path, line, "groups: must map group ids (or globs) to their limits")
    for group, limits in overrides.items():
        line = overrides.key_lines.get(group, overrides.line)
        if not isinstance(group, str):
            raise RulesError(path, line, f"group id {group!r} must be text (quote it)")
        if limits is not None and not isinstance(limits, LineMapping):
            raise RulesError(path, line, f"groups: {group}: must be a mapping of rule: limit")
        rules.groups[group] = _limits(limits, path) if limits else {}
    return rules


def _limits(mapping: LineMapping, path: str | Path) -> dict[str, Any]:
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
    """One rule on one group: the verdict, the value against the limit, what the value counts, and the log
    lines behind it. Numbers and references only: :mod:`.renderers.verdict` words them."""

    rule: str  # a key of RULE_FIELDS
    group: str
    passed: bool
    actual: int  # rebalances, or milliseconds for max_pause
    limit: int  # fail_on: 0 rebalances with a forbidden cause
    # fail_on: the rebalances with a forbidden cause; max_rebalances: those over the limit; max_failed: the
    # failed ones; max_pause: those in which the longest-paused member paused, longest first
    rebalances: tuple[Rebalance, ...] = ()
    forbidden: frozenset[str] = frozenset()  # fail_on's causes
    longest_member: str | None = None  # max_pause: the member that paused longest, its node and its pause
    longest_member_node: str | None = None
    longest_pause_ms: int = 0
    in_logs: bool = True  # False: a group named in --group that no event mentions
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
                results.append(replace(result, in_logs=False) if group.group_id in absent else result)
    return CheckResult(results)


def _no_events(group_id: str) -> GroupAnalysis:
    return GroupAnalysis(group_id=group_id, coordinator=None, protocol=None, generations=[], rebalances=[],
                         leader_changes=[], probing=None, findings=[], pause_by_member={})


def _evidence(lines: list[Evidence]) -> tuple[Evidence, ...]:
    return tuple(dict.fromkeys(lines))[:MAX_EVIDENCE]


def _first_lines(rebalances: list[Rebalance]) -> list[Evidence]:
    """Where each rebalance started (its cause's first line)."""
    return [r.cause.evidence[0] for r in rebalances if r.cause.evidence]


def _fail_on(group: GroupAnalysis, limits: Rules) -> RuleResult | None:
    if not limits.fail_on:
        return None
    hits = [r for r in group.rebalances if r.cause.kind in limits.fail_on]
    return RuleResult(rule="fail_on", group=group.group_id, passed=not hits, actual=len(hits), limit=0,
                      rebalances=tuple(hits), forbidden=limits.fail_on,
                      evidence=_evidence([e for r in hits for e in r.cause.evidence]))


def _max_rebalances(group: GroupAnalysis, limits: Rules) -> RuleResult | None:
    limit = limits.max_rebalances
    if limit is None:
        return None
    beyond = group.rebalances[limit:]
    return RuleResult(rule="max_rebalances", group=group.group_id, passed=not beyond, actual=len(group.rebalances),
                      limit=limit, rebalances=tuple(beyond), evidence=_evidence(_first_lines(beyond)))


def _max_failed(group: GroupAnalysis, limits: Rules) -> RuleResult | None:
    limit = limits.max_failed
    if limit is None:
        return None
    failed = [r for r in group.rebalances if r.failed]
    failures = [e for f in group.findings if f.kind == FAILED_FINDING for e in f.evidence] if failed else []
    return RuleResult(rule="max_failed", group=group.group_id, passed=len(failed) <= limit, actual=len(failed),
                      limit=limit, rebalances=tuple(failed), evidence=_evidence(_first_lines(failed) + failures))


def _max_pause(group: GroupAnalysis, limits: Rules) -> RuleResult | None:
    """The group's total pause; the evidence is where the member that paused longest was stopped, longest first."""
    limit = limits.max_pause_ms
    if limit is None:
        return None
    total = group.total_pause_ms
    result = RuleResult(rule="max_pause", group=group.group_id, passed=total <= limit, actual=total, limit=limit)
    if not group.pause_by_member:
        return result
    member, longest = max(group.pause_by_member.items(), key=lambda item: item[1])
    paused = [(p.pause_ms, r) for r in group.rebalances for p in r.pauses if p.member == member and p.pause_ms]
    paused.sort(key=lambda item: -item[0])
    rebalances = [r for _, r in paused]
    return replace(result, rebalances=tuple(rebalances), longest_member=member,
                   longest_member_node=group.member_nodes.get(member), longest_pause_ms=longest,
                   evidence=_evidence(_first_lines(rebalances)))
