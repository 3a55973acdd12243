"""Outputs land where and how the user asked. Scenario: after an incident someone runs `report logs/ -o
incident.html` and attaches the file to the ticket; the file must be the HTML page, not terminal text.
The format follows the file's extension unless `--format` says otherwise; a name that names no format
stops before any log is read; binary output never goes to a terminal; and a CI gate pointed at a folder
with no Kafka line fails loudly instead of passing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from support import ROOT, ExitStatus

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


def test_an_output_that_names_a_directory_is_refused(cli, tmp_path: Path):
    result = cli("report", INCIDENT, "--format", "html", "-o", f"{tmp_path}/reports/")

    assert result.exit_code == ExitStatus.ERROR
    assert "is a directory: give a file name in it" in result.stderr
    assert not (tmp_path / "reports").exists()


def test_an_output_that_is_one_of_the_inputs_is_refused(cli, tmp_path: Path):
    log = tmp_path / "server.log"
    log.write_bytes(Path(INCIDENT, "broker-1", "server.log").read_bytes())
    before = log.read_bytes()

    result = cli("report", str(log), "--format", "markdown", "-o", str(log))

    assert result.exit_code == ExitStatus.ERROR and "is one of the inputs" in result.stderr
    assert log.read_bytes() == before


def test_a_report_written_into_the_logs_folder_is_not_read_back(cli, tmp_path: Path):
    """Run twice, `report logs/ -o logs/incident.json` gives the same report: the first one's file is no input."""
    import shutil

    logs = shutil.copytree(INCIDENT, tmp_path / "logs")
    out = logs / "incident.json"

    counts = []
    for _ in range(2):
        assert cli("report", str(logs), "-o", str(out)).exit_code == ExitStatus.OK
        counts.append(json.loads(out.read_text())["verdict"]["impact"])
    assert counts[0] == counts[1] and counts[0]["rebalances"] == 13


def test_a_file_planted_at_the_old_temporary_name_cannot_redirect_the_write(cli, tmp_path: Path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (tmp_path / ".incident.html.partial").symlink_to(target)

    assert cli("report", INCIDENT, "-o", str(tmp_path / "incident.html")).exit_code == ExitStatus.OK
    assert target.read_text() == "keep me"
    assert (tmp_path / "incident.html").read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".incident.html.partial", "incident.html", "precious.txt"]


# ----------------------------------------------------------------------------------------- event stores

def _ingest(*args: str) -> subprocess.CompletedProcess:
    """`rebalance-doctor ingest …` as a user runs it: its own process."""
    return subprocess.run([sys.executable, "-m", "rebalance_doctor", "ingest", *args], cwd=ROOT, capture_output=True, text=True)


def test_force_never_replaces_the_logs_or_a_file(tmp_path: Path):
    """`ingest logs -o logs --force` used to delete the logs: --force replaces an event store, nothing else."""
    logs = shutil.copytree(ROOT / INCIDENT, tmp_path / "logs")
    before = sorted(p.relative_to(logs) for p in logs.rglob("*"))
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me")

    for target in (logs, notes):
        result = _ingest(str(logs), "-o", str(target), "--force")
        assert result.returncode == ExitStatus.ERROR and "is not an event store" in result.stderr, result.stderr
    assert sorted(p.relative_to(logs) for p in logs.rglob("*")) == before and notes.read_text() == "keep me"
    store = tmp_path / "store"
    assert _ingest(str(logs), "-o", str(store)).returncode == ExitStatus.OK
    assert _ingest(str(logs), "-o", str(store), "--force").returncode == ExitStatus.OK  # a store is replaced


def test_two_runs_writing_one_store_do_not_both_succeed(tmp_path: Path):
    """Two `ingest` runs to the same -o at once: one writes the store, the other says it exists."""
    store = tmp_path / "store"
    command = [sys.executable, "-m", "rebalance_doctor", "ingest", INCIDENT, "-o", str(store)]
    runs = [subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outcomes = sorted((run.wait(), run.stderr.read()) for run in runs)
    assert [code for code, _ in outcomes] == [ExitStatus.OK, ExitStatus.ERROR], outcomes
    assert "exists" in outcomes[1][1]
    assert json.loads((store / "_rebalance-doctor.json").read_text())["events"] > 0


def test_a_store_path_is_read_literally(cli, tmp_path: Path):
    """`--events 'st*x'` reads the store named st*x, not its sibling stAx; `st[1]` can be read back."""
    for name in ("st*x", "st[1]"):
        assert _ingest(INCIDENT, "-o", str(tmp_path / name)).returncode == ExitStatus.OK
    assert _ingest("sample_logs/poll-timeout-cooperative/", "-o", str(tmp_path / "stAx")).returncode == ExitStatus.OK

    star = json.loads(cli("report", "--events", str(tmp_path / "st*x"), "--format", "json").stdout)
    direct = json.loads(cli("report", INCIDENT, "--format", "json").stdout)
    assert [g["group_id"] for g in star["groups"]] == [g["group_id"] for g in direct["groups"]]
    assert cli("report", "--events", str(tmp_path / "st[1]")).exit_code == ExitStatus.OK


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="root writes anywhere, and setpriv is missing")
@pytest.mark.parametrize("name", ["timeline.png", "incident.html"])
def test_a_report_into_a_directory_the_user_may_not_write_is_an_error_not_a_traceback(name: str):
    """Someone without write access to a shared folder runs `report logs/ -o shared/timeline.png`: status 2 and
    the reason, nothing left in the folder. Root writes anywhere, so as root the report runs as `nobody`."""
    place = Path(tempfile.mkdtemp(prefix="rd-read-only-"))
    try:
        place.chmod(0o755)  # others may enter it and read the logs' copy, not write in it
        logs = shutil.copytree(ROOT / INCIDENT, place / "logs")
        folder = place / "shared"
        folder.mkdir(mode=0o555)
        as_user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if os.geteuid() == 0 else []
        if subprocess.run([*as_user, sys.executable, "-c", "import rebalance_doctor"], cwd=ROOT, capture_output=True).returncode:
            pytest.skip("nobody may not read this checkout (a private parent directory)")
        result = subprocess.run([*as_user, sys.executable, "-m", "rebalance_doctor", "report", str(logs), "-o", str(folder / name)],
                                cwd=ROOT, capture_output=True, text=True, env={**os.environ, "HOME": str(place)})
        assert result.returncode == ExitStatus.ERROR, result.stderr
        assert f"{folder / name}: Permission denied" in result.stderr and "Traceback" not in result.stderr
        assert list(folder.iterdir()) == []
    finally:
        shutil.rmtree(place)


@pytest.mark.parametrize("name", ["timeline.png", "incident.html"])
def test_an_output_that_cannot_be_created_is_an_error_not_a_traceback(cli, tmp_path: Path, name: str):
    """A PNG (or any output) where no file can be created — under a file, or in /proc — stops with status 2 and
    the reason; root writes into read-only directories, so those places stand for them here."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    for target in (blocker / name, Path("/proc") / name):
        result = cli("report", INCIDENT, "-o", str(target))
        assert result.exit_code == ExitStatus.ERROR and "Traceback" not in result.stderr
        assert f"{target}:" in result.stderr
