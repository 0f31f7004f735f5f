"""Autograde the students of one assignment in parallel, with nbgrader's own machinery.

    python -m autograder autograde ASSIGNMENT [--workers N]    # in the course folder

``nbgrader autograde`` grades one student after another (nbgrader issue #174).
Here a few long-lived worker processes each run nbgrader's ``NbGraderAPI.autograde``
for one student at a time: the same preprocessors, the same kernel per notebook,
the same ``autograded/`` folder and the same gradebook, so the grades are the
ones a serial run gives. What changes:

- **Concurrency.** ``--workers`` students at once (default: one per core).
- **Start-up paid once.** This process (the coordinator) never imports nbgrader:
  one worker process imports it and forks itself into the others
  (:mod:`autograder.tools.parallel.worker`), and the first worker reads the course
  and the gradebook for the coordinator. Meanwhile the coordinator starts one fork
  server (:mod:`autograder.confinement.forkserver`) whose forks are every worker's
  kernels, so ipykernel, JAX and the graders are imported once per run.
- **The gradebook.** A SQLite gradebook is opened with a busy timeout, so a writer
  waits for another instead of failing with "database is locked"; a student whose
  grading still met a locked database is graded again.
- **Resuming.** A student whose autograded notebook and gradebook scores are
  complete and newer than the submission is skipped (see
  :mod:`autograder.tools.parallel.state`), so running the command again after Ctrl-C or
  a crash grades only the rest. ``--force`` grades everyone again.
- **Interruptions.** Ctrl-C (or SIGTERM) stops the students in progress the way
  it stops ``nbgrader autograde``: their half-written output is removed, nothing
  half-done counts as graded.
- **Progress.** One line per student as it finishes (points, or why nbgrader
  could not grade it), and on a terminal a bar with the time left. A submission
  nbgrader cannot grade (not JSON, a kernel that dies) fails alone; the batch goes on.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import queue
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, TextIO

from autograder.tools.errors import ParallelError
from autograder.tools.parallel import private
from autograder.tools.parallel.progress import Outcome, Progress, clock
from autograder.tools.parallel.worker import DB_URL_ENV
from autograder.tools.repository import tool_env
from autograder.tools.versions import graded_with

__all__ = ["BatchResult", "Outcome", "ParallelError", "autograde"]

#: Seconds the students in progress get to stop after Ctrl-C before their workers are killed.
STOP_GRACE = 20.0
#: Seconds a worker whose work is done gets to exit by itself before it is killed.
WORKER_EXIT_SECONDS = 15.0
WORKER_MODULE = "autograder.tools.parallel.worker"


@dataclass
class BatchResult:
    """What one run did to each student of the assignment."""

    assignment: str
    workers: int
    outcomes: list[Outcome] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0  # the whole run
    startup_seconds: float | None = None  # until the first student went to a ready worker
    grading_seconds: float | None = None  # from then until the last student finished
    cpu_seconds: dict = field(default_factory=dict)  # per kind of process: see _Run._end

    def finish(self, students: list[str] | None, start: float) -> None:
        """At the end of a run: every student not reported counts as interrupted (if the run
        was), and the run's seconds since ``start``."""
        if self.interrupted:
            finished = {o.student_id for o in self.outcomes}
            self.outcomes += [Outcome(s, "interrupted") for s in students or () if s not in finished]
        self.seconds = time.monotonic() - start

    def students(self, status: str) -> list[str]:
        return [o.student_id for o in self.outcomes if o.status == status]

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        return 1 if self.students("failed") else 0

    def as_json(self) -> dict:
        return {
            "assignment": self.assignment,
            "workers": self.workers,
            "interrupted": self.interrupted,
            "seconds": self.seconds,
            "startup_seconds": self.startup_seconds,
            "grading_seconds": self.grading_seconds,
            "cpu_seconds": self.cpu_seconds,
            "outcomes": [asdict(o) for o in self.outcomes],
        }

    def summary(self) -> str:
        counts = ", ".join(
            f"{len(self.students(s))} {s}" for s in ("graded", "skipped", "failed", "interrupted") if self.students(s)
        )
        text = (f"{self.assignment}: {counts or 'no students'} in {clock(self.seconds)} "
                f"with {self.workers} worker{'s' if self.workers != 1 else ''}")
        if self.students("failed"):
            text += (f"\nnbgrader could not grade: {', '.join(sorted(self.students('failed')))} "
                     "(reasons above; they are retried on the next run)")
        if self.interrupted and not self.outcomes:  # before the plan said who is to be graded
            text += "\ninterrupted before grading began: nothing was graded; run the same command again"
        elif self.interrupted:
            left = len(self.students("interrupted"))
            text += (f"\ninterrupted: {left} student{'s' if left != 1 else ''} not graded yet; "
                     "run the same command again to resume")
        return text


