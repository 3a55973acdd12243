"""Time rebalance-doctor beside ripgrep and grep on the same files, in one run, and print ratios.

The bar is ripgrep with the catalogs' anchors (`rg -c -F -f anchors`): the cost of merely finding
the candidate lines. On a warm page cache, rg and rebalance-doctor's commands run side by side in
`--repeat` rounds (each command once per round: a shared machine's load drifts, and commands timed
together see the same load); grep and lnav run once each after them. The table shows the median wall
time, throughput, ratio to rg (the median of the rounds' own ratios) and the peak RSS of the whole
process tree, sampled every 20 ms (rebalance-doctor's scan processes included). `--spark` prints the
Spark engine's own table instead (see ``spark_bench``).

    python bench/run.py                      # the 1 GB best-case corpus, generated on first use
    python bench/run.py --profile realistic --files 40   # 1 GB that looks like real logs (bench/realistic.py)
    python bench/run.py --suite              # best case: 100 MB, 1 GB, 1 GB in 2,000 files, 5 GB; realistic: 1 GB,
                                             # 5 GB; storm: 300 MB
    python bench/run.py --size 100M --files 2000 --repeat 5
    python bench/run.py --spark --repeat 1   # the Spark engine on realistic corpora: local[2], standalone clusters
    python bench/run.py --rebalances 200000  # analysis and report memory: 200,000 rebalances of 50 groups
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOL = [sys.executable, "-m", "rebalance_doctor"]
sys.path.insert(0, str(HERE.parent / "tests"))


PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_rss(root: int) -> int:
    """Resident bytes of a process and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * PAGE
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo += children.get(pid, [])
    return total


def process_rss(pid: int) -> int:
    """Resident bytes of one process."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[21]) * PAGE
    except OSError:
        return 0


def measure(command: list[str], whole_tree: bool = True) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of the process tree of one run (or of its first process alone)."""
    # stdout goes to a real file: GNU grep stops at the first match when it sees /dev/null
    with tempfile.TemporaryFile() as sink:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.DEVNULL)
        peak = 0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, tree_rss(process.pid) if whole_tree else process_rss(process.pid))
            time.sleep(0.02)
        elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    # status 1 is "nothing found" only for a search (grep, rg); any other command that ends with 1 failed,
    # and a failure that ends early would pass for speed
    searching = "grep" in command or command[0] in ("rg", "grep")
    if process.returncode not in ((0, 1) if searching else (0,)):
        raise SystemExit(f"benchmark command failed ({process.returncode}): {' '.join(command)}")
    return elapsed, (max(peak, usage.ru_maxrss * 1024) if whole_tree else peak) / 1e6


