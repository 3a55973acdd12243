"""`rebalance-doctor check`: the CI gate. A pipeline collects an incident's logs, states what it tolerates
(forbidden root causes, rebalance / failure / pause budgets per group) and must see FAIL with the log line
that proves it, in the terminal, in JUnit XML (Jenkins, GitLab) and as GitHub Actions annotations.

Scenarios are the bundled incidents (sample_logs/*/EXPECTED.md) and a hostile log written here.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from io import StringIO
from pathlib import Path

import pytest

from rebalance_doctor import analyze, load
from rebalance_doctor.analysis.model import Evidence
from rebalance_doctor.cli.console import Environment
from rebalance_doctor.renderers.verdict import actual_text, github_annotations, junit_xml, limit_text, print_check, summary
from rebalance_doctor.rules import CheckResult, RuleResult, Rules, RulesError, evaluate, load_rules, merge

from support import ROOT, SAMPLES, ExitStatus, run_cli

EXAMPLE_RULES = ROOT / "examples" / "rebalance-rules.yaml"

# What the Jenkins xUnit plugin's JUnit schema (junit-10.xsd) allows, which GitLab and the GitHub
# reporters also read: attributes per element, and the ones it requires.
JUNIT_ATTRIBUTES = {
    "testsuites": {"name", "time", "tests", "failures", "errors"},
    "testsuite": {"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname", "id",
                  "package", "file", "log", "url"},
    "testcase": {"name", "time", "classname", "group"},
    "failure": {"type", "message"},
}
JUNIT_REQUIRED = {"testsuite": {"name", "tests", "failures", "errors"}, "testcase": {"name"}}
SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")


def only(result: CheckResult, rule: str, group: str) -> RuleResult:
    (found,) = [r for r in result.results if r.rule == rule and r.group == group]
    return found


def where(evidence: tuple[Evidence, ...]) -> list[str]:
    """Evidence as the reader sees it: file (from the repository root) and line."""
    return [f"{Path(os.path.relpath(ROOT / e.file, ROOT)).as_posix()}:{e.line}" for e in evidence]


def terminal(result: CheckResult) -> str:
    stream = StringIO()
    print_check(result, Environment(stdout_override=stream, color="never", width=240).out)
    return stream.getvalue()


# --------------------------------------------------------------------------- the rules, on real incidents


def test_a_forbidden_cause_fails_with_the_line_that_shows_it(analysis):
    """heartbeat-expiry: orders-app-2 froze in a full GC and broker 1 expired it (broker-1/server.log:248)."""
    result = evaluate(analysis("heartbeat-expiry"), Rules(fail_on=frozenset({"heartbeat_expiry"})))

    expiry = only(result, "fail_on", "orders-processor")
    assert not result.passed and result.violations == [expiry]
    assert expiry.actual == 1
    assert where(expiry.evidence)[0] == "sample_logs/heartbeat-expiry/broker-1/server.log:248"
    assert "7 → 8 heartbeat_expiry" in summary(expiry)
    assert only(result, "fail_on", "fulfillment-audit").passed  # the cron group only joins and leaves


def test_max_rebalances_fails_past_the_budget_and_points_at_the_first_rebalance_over_it(analysis):
    orders = ("orders-processor",)
    over = evaluate(analysis("heartbeat-expiry"), Rules(max_rebalances=2), orders)
    at = evaluate(analysis("heartbeat-expiry"), Rules(max_rebalances=3), orders)

    (result,) = over.results
    assert (result.passed, result.actual, result.limit) == (False, 3, 2)
    assert where(result.evidence) == ["sample_logs/heartbeat-expiry/broker-1/server.log:252"]  # 8 → 9, the third
    assert at.passed and summary(at.results[0]) == "3 rebalances (limit 3)"


def test_a_budget_is_per_group_not_summed_over_groups(analysis):
    result = evaluate(analysis("heartbeat-expiry"), Rules(max_rebalances=3))

    assert only(result, "max_rebalances", "orders-processor").passed
    audit = only(result, "max_rebalances", "fulfillment-audit")
    assert (audit.passed, audit.actual) == (False, 10)


def test_failed_rebalances_fail_max_failed_with_where_they_started_and_how_they_failed(analysis):
    """unstable-leader-failed-rebalances: generations 213 and 214 never became stable."""
    result = evaluate(analysis("unstable-leader-failed-rebalances"), Rules(max_failed=0))

    (failed,) = result.violations
    assert (failed.group, failed.actual, failed.limit) == ("fraud-scorer", 2, 0)
    lines = where(failed.evidence)
    assert lines[:2] == ["sample_logs/unstable-leader-failed-rebalances/broker-2/server.log.2024-02-27-14.gz:200",
                         "sample_logs/unstable-leader-failed-rebalances/broker-2/server.log.2024-02-27-14.gz:217"]
    assert "sample_logs/unstable-leader-failed-rebalances/scorer-1.log:156" in lines  # SyncGroup failed
    assert evaluate(analysis("unstable-leader-failed-rebalances"), Rules(max_failed=2)).passed


def test_max_pause_is_the_groups_total_pause_eager_bounce_fails_where_cooperative_passes(analysis):
    """The same three-pod rolling bounce: eager stops every member each time (15.9 s in total); cooperative only
    moves the restarted pod's partitions, so almost nobody holds nothing (77 ms)."""
    budget = Rules(max_pause_ms=10_000)
    eager = evaluate(analysis("rolling-bounce-eager"), budget)
    cooperative = evaluate(analysis("rolling-bounce-cooperative"), budget)

    (pause,) = eager.violations
    assert pause.actual == analysis("rolling-bounce-eager").groups[0].total_pause_ms > 10_000
    assert (actual_text(pause), limit_text(pause)) == ("15.9 s", "≤ 10.0 s")
    assert "longest: invoice-writer-0" in summary(pause) and "12.2 s" in summary(pause)
    assert where(pause.evidence)[0] == "sample_logs/rolling-bounce-eager/broker-1/server.log:247"  # its 4.8 s pause
    assert cooperative.passed and actual_text(cooperative.results[0]) == "77 ms"


