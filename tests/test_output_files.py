"""Outputs land where and how the user asked. Scenario: after an incident someone runs `report logs/ -o
incident.html` and attaches the file to the ticket; the file must be the HTML page, not terminal text.
The format follows the file's extension unless `--format` says otherwise; a name that names no format
stops before any log is read; binary output never goes to a terminal; and a CI gate pointed at a folder
with no Kafka line fails loudly instead of passing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import ExitStatus

INCIDENT = "sample_logs/heartbeat-expiry/"


@pytest.mark.parametrize(("name", "starts_with"), [
    ("incident.html", b"<!DOCTYPE html>"),
    ("incident.md", b"# Incident report"),
    ("incident.json", b"{"),
    ("timeline.svg", b"<svg"),
    ("timeline.png", b"\x89PNG"),
    ("incident.txt", b"verdict "),
])
def test_the_output_file_extension_chooses_the_format(cli, tmp_path: Path, name: str, starts_with: bytes):
    out = tmp_path / name
    result = cli("report", INCIDENT, "-o", str(out))

    assert result.exit_code == ExitStatus.OK, result.stderr
    assert out.read_bytes().lstrip().startswith(starts_with)
    assert f"wrote the report to {out}" in result.stderr


def test_an_explicit_format_wins_over_the_extension(cli, tmp_path: Path):
    out = tmp_path / "incident.txt"
    result = cli("report", INCIDENT, "--format", "json", "-o", str(out))

    assert result.exit_code == ExitStatus.OK
    assert json.loads(out.read_text())["groups"]


def test_an_extension_that_names_no_format_stops_before_reading(cli, tmp_path: Path):
    result = cli("report", "no-such-folder/", "-o", str(tmp_path / "incident.docx"))

    assert result.exit_code == ExitStatus.ERROR
    assert "cannot tell the report format from the extension '.docx'" in result.stderr
    assert "no-such-folder" not in result.stderr  # the logs were never read
    assert not (tmp_path / "incident.docx").exists()


def test_a_gate_over_logs_without_a_kafka_line_fails(cli, tmp_path: Path):
    (tmp_path / "app.log").write_text("2024-03-12 09:40:02.149 INFO starting\n2024-03-12 09:40:03.001 INFO ready\n")
    result = cli("check", str(tmp_path), "--max-rebalances", "10")

    assert result.exit_code == ExitStatus.ERROR
    assert "no Kafka rebalance line in the inputs" in result.stderr
