"""Fixtures every test file may use: the bundled incidents loaded and analysed once per run, the command
line run at a pinned width from the repository's root (so evidence paths read ``sample_logs/…``), and
an analysis rendered to text as a user reads it."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest
from hypothesis import HealthCheck, settings

from support import ROOT, SAMPLES, TRACE_LINES, WIDTH, run_cli

# Property tests: a few hundred examples by default; `make test` runs tests/test_line_accounting.py
# again under "accounting" (10,000 examples), the bar for "no line is ever lost".
settings.register_profile("default", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("accounting", max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")


@pytest.fixture(scope="session")
def incident():
    """``incident(name)``: a bundled incident's logs (``sample_logs/NAME``) as a LogSet, read once per run."""
    import os

    from rebalance_doctor import load

    loaded = {}

    def load_incident(name: str):
        if name not in loaded:
            here = os.getcwd()
            os.chdir(ROOT)  # evidence paths as a user in the repository sees them: sample_logs/NAME/…
            try:
                loaded[name] = load([str(SAMPLES.relative_to(ROOT) / name)])
            finally:
                os.chdir(here)
        return loaded[name]

    return load_incident


@pytest.fixture(scope="session")
def analysis(incident):
    """``analysis(name)``: a bundled incident analysed with the default options, once per run."""
    from rebalance_doctor import analyze

    analysed = {}

    def analyse_incident(name: str):
        if name not in analysed:
            logs = incident(name)
            analysed[name] = analyze(logs.events, buckets=dict(logs.buckets))
        return analysed[name]

    return analyse_incident


@pytest.fixture
def cli(monkeypatch):
    """``cli(*args, stdin=None, width=200, colour=False)``: the command run from the repository's root."""
    monkeypatch.chdir(ROOT)
    return run_cli


@pytest.fixture(scope="session")
def render_text():
    """``render_text(analysis, format="terminal", width=200, colour=False)``: what a reader sees."""
    import io

    from rich.console import Console

    from rebalance_doctor import render

    def rendered(analysis, format: str = "terminal", width: int = WIDTH, colour: bool = False) -> str:
        stream = io.StringIO()
        console = Console(file=stream, width=width, color_system="standard" if colour else None, force_terminal=colour,
                          no_color=not colour, highlight=False, soft_wrap=True)
        render(analysis, format, stream, console=console)
        return stream.getvalue()

    return rendered



@pytest.fixture(scope="session")
def traced_log(tmp_path_factory):
    """``traced_log(records)``: a consumer log where every rebalance line carries a stack trace of TRACE_LINES
    lines, followed by one application line. The records fill the file, so wherever a file is cut into
    parts (blocks, spans, Spark splits) the cut falls inside a record."""
    made = {}

    def make(records: int) -> Path:
        if records not in made:
            trace = ["org.apache.kafka.common.errors.WakeupException: null",
                     *(f"\tat org.example.orders.Layer{i}.call(Layer{i}.java:{i + 10})" for i in range(TRACE_LINES - 2)), "\t... 12 more"]
            path = tmp_path_factory.mktemp("traced") / f"consumer-{records}.log"
            with path.open("w") as log:
                for i in range(records):
                    at = f"2024-03-05 {10 + i // 3600 % 10:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
                    log.write(f"{at}.000  WARN 4242 --- [ntainer#0-0-C-1] o.a.k.c.c.internals.ConsumerCoordinator  : [Consumer "
                              "clientId=consumer-orders-1, groupId=orders] Request joining group due to: group is already rebalancing\n")
                    log.write("\n".join(trace) + "\n")
                    log.write(f"{at}.500  INFO 4242 --- [nio-8080-exec-3] c.e.orders.OrderController               : GET /orders/{i} 200 12ms\n")
            made[records] = path
        return made[records]

    return make


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from this repository, as `pip wheel .` builds it for a user."""
    import shutil
    import subprocess

    work = tmp_path_factory.mktemp("wheel")
    # built from a clean copy: a build/ folder left in the tree would carry stale modules into the wheel
    source = shutil.copytree(ROOT, work / "source", ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "corpus", "results"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work / "dist"), str(source)],
                   check=True, capture_output=True)
    (built,) = (work / "dist").glob("rebalance_doctor-*.whl")
    return built