def autograde(
    assignment: str,
    course_dir: Path | str = ".",
    workers: int | None = None,
    students: Iterable[str] | None = None,
    force: bool = False,
    out: TextIO | None = None,
    log: Path | str | None = None,
    db_url: str | None = None,
) -> BatchResult:
    """Autograde ``assignment``'s submissions in ``course_dir`` with ``workers`` processes.

    ``students`` limits the run to those ids; ``force`` grades students already
    graded again; ``log`` appends nbgrader's full output for each student there;
    ``db_url`` replaces the gradebook the course's configuration names.
    Progress goes to ``out`` (default stdout). Raises :class:`ParallelError` when
    nothing can be graded (no gradebook, unknown assignment, no submissions).
    """
    start = time.monotonic()
    out = out or sys.stdout
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise ParallelError(f"autograde: --workers must be at least 1, not {workers}")
    root, chosen = course_root(course_dir), chosen_students(students)
    with course_lock(root, assignment):
        return _Run(root, assignment, chosen, workers, force, out, log, start, db_url).run()


def course_root(course_dir: Path | str) -> Path:
    """The course folder, resolved; :class:`ParallelError` when there is none."""
    root = Path(course_dir).resolve()
    if not root.is_dir():
        raise ParallelError(f"autograde: course folder {root} does not exist")
    return root


def chosen_students(students: Iterable[str] | None) -> list[str] | None:
    return None if students is None else sorted(set(students))


class course_lock:
    """One parallel run per course and assignment at a time (two would grade the same students).

    The lock is a file in the instructor's private folder of the course (:mod:`.private`), never
    in a shared folder such as ``/tmp``, where another user could hold it first, or plant a link at
    its predictable name to a file the command would then truncate (red team, issue 51). Being in
    the course folder, it also keeps apart two drivers on two machines that mount it."""

    def __init__(self, root: Path, assignment: str):
        key = hashlib.sha256(assignment.encode()).hexdigest()[:16]
        self.folder = root / private.FOLDER
        self.path = self.folder / f"autograde-{key}.lock"
        self.what = f"{assignment!r} in {root}"

    def __enter__(self):
        self.fd = private.open_owned(private.private_folder(self.folder), self.path.name)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise ParallelError(f"autograde: another parallel autograde of {self.what} is running") from None
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


