"""The CI gate's verdict in words: a terminal table with each violation and its first evidence lines,
JUnit XML (one test case per rule and group) and GitHub Actions ``::error`` annotations."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..analysis.model import Rebalance
from ..rules import CheckResult, RuleResult
from .terminal import evidence_line
from .words import duration, generation_label, member_on_node, plural, visible

SUITE = "rebalance-doctor"
SHOWN_EVIDENCE = 3  # lines per violation in the terminal


def _listing(rebalances: tuple[Rebalance, ...], shown: int = 3) -> str:
    names = ", ".join(generation_label(r) for r in rebalances[:shown])
    return names + (f" and {len(rebalances) - shown} more" if len(rebalances) > shown else "")


def summary(r: RuleResult) -> str:
    """One sentence: the value, the limit and what is over it."""
    if r.rule == "fail_on":
        hits = r.rebalances
        if hits:
            causes = ", ".join(sorted({h.cause.kind for h in hits}))
            text = f"{plural(len(hits), 'rebalance')} caused by {causes}: " + "; ".join(
                f"{generation_label(h)} {h.cause.kind}: {h.cause.summary}" for h in hits[:3])
            text += f"; and {len(hits) - 3} more" if len(hits) > 3 else ""
        else:
            text = f"no rebalance caused by {', '.join(sorted(r.forbidden))}"
    elif r.rule == "max_rebalances":
        text = f"{plural(r.actual, 'rebalance')} (limit {r.limit})"
        text += f"; over the limit: {_listing(r.rebalances)}" if r.rebalances else ""
    elif r.rule == "max_failed":
        text = f"{plural(r.actual, 'failed rebalance')} (limit {r.limit})" + (f": {_listing(r.rebalances)}" if r.rebalances else "")
    else:
        text = f"total pause {duration(r.actual)} (limit {duration(r.limit)})"
        if r.longest_member is not None:
            text += f"; longest: {member_on_node(r.longest_member, r.longest_member_node)} {duration(r.longest_pause_ms)}"
            text += f" over {plural(len(r.rebalances), 'rebalance')}"
    return text if r.in_logs else text + " (no events of this group in the logs)"


def actual_text(r: RuleResult) -> str:
    if r.rule == "fail_on":
        return plural(r.actual, "rebalance")
    return duration(r.actual) if r.rule == "max_pause" else str(r.actual)


def limit_text(r: RuleResult) -> str:
    if r.rule == "fail_on":
        return f"no {', '.join(sorted(r.forbidden))}"
    return f"≤ {duration(r.limit)}" if r.rule == "max_pause" else f"≤ {r.limit}"



def print_check(result: CheckResult, console: Console) -> None:
    """The verdict table, then each violation with its first evidence lines."""
    if not result.results:
        console.print(Text("No consumer group to check.", style="yellow"))
        return
    table = Table(header_style="bold", pad_edge=False, show_edge=False)
    for column in ("rule", "group", "limit", "actual", "result"):
        table.add_column(column, justify="right" if column in ("limit", "actual") else "left", overflow="fold")
    for r in result.results:
        table.add_row(Text(r.rule), Text(visible(r.group)), Text(limit_text(r)), Text(actual_text(r)),
                      Text("PASS", style="bold green") if r.passed else Text("FAIL", style="bold red"))
    console.print(table)
    for r in result.violations:
        console.print(Text.assemble(("✗ ", "bold red"), (r.rule, "bold"), " ", (visible(r.group), "bold cyan"), ": ",
                                    visible(summary(r))))
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
    return "\n".join([summary(r), *(f"{e.file}:{e.line} {e.text}" for e in r.evidence)])


def junit_xml(result: CheckResult) -> str:
    """One test suite, one test case per rule and group (classname = group, name = rule); a violation is a
    ``<failure>`` whose message is the summary and whose text adds the evidence lines."""
    counts = {"tests": str(len(result.results)), "failures": str(len(result.violations)), "errors": "0"}
    suites = ET.Element("testsuites", name=SUITE, **counts, time="0")
    suite = ET.SubElement(suites, "testsuite", name=SUITE, **counts, skipped="0", time="0")
    for r in result.results:
        case = ET.SubElement(suite, "testcase", classname=_xml_text(r.group), name=r.rule, time="0")
        if not r.passed:
            failure = ET.SubElement(case, "failure", message=_xml_text(summary(r)), type=r.rule)
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