def timed(name: str, command: list[str], repeat: int) -> tuple[str, float, float]:
    runs = [measure(command) for _ in range(repeat)]
    print(f"{name}: {statistics.median(r[0] for r in runs):.2f} s", file=sys.stderr)
    return name, statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def rounds(commands: dict[str, list[str]], repeat: int) -> list[tuple[str, float, float, float]]:
    """Every command once per round, ``repeat`` rounds: (name, median wall, median ratio to the first
    command in the same round, peak RSS). A shared machine's load drifts over minutes; commands timed
    side by side, and compared round by round, see the same load."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            runs[name].append(measure(command))
    baseline = [wall for wall, _ in next(iter(runs.values()))]
    rows = []
    for name, measured in runs.items():
        wall = statistics.median(w for w, _ in measured)
        ratio = statistics.median(w / b for (w, _), b in zip(measured, baseline, strict=True))
        print(f"{name}: {wall:.2f} s ({ratio:.2f} × rg)", file=sys.stderr)
        rows.append((name, wall, ratio, max(rss for _, rss in measured)))
    return rows


def spark_bench(repeat: int) -> None:
    """The Spark engine's table (docs/spark.md), on realistic corpora: `events` on local[2] for a tiny input (the
    fixed cost), 100 MB, 1 GB and 2 GB (the marginal throughput per core: 1 GB run less 100 MB run), the polars
    engine beside it, `ingest` at each size (the driver's memory when the executors write), and the 1 GB run on
    a standalone cluster of one worker, then two (1 core each). RSS is the Python driver's own (its JVM and the
    executors are other processes)."""
    from standalone_cluster import standalone_cluster

    tiny = HERE.parent / "tests" / "fixtures" / "mini"
    corpora = {size: ensure_corpus(size, 40, "realistic", None) for size in ("100M", "1G", "2G")}
    sizes = {name: sum(os.path.getsize(f) for f in corpus_files(corpus)) for name, corpus in corpora.items()}

    def events(corpus: Path, *engine: str) -> list[str]:
        return [*TOOL, "events", str(corpus), "--format", "ndjson", *engine]

    local = ("--engine", "spark", "--master", "local[2]")
    rows = [(f"spark local[2], {name}", size, *timed_driver(events(corpora[name], *local), repeat)) for name, size in sizes.items()]
    rows.insert(0, ("spark local[2], tiny (3 files)", sum(f.stat().st_size for f in tiny.iterdir()), *timed_driver(events(tiny, *local), repeat)))
    rows += [(f"polars, {name}", sizes[name], *timed_driver(events(corpora[name]), repeat)) for name in ("100M", "1G")]
    with tempfile.TemporaryDirectory() as work:  # the executors write the store: the driver never holds the table
        rows += [(f"spark local[2], ingest {name}", size, *timed_driver(
            [*TOOL, "ingest", str(corpora[name]), "-o", f"{work}/events", "--force", *local], repeat)) for name, size in sizes.items()]
    with tempfile.TemporaryDirectory() as work:
        for workers in (1, 2):
            (Path(work) / f"cluster-{workers}").mkdir()
            with standalone_cluster(Path(work) / f"cluster-{workers}", cores=1, memory="3g", workers=workers) as cluster:
                conf = [arg for item in (*cluster.driver_conf, *cluster.python_conf, "spark.executor.memory=2g") for arg in ("--spark-conf", item)]
                command = events(corpora["1G"], "--engine", "spark", "--master", cluster.master, *conf)
                rows.append((f"spark standalone, {workers} worker{'s' * (workers > 1)} × 1 core, 1G", sizes["1G"], *timed_driver(command, repeat)))
    walls = {name: wall for name, _, wall, _ in rows}
    marginal = (sizes["1G"] - sizes["100M"]) / 1e6 / (walls["spark local[2], 1G"] - walls["spark local[2], 100M"]) / 2
    scale = walls["spark standalone, 1 worker × 1 core, 1G"] / walls["spark standalone, 2 workers × 1 core, 1G"]
    print(f"\nspark engine, realistic corpora · {os.cpu_count()} cores · {platform.processor() or platform.machine()} · "
          f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}\n")
    print("| run | input (MB) | wall (s) | throughput (MB/s) | driver peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|")
    for name, size, wall, rss in rows:
        print(f"| {name} | {size / 1e6:,.0f} | {wall:.2f} | {size / 1e6 / wall:,.1f} | {rss:,.0f} |")
    print(f"\nmarginal throughput on local[2] (1G run less 100M run): {marginal:.1f} MB/s per core · two workers: {scale:.2f} × one")


def timed_driver(command: list[str], repeat: int) -> tuple[float, float]:
    """Median wall seconds and the peak RSS (MB) of the command's own process, over ``repeat`` runs."""
    runs = [measure(command, whole_tree=False) for _ in range(repeat)]
    print(f"{' '.join(command[2:5])}: {statistics.median(r[0] for r in runs):.2f} s", file=sys.stderr)
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


EXTRA_PATTERNS = 100


