"""Autograde on a Dask cluster: each student is one task, graded with nbgrader's own
autograde by a worker process (:mod:`autograder.tools.parallel.worker`) on one of the
cluster's machines.

    python -m autograder autograde ASSIGNMENT --scheduler tls://HOST:8786 --cluster-keys DIR    # in the course folder

**The cluster speaks TLS only** (:mod:`.clusterkeys`): its scheduler, workers and nannies accept
only peers holding the course's key, which ``python -m autograder cluster-keys DIR`` makes; a
``tcp://`` scheduler is refused, since any local user who reaches one runs code as its workers.

**Where the files live.** In one course folder that every machine mounts at the same
path, as nbgrader on JupyterHub assumes: submissions are read from it and the
autograded notebooks written into it, by whichever worker grades the student. The
gradebook is the course's (or ``--db-url``'s); a SQLite file is refused once a worker
runs on another machine, since nbgrader's writers on several machines would share one
file over the network.

**This process, the driver**, imports no nbgrader (a second of every command) and reads
no gradebook. It

1. checks that every worker sees the same course and runs the same software (a
   worker with another checkout of the graders would give other grades);
2. asks one worker to plan like the local command (:func:`plan_task`, :func:`state.plan`):
   who is graded already, and for everyone else the grading they have now
   (:func:`state.graded_mark`); that worker then creates every student to grade in the
   gradebook (several processes creating one student at once fail with a unique
   violation), while every other worker starts its grading process (:func:`start_task`);
   and only then
3. submits one task per student, and reports each as it ends with the local command's
   bar and lines. ``--log`` gets nbgrader's output of each.

**On a worker**, a task hands its student to a grading process of its own thread,
started at the first task there and kept for the rest of the run, so nbgrader and the
fork server start once per worker thread, not once per student. It is kept after the
run too, for :data:`IDLE_SECONDS` after its last task (``AUTOGRADER_GRADER_IDLE_SECONDS`` in
the worker's environment; 0 ends it with its run), whether or not the run's driver lived to
close it: the next run, another assignment's say, reuses it and its fork server; nbgrader
reads the course's configuration again at that run's first task, as a new command would, and
the fork server starts again if the kernels' environment changed (their kernelspec's, say). A
run for another course folder or gradebook (a folder replaced at the same path too), or after the
grading software changed on disk (:func:`software`), starts a new one. That process dies
with its thread's worker (``PR_SET_PDEATHSIG``), and its kernels with it.

**When a worker dies** Dask reruns its tasks elsewhere, up to the scheduler's
``distributed.scheduler.allowed-failures`` (3 by default); after that the student
alone is reported failed. A rerun is idempotent: it takes the student's lock, and a
student whose grading changed since the plan was graded by the earlier attempt and
is reported with those points, not graded again. Half-written output of a killed
grading is removed, as the local command removes it.

**Ctrl-C** (or SIGTERM) stops the gradings in progress in order: each grading process
gets SIGINT, nbgrader removes its half-written output, the tasks not started yet
end at once; running the command again resumes.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import platform
import socket
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Iterable, TextIO
from urllib.parse import urlsplit

from autograder.tools.errors import ParallelError
from autograder.tools.parallel.progress import Outcome, Progress
from autograder.tools.parallel.run import (
    STOP_GRACE, WORKER_EXIT_SECONDS, BatchResult, Workers, chosen_students, course_lock, course_root,
    discard_partial_by_worker, restore_sigterm, terminate_as_interrupt,
)
from autograder.tools.parallel.worker import DB_URL_ENV
from autograder.tools.repository import REPO_ROOT, tool_env

#: Seconds to reach the scheduler, and then to wait for its first worker.
CONNECT_SECONDS = 30.0
#: Packages whose versions must be the driver's on every worker: they decide the grades, or run the
#: kernels and the notebook (a kept grading process, which imported them, ends when one changes).
GRADING_PACKAGES = ("nbgrader", "jax", "jaxlib", "hypothesis", "numpy", "scipy", "ml_dtypes", "ipykernel", "ipython",
                    "nbclient", "nbconvert", "nbformat", "jupyter_client", "traitlets", "pyzmq")
#: Seconds a worker keeps an idle grading process for the next run, unless its environment's
#: :data:`IDLE_SECONDS_ENV` says otherwise: several assignments graded one after another start
#: nbgrader and a fork server once (about 5 s of two cores each time, measured).
IDLE_SECONDS = 120.0
IDLE_SECONDS_ENV = "AUTOGRADER_GRADER_IDLE_SECONDS"
#: Seconds a grading process started ahead of its run's tasks (:func:`start_task`) waits for the first.
START_AHEAD_SECONDS = 60.0


def autograde(
    assignment: str,
    scheduler: str,
    course_dir: Path | str = ".",
    students: Iterable[str] | None = None,
    force: bool = False,
    out: TextIO | None = None,
    log: Path | str | None = None,
    db_url: str | None = None,
    keys: Path | str | None = None,
) -> BatchResult:
    """Autograde ``assignment``'s submissions in ``course_dir`` on the Dask cluster at ``scheduler``.

    The arguments are the local command's (:func:`autograder.tools.parallel.run.autograde`);
    the workers are the cluster's, reached over TLS with the keys in ``keys`` (or those Dask's
    configuration names: :func:`clusterkeys.driver_security`). Raises :class:`ParallelError` when nothing can be graded
    (no gradebook, unknown assignment, no submissions, no scheduler, workers that do not see
    the course or run other software)."""
    start = time.monotonic()
    root, chosen = course_root(course_dir), chosen_students(students)
    security = _security(scheduler, keys)
    with course_lock(root, assignment):
        return _ClusterRun(root, assignment, scheduler, chosen, force, out or sys.stdout, log, db_url, start,
                           security).run()


def _security(scheduler: str, keys: Path | str | None):
    try:
        from autograder.tools.parallel import clusterkeys

        return clusterkeys.driver_security(scheduler, None if keys is None else Path(keys))
    except ImportError:
        raise ParallelError("autograde: --scheduler needs Dask's distributed package "
                            "(pip install -e '.[cluster]')") from None


class _ClusterRun:
    def __init__(self, root, assignment, scheduler, students, force, out, log, db_url, start, security):
        self.root, self.assignment, self.scheduler, self.security = root, assignment, scheduler, security
        self.students, self.force, self.out, self.db_url, self.start = students, force, out, db_url, start
        self.log = open(log, "a", encoding="utf-8") if log else None
        self.run_id = uuid.uuid4().hex[:12]
        self.notice: str | None = None  # said at start and end when kernels run unconfined

    def run(self) -> BatchResult:
        result = BatchResult(self.assignment, workers=0)
        previous = terminate_as_interrupt()
        client = progress = None
        try:
            client = _connect(self.scheduler, self.security)
            result.workers, remote = self._check_workers(client)
            plan = self._plan(client, remote)
            self.students = plan["students"]
            self._check_confinement(client, plan["allow_unconfined"])
            todo = plan["marks"]
            width = max(map(len, self.students))
            progress = Progress(self.out, len(self.students), len(todo), result.workers, start=self.start)
            for done in plan["done"]:
                outcome = Outcome.skipped(done)
                result.outcomes.append(outcome)
                progress.report(outcome, width)
            if todo:
                self._grade(client, todo, result, progress, width)
        except KeyboardInterrupt:
            result.interrupted = True
            if client is not None and progress is not None:
                self._interrupt(client, result, progress, width)
        finally:
            restore_sigterm(previous)
            if progress:
                progress.close()
            if client is not None:
                with contextlib.suppress(Exception):
                    client.run(close_run, self.run_id)
                client.close()
            if self.log:
                self.log.close()
        result.finish(self.students, self.start)
        if self.notice:
            self.out.write(self.notice + "\n")
        self.out.write(result.summary() + "\n")
        self.out.flush()
        return result

    # ------------------------------------------------------------ before any task

    def _check_workers(self, client) -> tuple[int, list[str]]:
        """The workers' threads, once each is known to see this course and run this software, and
        the other machines they run on."""
        workers = client.scheduler_info(n_workers=-1)["workers"]
        self.addresses = sorted(workers)
        remote = sorted({urlsplit(address).hostname for address in workers} - _this_machine())
        ours = course_view(str(self.root)), software()
        seen = client.run(course_view, str(self.root))
        for address, view in sorted(seen.items()):
            if view != ours[0]:
                raise ParallelError(
                    f"autograde: the worker {address} does not see the course folder {self.root} as this machine "
                    "does (no such folder, or another nbgrader_config.py there): every machine must mount the "
                    "course at the same path"
                )
        for address, theirs in sorted(client.run(software).items()):
            differ = sorted(k for k in ours[1] if theirs.get(k) != ours[1][k])
            if differ:
                raise ParallelError(
                    f"autograde: the worker {address} grades with other software than this machine "
                    f"({'; '.join(f'{k}: {theirs.get(k)} there, {ours[1][k]} here' for k in differ)}); "
                    "install the same course checkout and packages on every machine"
                )
        try:
            running = client.run(code_in_use)
        except Exception:  # noqa: BLE001 - a worker whose old tasks lack it runs older code still
            running = {}
        stale = sorted(address for address in workers if running.get(address) != ours[1]["autograder"])
        if stale:
            raise ParallelError(
                f"autograde: the workers {', '.join(stale)} run the course's code as it was when they started, not "
                "the code on disk now (it changed since): restart the cluster's workers (dask worker), then run "
                "this again"
            )
        return sum(w["nthreads"] for w in workers.values()), remote

    def _plan(self, client, remote: list[str]) -> dict:
        """The run's plan, from one worker's grading process (:func:`plan_task`); every other
        worker starts its own meanwhile."""
        request = {"assignment": self.assignment, "students": self.students, "force": self.force,
                   "create": True, "remote": remote}
        planned = client.submit(plan_task, self.run_id, str(self.root), request, self.db_url,
                                key=f"autograde-plan-{self.assignment}-{self.run_id}", pure=False)
        self.started = [  # kept: Dask forgets a task whose every future is gone
            client.submit(start_task, self.run_id, str(self.root), self.db_url, workers=[address],
                          allow_other_workers=False, key=f"autograde-start-{self.run_id}-{address}", pure=False)
            for address in self.addresses
        ]
        try:
            reply = planned.result()
        except Exception as error:  # noqa: BLE001 - every worker that took it died, say
            raise ParallelError(
                f"autograde: planning the run on a worker failed: {type(error).__name__}: {error}") from None
        if "error" in reply:
            raise ParallelError(reply["error"])
        return {**reply["plan"], "allow_unconfined": reply["allow_unconfined"]}

    def _check_confinement(self, client, allow_unconfined: bool) -> None:
        """Stop if a worker cannot confine its kernels and the course did not allow it; say on
        screen which jail the kernels start in, or that (and where) they run unconfined."""
        said = client.run(confinement_here, allow_unconfined)
        for address, kernels in sorted(said.items()):
            if "refusal" in kernels:
                raise ParallelError(f"autograde: on the worker {address}: {kernels['refusal']}")
        unconfined = sorted(address for address, kernels in said.items() if "unconfined" in kernels)
        if unconfined:
            self.notice = f"{said[unconfined[0]]['unconfined']} (on the workers {', '.join(unconfined)})"
        jails = sorted({kernels["jail"] for kernels in said.values() if "jail" in kernels})
        self.out.write(f"kernels: {'; '.join(filter(None, [self.notice, *('in ' + j for j in jails)]))}\n")

    # ------------------------------------------------------------ grading

    def _grade(self, client, todo: dict, result: BatchResult, progress: Progress, width: int) -> None:
        self.futures = {}
        for student, mark in todo.items():
            future = client.submit(
                grade_task, self.run_id, str(self.root), self.assignment, student, mark, self.db_url,
                key=f"autograde-{self.assignment}-{student}-{self.run_id}", pure=False,
            )
            self.futures[future.key] = (student, future)
        progress.grading_since = time.monotonic()
        result.startup_seconds = progress.grading_since - self.start
        self.pending = set(self.futures)
        while self.pending:
            for future in self._ended(timeout=1.0):
                self._report(future, result, progress, width)
            progress.tick()
        result.grading_seconds = time.monotonic() - progress.grading_since

    def _ended(self, timeout: float) -> list:
        """The futures of pending tasks that end within ``timeout`` seconds (maybe none)."""
        from distributed import wait

        waiting = [self.futures[key][1] for key in self.pending]
        try:
            done, _ = wait(waiting, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return []
        return list(done)

    def _report(self, future, result: BatchResult, progress: Progress, width: int) -> Outcome:
        self.pending.discard(future.key)
        student, _ = self.futures[future.key]
        outcome = self._outcome(student, future)
        result.outcomes.append(outcome)
        progress.report(outcome, width)
        return outcome

    def _outcome(self, student: str, future) -> Outcome:
        from distributed.scheduler import KilledWorker

        if future.status == "finished":
            reply = future.result()
            if self.log and reply.get("log"):
                self.log.write(f"===== {self.assignment} / {student} ({reply.get('where', '?')}) =====\n"
                               f"{reply['log']}\n")
                self.log.flush()
            if reply.get("lost"):  # its grading process died: nothing it half wrote may stay
                self._discard(student)
            return Outcome.of_reply(student, reply)
        if future.status == "cancelled":
            return Outcome(student, "interrupted")
        error = future.exception()
        self._discard(student)
        if isinstance(error, KilledWorker):
            return Outcome(student, "failed", error=(
                f"every worker that graded it died ({error.allowed_failures + 1} times, the scheduler's "
                "distributed.scheduler.allowed-failures); it is not retried in this run"))
        return Outcome(student, "failed", error=f"its task failed on the worker: {type(error).__name__}: {error}")

    def _discard(self, student: str) -> None:
        """Remove what a grading killed under ``student`` half wrote (by a process of its own:
        this one imports no nbgrader)."""
        env = tool_env()
        if self.db_url:
            env[DB_URL_ENV] = self.db_url
        discard_partial_by_worker(self.root, self.assignment, [student], env)

    def _interrupt(self, client, result: BatchResult, progress: Progress, width: int) -> None:
        """Ctrl-C: stop the gradings in progress, end the tasks not started, keep what finished."""
        pending = getattr(self, "pending", set())
        progress.close()
        self.out.write(f"stopping: the gradings in progress are stopped, {len(pending)} task(s) end; "
                       "Ctrl-C again to leave at once\n")
        self.out.flush()
        with contextlib.suppress(Exception):
            client.run(interrupt_run, self.run_id)
        deadline = time.monotonic() + STOP_GRACE
        try:
            while pending and time.monotonic() < deadline:
                for future in self._ended(timeout=0.2):
                    pending.discard(future.key)
                    student, _ = self.futures[future.key]
                    outcome = self._outcome(student, future)
                    if outcome.status != "interrupted":  # the interrupted are listed together at the end
                        result.outcomes.append(outcome)
                        progress.report(outcome, width)
        except KeyboardInterrupt:
            pass
        with contextlib.suppress(Exception):
            client.cancel([self.futures[key][1] for key in pending])


def _connect(address: str, security):
    from distributed import Client

    try:
        client = Client(address, timeout=CONNECT_SECONDS, security=security)
    except (OSError, TimeoutError, ValueError) as error:
        raise ParallelError(f"autograde: no Dask scheduler answers at {address} to the course's keys "
                            f"(none there, or one started with other keys or none): {error}") from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError):
        client.close()
        raise ParallelError(f"autograde: the scheduler at {address} has no workers "
                            f"(none joined within {CONNECT_SECONDS:g} s)") from None
    return client


def _this_machine() -> set[str]:
    names = {"localhost", "127.0.0.1", "::1", socket.gethostname()}
    with contextlib.suppress(OSError):
        names |= set(socket.gethostbyname_ex(socket.gethostname())[2])
    return names


# ---------------------------------------------------------------- run on the workers


def course_view(root: str) -> str | None:
    """How this machine sees the course folder: a digest of its ``nbgrader_config.py``."""
    config = Path(root) / "nbgrader_config.py"
    try:
        return hashlib.sha256(config.read_bytes()).hexdigest()
    except OSError:
        return None


def software() -> dict[str, str]:
    """What decides the grades on this machine: Python, the grading packages, and the
    course's own code (a digest of the ``autograder`` package's sources)."""
    found = {"python": platform.python_version()}
    for package in GRADING_PACKAGES:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "not installed"
    found["autograder"] = _sources()
    return found


def _sources() -> str:
    """A digest of the ``autograder`` package's sources as they are on disk now."""
    digest = hashlib.sha256()
    package = REPO_ROOT / "autograder"
    for path in sorted(package.rglob("*.py")):
        with contextlib.suppress(OSError):  # not a file (an editor's lock link, say), or gone meanwhile
            if path.is_file():
                digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


