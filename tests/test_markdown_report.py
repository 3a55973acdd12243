"""`report --format markdown`: the incident as a post-mortem document an engineer pastes into the write-up.

Scenarios: the bundled incidents (heartbeat expiry, unstable leader with failed rebalances), a rebalance storm, a log
with nothing to report, and a hostile log whose group id, member id and reason try to break out of the Markdown. The
document is read back with a real CommonMark parser (markdown-it-py, which rich already installs) with raw HTML
allowed: what a wiki would show is what the tests check.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from rebalance_doctor import analyze, load
from rebalance_doctor.renderers.markdown import TIMELINE_EDGE, render

from support import FIXTURES, GOLDEN

SECTIONS = ["Verdict", "Summary", "Impact", "Root causes and trigger", "Timeline (UTC)", "Evidence",
            "Recommendations / action items", "Appendix: line accounting and clock skew"]
HOSTILE_GROUP = "<script>alert(1)</script>|`x`"
HOSTILE_MEMBER = "evil`member|x<b>\x1b[31m"
HOSTILE_REASON = "| ** ``` `x` [click](javascript:alert(1)) <img src=x onerror=alert(1)> # ! [bold red]"

PARSER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _analysis(*paths: Path):
    logs = load([str(p) for p in paths])
    return analyze(logs.events, buckets=dict(logs.buckets))


def _walk(tokens: list[Token]):
    for token in tokens:
        yield token
        yield from _walk(token.children or [])


def _plain(inline: Token) -> str:
    """What a reader sees of an inline token: escapes resolved, emphasis dropped."""
    return "".join(c.content if c.type in ("text", "code_inline") else " " if c.type == "softbreak" else ""
                   for c in inline.children or [])


def _sections(document: str) -> dict[str, list[Token]]:
    """The document's `##` sections in order, each with its tokens."""
    sections: dict[str, list[Token]] = {}
    tokens = PARSER.parse(document)
    current, heading = None, False
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            current, heading = _plain(tokens[i + 1]), True
            sections[current] = []
        elif heading:
            heading = token.type != "heading_close"
        elif current is not None:
            sections[current].append(token)
    return sections


def _text(tokens: list[Token]) -> str:
    return "\n".join(_plain(t) if t.type == "inline" else t.content for t in tokens if t.type in ("inline", "fence"))


def _quotes(tokens: list[Token]) -> list[tuple[str, str]]:
    """Every quoted log line with the paragraph above it that says where it comes from."""
    quotes, where = [], ""
    for token in tokens:
        if token.type == "inline":
            where = _plain(token)
        elif token.type == "fence":
            quotes.append((where, token.content))
    return quotes


def _tables(tokens: list[Token]) -> list[list[list[str]]]:
    """Every table as rows of cell texts, header row first."""
    tables, rows = [], None
    for token in tokens:
        if token.type == "table_open":
            rows = []
        elif token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows is not None and rows:
            rows[-1].append(_plain(token))
        elif token.type == "table_close":
            tables.append(rows)
            rows = None
    return tables


@pytest.fixture(scope="module")
def heartbeat_expiry(analysis) -> tuple[object, str]:
    incident = analysis("heartbeat-expiry")
    return incident, render(incident)


def test_post_mortem_has_the_sre_template_sections_in_order(heartbeat_expiry):
    _, document = heartbeat_expiry
    assert document.startswith("# Incident report: orders-processor, fulfillment-audit\n")
    assert list(_sections(document)) == SECTIONS


