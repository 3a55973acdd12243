"""The HTML report and the timeline picture, as an on-call engineer opens them.

Scenarios: the bundled unstable-leader incident (2 failed rebalances, 2 leader changes) opened from a file:// URL
in real headless Chromium (the page must work offline, sort its tables and show one bar per rebalance); a broker
log whose group id, member id and reason carry script and markup (it must stay text); a 10,000-rebalance storm
(the page and the picture must stay small: bins and pages, never 10k elements). The PNG is drawn without a browser.
"""

from __future__ import annotations

import os
import struct
import tempfile
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rebalance_doctor import analyze, load
from rebalance_doctor.analysis.model import (
    Analysis,
    Cause,
    Departure,
    Evidence,
    GroupAnalysis,
    LeaderChange,
    MemberPause,
    Rebalance,
)
from rebalance_doctor.catalog.schema import CAUSES
from rebalance_doctor.renderers.html import PAGE_ROWS, render
from rebalance_doctor.renderers.picture import timeline_png, timeline_svg
from rebalance_doctor.renderers.words import CAUSE_COLOURS, duration, generation_label

from support import ROOT

SCREENSHOT = ROOT / "docs" / "html-report.png"
SVG = "{http://www.w3.org/2000/svg}"
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SCRIPT_TAG = "<script>window.pwned=1</script>"
IMG_TAG = '"><img src=x onerror="window.pwned=2">'
HOSTILE_GROUP = SCRIPT_TAG + IMG_TAG
EXPIRED = SCRIPT_TAG + "\x1b[31m-1"  # a member id with a terminal escape: shown as ^[ in every output
# A broker that expired a member, as it logs it, but with attacker-chosen ids and reason (and a terminal escape).
HOSTILE_BROKER_LOG = (
    f"[2024-03-05 10:00:00,000] INFO [GroupCoordinator 1]: Member {EXPIRED} in group {HOSTILE_GROUP} has failed, removing it "
    "from the group (kafka.coordinator.group.GroupCoordinator)\n"
    f"[2024-03-05 10:00:00,000] INFO [GroupCoordinator 1]: Preparing to rebalance group {HOSTILE_GROUP} in state PreparingRebalance "
    f"with old generation 4 (__consumer_offsets-12) (reason: removing member {EXPIRED} on heartbeat expiration {IMG_TAG}) "
    "(kafka.coordinator.group.GroupCoordinator)\n"
    f"[2024-03-05 10:00:03,005] INFO [GroupCoordinator 1]: Stabilized group {HOSTILE_GROUP} generation 5 (__consumer_offsets-12) "
    "with 2 members (kafka.coordinator.group.GroupCoordinator)\n"
    f"[2024-03-05 10:00:03,010] INFO [GroupCoordinator 1]: Assignment received from leader {IMG_TAG} for group {HOSTILE_GROUP} "
    "for generation 5. The group has 2 members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)\n"
)


def _analysis(*paths: Path) -> Analysis:
    """The incident as `rebalance-doctor report` sees it when run from the repository (paths as users type them)."""
    logs = load([os.path.relpath(p) for p in paths])
    return analyze(logs.events, buckets=dict(logs.buckets))


@pytest.fixture(scope="module")
def unstable(analysis) -> Analysis:
    return analysis("unstable-leader-failed-rebalances")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Analysis:
    directory = tmp_path_factory.mktemp("hostile")
    (directory / "broker-1.log").write_text(HOSTILE_BROKER_LOG, encoding="utf-8")
    return _analysis(directory)


def storm(count: int = 10_000) -> Analysis:
    """A crash loop that never ends: every 2 s a new member joins, the previous one expires, every third round fails."""
    t0 = datetime(2024, 5, 1, 3, 0, tzinfo=UTC)
    steady = ["consumer-a-1", "consumer-b-1", "consumer-c-1"]
    rebalances, leader_changes = [], []
    for i in range(count):
        start = t0 + timedelta(seconds=2 * i)
        kind = ("member_join", "heartbeat_expiry", "failed_rebalance_retry")[i % 3]
        line = Evidence("broker-1/server.log", 100 + i, f"rebalance {i}", start, "broker-1", "rebalance_start")
        rebalances.append(Rebalance(
            group_id="storm", from_generation=i, to_generation=i + 1, started_at=start,
            ended_at=start + timedelta(milliseconds=900), duration_ms=900, protocol="eager", assignor="range",
            coordinator="1", leader=steady[i % 3], members=[*steady, f"crasher-{i}"], member_count=4,
            joined=[f"crasher-{i}"], left=[Departure(f"crasher-{i - 1}", "heartbeat_expiry")] if i else [],
            cause=Cause(kind, 0.9, f"{kind} round {i}", [line]), failed=kind == "failed_rebalance_retry",
            pauses=[MemberPause(m, None, start, start + timedelta(milliseconds=900), 900) for m in steady]))
        if i % 10 == 0:
            leader_changes.append(LeaderChange(i + 1, start, steady[(i - 1) % 3], steady[i % 3]))
    group = GroupAnalysis("storm", "1", "eager", list(range(1, count + 1)), rebalances, leader_changes, None, [],
                          dict.fromkeys(steady, 900 * count))
    return Analysis([group], t0, t0 + timedelta(seconds=2 * count), ["broker-1/server.log"], ["broker-1"], 3 * count,
                    {}, [])


