"""The incident guide, as tests: what an on-call engineer runs during an incident and what they must see.

The `mini` fixture is a heartbeat-expiry rebalance seen from the coordinator (broker-1.log), the
group leader (client-a.log, Spring Boot layout) and a second member whose log has no timestamps
(client-b.log, as pasted from a chat).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import regex

from support import FIXTURES, ExitStatus, matched_lines, run_cli

MINI = FIXTURES / "mini"
BROKER, CLIENT_A, CLIENT_B = (str(MINI / name) for name in ("broker-1.log", "client-a.log", "client-b.log"))


def ndjson(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_events_ndjson_merges_nodes_in_time_order_with_evidence():
    """`events --format ndjson` on three files: one stream in time order, each row with file:line and raw text."""
    result = run_cli("events", BROKER, CLIENT_A, CLIENT_B, "--format", "ndjson")
    assert result.exit_code == ExitStatus.OK, result.output
    rows = ndjson(result.stdout)
    assert [(Path(r["file"]).name, r["line"], r["kind"]) for r in rows] == [
        ("broker-1.log", 2, "member_expired"),
        ("broker-1.log", 3, "rebalance_start"),
        ("client-a.log", 2, "join_requested"),  # same millisecond as the broker: file order breaks the tie
        ("client-a.log", 3, "partitions_revoked"),
        ("client-a.log", 4, "join_start"),
        ("broker-1.log", 5, "group_stabilized"),
        ("client-a.log", 5, "join_succeeded"),
        ("client-a.log", 6, "leader_assignment"),
        ("broker-1.log", 6, "assignment_received"),
        ("client-a.log", 7, "sync_succeeded"),
        ("client-a.log", 8, "partitions_assigned"),
        ("client-b.log", 1, "join_requested"),  # no timestamps: after every timed event, in file order
        ("client-b.log", 3, "join_start"),
    ]
    start = rows[1]
    assert start["ts"] == "2024-03-05T10:00:00.000Z"
    assert start["group_id"] == "orders" and start["generation"] == 4
    assert start["reason"] == "removing member consumer-orders-3-5c1d9e2f-0a1b-4c2d-9e8f-7a6b5c4d3e2f on heartbeat expiration"
    assert start["raw"].startswith("[2024-03-05 10:00:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance")
    assert rows[6]["member_id"] == "consumer-orders-1-a1b2c3d4-0000-4000-8000-000000000001"
    assert rows[6]["generation"] == 5 and rows[6]["client_id"] == "consumer-orders-1"
    assert rows[11]["ts"] is None and rows[11]["node"] == "client-b"


def test_every_line_lands_in_exactly_one_bucket():
    """The stderr summary accounts for every line read: a catalog gap is visible, never silent."""
    from rebalance_doctor import load

    logs = load([BROKER, CLIENT_A, CLIENT_B], collect_unmatched=True)
    total_lines = sum(len(Path(p).read_text().splitlines()) for p in (BROKER, CLIENT_A, CLIENT_B))
    assert logs.lines_read == total_lines == 18
    assert logs.buckets == {"matched": 13, "relevant_unmatched": 1, "irrelevant": 4, "unreadable": 0}
    assert [(Path(f).name, n) for f, n, _ in logs.unmatched] == [("client-b.log", 2)]
    result = run_cli("events", BROKER, CLIENT_A, CLIENT_B, "--format", "ndjson", "--unmatched")
    assert "18 lines in 3 files: 13 matched · 1 relevant unmatched · 4 irrelevant · 0 unreadable" in result.stderr
    assert "client-b.log:2: orders worker heartbeat ok, lag=12" in result.stderr


def test_grep_kind_filter_and_exit_status():
    """`grep -k member_expired` finds the expiry on the broker; a kind that did not happen exits 1."""
    hit = run_cli("grep", "-k", "member_expired", str(MINI))
    assert hit.exit_code == ExitStatus.OK
    assert hit.stdout.count("\n") == 1 and "has failed, removing it from the group" in hit.stdout
    miss = run_cli("grep", "-k", "poll_timeout", str(MINI))
    assert miss.exit_code == ExitStatus.NOTHING_FOUND and miss.stdout == ""


def test_grep_text_member_generation_and_raw():
    """`grep TEXT --generation N --raw` prints the original lines, like grep, merged across files."""
    result = run_cli("grep", "Generation", str(MINI), "--generation", "5", "--raw")
    assert result.exit_code == ExitStatus.OK
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all("Generation{generationId=5" in line for line in lines)
    by_member = run_cli("grep", str(MINI), "--member", "consumer-orders-2", "--json")
    assert [r["kind"] for r in matched_lines(by_member.stdout)] == ["join_requested", "join_start"]


def test_grep_count_per_file():
    result = run_cli("grep", "-c", BROKER, CLIENT_A)
    assert result.exit_code == ExitStatus.OK
    assert result.stdout.splitlines() == [f"{BROKER}:4", f"{CLIENT_A}:7"]


def test_time_window_and_group_filter():
    """`--since/--until` keep the join phase only; events without a timestamp cannot be placed in a window."""
    result = run_cli("events", str(MINI), "--format", "ndjson", "--since", "2024-03-05T10:00:00.001Z", "--until", "2024-03-05 10:00:03.006")
    kinds = [r["kind"] for r in ndjson(result.stdout)]
    assert kinds == ["partitions_revoked", "join_start", "group_stabilized", "join_succeeded"]
    other_group = run_cli("grep", str(MINI), "--group", "payments")
    assert other_group.exit_code == ExitStatus.NOTHING_FOUND
    glob_group = run_cli("grep", str(MINI), "--group", "ord*", "-c")
    assert glob_group.exit_code == ExitStatus.OK


def test_naive_timestamps_read_in_the_given_zone():
    """A client logging in local time (Europe/Paris, UTC+1 in March) is shifted to UTC with --tz GLOB=ZONE."""
    result = run_cli("events", CLIENT_A, "--format", "ndjson", "--tz", "*client-a*=Europe/Paris")
    assert ndjson(result.stdout)[0]["ts"] == "2024-03-05T09:00:00.000Z"
    bad = run_cli("events", CLIENT_A, "--tz", "Mars/Olympus")
    assert bad.exit_code == ExitStatus.ERROR and "unknown time zone" in bad.stderr


def test_stdin_and_gzip_inputs(tmp_path: Path):
    """`kubectl logs … | rebalance-doctor grep -` and rotated .gz files read like plain files."""
    piped = run_cli("grep", "-", "--json", stdin=Path(CLIENT_A).read_bytes())
    assert piped.exit_code == ExitStatus.OK
    assert {r["file"] for r in matched_lines(piped.stdout)} == {"-"}
    gz = tmp_path / "client-a.log.1.gz"
    gz.write_bytes(gzip.compress(Path(CLIENT_A).read_bytes()))
    zipped = run_cli("grep", str(gz), "--json")
    assert [r["line"] for r in matched_lines(zipped.stdout)] == [2, 3, 4, 5, 6, 7, 8]


def test_bad_inputs_are_reported_and_skipped(tmp_path: Path):
    """Missing, binary, truncated-gzip and invalid-UTF-8 inputs: a message per file, the rest still analysed."""
    (tmp_path / "core.bin").write_bytes(b"\x7fELF\x00\x00\x01binary\n" * 10)
    (tmp_path / "cut.log.gz").write_bytes(gzip.compress(Path(BROKER).read_bytes())[:-30])
    (tmp_path / "fake.gz").write_bytes(b"not gzip at all\n")
    latin1 = Path(BROKER).read_bytes().replace(b"LogLoader", b"LogLoader \xe9t\xe9")
    (tmp_path / "latin1.log").write_bytes(latin1)
    result = run_cli("grep", str(tmp_path), str(tmp_path / "missing.log"), "-c")
    assert result.exit_code == ExitStatus.OK
    err = result.stderr
    assert "missing.log: no such file or directory" in err
    assert "core.bin: binary file skipped" in err
    assert "cut.log.gz: compressed data is truncated or corrupt" in err
    assert "fake.gz: named .gz but is not gzip data" in err
    assert f"{tmp_path / 'latin1.log'}:4" in result.stdout
    nothing = run_cli("grep", str(tmp_path / "missing.log"))
    assert nothing.exit_code == ExitStatus.ERROR and "nothing could be read" in nothing.stderr


def test_invalid_utf8_line_counts_as_unreadable_unless_matched(tmp_path: Path):
    from rebalance_doctor import load

    data = Path(BROKER).read_bytes() + b"\xff\xfe garbage \xc3\x28\n"
    (tmp_path / "broker.log").write_bytes(data)
    logs = load([str(tmp_path / "broker.log")])
    assert logs.buckets["unreadable"] == 1 and logs.buckets["matched"] == 4 and logs.lines_read == 7


def test_patterns_test_explains_a_match_and_a_miss():
    line = Path(BROKER).read_text().splitlines()[4]
    hit = run_cli("patterns", "test", line)
    assert hit.exit_code == ExitStatus.OK
    assert "match: broker.group.stabilized" in hit.stdout
    assert "member_count: 2" in hit.stdout and "generation: 5" in hit.stdout
    miss = run_cli("patterns", "test", "Stabilized group but the rest is mangled")
    assert miss.exit_code == ExitStatus.NOTHING_FOUND
    assert "broker.group.stabilized" in miss.stdout and "relevant but unmatched" in miss.stdout
    noise = run_cli("patterns", "test", "GET /health 200")
    assert noise.exit_code == ExitStatus.NOTHING_FOUND and "bucket: irrelevant" in noise.stdout


def test_patterns_list_and_show():
    listing = run_cli("patterns", "list", "--component", "broker", "--kind", "group_stabilized")
    assert listing.exit_code == ExitStatus.OK and "broker.group.stabilized" in listing.stdout
    shown = run_cli("patterns", "show", "broker.group.stabilized")
    assert "anchor: 'Stabilized group '" in shown.stdout and "example:" in shown.stdout
    assert run_cli("patterns", "show", "no.such.id").exit_code == ExitStatus.ERROR


def test_user_catalog_extends_and_overrides(tmp_path: Path):
    """`--patterns DIR`: a team adds the wording of its own wrapper library; a bad entry is rejected with file:line."""
    (tmp_path / "ours.yaml").write_text(
        "component: consumer\n"
        "patterns:\n"
        "  - id: acme.wrapper.heartbeat_ok\n"
        "    kind: diagnostic\n"
        "    since: 1.0.0\n"
        "    anchor: 'worker heartbeat ok'\n"
        "    regex: 'worker heartbeat ok, lag=(?<memberCount>\\d+)'\n"
        "    examples:\n"
        "      - line: 'orders worker heartbeat ok, lag=12'\n"
    )
    result = run_cli("grep", CLIENT_B, "-k", "diagnostic", "--json", "--patterns", str(tmp_path))
    assert [r["pattern_id"] for r in matched_lines(result.stdout)] == ["acme.wrapper.heartbeat_ok"]
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    (bad_dir / "broken.yaml").write_text(
        "patterns:\n  - id: x\n    kind: diagnostic\n    component: consumer\n    since: 1.0.0\n"
        "    anchor: 'heartbeat'\n    regex: '(?<=worker) heartbeat'\n    examples: ['worker heartbeat']\n"
    )
    bad = run_cli("grep", CLIENT_B, "--patterns", str(bad_dir))
    assert bad.exit_code == ExitStatus.ERROR
    assert "broken.yaml:2" in bad.stderr and "look-around is not portable" in bad.stderr


def test_user_catalog_entries_must_match_their_own_examples(tmp_path: Path):
    """An entry whose example line it does not match, or reads differently than the example says, is refused
    when the catalog loads (as the bundled entries are in the project's tests), naming its file and line."""
    entry = ("component: consumer\npatterns:\n  - id: acme.wrapper.lag\n    kind: diagnostic\n    since: 1.0.0\n"
             "    anchor: 'worker heartbeat ok'\n    regex: 'worker heartbeat ok, lag=(?<memberCount>\\d+)'\n"
             "    examples:\n      - line: 'orders worker heartbeat ok, lag=12'\n        fields: {member_count: %s}\n")
    (tmp_path / "ours.yaml").write_text(entry % 13)
    wrong = run_cli("events", CLIENT_B, "--patterns", str(tmp_path))
    assert wrong.exit_code == ExitStatus.ERROR
    assert "ours.yaml:3" in wrong.stderr and "gives member_count 12, the example says 13" in wrong.stderr
    (tmp_path / "ours.yaml").write_text(entry % 12)
    assert run_cli("events", CLIENT_B, "--patterns", str(tmp_path)).exit_code == ExitStatus.OK


def test_a_user_entry_that_replaces_a_bundled_one_says_so(tmp_path: Path):
    """A team's entry with a bundled entry's id replaces it, on purpose or not: the run says which, where."""
    (tmp_path / "ours.yaml").write_text(
        "component: broker\npatterns:\n  - id: broker.gc.cleanup-tombstones\n    kind: diagnostic\n    since: 3.7.0\n"
        "    anchor: ' tombstone records while cleaning up group metadata'\n"
        "    regex: 'Generated \\d+ tombstone records while cleaning up group metadata'\n"
        "    examples:\n      - line: 'Generated 0 tombstone records while cleaning up group metadata in 1 milliseconds.'\n")
    result = run_cli("events", "sample_logs/kip848-coordinator-failover/", "--patterns", str(tmp_path))
    assert result.exit_code == ExitStatus.OK
    assert "ours.yaml:3: broker.gc.cleanup-tombstones replaces the entry of that id at" in result.stderr
    assert "broker-group-coordinator.yaml:" in result.stderr


def test_a_user_catalog_is_validated_once_per_content(tmp_path: Path, monkeypatch):
    """Scenario: a team passes `--patterns ours/` on every run. Its catalog is validated on the first run
    only (100 entries took 0.1 s on every run); an edit takes effect on the next run; the cache keeps a
    bounded number of validated catalogs."""
    from rebalance_doctor.catalog import loading as catalog

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(catalog, "CACHED_CATALOGS", 2)
    validated: list[str] = []
    add_file = catalog._add_file
    monkeypatch.setattr(catalog, "_add_file", lambda into, path, user: (validated.append(path.name), add_file(into, path, user))[1])
    ours = tmp_path / "ours"
    ours.mkdir()

    def grep_with(pattern_id: str) -> list[str]:
        (ours / "ours.yaml").write_text(
            f"component: consumer\npatterns:\n  - id: {pattern_id}\n    kind: diagnostic\n    since: 1.0.0\n"
            "    anchor: 'worker heartbeat ok'\n    regex: 'worker heartbeat ok, lag=(?<memberCount>\\d+)'\n"
            "    examples:\n      - line: 'orders worker heartbeat ok, lag=12'\n"
        )
        catalog._catalog_of.cache_clear()  # as in a new process
        validated.clear()
        result = run_cli("grep", CLIENT_B, "-k", "diagnostic", "--json", "--patterns", str(ours))
        return [r["pattern_id"] for r in matched_lines(result.stdout)]

    assert grep_with("acme.heartbeat") == ["acme.heartbeat"] and "ours.yaml" in validated and len(validated) > 1
    assert grep_with("acme.heartbeat") == ["acme.heartbeat"] and validated == []
    assert grep_with("acme.wrapper.heartbeat") == ["acme.wrapper.heartbeat"] and validated == ["ours.yaml"]
    assert len(list((tmp_path / "cache" / "rebalance-doctor").glob("catalog-*.json"))) == 2


def test_version_and_help_list_examples():
    assert run_cli("--version").stdout.startswith("rebalance-doctor ")
    help_text = run_cli("grep", "--help").stdout
    assert "Exit status 0 when a line was selected" in help_text and "rebalance-doctor grep" in help_text


@pytest.mark.parametrize("fmt", ["parquet", "csv", "ndjson"])
def test_events_written_to_a_file(tmp_path: Path, fmt: str):
    import polars as pl

    out = tmp_path / f"events.{fmt}"
    result = run_cli("events", str(MINI), "-o", str(out))
    assert result.exit_code == ExitStatus.OK and "wrote 13 events" in result.stderr
    table = {"parquet": pl.read_parquet, "csv": pl.read_csv, "ndjson": pl.read_ndjson}[fmt](out)
    assert table.height == 13 and "raw" in table.columns
    assert not list(tmp_path.glob(".*partial"))


def test_empty_input_is_reported(tmp_path: Path):
    (tmp_path / "empty.log").write_bytes(b"")
    result = run_cli("grep", str(tmp_path / "empty.log"))
    assert result.exit_code == ExitStatus.NOTHING_FOUND and "the input is empty" in result.stderr
    assert "0 lines in 1 file" in result.stderr


def test_events_table_into_a_pipe_keeps_rows_whole_and_aligned():
    """`events > incident.txt`: a header, then one line per event, its columns aligned and its detail whole
    (for `less -S`, `grep`, `cut`), so that a 50,000-event table is still one line per event."""
    result = run_cli("events", BROKER, CLIENT_A, CLIENT_B)
    assert result.exit_code == ExitStatus.OK, result.output
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["time", "(UTC)", "node", "kind", "group", "gen/epoch", "member", "where", "detail"]
    assert len(rows) == 13
    expiry = next(row for row in rows if " member_expired " in row)
    assert expiry.startswith("2024-03-05T10:00:00.000Z  broker-1  ")
    assert f"{BROKER}:2" in expiry and " gen 4 " not in expiry
    assert {row.index(" member_expired ") for row in rows if " member_expired " in row} == {header.index("kind") - 1}
    assert {row.index("broker-1.log:") - len(str(MINI)) - 1 for row in rows if "broker-1.log:" in row} == {header.index("where")}


def test_events_table_on_a_narrow_terminal_folds_long_cells():
    """On a 120-column terminal the member, where and detail cells fold onto more lines; the time never does."""
    result = run_cli("events", BROKER, "--color", "always", width=120, colour=True)
    assert result.exit_code == ExitStatus.OK, result.output
    lines = [regex.sub(r"\x1b\[[0-9;]*m", "", line) for line in result.stdout.splitlines()]
    assert max(map(len, lines)) <= 120
    assert len(lines) > 5  # a header and 4 events, some folded
    assert all(regex.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  ", line) or line.startswith(" ") for line in lines[1:])
    assert "".join(line[110:] for line in lines if line.strip())  # the detail column is still printed
