"""Does ``python -m autograder autograde A --scheduler ...`` grade on a real Dask cluster
exactly as plain ``nbgrader autograde`` grades, into a real PostgreSQL gradebook, when
a worker dies under a student, when every worker that takes one student dies, and
when the run is stopped with Ctrl-C and started again?

One PostgreSQL server (:mod:`postgres`), one scheduler and two worker processes with
their nannies (:class:`~autograder.tools.parallel.localcluster.LocalCluster`, started
as docs/cluster.md's recipe starts them, with ``allowed-failures`` 1). Two copies of one
scratch course with the submissions of ``test_parallel``: ``reference`` graded by plain
``nbgrader autograde`` into SQLite, ``cluster`` graded on the cluster into PostgreSQL:

1. a run during which the test kills (SIGKILL) the worker grading ``VICTIM`` once,
   and every worker that grades ``DOOMED``;
2. a ``--force`` run stopped with SIGINT after its first student;
3. the same command again, which resumes.

A worker keeps its grading process for the next run (``GRADER_IDLE`` seconds here): a
further course is graded twice in a row, its configuration changed in between, and then
left idle until every grading process is gone. Nothing else here is timed.
"""

from __future__ import annotations

import datetime
import fcntl
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from test_gradebook_url import server  # noqa: F401 - the PostgreSQL fixture
from test_parallel import ASSIGNMENT, CANNOT_GRADE, GRADED_LINE, SKIPPED_LINE, submissions

from autograder.tools import scratch
from autograder.tools.errors import ParallelError
from autograder.tools.parallel import cluster as dask_autograde
from autograder.tools.parallel import clusterkeys
from autograder.tools.parallel import state
from autograder.tools.parallel.localcluster import LocalCluster

slow = pytest.mark.slow

VICTIM = "sample-correct"  # its worker is killed once, mid-grading: Dask reruns it elsewhere
DOOMED = "sample-partial"  # every worker that grades it is killed: it fails alone
FAILED_LINE = re.compile(r"^\[\s*\d+/\d+\] (?P<student>\S+)\s+FAILED: (?P<why>.*)$")


def children_of(parent: int, command: bytes) -> list[int]:
    """The processes ``parent`` started whose command line holds ``command``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
            ppid = int(re.search(r"^PPid:\s*(\d+)", status, re.M)[1])
            if ppid == parent and command in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError, TypeError):
            continue
    return found


def graders_of(worker_pid: int) -> list[int]:
    """The grading processes (autograder.tools.parallel.worker) a Dask worker started."""
    return children_of(worker_pid, b"autograder.tools.parallel.worker")


#: Seconds a killed worker's grading processes may take to die.
GRADERS_DIE_WITHIN = 10
#: Seconds the cluster's workers keep an idle grading process for the next run.
GRADER_IDLE = 15


def alive(pid: int) -> bool:
    try:
        state_line = [line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("State:")]
    except OSError:
        return False
    return bool(state_line) and "zombie" not in state_line[0]


def course_processes(root: Path) -> list[str]:
    """Processes of grading left anywhere on the machine: a worker process in ``root``, or a
    fork server or kernel whose command line names it."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = (entry / "cwd").resolve()
        except (OSError, ValueError):
            continue
        if ("autograder.tools.parallel.worker" in cmdline and cwd == root) or str(root) in cmdline:
            if "pytest" not in cmdline and alive(int(entry.name)):
                found.append(f"{entry.name}: {cmdline[:160]}")
    return found


@dataclass
class Killer:
    """Watches which worker grades which student (the scheduler's ``processing``) and kills
    the worker grading VICTIM once and every worker grading DOOMED, while its grading
    process holds the student's lock (so the kill lands mid-grading)."""

    cluster: LocalCluster
    root: Path
    kills: list[dict] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._watch, daemon=True)
        thread.start()
        return thread

    def _wanted(self, key) -> str | None:
        for student in (VICTIM, DOOMED):
            if f"-{student}-" in str(key) and not (student == VICTIM and self._killed(VICTIM)):
                return student
        return None

    def _killed(self, student: str) -> int:
        return sum(k["student"] == student for k in self.kills)

    def _being_graded(self, student: str) -> bool:
        lock = self.root / "autograded" / student / f".{ASSIGNMENT}.lock"
        try:
            with open(lock) as held:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(held, fcntl.LOCK_UN)
                return False
        except BlockingIOError:
            return True
        except OSError:
            return False

    def _watch(self) -> None:
        with self.cluster.client() as client:
            while not self.stop.is_set():
                pids = client.run(os.getpid)
                for address, keys in client.processing().items():
                    for student in filter(None, map(self._wanted, keys)):
                        if address in pids and self._being_graded(student):
                            self._kill(student, address, pids[address])
                time.sleep(0.05)

    def _kill(self, student: str, address: str, pid: int) -> None:
        graders = graders_of(pid)
        os.kill(pid, signal.SIGKILL)
        # A process killed with gigabytes mapped takes a moment to become a zombie on a loaded
        # machine; left to finish its student instead, it would live on for minutes.
        deadline = time.monotonic() + GRADERS_DIE_WITHIN
        while any(map(alive, graders)) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.kills.append({"student": student, "worker": address, "graders": graders,
                           "graders_alive_after": [g for g in graders if alive(g)]})
        self.cluster.wait_for_workers()  # the nanny starts a new one