#: The sources as they were when this process imported them: a Dask worker started before the
#: course's code changed on disk runs the old tasks (this module) until it is restarted.
_SOURCES_AT_IMPORT = _sources()


def code_in_use() -> str:
    """On a worker: the digest of the course's code this process runs (:data:`_SOURCES_AT_IMPORT`)."""
    return _SOURCES_AT_IMPORT


class _Grader:
    """A grading process (:mod:`autograder.tools.parallel.worker`) for one course folder and
    gradebook, owned by the worker thread that started it; it dies with that thread's process.
    ``run_id`` is the run it grades for now, ``idle_since`` when its last task ended (None while one runs)."""

    def __init__(self, key: tuple, root: str, db_url: str | None):
        env = tool_env()
        env.pop(DB_URL_ENV, None)
        if db_url:
            env[DB_URL_ENV] = db_url
        self.key = key
        self.run_id: str | None = None
        self.idle_since: float | None = None
        self.group = Workers(Path(root), 1, env)
        self.worker = self.group.workers[0]
        self.busy = False

    def alive(self) -> bool:
        return self.group.proc.poll() is None

    def close(self) -> None:
        """End it without keeping the caller (a worker's event loop, maybe) waiting."""
        threading.Thread(target=self.group.kill, kwargs={"grace": WORKER_EXIT_SECONDS}, daemon=True).start()