def test_heartbeat_expiry_is_the_top_finding_with_its_evidence_and_recommendation(heartbeat_expiry):
    """orders-app-2 froze in a GC pause; broker 1 expired it (server.log:248): the summary says so, the evidence quotes
    the line, and the action items carry the recommendation as a checkbox."""
    analysis, document = heartbeat_expiry
    sections = _sections(document)
    summary = _text(sections["Summary"])
    assert "Top finding (critical): heartbeat_expiry in group orders-processor" in summary
    assert "Rebalances: 13, 0 failed rebalances, total pause 5.4 s" in summary

    causes = _tables(sections["Root causes and trigger"])[0]
    assert causes[0] == ["cause", "rebalances", "confidence", "started by"]
    expiry = next(row for row in causes if row[0].startswith("heartbeat_expiry"))
    assert expiry[1:] == ["1", "95%", "orders-app-2 (…03a9f7b1e5d2) at 7 → 8"]

    where, line = next(q for q in _quotes(sections["Evidence"]) if "broker-1/server.log:248" in q[0])
    assert where.startswith("broker-1/server.log:248 · broker-1 · 2024-03-12 10:17:47.643Z")
    assert "removing member consumer-orders-processor-1-c7d0e9a4-2b5f-4d81-8c6e-03a9f7b1e5d2 on heartbeat expiration" \
        in line

    recommendation = next(f.recommendation for g in analysis.groups for f in g.findings if f.kind == "heartbeat_expiry")
    actions = _text(sections["Recommendations / action items"])
    assert f"[ ] heartbeat_expiry (critical, group orders-processor): {recommendation}" in actions
    assert document.count("\n- [ ] ") == sum(len(g.findings) for g in analysis.groups)


def test_impact_lists_the_pause_of_every_member(heartbeat_expiry):
    _, document = heartbeat_expiry
    groups, members = _tables(_sections(document)["Impact"])
    assert groups[1:] == [["orders-processor", "3", "0", "5.4 s", "6.0 s"],
                          ["fulfillment-audit", "10", "0", "0 ms", "3.0 s"]]
    assert [row[1:] for row in members[1:]] == [
        ["consumer-orders-processor-1-1b9e5f37-a4c2-4e06-b8d9-6f2a0c3e7b15", "orders-app-2", "2.7 s"],
        ["consumer-orders-processor-1-3f6b2c1e-9d4a-4b7e-a1c3-5e8f0d2b7a64", "orders-app-0", "2.5 s"],
        ["consumer-orders-processor-1-8a41d7e2-6c0b-4f3a-9e25-b7d1c4a8f093", "orders-app-1", "175 ms"],
    ]
    assert {row[0] for row in members[1:]} == {"orders-processor"}  # fulfillment-audit's cron job logs nothing itself


def test_failed_rebalances_of_an_unstable_leader_are_counted_and_marked(analysis):
    """fraud-scorer: two rebalances never reached a stable generation (212 → 213, 213 → 214)."""
    sections = _sections(render(analysis("unstable-leader-failed-rebalances")))
    assert "6, 2 failed rebalances" in _text(sections["Summary"])
    assert _tables(sections["Impact"])[0][1][:3] == ["fraud-scorer", "6", "2"]
    timeline = _tables(sections["Timeline (UTC)"])[0]
    assert [row[1] for row in timeline[1:]] == ["212 → 213 ✗", "213 → 214 ✗", "214 → 215", "215 → 216",
                                               "216 → 217", "217 → 218"]
    actions = _text(sections["Recommendations / action items"])
    assert "failed_rebalances (critical, group fraud-scorer)" in actions
    assert "unstable_leader (warning, group fraud-scorer)" in actions


def test_a_rebalance_storm_keeps_the_document_short(heartbeat_expiry):
    """10,000 rebalances: the timeline shows the first and last 50 and says how many it leaves out."""
    analysis, _ = heartbeat_expiry
    group = analysis.groups[0]
    template = group.rebalances[1]
    storm = [dataclasses.replace(template, from_generation=g, to_generation=g + 1) for g in range(10_000)]
    document = render(dataclasses.replace(analysis, groups=[dataclasses.replace(group, rebalances=storm)]))
    timeline = _sections(document)["Timeline (UTC)"]
    rows = [row for table in _tables(timeline) for row in table[1:]]
    assert len(rows) == 2 * TIMELINE_EDGE
    assert rows[0][1] == "0 → 1" and rows[-1][1] == "9999 → 10000"
    assert "9,900 more rebalances between" in _text(timeline)
    assert document.count("\n") < 1000