class Workers:
    """One worker process (:mod:`autograder.tools.parallel.worker`) that forks itself into
    ``count`` workers, and a channel (two pipes) to each."""

    def __init__(self, root: Path, count: int, env: dict[str, str]):
        theirs, ours = [], []
        for _ in range(count):
            tasks_in, tasks_out = os.pipe()
            results_in, results_out = os.pipe()
            theirs.append((tasks_in, results_out))
            ours.append((tasks_out, results_in))
        self.stderr = tempfile.TemporaryFile(mode="w+")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", WORKER_MODULE, "--channels", ",".join(f"{r}:{w}" for r, w in theirs)],
                cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=self.stderr, stderr=self.stderr,
                pass_fds=[fd for pair in theirs for fd in pair],
                start_new_session=True,  # Ctrl-C reaches the coordinator, which stops workers in order
            )
        finally:
            for fd in (fd for pair in theirs for fd in pair):
                os.close(fd)
        self.root = root
        self.workers = [_Worker(self, *pair) for pair in ours]

    def stderr_tail(self, lines: int = 12) -> str:
        self.stderr.seek(0)
        return "\n".join(self.stderr.read().strip().splitlines()[-lines:])

    def close(self) -> None:
        for worker in self.workers:
            worker.close()

    def kill(self, grace: float = 0.0) -> None:
        """End the workers: after ``grace`` seconds to leave by themselves (their channels closed), by SIGKILL."""
        self.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=grace)
        for worker in self.workers[1:]:  # the first worker's children; they end with it anyway
            if worker.pid is not None and self.proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.kill(worker.pid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.stderr.close()


class _Worker:
    """One worker of a :class:`Workers` process: its channel, and its pid once it is ready."""

    def __init__(self, group: Workers, tasks: int, results: int):
        self.group = group
        self.tasks = os.fdopen(tasks, "w", buffering=1)
        self.results = os.fdopen(results, "r")
        self.pid: int | None = None
        self.ready: dict | None = None
        self.failed_start = ""
        self.cpu_seconds: float | None = None  # its own, as of its last reply

    def wait_ready(self) -> bool:
        """Wait for the worker to load nbgrader and the course configuration."""
        if self.ready is not None:
            return True
        try:
            ready = self.receive()
        except (OSError, ValueError):
            ready = None
        if ready and ready.get("ready"):
            self.ready, self.pid = ready, ready["pid"]
            return True
        reason = (ready or {}).get("error") or self.group.stderr_tail()
        self.failed_start = f"autograde: a worker could not start nbgrader in {self.group.root}:\n{reason}"
        return False

    def ask(self, request: dict) -> dict | None:
        """Send one request; its reply, or None if the worker is gone."""
        try:
            self.tasks.write(json.dumps(request) + "\n")
            self.tasks.flush()
            return self.receive()
        except (OSError, ValueError):
            return None

    def receive(self) -> dict | None:
        line = self.results.readline()
        reply = json.loads(line) if line else None
        if reply and "cpu_seconds" in reply:
            self.cpu_seconds = reply["cpu_seconds"]
        return reply

    def died(self) -> str:
        """How the worker ended, for a student it was grading."""
        if self is self.group.workers[0]:
            return f"the worker grading it died (exit code {self.group.proc.wait()})"
        return "the worker grading it died"

    def interrupt(self) -> None:
        if self.pid is not None and self.group.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGINT)

    def close(self) -> None:
        for stream in (self.tasks, self.results):
            with contextlib.suppress(OSError):
                stream.close()


def _start_fork_server():
    """The fork server every worker's kernels come from, started now so it imports while the
    workers import nbgrader; None where it cannot start (each worker then starts its own)."""
    from autograder.confinement import environment, forkserver
    from autograder.grading import compiler

    try:  # a forked kernel is a copy of the server: its first environment too (/proc/self/environ)
        return forkserver.Server(compiler.kernel_environment(environment.kernel_environment(tool_env())), wait=False)
    except OSError:
        return None


def discard_partial_by_worker(root: Path, assignment: str, students: list[str], env: dict[str, str]) -> None:
    """Remove the half-written gradings of students whose worker was killed (done by a worker
    process of its own: only workers import nbgrader)."""
    if students:
        subprocess.run([sys.executable, "-m", WORKER_MODULE, "--discard", assignment, *students],
                       cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False)


