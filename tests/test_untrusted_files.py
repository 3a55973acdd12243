"""Files nobody vetted. Scenario: a rules file or a user catalog pasted from a chat, and logs with corrupt or
placeholder timestamps. A 120-byte YAML alias bomb or a file nested hundreds of levels deep is refused at
`file:line` before anything is built (status 2, at once), and a year-1 or year-9999 timestamp gives that line
no time instead of a crash.
"""

from __future__ import annotations

from pathlib import Path

from support import SAMPLES, ExitStatus


def test_a_rules_file_made_of_aliases_is_refused_at_once(cli, tmp_path: Path):
    bomb = tmp_path / "rules.yaml"
    bomb.write_text('a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n'
                    "fail_on: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n")

    result = cli("check", str(SAMPLES / "heartbeat-expiry"), "--rules", str(bomb))

    assert result.exit_code == ExitStatus.ERROR
    assert f"{bomb}:2: aliases (*name) are not allowed" in result.stderr


def test_a_user_catalog_nested_hundreds_of_levels_deep_is_refused(cli, tmp_path: Path):
    catalog = tmp_path / "ours"
    catalog.mkdir()
    (catalog / "deep.yaml").write_text("patterns: " + "[" * 400 + "]" * 400 + "\n")

    result = cli("report", str(SAMPLES / "heartbeat-expiry"), "--patterns", str(catalog))

    assert result.exit_code == ExitStatus.ERROR
    assert "nested deeper than 32 levels" in result.stderr


def test_a_timestamp_in_year_1_or_9999_gives_its_line_no_time(cli, tmp_path: Path):
    broker = (SAMPLES / "heartbeat-expiry" / "broker-1" / "server.log").read_text().splitlines(keepends=True)
    broker[249] = broker[249].replace("2024-03-12", "0001-01-01", 1)
    broker[250] = broker[250].replace("2024-03-12", "9999-12-31", 1)
    (tmp_path / "server.log").write_text("".join(broker))

    result = cli("report", str(tmp_path))

    assert result.exit_code == ExitStatus.OK, result.stderr
    assert "Traceback" not in result.stderr and "0001-01-01" not in result.stdout.split("\n\n")[1]


def test_a_planted_or_damaged_catalog_cache_is_rebuilt_never_run(cli, tmp_path: Path, monkeypatch):
    """Scenario: a CI cache restored from elsewhere, or a shared XDG_CACHE_HOME. The validated-catalog cache is JSON
    data: whatever sits at its name is read as data or rebuilt, and nothing in it runs."""
    import pickle

    from rebalance_doctor.catalog.loading import _catalog_of

    def run_as_a_new_process():
        _catalog_of.cache_clear()  # the process keeps the catalog it loaded; a new one reads the cache
        return cli("report", str(SAMPLES / "heartbeat-expiry"))

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert run_as_a_new_process().exit_code == ExitStatus.OK
    (cache,) = (tmp_path / "rebalance-doctor").glob("catalog-*.json")
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    for planted in (pickle.dumps(Payload()), b'{"patterns": [{"id": 1}]}', b"\x00garbage"):
        cache.write_bytes(planted)
        result = run_as_a_new_process()
        assert result.exit_code == ExitStatus.OK, result.stderr
        assert "heartbeat expiry in orders-processor" in result.stdout
    assert not marker.exists()
    assert cache.read_text(encoding="utf-8").startswith('{"patterns"')  # rebuilt as data
    _catalog_of.cache_clear()


def test_a_users_outer_prefix_that_would_backtrack_without_end_costs_nothing(tmp_path: Path):
    """Scenario: a team's catalog adds a docker prefix written as `(?:x|xx)+y `. On a line starting with 45 x's a
    backtracking engine would run for hours; the scan applies prefixes in a linear-time engine (Rust's, through
    polars), so the run ends at once and the broker line behind the x's is still its event."""
    import subprocess
    import sys

    from support import ROOT

    catalog = tmp_path / "ours"
    catalog.mkdir()
    (catalog / "layout.yaml").write_text("outer_prefixes:\n  - id: evil.prefix\n    regex: '(?:x|xx)+y '\n"
                                         "    examples:\n      - 'xxy hello'\n")
    broker = (SAMPLES / "heartbeat-expiry" / "broker-1" / "server.log").read_text().splitlines()[49]
    (tmp_path / "server.log").write_text("x" * 45 + " " + broker + "\n")

    done = subprocess.run([sys.executable, "-m", "rebalance_doctor", "report", str(tmp_path / "server.log"), "--patterns", str(catalog)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)

    assert done.returncode == ExitStatus.OK, done.stderr
    assert "1 matched" in done.stderr


def test_symbolic_link_loops_are_named_and_skipped(cli, tmp_path: Path):
    """Scenario: a log folder copied from a host holds a link back to its parent and a link to itself. A directory
    read or a `**` glob reads each log once, names the looping link, and exits normally."""
    logs = tmp_path / "logs"
    (logs / "broker").mkdir(parents=True)
    (logs / "broker" / "server.log").write_bytes((SAMPLES / "heartbeat-expiry" / "broker-1" / "server.log").read_bytes())
    (logs / "broker" / "up").symlink_to(logs)
    (logs / "self").symlink_to(logs / "self")

    for target in (str(logs), f"{logs}/**/*.log"):
        result = cli("grep", "-c", target)

        assert result.exit_code == ExitStatus.OK, result.stderr
        assert result.stdout.strip() == f"{logs}/broker/server.log:14"
    assert "self: cannot read (Too many levels of symbolic links)" in cli("grep", "-c", str(logs)).stderr