def extra_catalog(directory: Path, count: int = EXTRA_PATTERNS) -> Path:
    """A user catalog of ``count`` more message wordings (distinct anchors, like a site's own client
    library messages), to measure what a growing catalog costs."""
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    for i in range(count):
        anchor = f"Site rebalance notice {i:03d} "
        entries.append(
            f"  - id: site.notice.{i:03d}\n    kind: diagnostic\n    since: 3.0.0\n    anchor: '{anchor}'\n"
            f"    regex: '{anchor}for group (?<groupId>\\S+)'\n"
            f"    examples:\n      - line: '{anchor}for group g1'\n        fields: {{group_id: g1}}\n"
        )
    (directory / "site.yaml").write_text("component: consumer\npatterns:\n" + "".join(entries))
    return directory


def corpus_files(corpus: Path) -> list[str]:
    return sorted(str(p) for p in corpus.rglob("*.log"))


def ensure_corpus(size: str, files: int, profile: str, corpus: Path | None) -> Path:
    name = size.lower() if files == 12 else f"{size.lower()}-{files}files"
    corpus = corpus or HERE / "corpus" / (name if profile == "best-case" else f"{profile}-{name}")
    if not corpus.exists():
        print(f"generating {size} ({profile}) in {files} files: {corpus} …", file=sys.stderr)
        subprocess.run([sys.executable, str(HERE / "generate.py"), str(corpus), "--size", size, "--files", str(files),
                        "--profile", profile], check=True)
    return corpus


SEARCHED = "heartbeat"  # grep TEXT: a word of rebalance lines that application lines and thread names say too
ONCE = ("grep -c -F -f anchors", "lnav -n (load only)")  # 5–25 × rg: one run each says enough


def bench(corpus: Path, profile: str, repeat: int) -> None:
    files = corpus_files(corpus)
    size = sum(os.path.getsize(f) for f in files)
    anchors = warm_anchors(files)
    commands = {
        "rg -c -F -f anchors": ["rg", "-c", "-F", "-f", str(anchors), *files],
        "grep -c -F -f anchors": ["grep", "-c", "-F", "-f", str(anchors), *files],
        "floor: read, prefilter, number lines (bench/floor.py)": [sys.executable, str(HERE / "floor.py"), str(corpus)],
        "rebalance-doctor events (ndjson)": [*TOOL, "events", str(corpus), "--format", "ndjson"],
        f"rebalance-doctor events, +{EXTRA_PATTERNS} patterns": [
            *TOOL, "events", str(corpus), "--format", "ndjson", "--patterns", str(extra_catalog(HERE / "results" / "extra-patterns"))],
        "rebalance-doctor grep -c": [*TOOL, "grep", str(corpus), "-c"],
        "rebalance-doctor grep (lines)": [*TOOL, "grep", str(corpus)],
        f"rg -c {SEARCHED}": ["rg", "-c", "-i", SEARCHED, *files],
        f"rebalance-doctor grep {SEARCHED} -c": [*TOOL, "grep", SEARCHED, str(corpus), "-c"],
        f"rebalance-doctor grep {SEARCHED} (lines)": [*TOOL, "grep", SEARCHED, str(corpus)],
        "rebalance-doctor events (table)": [*TOOL, "events", str(corpus)],
        "rebalance-doctor report": [*TOOL, "report", str(corpus)],
        "lnav -n (load only)": ["lnav", "-n", *files],
    }
    for name, command in list(commands.items()):
        if shutil.which(command[0]) is None and command[0] != sys.executable:
            print(f"skipping {name}: {command[0]} is not installed", file=sys.stderr)
            del commands[name]
    once = {name: commands.pop(name) for name in ONCE if name in commands}
    rows = rounds(commands, repeat)
    baseline = rows[0][1]
    others = [timed(name, command, 1) for name, command in once.items()]
    rows += [(name, wall, wall / baseline, rss) for name, wall, rss in others]
    print_table(profile, size, len(files), rows)


