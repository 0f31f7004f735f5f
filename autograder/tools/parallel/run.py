"""Autograde the students of one assignment in parallel, with nbgrader's own machinery.

    python -m autograder autograde ASSIGNMENT [--workers N]    # in the course folder

``nbgrader autograde`` grades one student after another (nbgrader issue #174).
Here a few long-lived worker processes each run nbgrader's ``NbGraderAPI.autograde``
for one student at a time: the same preprocessors, the same kernel per notebook,
the same ``autograded/`` folder and the same gradebook, so the grades are the
ones a serial run gives. What changes:

- **Concurrency.** ``--workers`` students at once (default: one per core).
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
from autograder.tools.gradebook import automatic_points
from autograder.tools.parallel import state
from autograder.tools.parallel.progress import Outcome, Progress, clock
from autograder.tools.repository import tool_env

__all__ = ["BatchResult", "Outcome", "ParallelError", "autograde"]

#: Seconds the students in progress get to stop after Ctrl-C before their workers are killed.
STOP_GRACE = 20.0
#: Seconds a worker whose work is done gets to exit by itself before it is killed.
WORKER_EXIT_SECONDS = 15.0


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
        if self.interrupted:
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
) -> BatchResult:
    """Autograde ``assignment``'s submissions in ``course_dir`` with ``workers`` processes.

    ``students`` limits the run to those ids; ``force`` grades students already
    graded again; ``log`` appends nbgrader's full output for each student there.
    Progress goes to ``out`` (default stdout). Raises :class:`ParallelError` when
    nothing can be graded (no gradebook, unknown assignment, no submissions).
    """
    start = time.monotonic()
    out = out or sys.stdout
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise ParallelError(f"autograde: --workers must be at least 1, not {workers}")
    course = state.load_course(Path(course_dir))
    state.check_assignment(course, assignment)
    everyone = state.submitted_students(course, assignment)
    chosen = everyone if students is None else _chosen(students, everyone, course, assignment)
    if not chosen:
        pattern = course.coursedir.format_path(course.coursedir.submitted_directory, "*", assignment)
        raise ParallelError(f"autograde: no submissions of {assignment!r}: nothing matches {pattern}")

    with _course_lock(course, assignment):
        return _Run(course, assignment, chosen, workers, force, out, log, start).run()


def _chosen(students, everyone, course, assignment) -> list[str]:
    chosen = sorted(set(students))
    missing = [s for s in chosen if s not in everyone]
    if missing:
        raise ParallelError(
            f"autograde: no submission of {assignment!r} by {', '.join(map(repr, missing))} "
            f"under {course.coursedir.format_path(course.coursedir.submitted_directory, '*', assignment)}"
        )
    return chosen


class _course_lock:
    """One parallel run per course and assignment at a time (two would grade the same students)."""

    def __init__(self, course: state.Course, assignment: str):
        key = hashlib.sha256(f"{course.root}\0{assignment}".encode()).hexdigest()[:16]
        self.path = Path(tempfile.gettempdir()) / f"autograder-parallel-{key}.lock"
        self.what = f"{assignment!r} in {course.root}"

    def __enter__(self):
        self.file = open(self.path, "w")
        try:
            fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.file.close()
            raise ParallelError(f"autograde: another parallel autograde of {self.what} is running") from None
        return self

    def __exit__(self, *exc):
        self.file.close()


class _Worker:
    """A worker process (:mod:`autograder.tools.parallel.worker`) and its pipes."""

    def __init__(self, course: state.Course):
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.tools.parallel.worker"],
            cwd=course.root, env=tool_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.stderr, text=True, bufsize=1,
            start_new_session=True,  # Ctrl-C reaches the coordinator, which stops workers in order
        )
        self.root = course.root
        self.failed_start = ""

    def wait_ready(self) -> bool:
        """Wait for the worker to load nbgrader and the course configuration."""
        try:
            ready = self.receive()
        except (OSError, ValueError):
            ready = None
        if ready and ready.get("ready"):
            return True
        reason = (ready or {}).get("error") or self.stderr_tail()
        self.failed_start = f"autograde: a worker could not start nbgrader in {self.root}:\n{reason}"
        return False

    def send(self, task: dict) -> None:
        self.proc.stdin.write(json.dumps(task) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> dict | None:
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def stderr_tail(self, lines: int = 12) -> str:
        self.stderr.seek(0)
        return "\n".join(self.stderr.read().strip().splitlines()[-lines:])

    def interrupt(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def kill(self, grace: float = 0.0) -> None:
        """End the worker: after ``grace`` seconds to leave by itself (its stdin closed), by SIGKILL."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=grace)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.stderr.close()