def test_a_group_named_but_absent_from_the_logs_is_still_reported(analysis):
    result = evaluate(analysis("heartbeat-expiry"), Rules(max_rebalances=5), ("orders-procesor",))

    (typo,) = result.results
    assert typo.group == "orders-procesor" and typo.passed
    assert summary(typo) == "0 rebalances (limit 5) (no events of this group in the logs)"


# --------------------------------------------------------------------------- rules files and options


def test_the_example_rules_file_loads_and_gates_an_incident(analysis):
    rules = load_rules(EXAMPLE_RULES)
    result = evaluate(analysis("heartbeat-expiry"), rules)

    assert rules.fail_on == {"heartbeat_expiry", "poll_timeout", "static_member_fencing"}
    assert rules.max_pause_ms == 30_000
    assert [(r.rule, r.group) for r in result.violations] == [("fail_on", "orders-processor")]
    assert not any(r.rule == "max_rebalances" for r in result.results if r.group == "fulfillment-audit")  # lifted


def test_per_group_overrides_by_id_and_glob(analysis, tmp_path):
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(
        "max_rebalances: 2\n"
        "groups:\n"
        "  'fulfillment-*':\n"
        "    max_rebalances: 12\n"
        "  'orders-*':\n"
        "    max_rebalances: 0\n"
        "  orders-processor:\n"  # an exact id wins over the glob above it
        "    max_rebalances: 3\n"
    )
    result = evaluate(analysis("heartbeat-expiry"), load_rules(rules_file))

    assert [(r.group, r.limit, r.passed) for r in result.results] == [("orders-processor", 3, True),
                                                                     ("fulfillment-audit", 12, True)]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("max_rebalances: 3\nmax_rebalance: 4\n", 2, "unknown key 'max_rebalance'"),
        ("fail_on:\n  - heartbeat_expiry\n  - gc_pause\n", 1, "unknown cause 'gc_pause'"),
        ("max_pause: soon\n", 1, "max_pause: 'soon' is not a duration"),
        ("max_failed: -1\n", 1, "max_failed: must be a whole number ≥ 0"),
        ("groups:\n  orders:\n    max_rebalances: 2\n    max_pause: 1 hour\n", 4,
         "max_pause: '1 hour' is not a duration"),
        ("groups:\n  orders:\n    groups: {}\n", 3, "unknown key 'groups'"),
        ("groups:\n  orders: 3\n", 2, "must be a mapping of rule: limit"),
        ("max_failed: 0\nmax_failed: 1\n", 2, "duplicate key 'max_failed'"),
        ("fail_on: [heartbeat_expiry\nmax_failed: 0\n", 2, "not valid YAML"),
        ("- max_failed: 0\n", 1, "a rules file is a mapping"),
    ],
    ids=["unknown-key", "unknown-cause", "bad-duration", "negative", "group-duration", "nested-groups",
         "group-not-mapping", "duplicate-key", "broken-yaml", "not-a-mapping"],
)
def test_a_bad_rules_file_says_which_file_and_line(tmp_path, text, line, message):
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(text)

    with pytest.raises(RulesError) as error:
        load_rules(rules_file)

    assert str(error.value).startswith(f"{rules_file}:{line}: ")
    assert message in str(error.value)


