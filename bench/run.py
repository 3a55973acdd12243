"""Time rebalance-doctor beside ripgrep and grep on the same files, in one run, and print ratios.

The bar is ripgrep with the catalogs' anchors (`rg -c -F -f anchors`): the cost of merely finding
the candidate lines. Each command runs `--repeat` times on a warm page cache; the table shows the
median wall time, throughput, ratio to rg and the peak RSS of the process tree.

    python bench/run.py                      # generates bench/corpus/1g on first use
    python bench/run.py --size 100M --repeat 5
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOL = [sys.executable, "-m", "rebalance_doctor"]


def measure(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one run."""
    # stdout goes to a real file: GNU grep stops at the first match when it sees /dev/null
    with tempfile.TemporaryFile() as sink:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"benchmark command failed ({process.returncode}): {' '.join(command)}")
    return elapsed, usage.ru_maxrss / 1024


def corpus_files(corpus: Path) -> list[str]:
    return sorted(str(p) for p in corpus.rglob("*.log"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="existing corpus directory (default: bench/corpus/<size>)")
    parser.add_argument("--size", default="1G")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    corpus = args.corpus or HERE / "corpus" / args.size.lower()
    if not corpus.exists():
        print(f"generating {args.size} corpus in {corpus} …", file=sys.stderr)
        subprocess.run([sys.executable, str(HERE / "generate.py"), str(corpus), "--size", args.size], check=True)
    files = corpus_files(corpus)
    size = sum(os.path.getsize(f) for f in files)
    anchors = HERE / "results" / "anchors.txt"
    anchors.parent.mkdir(exist_ok=True)
    anchors.write_text(subprocess.run(TOOL + ["patterns", "anchors"], capture_output=True, text=True, check=True).stdout)
    for f in files:  # warm the page cache so every tool reads from memory
        with open(f, "rb") as handle:
            while handle.read(1 << 24):
                pass
    commands = {
        "rg -c -F -f anchors": ["rg", "-c", "-F", "-f", str(anchors), *files],
        "grep -c -F -f anchors": ["grep", "-c", "-F", "-f", str(anchors), *files],
        "rebalance-doctor events (ndjson)": TOOL + ["events", str(corpus), "--format", "ndjson"],
        "rebalance-doctor grep -c": TOOL + ["grep", str(corpus), "-c"],
        "rebalance-doctor report": TOOL + ["report", str(corpus)],
    }
    if shutil.which("lnav"):
        commands["lnav -n (load only)"] = ["lnav", "-n", *files]
    rows = []
    for name, command in commands.items():
        if shutil.which(command[0]) is None and command[0] != sys.executable:
            print(f"skipping {name}: {command[0]} is not installed", file=sys.stderr)
            continue
        runs = [measure(command) for _ in range(args.repeat)]
        rows.append((name, statistics.median(r[0] for r in runs), max(r[1] for r in runs)))
    baseline = next(t for n, t, _ in rows if n.startswith("rg "))
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"\n{size / 1e9:.2f} GB in {len(files)} files · {os.cpu_count()} cores · {platform.processor() or platform.machine()} · {stamp}\n")
    print("| command | wall (s) | throughput (MB/s) | × rg | peak RSS (MB) |")
    print("|---|---:|---:|---:|---:|")
    for name, seconds, rss in rows:
        print(f"| {name} | {seconds:.2f} | {size / 1e6 / seconds:,.0f} | {seconds / baseline:.1f} | {rss:,.0f} |")


if __name__ == "__main__":
    main()