@pytest.fixture(scope="module")
def big_storm() -> Analysis:
    return storm()


# ---- the picture, without a browser -----------------------------------------------------------------------------


def _svg(analysis: Analysis, width: int = 1200) -> ET.Element:
    return ET.fromstring(timeline_svg(analysis, width))


def _rects(root: ET.Element, css: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}rect") if e.get("class") == css]


def _title(element: ET.Element) -> str:
    return element.findtext(f"{SVG}title") or ""


def test_svg_has_one_bar_per_rebalance_with_cause_and_evidence_on_hover(unstable):
    root = _svg(unstable)
    bars = _rects(root, "rebalance")
    rebalances = unstable.groups[0].rebalances
    assert [b.get("data-generation") for b in bars] == [str(r.to_generation) for r in rebalances]
    for bar, rebalance in zip(bars, rebalances, strict=True):
        evidence = rebalance.cause.evidence[0]
        assert rebalance.cause.summary in _title(bar)
        assert f"{Path(evidence.file).name}:{evidence.line}" in _title(bar)
    failed = [b.get("data-generation") for b in bars if b.get("fill", "").startswith("url(#failed-")]
    assert failed == ["213", "214"]  # the two generations whose leader froze are hatched


def test_svg_lanes_show_every_pause_and_a_marker_per_leader_change(unstable):
    root = _svg(unstable)
    group = unstable.groups[0]
    assert len(_rects(root, "pause")) == sum(len(r.pauses) for r in group.rebalances)
    leader_marks = [e for e in root.iter(f"{SVG}polygon") if e.get("class") == "marker leader_change"]
    assert len(leader_marks) == len(group.leader_changes) == 2
    assert "scorer-3" in _title(leader_marks[0]) and "scorer-1" in _title(leader_marks[1])


@pytest.mark.parametrize(("name", "marker"), [("heartbeat-expiry", "heartbeat_expiry"),
                                              ("poll-timeout-cooperative", "poll_timeout"),
                                              ("kip848-coordinator-failover", "coordinator_change")])
def test_svg_marks_the_event_that_started_the_trouble(analysis, name, marker):
    root = _svg(analysis(name))
    marks = [e for e in root.iter(f"{SVG}polygon") if e.get("class") == f"marker {marker}"]
    assert marks and all(_title(m) for m in marks)


def test_png_is_the_same_picture_at_the_requested_width(unstable):
    png = timeline_png(unstable, width=900)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    assert width == 900
    assert height == round(float(_svg(unstable, 900).get("height")))


def test_every_cause_has_its_own_colour():
    assert set(CAUSE_COLOURS) == set(CAUSES)
    assert len(set(CAUSE_COLOURS.values())) == len(CAUSES)


def test_storm_picture_is_binned_not_ten_thousand_elements(big_storm):
    root = _svg(big_storm)
    assert sum(1 for _ in root.iter()) < 3000
    bins = _rects(root, "rebalance-bin")
    assert not _rects(root, "rebalance")
    assert sum(int(b.get("data-count")) for b in bins) == 10_000
    assert all("rebalances" in _title(b) for b in bins)
    assert "9,979 more members not drawn" in timeline_svg(big_storm)  # 24 lanes of 10,000 crashers + 3 survivors
    png = timeline_png(big_storm, width=1000)
    assert struct.unpack(">I", png[16:20])[0] == 1000


def test_hostile_text_is_inert_in_the_svg(hostile):
    svg = timeline_svg(hostile)
    root = ET.fromstring(svg)  # parses: escaped, and the terminal escape is visible (^[), not an XML-illegal character
    assert not [e for e in root.iter() if e.tag.split("}")[-1] in ("script", "img")]
    titles = " ".join(e.text or "" for e in root.iter(f"{SVG}title"))
    assert HOSTILE_GROUP in titles and "^[[31m" in titles
    assert "<script>" not in svg and "\x1b" not in svg


def test_logs_without_timestamps_or_groups_still_give_a_picture_and_a_page():
    nothing = Analysis([], None, None, [], [], 0, {}, [])
    assert "nothing to draw" in " ".join(_svg(nothing).itertext())
    assert timeline_png(nothing, width=600)[16:20] == struct.pack(">I", 600)
    assert "No consumer group events found." in render(nothing)