def test_logs_without_consumer_groups_still_give_every_section(tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_text("[2024-03-05 10:00:00,000] INFO [LogLoader partition=orders-0] Loading producer state "
                   "(kafka.log.UnifiedLog$)\n")
    document = render(_analysis(log))
    assert document.startswith("# Incident report: no consumer group activity\n")
    sections = _sections(document)
    assert list(sections) == SECTIONS
    assert _text(sections["Recommendations / action items"]) == "No findings: nothing to follow up."


def _hostile_log(directory: Path) -> Path:
    """A coordinator expires a member of a hostile group: the group id, member id and reason are attacker text."""
    prefix = "[2024-03-05 10:00:0{}] INFO [GroupCoordinator 1]: "
    suffix = " (kafka.coordinator.group.GroupCoordinator)"
    rebalance = (f"Preparing to rebalance group {HOSTILE_GROUP} in state PreparingRebalance with old generation 4 "
                 f"(__consumer_offsets-12) (reason: {HOSTILE_REASON})")
    messages = (
        ("0,000", f"Member {HOSTILE_MEMBER} in group {HOSTILE_GROUP} has failed, removing it from the group"),
        ("0,000", rebalance),
        ("3,005", f"Stabilized group {HOSTILE_GROUP} generation 5 (__consumer_offsets-12) with 2 members"),
    )
    log = directory / "broker-1.log"
    log.write_text("".join(prefix.format(at) + message + suffix + "\n" for at, message in messages))
    return log


def test_hostile_log_text_stays_text(tmp_path: Path):
    """A group id with <script>, a member id with a terminal escape and backticks, a reason with pipes, a fence and a
    javascript: link: the wiki shows them as the log wrote them, and nothing becomes HTML, a link or a new cell."""
    analysis = _analysis(_hostile_log(tmp_path))
    group = analysis.groups[0]
    assert group.group_id == HOSTILE_GROUP and group.rebalances[0].cause.member == HOSTILE_MEMBER
    document = render(analysis)
    tokens = PARSER.parse(document)

    assert "\x1b" not in document
    assert not [t.type for t in _walk(tokens) if t.type in ("html_inline", "html_block", "link_open", "image")]
    html = PARSER.render(document)
    assert "<script" not in html and "<img" not in html and "<b>" not in html and "href" not in html
    assert _plain(tokens[1]) == f"Incident report: {HOSTILE_GROUP}"

    sections = _sections(document)
    visible_member = HOSTILE_MEMBER.replace("\x1b", "^[")
    assert _tables(sections["Impact"])[0][1][0] == HOSTILE_GROUP
    timeline = _tables(sections["Timeline (UTC)"])[0]
    assert timeline[1][4] == "…er|x<b>^[[31m"  # started by: the tail of the member id, pipe and all, in one cell
    evidence = [quote for _, quote in _quotes(sections["Evidence"])]
    assert any(f"(reason: {HOSTILE_REASON})" in quote for quote in evidence)
    assert any(f"Member {visible_member} in group {HOSTILE_GROUP}" in quote for quote in evidence)
    assert f"heartbeat expiry: {visible_member}" in _text(sections["Recommendations / action items"])

    for table in re.findall(r"(?:^\|.*\n)+", document, flags=re.MULTILINE):  # the source itself: no row gains a column
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}
        assert len(widths) == 1, table


def test_markdown_report_golden():
    """The post-mortem document of the mini incident is stable (UPDATE_GOLDEN=1 rewrites it)."""
    rendered = render(_analysis(FIXTURES / "mini")).replace(str(FIXTURES), "tests/fixtures")
    golden = GOLDEN / "report-mini.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text()
