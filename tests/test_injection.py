"""Log text is data, never markup or control: client ids, group ids, member ids and reasons are chosen by
clients, so an attacker can put HTML, Markdown, rich markup and terminal escapes into the logs. Every
output of every command must show them as inert text (Markdown, HTML, JUnit and GitHub annotations
have their own tests in test_markdown_report, test_html_report and test_check)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import regex

from support import ExitStatus, run_cli

# rich markup, HTML, a Markdown link, an OSC 8 hyperlink, a window-title escape, clear-screen, a C1 CSI
HOSTILE_GROUP = "orders[bold red]<script>x</script>](javascript:alert(1))"
HOSTILE_MEMBER = "m-1\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\\x1b]0;pwned\x07\x1b[2J\x9b31m"
CONTROL = ("\x1b", "\x07", "\x9b")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    coordinator, offsets = "INFO [GroupCoordinator 1]:", "(__consumer_offsets-12)"
    (folder / "server.log").write_text(
        f"[2024-03-05 10:00:00,000] {coordinator} Member {HOSTILE_MEMBER} in group {HOSTILE_GROUP} has failed, removing it from "
        "the group (kafka.coordinator.group.GroupCoordinator)\n"
        f"[2024-03-05 10:00:00,000] {coordinator} Preparing to rebalance group {HOSTILE_GROUP} in state PreparingRebalance with old "
        f"generation 4 {offsets} (reason: removing member {HOSTILE_MEMBER} on heartbeat expiration) "
        "(kafka.coordinator.group.GroupCoordinator)\n"
        f"[2024-03-05 10:00:03,005] {coordinator} Stabilized group {HOSTILE_GROUP} generation 5 {offsets} with 2 members "
        "(kafka.coordinator.group.GroupCoordinator)\n",
        encoding="utf-8",
    )
    return folder


def run(*args: str, colour: bool = False) -> str:
    """The command's stdout: colour forced on a 120-column terminal, or none at the pinned width."""
    result = run_cli(*args, "--color", "always", width=120, colour=True) if colour else run_cli(*args)
    assert result.exit_code == ExitStatus.OK, result.output
    return result.stdout


@pytest.mark.parametrize("command", [
    ("report",),
    ("events",),
    ("grep",),
    ("grep", "--group", HOSTILE_GROUP),
])
def test_terminal_outputs_show_hostile_text_inert(logs, command):
    """What lands on a terminal: no escape sequence survives, rich markup and HTML print as written."""
    text = run(command[0], str(logs), *command[1:])
    assert not any(char in text for char in CONTROL)
    assert "[bold red]" in text
    assert "^[]8;;https://evil.example" in text


@pytest.mark.parametrize("command", ["report", "events", "grep"])
def test_coloured_terminal_output_carries_only_its_own_colour_codes(logs, command):
    """With colour, the only escape sequences are the tool's own SGR colours (ESC [ … m)."""
    text = run(command, str(logs), colour=True)
    assert "\x1b[" in text
    assert not regex.search(r"\x1b(?!\[[0-9;]*m)", text)
    assert "\x07" not in text and "\x9b" not in text


def test_json_outputs_carry_hostile_text_as_data(logs):
    """JSON consumers get the exact strings back; C0 controls (ESC, BEL) are escaped on the wire, as JSON requires."""
    for text in (run("report", str(logs), "--format", "json"), run("events", str(logs), "--format", "ndjson"),
                 run("grep", str(logs), "--json")):
        assert "\x1b" not in text and "\x07" not in text
        documents = [json.loads(line) for line in text.splitlines() if line.strip()] if text.lstrip().startswith('{"') else [json.loads(text)]
        flat = json.dumps(documents, ensure_ascii=False)
        assert HOSTILE_GROUP in flat
        assert json.dumps(HOSTILE_MEMBER, ensure_ascii=False)[1:-1] in flat


def test_csv_output_keeps_each_field_in_its_cell(logs):
    rows = list(csv.DictReader(io.StringIO(run("events", str(logs), "--format", "csv"))))
    assert [row["group_id"] for row in rows] == [HOSTILE_GROUP] * 3
    assert rows[0]["member_id"] == HOSTILE_MEMBER


def test_markdown_and_html_reports_hold_no_control_characters(logs):
    """(What Markdown and HTML make of the markup is tested in test_markdown_report and test_html_report.)"""
    markdown = run("report", str(logs), "--format", "markdown")
    html = run("report", str(logs), "--format", "html")
    for document in (markdown, html):
        assert "\x1b" not in document and "\x07" not in document
    assert "<script>x</script>" not in html


SPOOFED_GROUP = "payments\u202egnp.exe\u2066x\u200b"  # a right-to-left override, an isolate and a zero-width space


@pytest.fixture(scope="module")
def spoofed(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("spoofed")
    (folder / "server.log").write_text(
        f"[2024-03-05 10:00:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance group {SPOOFED_GROUP}{{{{7*7}}}} in state "
        "PreparingRebalance with old generation 4 (__consumer_offsets-12) (reason: Adding new member m-1 with group instance id "
        "None) (kafka.coordinator.group.GroupCoordinator)\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("command", [("report",), ("events",), ("grep",), ("report", "--format", "markdown"),
                                     ("report", "--format", "html"), ("check", "--max-rebalances", "5")])
def test_characters_that_reorder_or_hide_text_are_shown_by_code_point(spoofed, command):
    """Trojan Source: a group id with a bidi override must not read as another name in any text output."""
    text = run(command[0], str(spoofed), *command[1:])
    assert not any(char in text for char in "\u202e\u2066\u200b")
    assert "<U+202E>" in text or "&lt;U+202E&gt;" in text or "\\<U+202E\\>" in text


def test_template_braces_stay_inert_in_markdown(spoofed):
    """A wiki that runs Liquid or Jinja over the post-mortem must not evaluate what a client put in a group id."""
    markdown = run("report", str(spoofed), "--format", "markdown")
    assert "{{" not in markdown and "\\{\\{7\\*7\\}\\}" in markdown and "{ {7*7}}" in markdown  # prose escaped, quotes spaced
