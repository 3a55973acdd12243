"""A user's install: `pip install rebalance-doctor` puts a wheel into a virtual environment, not this source
tree. Scenario: the catalogs or the HTML assets are left out of the wheel, and every command of an installed
copy stops with "patterns directory not found" while every other test, run from the source tree, passes.
Here the wheel is built from the repository, installed into a fresh virtual environment (not editable),
and run from outside the source tree: it must list its catalogs and print each bundled incident's report
exactly as pinned in tests/golden/.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support import GOLDEN, INCIDENTS, ROOT, SAMPLES, ExitStatus


@pytest.fixture(scope="module")
def installed(tmp_path_factory, wheel: Path) -> Path:
    """The bin/ directory of a fresh virtual environment holding the wheel built from this repository."""
    work = tmp_path_factory.mktemp("installed")
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    subprocess.run([work / "venv/bin/pip", "install", "--quiet", str(wheel)], check=True, capture_output=True)
    return work / "venv" / "bin"


def run_installed(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "NO_COLOR": "1", "XDG_CACHE_HOME": str(bin_dir.parent / "cache")}
    environment.pop("PYTHONPATH", None)
    return subprocess.run([bin_dir / "rebalance-doctor", *args], cwd=cwd, env=environment, capture_output=True, text=True)


def test_the_installed_copy_runs_from_its_own_files(installed: Path, tmp_path: Path):
    where = subprocess.run([installed / "python", "-c", "import rebalance_doctor; print(rebalance_doctor.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(installed.parent)), where
    site = Path(where.strip()).parent
    packaged = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert {"catalog/patterns/layouts.yaml", "catalog/patterns/messages/broker-classic.yaml",
            "renderers/html_report.css", "renderers/html_report.js", "engines/spark-log4j2.properties"} <= packaged
    catalogs = {p.relative_to(ROOT / "rebalance_doctor").as_posix() for p in (ROOT / "rebalance_doctor/catalog/patterns").rglob("*.yaml")}
    assert catalogs <= packaged


def test_the_installed_copy_lists_its_catalogs(installed: Path, tmp_path: Path):
    result = run_installed(installed, "patterns", "list", cwd=tmp_path)

    assert result.returncode == ExitStatus.OK, result.stderr
    assert "broker.group.stabilized" in result.stdout
    shown, total = (int(n) for n in re.match(r"(\d+) of (\d+) entries", result.stderr).groups())
    assert shown == total > 400, "the wheel carries every catalog file, the client libraries' too"


@pytest.mark.parametrize("name", INCIDENTS)
def test_the_installed_copy_reports_each_bundled_incident_as_pinned(installed: Path, name: str):
    result = run_installed(installed, "report", f"{SAMPLES.name}/{name}/", cwd=ROOT)

    assert result.returncode == ExitStatus.OK, result.stderr
    assert result.stdout == (GOLDEN / f"{name}.txt").read_text()


def test_the_installed_copy_writes_a_self_contained_html_report(installed: Path, tmp_path: Path):
    out = tmp_path / "incident.html"
    result = run_installed(installed, "report", str(SAMPLES / INCIDENTS[0]), "--format", "html", "-o", str(out), cwd=tmp_path)

    assert result.returncode == ExitStatus.OK, result.stderr
    page = out.read_text()
    assert "<style>" in page and "<script>" in page and "<svg" in page


def test_the_wheel_is_a_wheel_of_this_version(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert any(n.endswith("catalog/patterns/reasons.yaml") for n in names)
    assert not any(n.startswith(("tests/", "sample_logs/", "bench/")) for n in names)