class _Run:
    def __init__(self, root, assignment, students, workers, force, out, log, start, db_url=None):
        self.root, self.assignment, self.force = root, assignment, force
        self.students, self.workers, self.out = students, workers, out
        self.log = open(log, "a", encoding="utf-8") if log else None
        self.todo: queue.Queue[str] = queue.Queue()
        self.results: queue.Queue[tuple[str, dict | None, _Worker]] = queue.Queue()
        self.stop = threading.Event()
        self.groups: list[Workers] = []
        self.idle: queue.Queue[_Worker] = queue.Queue()  # started, not yet given a thread
        self.in_flight: set[str] = set()
        self.server = None
        self.env = tool_env()
        if db_url:
            self.env[DB_URL_ENV] = db_url
        self.start = start
        self.first_task_at: float | None = None
        self.finished_at: float | None = None
        self.notice: str | None = None  # said at start and end when kernels run unconfined

    def run(self) -> BatchResult:
        result = BatchResult(self.assignment, self.workers)
        progress = None
        previous = terminate_as_interrupt()
        try:
            self.server = _start_fork_server()
            if self.server is not None:
                from autograder.confinement.forkserver import SHARED_ENV

                self.env[SHARED_ENV] = self.server.shared
            self._start_workers(self.workers)
            skipped = self._plan()
            done = {o.student_id for o in skipped}
            for student in self.students:
                if student not in done:
                    self.todo.put(student)
            todo = self.todo.qsize()
            result.workers = min(self.workers, todo) or self.workers
            progress = Progress(self.out, len(self.students), todo, result.workers, start=self.start)
            for outcome in skipped:
                progress.report(outcome, self.name_width)
                result.outcomes.append(outcome)
            if todo:
                self._grade(result, progress)
        except KeyboardInterrupt:
            result.interrupted = True
            self._interrupt(result, progress)
        finally:
            restore_sigterm(previous)
            if progress:
                progress.close()
            result.cpu_seconds = self._end(grace=0.0 if result.interrupted else WORKER_EXIT_SECONDS)
            if self.log:
                self.log.close()
        result.finish(self.students, self.start)
        if self.notice:
            self.out.write(self.notice + "\n")
        if self.first_task_at is not None:
            result.startup_seconds = self.first_task_at - self.start
            if self.finished_at is not None:
                result.grading_seconds = self.finished_at - self.first_task_at
        self.out.write(result.summary() + "\n")
        self.out.flush()
        return result

    def _start_workers(self, count: int) -> None:
        group = Workers(self.root, count, self.env)
        self.groups.append(group)
        for worker in group.workers:
            self.idle.put(worker)

    def _plan(self) -> list[Outcome]:
        """Ask the first worker which students to grade; skipped outcomes for those already fully
        graded (unless forced)."""
        first = self.groups[0].workers[0]
        if not first.wait_ready():
            raise ParallelError(first.failed_start)
        if "refusal" in first.ready:
            raise ParallelError(first.ready["refusal"])
        if self.server is not None and not first.ready.get("fork_server"):
            self.server.close()  # this course's kernels do not fork: nobody will attach
        self.notice = first.ready.get("unconfined")
        how = "forked from a fork server" if first.ready.get("fork_server") else "started afresh"
        self.out.write(f"kernels: {self.notice or 'in ' + first.ready['jail']}, {how}. {graded_with()}\n")
        reply = first.ask({"plan": {"assignment": self.assignment, "students": self.students, "force": self.force}})
        if reply is None:
            raise ParallelError(f"autograde: the first worker died reading the course: {first.group.stderr_tail()}")
        if "error" in reply:
            raise ParallelError(reply["error"])
        plan = reply["plan"]
        self.students = plan["students"]
        self.name_width = max(map(len, self.students))
        return [Outcome.skipped(done) for done in plan["done"]]

    def _end(self, grace: float) -> dict:
        """Stop the workers, then the fork server; the CPU seconds of each kind of process."""
        before = _children_cpu()
        for group in self.groups:
            group.close()
        for group in self.groups:
            # Time to end as a process should: the first worker waits for the others, so that
            # their CPU time is counted, and nothing is left to init.
            group.kill(grace=grace)
        workers = _children_cpu()
        if self.server is not None:
            self.server.close()  # it waits for its last kernels
        own = resource.getrusage(resource.RUSAGE_SELF)
        return {
            "coordinator": own.ru_utime + own.ru_stime,
            "workers": workers - before,  # nbgrader in each, and any kernel started afresh
            "each_worker": [w.cpu_seconds for g in self.groups for w in g.workers if w.cpu_seconds is not None],
            "fork_server_and_kernels": _children_cpu() - workers,
        }

    def _grade(self, result: BatchResult, progress: Progress) -> None:
        self.progress = progress
        threads = [self._feed_next() for _ in range(result.workers)]
        graded = 0
        while graded < progress.todo:
            try:
                student, reply, worker = self.results.get(timeout=1.0)
            except queue.Empty:
                progress.tick()
                if not any(t.is_alive() for t in threads) and self.results.empty():
                    reasons = {w.failed_start for g in self.groups for w in g.workers if w.failed_start}
                    reason = "\n".join(reasons) or "autograde: every worker stopped before the students were graded"
                    raise ParallelError(reason) from None
                continue
            outcome = self._outcome(student, reply, worker)
            self.in_flight.discard(student)
            result.outcomes.append(outcome)
            progress.report(outcome, self.name_width)
            graded += 1
            if outcome.status == "failed" and reply is None and not self.todo.empty():
                self._start_workers(1)  # a crash (the OOM killer?) took that worker
                threads.append(self._feed_next())
        self.finished_at = time.monotonic()

    def _feed_next(self) -> threading.Thread:
        thread = threading.Thread(target=self._feed, args=(self.idle.get_nowait(),), daemon=True)
        thread.start()
        return thread

    def _feed(self, worker: _Worker) -> None:
        """One thread per worker: hand it students until none are left or the run stops."""
        if not worker.wait_ready():
            return
        while not self.stop.is_set():
            try:
                student = self.todo.get_nowait()
            except queue.Empty:
                break
            if self.first_task_at is None:
                self.first_task_at = self.progress.grading_since = time.monotonic()
            self.in_flight.add(student)
            reply = worker.ask({"assignment": self.assignment, "student": student, "force": True})
            self.results.put((student, reply, worker))
            if reply is None or reply.get("interrupted"):
                return  # that worker is gone

    def _outcome(self, student: str, reply: dict | None, worker: _Worker) -> Outcome:
        if self.log and reply and reply.get("log"):
            self.log.write(f"===== {self.assignment} / {student} =====\n{reply['log']}\n")
            self.log.flush()
        if reply is None:  # the worker is gone: we stopped it, or it crashed
            if self.stop.is_set():
                return Outcome(student, "interrupted")  # its half-written output goes after the others stop
            reason = f"{worker.died()}: {worker.group.stderr_tail(3)}"
            discard_partial_by_worker(self.root, self.assignment, [student], self.env)
            return Outcome(student, "failed", error=reason)
        return Outcome.of_reply(student, reply)

    def _interrupt(self, result: BatchResult, progress: Progress | None) -> None:
        """Ctrl-C: stop handing out students, stop those in progress, keep what finished."""
        self.stop.set()
        if progress is None:  # interrupted while reading the course: nothing started yet
            return
        progress.close()
        self.out.write(f"stopping: {len(self.in_flight)} student(s) in progress are stopped; "
                       "Ctrl-C again to kill at once\n")
        self.out.flush()
        for group in self.groups:
            for worker in group.workers:
                worker.interrupt()
        deadline = time.monotonic() + STOP_GRACE
        stopped = []
        try:
            while self.in_flight and time.monotonic() < deadline:
                try:
                    student, reply, worker = self.results.get(timeout=0.2)
                except queue.Empty:
                    continue
                self.in_flight.discard(student)
                outcome = self._outcome(student, reply, worker)
                if reply is None:
                    stopped.append(student)
                if outcome.status != "interrupted":
                    result.outcomes.append(outcome)
                    progress.report(outcome, self.name_width)
        except KeyboardInterrupt:
            pass
        for group in self.groups:
            group.kill()
        # Students whose worker died or was killed before it could clean up after them.
        discard_partial_by_worker(self.root, self.assignment, sorted(set(stopped) | self.in_flight), self.env)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def terminate_as_interrupt():
    """SIGTERM (``kill``, a batch scheduler) stops a run in order, like Ctrl-C."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        return None  # signals belong to the main thread; leave them alone
    return signal.signal(signal.SIGTERM, handler)


def restore_sigterm(previous) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