def test_command_line_limits_replace_the_files_for_every_group(tmp_path):
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text("max_rebalances: 5\nmax_failed: 0\ngroups:\n  fulfillment-audit:\n    max_rebalances: 20\n")

    rules = merge(load_rules(rules_file), {"max_rebalances": 2, "fail_on": "heartbeat_expiry, poll_timeout",
                                           "max_failed": None, "max_pause": "1.5s"})

    assert (rules.max_rebalances, rules.max_failed, rules.max_pause_ms) == (2, 0, 1500)
    assert rules.fail_on == {"heartbeat_expiry", "poll_timeout"}
    assert rules.for_group("fulfillment-audit").max_rebalances == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fail_on": "heartbeat_expiry,gc"}, "--fail-on: unknown cause 'gc'"),
        ({"max_pause": "10 minutes"}, "--max-pause: '10 minutes' is not a duration"),
        ({"max_rebalances": None, "fail_on": []}, "nothing to check"),
    ],
)
def test_bad_command_line_limits_are_usage_errors(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        merge(None, options)


# --------------------------------------------------------------------------- CI formats


def test_junit_has_one_case_per_rule_and_group_and_the_evidence_in_each_failure(analysis):
    rules = Rules(fail_on=frozenset({"heartbeat_expiry"}), max_rebalances=3, max_failed=0, max_pause_ms=60_000)
    result = evaluate(analysis("heartbeat-expiry"), rules)

    root = ET.fromstring(junit_xml(result))

    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    failures = suite.findall("testcase/failure")
    assert suite.get("name") == "rebalance-doctor"
    counts = ("tests", "failures", "errors", "skipped")
    assert [suite.get(count) for count in counts] == ["8", "2", "0", "0"]
    assert (root.get("tests"), root.get("failures")) == ("8", "2")
    assert len(cases) == 8 and len(failures) == 2
    assert [(c.get("classname"), c.get("name")) for c in cases[:4]] == [
        ("orders-processor", "fail_on"), ("orders-processor", "max_rebalances"),
        ("orders-processor", "max_failed"), ("orders-processor", "max_pause")]
    expiry = suite.find("testcase[@classname='orders-processor'][@name='fail_on']/failure")
    assert expiry.get("message") == summary(only(result, "fail_on", "orders-processor"))
    assert "heartbeat-expiry/broker-1/server.log:248 [GroupCoordinator 1]: Preparing to rebalance" in expiry.text
    assert suite.find("testcase[@classname='fulfillment-audit'][@name='max_rebalances']/failure") is not None


def test_junit_stays_inside_the_schema_ci_servers_read(analysis):
    result = evaluate(analysis("unstable-leader-failed-rebalances"), load_rules(EXAMPLE_RULES))

    root = ET.fromstring(junit_xml(result))

    for element in root.iter():
        assert set(element.attrib) <= JUNIT_ATTRIBUTES[element.tag], element.tag
        assert JUNIT_REQUIRED.get(element.tag, set()) <= set(element.attrib), element.tag
        if "time" in element.attrib:
            assert SUREFIRE_TIME.fullmatch(element.get("time"))


def test_github_annotations_sit_on_the_evidence_line(analysis):
    """In a workflow the logs are given relative to the checkout (here sample_logs/heartbeat-expiry, read from the
    repository's root), and so are the annotations' files."""
    result = evaluate(analysis("heartbeat-expiry"), Rules(fail_on=frozenset({"heartbeat_expiry"})))

    (annotation,) = github_annotations(result)

    assert annotation.startswith(
        "::error file=sample_logs/heartbeat-expiry/broker-1/server.log,line=248,"
        "title=rebalance-doctor fail_on (orders-processor)::1 rebalance caused by heartbeat_expiry")
    assert "%0Asample_logs/heartbeat-expiry/broker-1/server.log:248 " in annotation


def test_github_annotation_escaping_keeps_a_hostile_reason_in_one_command():
    evidence = Evidence(file="logs/a,b:c.log", line=7, text="reason: 100% done\r\nline two, a:b")
    violation = RuleResult(rule="max_rebalances", group="grp:1,2", passed=False, actual=7, limit=5, evidence=(evidence,))

    (annotation,) = github_annotations(CheckResult([violation]))

    assert annotation == (
        "::error file=logs/a%2Cb%3Ac.log,line=7,title=rebalance-doctor max_rebalances (grp%3A1%2C2)"
        "::7 rebalances (limit 5)%0Alogs/a,b:c.log:7 reason: 100%25 done^M%0Aline two, a:b"
    )


# --------------------------------------------------------------------------- the terminal


def test_the_terminal_shows_the_verdict_table_and_each_violation_with_its_evidence(analysis):
    result = evaluate(analysis("rolling-bounce-eager"), Rules(max_rebalances=6, max_pause_ms=10_000))

    text = terminal(result)

    assert re.search(r"max_rebalances\s+│ invoice-writer\s+│\s+≤ 6 │\s+6 │ PASS", text)
    assert re.search(r"max_pause\s+│ invoice-writer\s+│\s+≤ 10.0 s │\s+15.9 s │ FAIL", text)
    assert "✗ max_pause invoice-writer: total pause 15.9 s (limit 10.0 s); longest: invoice-writer-0" in text
    assert "rolling-bounce-eager/broker-1/server.log:247 " in text
    assert text.rstrip().endswith("1 of 2 rules violated")


# --------------------------------------------------------------------------- hostile logs


HOSTILE_GROUP = "<script>alert(1)</script>[red]"  # HTML, and rich markup
HOSTILE_MEMBER = 'm-100%:a,b"><img|**`](javascript:alert(1))\x1b[31m[red]\x07\x01'


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A broker that expired a member whose id and group id were chosen by an attacker."""
    logs = tmp_path_factory.mktemp("hostile")
    coordinator, offsets = "INFO [GroupCoordinator 1]:", "(__consumer_offsets-44)"
    (logs / "server.log").write_text(
        f"[2024-03-12 10:17:47,643] {coordinator} Preparing to rebalance group {HOSTILE_GROUP} in state "
        f"PreparingRebalance with old generation 7 {offsets} (reason: removing member {HOSTILE_MEMBER} on heartbeat "
        "expiration) (kafka.coordinator.group.GroupCoordinator)\n"
        f"[2024-03-12 10:17:50,533] {coordinator} Stabilized group {HOSTILE_GROUP} generation 8 {offsets} with 2 "
        "members (kafka.coordinator.group.GroupCoordinator)\n"
    )
    events = load([str(logs)])
    analysis = analyze(events.events, buckets=dict(events.buckets))
    return evaluate(analysis, Rules(fail_on=frozenset({"heartbeat_expiry"})))


def test_hostile_log_text_is_inert_in_junit(hostile):
    document = junit_xml(hostile)

    root = ET.fromstring(document)  # control characters would make it unparseable

    assert "<script>" not in document and "<img" not in document
    case = root.find("testsuite/testcase")
    assert case.get("classname") == HOSTILE_GROUP
    assert "m-100%:a,b\"><img|**`](javascript:alert(1))^[[31m[red]^G^A" in case.find("failure").text


def test_hostile_log_text_is_inert_in_github_annotations(hostile):
    (annotation,) = github_annotations(hostile)

    assert "\n" not in annotation and "\x1b" not in annotation
    assert f",title=rebalance-doctor fail_on ({HOSTILE_GROUP})::" in annotation
    assert 'm-100%25:a,b"><img|**`](javascript:alert(1))^[[31m[red]^G^A on heartbeat' in annotation.split("::", 2)[2]


def test_hostile_log_text_is_inert_in_the_terminal(hostile):
    text = terminal(hostile)

    assert "\x1b" not in text and "\x07" not in text
    assert "^[[31m[red]^G^A" in text  # the markup printed as text, the escape made visible
    assert re.search(rf"fail_on +│ {re.escape(HOSTILE_GROUP)} +│", text)


def test_check_command_exit_codes_junit_and_github(tmp_path):
    """The CI gate from the shell: 1 with a JUnit file and ::error annotations on a violation, 0 when all hold,
    2 on a bad option."""
    incident = str(SAMPLES / "heartbeat-expiry")
    junit = tmp_path / "rebalance.xml"
    failing = run_cli("check", incident, "--fail-on", "heartbeat_expiry", "--junit", str(junit), "--github")
    assert failing.exit_code == ExitStatus.NOTHING_FOUND
    assert "::error file=" in failing.stdout and "broker-1/server.log,line=248" in failing.stdout
    assert ET.parse(junit).getroot().find("testsuite").get("failures") == "1"
    passing = run_cli("check", incident, "--max-rebalances", "10", "--group", "orders-processor")
    assert passing.exit_code == ExitStatus.OK and "the rule holds" in passing.stdout
    bad = run_cli("check", incident, "--fail-on", "cosmic_rays")
    assert bad.exit_code == ExitStatus.ERROR and "unknown cause" in bad.stderr