_graders: dict[int, _Grader] = {}  # worker thread -> its grading process
_stopped: set[str] = set()  # runs interrupted on this worker
_guard = threading.Lock()
_software: list = []  # (run, the software() digest as that run first found it)
_reaper: list[threading.Thread] = []


def idle_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get(IDLE_SECONDS_ENV, IDLE_SECONDS)))
    except ValueError:
        return IDLE_SECONDS


def _software_of(run_id: str) -> str:
    """What :func:`software` says, once per run: a grading process started before the grading
    software changed on disk runs the old one, and must not grade a later run."""
    if not _software or _software[0] != run_id:
        _software[:] = [run_id, repr(sorted(software().items()))]
    return _software[1]


def _folder_identity(root: str) -> tuple[int, int] | None:
    """Which folder stands at ``root`` now: a course folder replaced at the same path between two runs
    is another course, and a kept grading process works in the old one (its working folder)."""
    try:
        info = os.stat(root)
    except OSError:
        return None  # the grading process says what is wrong with it
    return info.st_dev, info.st_ino


def _grader(run_id: str, root: str, db_url: str | None) -> _Grader:
    thread = threading.get_ident()
    key = (root, _folder_identity(root), db_url, _software_of(run_id))
    with _guard:
        grader = _graders.get(thread)
        if grader is not None and (grader.key != key or not grader.alive()):
            grader.close()
            grader = None
        if grader is None:
            grader = _graders[thread] = _Grader(key, root, db_url)
        grader.run_id, grader.idle_since = run_id, None
        if not _reaper:
            _reaper.append(threading.Thread(target=_end_idle_graders, name="autograder-idle-graders", daemon=True))
            _reaper[0].start()
        return grader


