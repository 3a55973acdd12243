"""Clocks aligned unaided. Scenario: one pod's log is written in local time without an offset in its timestamps
(logback's and log4j's default patterns), beside a broker log in UTC. Read as UTC, its rebalances would last
hours and invent phantom ones. The same member and generation appear on both sides a whole number of
quarter hours apart, so `rebalance-doctor report` reads that file in its zone, says so, and prints the
report the all-UTC logs give.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from support import SAMPLES, ExitStatus, run_cli

INCIDENT = "static-member-fencing"
LOCAL_FILE = "ledger-sync-1.log"
LINE_START_TIME = re.compile(r"^(\[?)(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)([.,]\d{3})", re.M)


def write_incident(directory: Path, shift: timedelta = timedelta(0), local: Callable[[datetime], datetime] | None = None) -> Path:
    """The bundled incident, every line's time moved by ``shift``; with ``local``, the pod's file written in
    local time (``local`` turns a UTC time into the wall-clock time that pod printed)."""
    target = directory / "incident"
    shutil.copytree(SAMPLES / INCIDENT, target)
    for path in target.rglob("*.log"):
        convert = local if (local is not None and path.name == LOCAL_FILE) else None

        def rewrite(match: re.Match, convert=convert) -> str:
            separator = match.group(2)[10]
            at = datetime.strptime(match.group(2), f"%Y-%m-%d{separator}%H:%M:%S").replace(tzinfo=UTC) + shift
            shown = convert(at) if convert else at
            return f"{match.group(1)}{shown.strftime(f'%Y-%m-%d{separator}%H:%M:%S')}{match.group(3)}"

        path.write_text(LINE_START_TIME.sub(rewrite, path.read_text()))
    return target


def report(where: Path, monkeypatch, *options: str) -> str:
    monkeypatch.chdir(where)
    result = run_cli("report", "incident/", *options)
    assert result.exit_code == ExitStatus.OK, result.stderr
    return result.stdout


def without_clock_zone(text: str) -> str:
    return re.sub(r"^.*clock: .* read as .*\n", "", text, flags=re.M)


def fixed_offset(hours: int, minutes: int = 0) -> Callable[[datetime], datetime]:
    return lambda at: at + timedelta(hours=hours, minutes=minutes * (1 if hours >= 0 else -1))


@pytest.mark.parametrize(("offset", "local", "label"), [
    ("+02:00", fixed_offset(2), "UTC+02:00"),
    ("-05:00", fixed_offset(-5), "UTC-05:00"),
    ("+05:30", fixed_offset(5, 30), "UTC+05:30"),
], ids=["+02:00", "-05:00", "+05:30"])
def test_a_pod_log_in_local_time_reads_as_the_all_utc_incident(tmp_path: Path, monkeypatch, offset, local, label):
    utc = report(write_incident(tmp_path / "utc").parent, monkeypatch)
    shown = report(write_incident(tmp_path / "local", local=local).parent, monkeypatch)

    assert f"clock: {LOCAL_FILE} read as {label}: 8 shared events agree" in shown
    assert "read as" not in utc
    assert without_clock_zone(shown) == utc


def test_every_format_says_which_file_was_read_in_which_zone(tmp_path: Path, monkeypatch):
    utc_dir = write_incident(tmp_path / "utc").parent
    local_dir = write_incident(tmp_path / "local", local=fixed_offset(2)).parent
    utc, local = (json.loads(report(d, monkeypatch, "--format", "json")) for d in (utc_dir, local_dir))

    zones = local.pop("clock_zones")
    assert [(z["file"], z["offsets_min"], z["read_as"], z["agreeing"]) for z in zones] == [
        (f"incident/{LOCAL_FILE}", [120], "UTC+02:00", 8)]
    assert utc.pop("clock_zones") == [] and local == utc
    assert f"**Clock:** {LOCAL_FILE} read as UTC+02:00: 8 shared events agree" in report(local_dir, monkeypatch, "--format", "markdown")
    assert f"{LOCAL_FILE} read as UTC+02:00: 8 shared events agree" in report(local_dir, monkeypatch, "--format", "html")


def test_a_pod_log_across_a_daylight_saving_change_is_read_in_a_zone_that_has_it(tmp_path: Path, monkeypatch):
    """The incident moved to the night Europe's clocks went forward (2024-03-31 01:00 UTC), between two of
    the pod's rebalances: its wall clock jumps from UTC+01:00 to UTC+02:00 mid-file."""
    shift = datetime(2024, 3, 31, 1, 0, tzinfo=UTC) - datetime(2024, 3, 26, 14, 31, 30, tzinfo=UTC)
    berlin = ZoneInfo("Europe/Berlin")
    utc = report(write_incident(tmp_path / "utc", shift).parent, monkeypatch)
    shown = report(write_incident(tmp_path / "local", shift, lambda at: at.astimezone(berlin)).parent, monkeypatch)

    assert re.search(rf"clock: {LOCAL_FILE} read as UTC\+01:00 → UTC\+02:00 \(daylight saving, as Europe/\w+\): 8 shared events agree", shown)
    assert without_clock_zone(shown) == utc


