"""A real Dask cluster on this machine: one scheduler process and one ``dask worker``
process with N worker processes (each with its nanny), started as the cluster
recipe of docs/cluster.md starts them on real machines: TLS only, with keys of its own
(``folder/keys``, made by :func:`clusterkeys.make_keys`), and the workers' files in a folder
of this user's alone. For the tests and the benchmark.

    with LocalCluster(folder, workers=2) as cluster:
        cluster.address           # tls://127.0.0.1:PORT
        cluster.driver_args       # ["--scheduler", address, "--cluster-keys", folder/keys], for the command
        cluster.worker_pids()     # {worker address: pid}, to kill one
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from autograder.tools.errors import ParallelError
from autograder.tools.parallel import clusterkeys, private
from autograder.tools.parallel.cluster import IDLE_SECONDS_ENV
from autograder.tools.repository import tool_env

#: Seconds the scheduler and its workers get to start.
START_SECONDS = 120.0


class LocalCluster:
    def __init__(self, folder: Path, workers: int, allowed_failures: int | None = None,
                 grader_idle_seconds: float | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.count = workers
        keys = self.folder / "keys"
        self.keys = clusterkeys.checked(keys) if (keys / clusterkeys.KEY).exists() else clusterkeys.make_keys(keys)
        tls = clusterkeys.dask_options(self.keys)
        workspace = private.private_folder(self.folder / "workers")  # Dask's default is /tmp/dask-scratch-space
        env = {**tool_env(), **clusterkeys.CLUSTER_ENV}
        # One task per worker thread, none queued behind it: a worker that dies costs a retry
        # (allowed-failures) only to the student it was grading.
        env["DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION"] = "1.0"
        if allowed_failures is not None:
            env["DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"] = str(allowed_failures)
        if grader_idle_seconds is not None:  # how long a worker keeps its grading process for the next run
            env[IDLE_SECONDS_ENV] = f"{grader_idle_seconds:g}"
        scheduler_file = self.folder / "scheduler.json"
        scheduler_file.unlink(missing_ok=True)
        self.log = open(self.folder / "cluster.log", "a")
        self.processes: list[subprocess.Popen] = []
        try:
            self._start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--protocol", "tls", "--host",
                         "127.0.0.1", "--port", "0", *clusterkeys.HTTP_OPTIONS, "--scheduler-file", str(scheduler_file), *tls],
                        env)
            self.address = self._read_address(scheduler_file)
            self._start([sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--nworkers", str(workers),
                         "--nthreads", "1", "--host", "127.0.0.1", *clusterkeys.HTTP_OPTIONS,
                         "--local-directory", str(workspace), *tls], env)
            self.wait_for_workers(workers)
        except BaseException:
            self.close()
            raise

    def _start(self, argv: list[str], env: dict[str, str]) -> None:
        self.processes.append(subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.log,
                                               stderr=self.log, start_new_session=True))

    def _read_address(self, scheduler_file: Path) -> str:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError, KeyError):
                return json.loads(scheduler_file.read_text())["address"]
            if self.processes[0].poll() is not None:
                break
            time.sleep(0.1)
        raise ParallelError(f"the Dask scheduler did not start; see {self.folder / 'cluster.log'}")

    @property
    def driver_args(self) -> list[str]:
        """The options of ``python -m autograder autograde`` that grade on this cluster."""
        return ["--scheduler", self.address, "--cluster-keys", str(self.keys.key.parent)]

    def client(self):
        from distributed import Client

        return Client(self.address, timeout=START_SECONDS, set_as_default=False,
                      security=clusterkeys.security(self.keys))

    def wait_for_workers(self, count: int | None = None) -> None:
        with self.client() as client:
            client.wait_for_workers(count or self.count, timeout=START_SECONDS)

    def worker_pids(self) -> dict[str, int]:
        with self.client() as client:
            return client.run(os.getpid)

    def close(self) -> None:
        for proc in reversed(self.processes):  # the workers first, then the scheduler
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # anything of its group still there
            proc.wait()
        self.processes.clear()
        self.log.close()

    def __enter__(self) -> "LocalCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