def run_command(root: Path, cluster: LocalCluster, *args: str, interrupt_after: int | None = None):
    """Run the command on ``cluster``; with ``interrupt_after``, SIGINT once that many students are graded.
    Returns the exit code and the output lines."""
    proc = subprocess.Popen([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, *cluster.driver_args,
                             *args], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            # as from a terminal: a suite started in the background (`cmd &` in a script)
                            # hands its children SIGINT ignored, and Python then never raises Ctrl-C
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines, graded = [], 0
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if GRADED_LINE.match(line):
            graded += 1
            if graded == interrupt_after:
                proc.send_signal(signal.SIGINT)
    return proc.wait(), lines


def marks(course: scratch.ScratchCourse, students) -> dict[str, list | None]:
    loaded = course.model()
    with loaded.gradebook() as gb:
        return {s: state.graded_mark(loaded, gb, ASSIGNMENT, s) for s in students}


@dataclass
class Graded:
    reference: scratch.ScratchCourse
    course: scratch.ScratchCourse
    students: list[str]
    cluster: LocalCluster
    first: tuple[int, list[str]]
    log: str
    kills: list[dict]
    after_first: dict
    half_written_after_first: set[str]
    stopped: tuple[int, list[str]]
    after_stop: dict
    half_written_after_stop: set[str]
    resumed: tuple[int, list[str]]
    after_resume: dict


@pytest.fixture(scope="module")
def dask(tmp_path_factory):
    with LocalCluster(tmp_path_factory.mktemp("dask"), workers=2, allowed_failures=1,
                      grader_idle_seconds=GRADER_IDLE) as running:
        yield running


@pytest.fixture(scope="module")
def graded(server, dask, tmp_path_factory) -> Graded:  # noqa: F811
    work = tmp_path_factory.mktemp("cluster")
    handed_in = submissions(work / "notebooks")
    students = sorted(handed_in)
    reference = scratch.prepare_course(work / "reference")
    course = scratch.prepare_course(work / "course", db_url=server.database("cluster"))
    when = datetime.datetime.now(datetime.timezone.utc)
    for c in (reference, course):
        scratch.generate(c, [ASSIGNMENT])
        for sid, notebook in handed_in.items():
            scratch.place_submission(c, sid, ASSIGNMENT, notebook, when)
    scratch.nbgrader(reference, ["autograde", ASSIGNMENT], reference.root, check=False)  # one cannot be graded

    killer = Killer(dask, course.root)
    watching = killer.start()
    first = run_command(course.root, dask, "--log", str(work / "first.log"))
    killer.stop.set()
    watching.join()
    after_first = marks(course, students)
    half_written = {s for s in students if after_first[s] is None and (course.root / "autograded" / s / ASSIGNMENT).exists()}
    stopped = run_command(course.root, dask, "--force", interrupt_after=1)
    after_stop = marks(course, students)
    half_written_after_stop = {s for s in students if after_stop[s] is None and (course.root / "autograded" / s / ASSIGNMENT).exists()}
    resumed = run_command(course.root, dask)
    after_resume = marks(course, students)
    return Graded(reference, course, students, dask, first, (work / "first.log").read_text(), killer.kills,
                  after_first, half_written, stopped, after_stop, half_written_after_stop, resumed, after_resume)


# ---------------------------------------------------------------- same grades


@slow
def test_the_cluster_grades_into_postgresql_what_plain_nbgrader_grades_into_sqlite(graded):
    on_cluster = scratch.read_scores(graded.course)
    reference = scratch.read_scores(graded.reference)
    assert on_cluster == reference
    assert len({s.points for s in reference.values()}) >= 3, reference  # not a vacuous comparison
    assert {sid for sid, _ in reference} == set(graded.students) - set(CANNOT_GRADE)


# ---------------------------------------------------------------- workers that die


@slow
def test_a_worker_killed_mid_grading_takes_its_grading_process_with_it(graded):
    victims = [k for k in graded.kills if k["student"] == VICTIM]
    assert len(victims) == 1, graded.kills
    assert victims[0]["graders"], "the killed worker had no grading process: the kill was not mid-grading"
    assert victims[0]["graders_alive_after"] == []


@slow
def test_the_killed_students_task_is_rerun_and_graded_once(graded):
    code, lines = graded.first
    graded_lines = [m["student"] for m in map(GRADED_LINE.match, lines) if m]
    assert graded_lines.count(VICTIM) == 1, "\n".join(lines)
    assert sorted(graded_lines) == sorted(set(graded.students) - set(CANNOT_GRADE) - {DOOMED}), "\n".join(lines)
    # One log entry per grading nbgrader finished: the killed attempt wrote none, nobody twice.
    headers = re.findall(rf"^===== {ASSIGNMENT} / (\S+) ", graded.log, re.M)
    assert sorted(headers) == sorted(set(graded.students) - {DOOMED}), headers


@slow
def test_a_student_whose_every_worker_dies_fails_alone_after_the_bounded_retries(graded):
    code, lines = graded.first
    assert code == 1, "\n".join(lines)
    failed = {m["student"]: m["why"] for m in map(FAILED_LINE.match, lines) if m}
    assert set(failed) == {DOOMED, *CANNOT_GRADE}, failed
    assert "every worker that graded it died (2 times" in failed[DOOMED], failed[DOOMED]
    assert [k["student"] for k in graded.kills].count(DOOMED) == 2, graded.kills
    assert graded.after_first[DOOMED] is None
    assert graded.half_written_after_first == set()  # nothing half-written stays


@slow
def test_a_rerun_of_a_task_that_had_finished_does_not_grade_again(graded):
    """Dask reruns the finished tasks of a worker that dies: the rerun finds the student's
    grading changed since its run's plan, and reports the points without grading."""
    student = "sample-empty"
    before = graded.after_resume[student]
    assert before is not None
    with graded.cluster.client() as client:
        reply = client.submit(dask_autograde.grade_task, "rerun", str(graded.course.root), ASSIGNMENT, student,
                              None, None, pure=False).result()  # planned when it had no grading
        client.run(dask_autograde.close_run, "rerun")
    assert reply["success"] and reply["already"], reply
    assert (reply["points"], reply["max_points"]) == (0.0, 6.0)
    assert marks(graded.course, [student])[student] == before  # the same files: not graded again


# ---------------------------------------------------------------- Ctrl-C and resume


@slow
def test_ctrl_c_stops_a_cluster_run_and_leaves_nothing_half_written(graded):
    code, lines = graded.stopped
    assert code == 130, "\n".join(lines)
    assert "run the same command again to resume" in lines[-1], lines[-1]
    assert re.search(r"interrupted: [1-9]\d* students? not graded yet", "\n".join(lines)), "\n".join(lines)
    assert graded.half_written_after_stop == set()


@slow
def test_the_resumed_cluster_run_grades_only_what_is_not_graded(graded):
    _, stopped_lines = graded.stopped
    code, lines = graded.resumed
    assert code == 1, "\n".join(lines)  # the unreadable notebook still fails
    skipped = {m["student"] for m in map(SKIPPED_LINE.match, lines) if m}
    newly = {m["student"] for m in map(GRADED_LINE.match, lines) if m}
    complete = {s for s, mark in graded.after_stop.items() if mark is not None}
    assert skipped == complete
    assert newly == set(graded.students) - complete - set(CANNOT_GRADE)
    for student in skipped:
        assert graded.after_resume[student] == graded.after_stop[student], student  # same files
    assert scratch.read_scores(graded.course) == scratch.read_scores(graded.reference)


def _graders(cluster: LocalCluster, root: Path | None = None) -> set[int]:
    """The grading processes of the cluster's workers (grading the course in ``root``, if given)."""
    found = set()
    for pid in (pid for worker in cluster.worker_pids().values() for pid in graders_of(worker)):
        try:
            if root is None or Path(f"/proc/{pid}/cwd").resolve() == root.resolve():
                found.add(pid)
        except OSError:
            continue
    return found


@slow
def test_a_grading_process_serves_the_next_run_reads_its_config_again_and_ends_once_idle(graded, tmp_path):
    course = scratch.prepare_course(tmp_path / "course")
    scratch.generate(course, [ASSIGNMENT])
    handed_in = submissions(tmp_path / "notebooks")
    when = datetime.datetime.now(datetime.timezone.utc)
    for student in ("sample-correct", "sample-partial"):
        scratch.place_submission(course, student, ASSIGNMENT, handed_in[student], when)
    code, lines = run_command(course.root, graded.cluster)
    assert code == 0, "\n".join(lines)
    kept = _graders(graded.cluster, course.root)
    assert kept, "no grading process waits for the next run"
    phases = tmp_path / "phases.jsonl"  # written only by a grader that read the changed configuration
    with open(course.root / "nbgrader_config.py", "a") as config:
        config.write(f"c.ConfinedExecute.phase_log = {str(phases)!r}\n")
    code, lines = run_command(course.root, graded.cluster, "--force")
    assert code == 0, "\n".join(lines)
    assert kept <= _graders(graded.cluster, course.root), "the first run's grading processes were replaced"
    assert len(phases.read_text().splitlines()) == 2
    # Idle, every grading process ends: this course's, and those the runs above left.
    deadline = time.monotonic() + GRADER_IDLE + 30
    while (_graders(graded.cluster) or course_processes(course.root)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _graders(graded.cluster) == set()
    assert course_processes(course.root) == [] and course_processes(graded.course.root) == []


# ---------------------------------------------------------------- bad input, named


def test_the_lock_keeps_a_second_grader_of_one_student_out(tmp_path):
    course = scratch.prepare_course(tmp_path / "course")
    loaded = course.model()
    lock = course.root / "autograded" / "s1" / f".{ASSIGNMENT}.lock"
    lock.parent.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
         "print('held', flush=True); time.sleep(60)", str(lock)], stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(ParallelError, match=r"another grader has held 's1'.*not grading it twice at once"):
            with state.student_lock(loaded, ASSIGNMENT, "s1", wait=0.5):
                pass
    finally:
        holder.kill()
        holder.wait()
    with state.student_lock(loaded, ASSIGNMENT, "s1", wait=5):
        pass  # free again once its holder is gone


def test_no_scheduler_is_named_without_a_traceback(tmp_path, monkeypatch):
    course = scratch.prepare_course(tmp_path / "course")
    scratch.generate(course, [ASSIGNMENT])
    scratch.place_submission(course, "s1", ASSIGNMENT, Path(__file__).parent / "samples" / ASSIGNMENT / "correct.ipynb",
                             datetime.datetime.now(datetime.timezone.utc))
    keys = clusterkeys.make_keys(tmp_path / "keys").key.parent
    monkeypatch.setattr(dask_autograde, "CONNECT_SECONDS", 2.0)
    with pytest.raises(ParallelError, match=r"no Dask scheduler answers at tls://127\.0\.0\.1:9 to the course's keys"):
        dask_autograde.autograde(ASSIGNMENT, "tls://127.0.0.1:9", course.root, keys=keys)


def test_a_scheduler_without_tls_is_refused_saying_why_and_how(tmp_path):
    """Red team (issue 51): the recipe's plain tcp:// scheduler ran any local user's ``client.run`` as its
    workers' user, root. The driver grades on nothing but a TLS cluster, and says how to make one."""
    proc = subprocess.run([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, "--scheduler",
                           "tcp://127.0.0.1:9"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "tcp://127.0.0.1:9 is not tls://" in proc.stderr and "runs the code of any client" in proc.stderr
    assert "python -m autograder cluster-keys DIR" in proc.stderr and "--cluster-keys DIR" in proc.stderr
    no_keys = subprocess.run([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, "--scheduler",
                              "tls://127.0.0.1:9"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                             env={**os.environ, "DASK_CONFIG": str(tmp_path / "no-dask-config")})
    assert no_keys.returncode == 1 and "no keys for the TLS scheduler at tls://127.0.0.1:9" in no_keys.stderr


def test_the_cluster_keys_are_the_instructors_alone(tmp_path):
    """``cluster-keys`` writes the authority's certificate and the cluster's certificate and key, each
    0600 in a 0700 folder, refuses to replace them, and the driver refuses keys others could read."""
    folder = tmp_path / "keys"
    made = subprocess.run([sys.executable, "-m", "autograder", "cluster-keys", str(folder)], capture_output=True,
                          text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert "dask scheduler --protocol tls" in made.stdout and f"--cluster-keys {folder}" in made.stdout
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in folder.iterdir()} == {
        clusterkeys.CA: "0o600", clusterkeys.CERT: "0o600", clusterkeys.KEY: "0o600"}
    assert b"PRIVATE KEY" in (folder / clusterkeys.KEY).read_bytes()
    assert b"PRIVATE KEY" not in (folder / clusterkeys.CA).read_bytes()  # the authority's key is never written
    again = subprocess.run([sys.executable, "-m", "autograder", "cluster-keys", str(folder)], capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 1 and "already holds" in again.stderr
    assert clusterkeys.driver_security("tls://127.0.0.1:9", folder).require_encryption
    (folder / clusterkeys.KEY).chmod(0o644)
    with pytest.raises(ParallelError, match=r"cluster-key\.pem is open to other users .*mode 0644"):
        clusterkeys.driver_security("tls://127.0.0.1:9", folder)


def test_workers_and_scheduler_do_not_go_together(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, "--workers", "2",
                           "--scheduler", "tcp://127.0.0.1:9"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "--workers and --scheduler do not go together" in proc.stderr and "Traceback" not in proc.stderr


#: Run on every worker (by `exec`: a function of this module would not unpickle there).
_PRETEND_STARTED_BEFORE_A_CHANGE = ("from autograder.tools.parallel import cluster\n"
                                    "cluster._SOURCES_AT_IMPORT = 'an-older-copy'")
_AS_IF_RESTARTED = "from autograder.tools.parallel import cluster\ncluster._SOURCES_AT_IMPORT = cluster._sources()"


@slow
def test_the_driver_refuses_workers_running_older_code_and_imports_no_nbgrader(dask, tmp_path):
    """A Dask worker runs the course's code it imported when it started: after a `git pull`, its tasks
    would be the old ones until it is restarted, so the driver names it and grades nobody. Restarted
    (here: told it runs the code on disk), the run grades; and the driver, whose plan a worker makes,
    imports no nbgrader (a second of every command)."""
    course = scratch.prepare_course(tmp_path / "course")
    scratch.generate(course, [ASSIGNMENT])
    scratch.place_submission(course, "s1", ASSIGNMENT, Path(__file__).parent / "samples" / ASSIGNMENT / "correct.ipynb",
                             datetime.datetime.now(datetime.timezone.utc))
    command = [sys.executable, "-X", "importtime", "-m", "autograder", "autograde", ASSIGNMENT, *dask.driver_args]
    with dask.client() as client:
        client.run(exec, _PRETEND_STARTED_BEFORE_A_CHANGE)
        try:
            refused = subprocess.run(command, cwd=course.root, capture_output=True, text=True, timeout=300)
        finally:
            client.run(exec, _AS_IF_RESTARTED)
    assert refused.returncode == 1, refused.stdout + refused.stderr[-3000:]
    assert "run the course's code as it was when they started, not the code on disk now" in refused.stderr
    assert sorted(dask.worker_pids()) == sorted(a for a in refused.stderr.split("workers ", 1)[1].split(" run ")[0]
                                                .split(", "))
    assert not (course.root / "autograded" / "s1").exists()
    graded = subprocess.run(command, cwd=course.root, capture_output=True, text=True, timeout=300)
    assert graded.returncode == 0, graded.stdout + graded.stderr[-3000:]
    assert [GRADED_LINE.match(line)["student"] for line in graded.stdout.splitlines() if GRADED_LINE.match(line)] == ["s1"]
    imported = {line.rsplit("|", 1)[-1].strip() for line in graded.stderr.splitlines() if line.startswith("import time:")}
    assert "distributed" in imported  # the import lines are the driver's
    assert sorted(m for m in imported if m.split(".")[0] in ("nbgrader", "jax", "hypothesis")) == []


def test_the_code_digest_reads_files_only(tmp_path, monkeypatch):
    """An editor's lock link (`.#cli.py`, dangling) or a folder named like a module changes nothing,
    and stops nothing (red team: the driver died with a traceback at import); a changed file counts."""
    package = tmp_path / "autograder"
    package.mkdir()
    (package / "cli.py").write_text("x = 1\n")
    monkeypatch.setattr(dask_autograde, "REPO_ROOT", tmp_path)
    before = dask_autograde._sources()
    (package / ".#cli.py").symlink_to("root@host.1234:1700000000")
    (package / "odd.py").mkdir()
    assert dask_autograde._sources() == before
    (package / "cli.py").write_text("x = 2\n")
    assert dask_autograde._sources() != before