def _end_idle_graders() -> None:
    """End each grading process idle for :func:`idle_seconds` since its last run."""
    while True:
        time.sleep(max(0.5, min(5.0, idle_seconds() / 4)))
        now = time.monotonic()
        with _guard:
            idle = [(thread, grader) for thread, grader in _graders.items()
                    if grader.idle_since is not None and now - grader.idle_since >= idle_seconds()]
            for thread, _ in idle:
                del _graders[thread]
        for _, grader in idle:
            grader.close()


def _forget(grader: _Grader) -> None:
    with _guard:
        for thread, known in list(_graders.items()):
            if known is grader:
                del _graders[thread]
    grader.close()


def _where() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return socket.gethostname()


def _asked(grader: _Grader, request: dict) -> dict | None:
    """The grading process's reply to ``request`` (None if it died meanwhile)."""
    grader.busy = True
    try:
        return grader.worker.ask(request)
    finally:
        # Idle from now until its next task: should the run's driver never close it (killed, its
        # terminal gone), the reaper still ends it once idle.
        grader.busy, grader.idle_since = False, time.monotonic()


def grade_task(run_id: str, root: str, assignment: str, student: str, expect, db_url: str | None) -> dict:
    """One student, on a Dask worker: the reply of :func:`autograder.tools.parallel.worker.grade`,
    with ``"where"`` (this worker) and ``"lost"`` when the grading process died under it."""
    start = time.monotonic()
    if run_id in _stopped:
        return {"student": student, "success": False, "interrupted": True, "seconds": 0.0, "where": _where()}
    grader = _grader(run_id, root, db_url)
    if not grader.worker.wait_ready():
        _forget(grader)
        return {"student": student, "success": False, "interrupted": False, "seconds": time.monotonic() - start,
                "error": grader.worker.failed_start, "where": _where()}
    reply = _asked(grader, {"assignment": assignment, "student": student, "force": True, "expect": expect,
                            "run": run_id})
    if reply is None:
        error = f"its grading process died: {grader.group.stderr_tail(3)}"
        _forget(grader)
        return {"student": student, "success": False, "interrupted": run_id in _stopped, "lost": True,
                "seconds": time.monotonic() - start, "error": error, "where": _where()}
    if reply.get("interrupted") or reply.get("ended"):
        _forget(grader)  # it has exited
    reply["where"] = _where()
    return reply