def test_a_zone_given_with_tz_wins(tmp_path: Path, monkeypatch):
    local_dir = write_incident(tmp_path / "local", local=fixed_offset(2)).parent
    utc = report(write_incident(tmp_path / "utc").parent, monkeypatch)

    assert report(local_dir, monkeypatch, "--tz", f"{LOCAL_FILE}=+02:00") == utc


def test_a_tz_glob_that_names_no_input_stops_the_run(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(write_incident(tmp_path).parent)
    result = run_cli("report", "incident/", "--tz", "renderer-2.log=+02:00")

    assert result.exit_code == ExitStatus.ERROR
    assert "'renderer-2.log' names no input file" in result.stderr


def test_the_library_takes_one_path_and_one_zone_as_plain_strings():
    """From a notebook: `rd.load("dir", tz="UTC")` means one directory and one zone, not their characters."""
    from rebalance_doctor import load

    logs = load(str(SAMPLES / INCIDENT), tz="UTC", groups="ledger-sync")

    assert logs.files_read == 5 and set(logs.events["group_id"].drop_nulls()) == {"ledger-sync"}
    assert len(logs.zoned_files) == 5  # a zone for every file: read as told


def test_a_clock_stepped_back_during_a_rebalance_gives_no_negative_duration(tmp_path: Path):
    """NTP steps the broker's clock back 3 s while a rebalance runs: its end carries an earlier time than its
    start. The report gives it no duration (not -3 s) and says why."""
    log = tmp_path / "server.log"
    log.write_text(
        "[2024-03-05 10:00:05,000] INFO [GroupCoordinator 1]: Preparing to rebalance group orders in state PreparingRebalance "
        "with old generation 4 (__consumer_offsets-12) (reason: removing member consumer-orders-2-b2 on heartbeat expiration) "
        "(kafka.coordinator.group.GroupCoordinator)\n"
        "[2024-03-05 10:00:02,100] INFO [GroupCoordinator 1]: Stabilized group orders generation 5 (__consumer_offsets-12) "
        "with 1 members (kafka.coordinator.group.GroupCoordinator)\n"
        "[2024-03-05 10:00:02,200] INFO [GroupCoordinator 1]: Assignment received from leader consumer-orders-1-a1 for group "
        "orders for generation 5. The group has 1 members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)\n"
    )
    result = run_cli("report", str(log), "--format", "json")
    document = json.loads(result.stdout)
    rebalance = document["groups"][0]["rebalances"][0]
    assert rebalance["generation"] == 5 and rebalance["duration_ms"] is None and rebalance["clock_backwards"] is True
    assert "clock_backwards" in {f["kind"] for f in document["groups"][0]["findings"]}
    assert all(p["pause_ms"] >= 0 for r in document["groups"][0]["rebalances"] for p in r["pauses"])