class _Run:
    def __init__(self, course, assignment, students, workers, force, out, log, start):
        self.course, self.assignment, self.force = course, assignment, force
        self.students, self.workers, self.out = students, workers, out
        self.log = open(log, "a", encoding="utf-8") if log else None
        self.todo: queue.Queue[str] = queue.Queue()
        self.results: queue.Queue[tuple[str, dict | None, _Worker]] = queue.Queue()
        self.stop = threading.Event()
        self.pool: list[_Worker] = []
        self.in_flight: set[str] = set()
        self.name_width = max(map(len, students))
        self.start = start
        self.first_task_at: float | None = None
        self.finished_at: float | None = None

    def run(self) -> BatchResult:
        result = BatchResult(self.assignment, self.workers)
        progress = None
        previous = _terminate_as_interrupt()
        try:
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
            _restore_sigterm(previous)
            if progress:
                progress.close()
            for worker in self.pool:
                worker.close()
            for worker in self.pool:
                # Time to end as a process should: its fork server waits for the last kernels, so
                # that their CPU time is counted, and nothing is left to init.
                worker.kill(grace=0.0 if result.interrupted else WORKER_EXIT_SECONDS)
            if self.log:
                self.log.close()
        if result.interrupted:
            finished = {o.student_id for o in result.outcomes}
            result.outcomes += [Outcome(s, "interrupted") for s in self.students if s not in finished]
        result.seconds = time.monotonic() - self.start
        if self.first_task_at is not None:
            result.startup_seconds = self.first_task_at - self.start
            if self.finished_at is not None:
                result.grading_seconds = self.finished_at - self.first_task_at
        self.out.write(result.summary() + "\n")
        self.out.flush()
        return result

    def _plan(self) -> list[Outcome]:
        """Skipped outcomes for the students already fully graded (unless forced)."""
        if self.force:
            return []
        skipped = []
        with self.course.gradebook() as gb:
            for student in self.students:
                if state.is_complete(self.course, gb, self.assignment, student):
                    earned, possible = automatic_points(gb, self.assignment, student)
                    skipped.append(Outcome(student, "skipped", earned, possible))
        return skipped

    def _grade(self, result: BatchResult, progress: Progress) -> None:
        self.progress = progress
        threads = [self._start_worker() for _ in range(result.workers)]
        graded = 0
        while graded < progress.todo:
            try:
                student, reply, worker = self.results.get(timeout=1.0)
            except queue.Empty:
                progress.tick()
                if not any(t.is_alive() for t in threads) and self.results.empty():
                    reasons = {w.failed_start for w in self.pool if w.failed_start}
                    reason = "\n".join(reasons) or "autograde: every worker stopped before the students were graded"
                    raise ParallelError(reason) from None
                continue
            outcome = self._outcome(student, reply, worker)
            self.in_flight.discard(student)
            result.outcomes.append(outcome)
            progress.report(outcome, self.name_width)
            graded += 1
            if outcome.status == "failed" and reply is None and not self.todo.empty():
                threads.append(self._start_worker())  # a crash (the OOM killer?) took that worker
        self.finished_at = time.monotonic()

    def _start_worker(self) -> threading.Thread:
        worker = _Worker(self.course)
        self.pool.append(worker)
        thread = threading.Thread(target=self._feed, args=(worker,), daemon=True)
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
            try:
                worker.send({"assignment": self.assignment, "student": student, "force": True})
                reply = worker.receive()
            except (OSError, ValueError):
                reply = None
            self.results.put((student, reply, worker))
            if reply is None or reply.get("interrupted"):
                return  # that worker is gone

    def _outcome(self, student: str, reply: dict | None, worker: _Worker) -> Outcome:
        if self.log and reply and reply.get("log"):
            self.log.write(f"===== {self.assignment} / {student} =====\n{reply['log']}\n")
            self.log.flush()
        if reply is None:  # the worker is gone: we stopped it, or it crashed
            code = worker.proc.wait()
            state.discard_partial(self.course, self.assignment, student)
            if self.stop.is_set():
                return Outcome(student, "interrupted")
            reason = f"the worker grading it died (exit code {code}): {worker.stderr_tail(3)}"
            return Outcome(student, "failed", error=reason)
        if reply.get("interrupted") and not self._complete(student):
            state.discard_partial(self.course, self.assignment, student)
            return Outcome(student, "interrupted", seconds=reply["seconds"])
        if reply["success"]:
            return Outcome(student, "graded", reply["points"], reply["max_points"], reply["seconds"])
        return Outcome(student, "failed", seconds=reply["seconds"], error=reply.get("error", "see nbgrader's log"))

    def _complete(self, student: str) -> bool:
        with self.course.gradebook() as gb:
            return state.is_complete(self.course, gb, self.assignment, student)

    def _interrupt(self, result: BatchResult, progress: Progress | None) -> None:
        """Ctrl-C: stop handing out students, stop those in progress, keep what finished."""
        self.stop.set()
        if progress is None:  # interrupted while reading the course: nothing started yet
            return
        progress.close()
        self.out.write(f"stopping: {len(self.in_flight)} student(s) in progress are stopped; "
                       "Ctrl-C again to kill at once\n")
        self.out.flush()
        for worker in self.pool:
            worker.interrupt()
        deadline = time.monotonic() + STOP_GRACE
        try:
            while self.in_flight and time.monotonic() < deadline:
                try:
                    student, reply, worker = self.results.get(timeout=0.2)
                except queue.Empty:
                    continue
                self.in_flight.discard(student)
                outcome = self._outcome(student, reply, worker)
                if outcome.status != "interrupted":
                    result.outcomes.append(outcome)
                    progress.report(outcome, self.name_width)
        except KeyboardInterrupt:
            pass
        for worker in self.pool:
            worker.kill()
        for student in list(self.in_flight):  # killed before they answered
            state.discard_partial(self.course, self.assignment, student)


def _terminate_as_interrupt():
    """SIGTERM (``kill``, a batch scheduler) stops a run in order, like Ctrl-C."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        return None  # signals belong to the main thread; leave them alone
    return signal.signal(signal.SIGTERM, handler)


def _restore_sigterm(previous) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