def confinement_here(allow_unconfined: bool) -> dict:
    """On a worker: :func:`autograder.confinement.kernel_manager.confinement_on_screen` (imported
    there: the driver, which only names it, would import Jupyter's kernel machinery for it)."""
    from autograder.confinement.kernel_manager import confinement_on_screen

    return confinement_on_screen(allow_unconfined)


def plan_task(run_id: str, root: str, request: dict, db_url: str | None) -> dict:
    """The run's plan, on a Dask worker: the reply of :func:`autograder.tools.parallel.worker.plan`
    from this thread's grading process, which then grades this run's tasks here."""
    grader = _grader(run_id, root, db_url)
    if not grader.worker.wait_ready():
        _forget(grader)
        return {"error": grader.worker.failed_start}
    reply = _asked(grader, {"plan": request, "run": run_id})
    if reply is None:
        error = f"autograde: the grading process on {_where()} died reading the course: {grader.group.stderr_tail(3)}"
        _forget(grader)
        return {"error": error}
    if reply.get("ended"):
        _forget(grader)  # it has exited
    return reply


def start_task(run_id: str, root: str, db_url: str | None) -> None:
    """On a Dask worker: start this thread's grading process for the run now, while another plans.
    Should no task of the run come (its plan failed, its driver died), it counts as idle from
    :data:`START_AHEAD_SECONDS` from now, and the reaper ends it."""
    grader = _grader(run_id, root, db_url)
    grader.idle_since = time.monotonic() + START_AHEAD_SECONDS


def interrupt_run(run_id: str) -> int:
    """On a worker: stop the run's gradings in progress (SIGINT) and its tasks yet to start."""
    with _guard:
        _stopped.add(run_id)
        busy = [g for g in _graders.values() if g.run_id == run_id and g.busy]
    for grader in busy:
        grader.worker.interrupt()
    return len(busy)


def close_run(run_id: str) -> int:
    """On a worker: the run is over. Its grading processes wait :func:`idle_seconds` for the
    next run (with 0, they end now); how many it had."""
    keep = idle_seconds() > 0
    with _guard:
        ours = [(t, g) for t, g in _graders.items() if g.run_id == run_id]
        for thread, grader in ours:
            if keep:
                grader.idle_since = time.monotonic()
            else:
                del _graders[thread]
    if not keep:
        for _, grader in ours:
            grader.close()
    return len(ours)