def warm_anchors(files: list[str]) -> Path:
    """The catalogs' anchors for rg, written to bench/results; the files read once, so every tool reads from memory."""
    anchors = HERE / "results" / "anchors.txt"
    anchors.parent.mkdir(exist_ok=True)
    anchors.write_text(subprocess.run([*TOOL, "patterns", "anchors"], capture_output=True, text=True, check=True).stdout)
    for f in files:
        with open(f, "rb") as handle:
            while handle.read(1 << 24):
                pass
    return anchors


def print_table(title: str, size: int, files: int, rows: list[tuple[str, float, float, float]]) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"\n{title}: {size / 1e9:.2f} GB in {files:,} files · {os.cpu_count()} cores · "
          f"{platform.processor() or platform.machine()} · {stamp}\n")
    print("| command | wall (s) | throughput (MB/s) | × rg | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|")
    for name, seconds, ratio, rss in rows:
        print(f"| {name} | {seconds:.2f} | {size / 1e6 / seconds:,.0f} | {ratio:.2f} | {rss:,.0f} |")
    sys.stdout.flush()


def storm_bench(rebalances: int, repeat: int) -> None:
    """Analysis and report memory on a coordinator log of ``rebalances`` rebalances (bench/rebalance_storm.py)."""
    corpus = HERE / "corpus" / f"rebalances-{rebalances}"
    if not corpus.exists():
        print(f"generating {rebalances:,} rebalances: {corpus} …", file=sys.stderr)
        subprocess.run([sys.executable, str(HERE / "rebalance_storm.py"), str(corpus), "--rebalances", str(rebalances)], check=True)
    files = corpus_files(corpus)
    anchors = warm_anchors(files)
    report = HERE / "results" / "storm-report.json"
    rows = rounds({"rg -c -F -f anchors": ["rg", "-c", "-F", "-f", str(anchors), *files],
                   "rebalance-doctor report -o report.json": [*TOOL, "report", str(corpus), "-o", str(report)],
                   "rebalance-doctor report": [*TOOL, "report", str(corpus)]}, repeat)
    print_table(f"{rebalances:,} rebalances", sum(os.path.getsize(f) for f in files), len(files), rows)


# The corpora of docs/performance.md: (size, files, profile).
SUITE = [("100M", 12, "best-case"), ("1G", 12, "best-case"), ("1G", 2000, "best-case"), ("5G", 12, "best-case"),
         ("1G", 40, "realistic"), ("5G", 40, "realistic"), ("300M", 40, "storm")]


def compile_bytecode() -> None:
    """Bytecode for the package and the libraries it imports, as pip writes it when it installs them: under
    PYTHONDONTWRITEBYTECODE=1 (this machine's image sets it) pip writes none, and every process of every run
    compiled polars, numpy, typer and rich from source (measured: 0.6 s of CPU per process)."""
    compileall.compile_dir(HERE.parent / "rebalance_doctor", quiet=1)
    compileall.compile_dir(sysconfig.get_paths()["purelib"], quiet=1, workers=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="existing corpus directory (default: bench/corpus/<size>)")
    parser.add_argument("--size", default="1G")
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--profile", choices=("best-case", "realistic", "storm"), default="best-case",
                        help="what the generated corpus looks like (bench/generate.py)")
    parser.add_argument("--suite", action="store_true", help="every corpus of the performance tables: one table each")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rebalances", type=int, help="a coordinator log of this many rebalances instead (bench/rebalance_storm.py)")
    parser.add_argument("--spark", action="store_true", help="the Spark engine's table instead (docs/spark.md): local[2] and standalone clusters")
    args = parser.parse_args()
    compile_bytecode()
    if args.spark:
        spark_bench(args.repeat)
        return
    if args.rebalances:
        storm_bench(args.rebalances, args.repeat)
        return
    corpora = SUITE if args.suite else [(args.size, args.files, args.profile)]
    for size, files, profile in corpora:
        corpus = ensure_corpus(size, files, profile, None if args.suite else args.corpus)
        bench(corpus, profile, 1 if size == "5G" else args.repeat)


if __name__ == "__main__":
    main()