# ---- the HTML report, in real headless Chromium ---------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("the HTML tests need Chromium: apt-get install -y chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    with tempfile.TemporaryDirectory(prefix="rebalance-doctor-chromium-") as profile:
        for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                         "--window-size=1280,1500"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def _open(browser, directory: Path, analysis: Analysis) -> list[dict]:
    """Write the report, open it from disk, and return what the console said while it loaded."""
    page = directory / "report.html"
    page.write_text(render(analysis), encoding="utf-8")
    browser.get_log("browser")  # forget the previous page's messages
    browser.get(page.as_uri())
    return browser.get_log("browser")


def _column(browser, table_id: str, column: int) -> list[str]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0] + ' tbody tr'), "
        "r => r.cells[arguments[1]].innerText)",
        f"#{table_id}", column)


def _click_header(browser, table_id: str, name: str) -> None:
    from selenium.webdriver.common.by import By

    browser.find_element(By.XPATH, f"//div[@id='{table_id}']//th/button[text()='{name}']").click()


def test_report_opens_offline_with_one_bar_per_rebalance(browser, unstable, tmp_path):
    console = _open(browser, tmp_path, unstable)
    assert [entry for entry in console if entry["level"] == "SEVERE"] == []
    bars = browser.execute_script("return Array.from(document.querySelectorAll('svg.timeline rect.rebalance'), "
                                  "r => r.dataset.generation)")
    assert bars == [str(r.to_generation) for g in unstable.groups for r in g.rebalances]
    text = browser.execute_script("return document.body.innerText")
    for finding in unstable.groups[0].findings:
        assert finding.kind in text and finding.recommendation[:60] in text
    assert "scorer-1.log:156" in text  # the failed SyncGroup, quoted as evidence
    # the README's screenshot: taken on every run, replaced in docs/ with UPDATE_GOLDEN=1 (like the golden files)
    shot = SCREENSHOT if os.environ.get("UPDATE_GOLDEN") else tmp_path / SCREENSHOT.name
    assert browser.save_screenshot(str(shot)) and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_generations_sort_by_a_clicked_column_and_filter_by_text(browser, unstable, tmp_path):
    _open(browser, tmp_path, unstable)
    table = "group-1-generations"
    durations = [r.duration_ms for r in unstable.groups[0].rebalances]
    _click_header(browser, table, "duration")
    assert _column(browser, table, 2) == [duration(ms) for ms in sorted(durations)]
    _click_header(browser, table, "duration")
    assert _column(browser, table, 2) == [duration(ms) for ms in sorted(durations, reverse=True)]
    sorted_by = browser.execute_script(f"return document.querySelector('#{table} th.number').getAttribute('aria-sort')")
    assert sorted_by == "descending"

    from selenium.webdriver.common.by import By

    browser.find_element(By.CSS_SELECTOR, f"#{table} input.filter").send_keys("failed_rebalance_retry")
    assert _column(browser, table, 0) == ["213 → 214 ✗"]
    assert browser.find_element(By.CSS_SELECTOR, f"#{table} .count").text == "rows 1–1 of 1 (filtered from 6)"


def test_hostile_log_text_shows_as_text_and_runs_nothing(browser, hostile, tmp_path):
    console = _open(browser, tmp_path, hostile)
    assert [entry for entry in console if entry["level"] == "SEVERE"] == []  # a CSP violation would be SEVERE
    text = browser.execute_script("return document.body.innerText")
    assert f"group {HOSTILE_GROUP}" in text
    assert f"{SCRIPT_TAG}^[[31m-1" in text  # the expired member's id, in the cause, its escape made visible
    assert IMG_TAG in text  # the leader's member id
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    executable = "return Array.from(document.scripts).filter(s => s.type !== 'application/json').length"
    assert browser.execute_script(executable) == 1  # the report's own script only


def test_storm_page_shows_pages_of_rows_and_a_binned_timeline(browser, big_storm, tmp_path):
    page = render(big_storm)
    assert page.count("<tr") < 3 * PAGE_ROWS  # generations, leader changes, pauses: one page each in the markup
    console = _open(browser, tmp_path, big_storm)
    assert [entry for entry in console if entry["level"] == "SEVERE"] == []
    assert browser.execute_script("return document.querySelectorAll('svg.timeline *').length") < 3000
    table = "group-1-generations"
    rows = big_storm.groups[0].rebalances
    assert _column(browser, table, 0) == [generation_label(r) for r in rows[:PAGE_ROWS]]

    from selenium.webdriver.common.by import By

    browser.find_element(By.CSS_SELECTOR, f"#{table} button.next").click()
    assert _column(browser, table, 0) == [generation_label(r) for r in rows[PAGE_ROWS:2 * PAGE_ROWS]]
    assert browser.find_element(By.CSS_SELECTOR, f"#{table} .count").text == "rows 101–200 of 10,000"
