"""A real Spark standalone cluster on loopback for tests and benchmarks: pyspark's own ``spark-class``
master and worker bound to 127.0.0.1, stopped on exit."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

STARTUP_SECONDS = 120


@dataclass(frozen=True)
class Cluster:
    master: str  # spark://127.0.0.1:PORT
    state_url: str  # the master's JSON status page
    worker_dirs: tuple[Path, ...] = ()  # each worker's work directory: its executors' logs, by application

    def state(self) -> dict:
        return json.load(urllib.request.urlopen(self.state_url, timeout=5))

    def tasks_finished(self, app: str) -> list[int]:
        """Per worker, the tasks its executors finished for the application (from their logs)."""
        return [sum(log.read_text().count("Finished task") for log in folder.glob(f"{app}/*/stderr")) for folder in self.worker_dirs]

    # what a driver on this machine needs to be reachable from the cluster
    driver_conf = ("spark.driver.host=127.0.0.1", "spark.driver.bindAddress=127.0.0.1")
    # the executors' Python: this one, which has the package (a remote cluster gets a packed environment)
    python_conf = (f"spark.pyspark.python={sys.executable}",)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def standalone_cluster(work: Path, cores: int = 1, memory: str = "1g", workers: int = 1) -> Iterator[Cluster]:
    """A master and ``workers`` workers of ``cores`` cores each, until the block ends."""
    import pyspark

    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    port, ui = _free_port(), _free_port()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(work)}
    # each process writes its own copy of its log file's descriptor: this one closes its copy at once
    with open(work / "master.out", "wb") as master_log:
        processes = [subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)],
            env=env, stdout=master_log, stderr=subprocess.STDOUT,
        )]
    worker_uis = [_free_port() for _ in range(workers)]
    for number, worker_ui in enumerate(worker_uis):
        with open(work / f"worker-{number}.out", "wb") as worker_log:
            processes.append(subprocess.Popen(
                [str(spark_class), "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host", "127.0.0.1",
                 "--cores", str(cores), "--memory", memory, "--webui-port", str(worker_ui), "--work-dir", str(work / f"worker-{number}")],
                env=env, stdout=worker_log, stderr=subprocess.STDOUT,
            ))
    cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui}/json/", tuple(work / f"worker-{n}" for n in range(workers)))
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            with contextlib.suppress(OSError, ValueError):
                if cluster.state().get("aliveworkers", 0) >= workers:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the standalone cluster did not start:\n" + "".join(p.read_text() for p in sorted(work.glob("*.out"))))
            time.sleep(1)
        yield cluster
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=30)
