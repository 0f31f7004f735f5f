"""Does ``python -m autograder autograde`` give exactly the grades ``nbgrader autograde``
gives, faulty and hostile submissions included, and does a run stopped by Ctrl-C or
killed outright leave nothing half-done behind and resume without regrading anyone?

One assignment is graded in two copies of one scratch course: ``serial`` by plain
``nbgrader autograde``, ``parallel`` by the parallel command in three runs: stopped
with Ctrl-C (SIGINT) after the first student it grades, then killed (SIGKILL) after
the next one, then run to the end. Nothing here is timed.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

from autograder.grading.cells import autograder_tests
from autograder.tools import demo, scratch
from autograder.tools.bench import courses as _bench_course
from autograder.tools.parallel import state
from autograder.tools.parallel import run as parallel


ASSIGNMENT = "branch_repair"  # among the quickest to grade
SAMPLES = REPO / "tests" / "samples" / ASSIGNMENT
CANNOT_GRADE = {"broken-unreadable": "NotJSONError"}
GRADED_LINE = re.compile(r"^\[\s*\d+/\d+\] (?P<student>\S+)\s+(?P<points>[\d.]+)/(?P<max>[\d.]+) automatic points  \(")
SKIPPED_LINE = re.compile(r"^\[\s*\d+/\d+\] (?P<student>\S+)\s+skipped: already graded")

slow = pytest.mark.slow


# ---------------------------------------------------------------- submissions


def submissions(out: Path) -> dict[str, Path]:
    """Student id -> the notebook they hand in: the samples plus faulty and hostile ones."""
    out.mkdir(parents=True)
    correct = json.loads((SAMPLES / "correct.ipynb").read_text())

    def write(name: str, nb: dict) -> Path:
        path = out / f"{name}.ipynb"
        path.write_text(json.dumps(nb))
        return path

    unreadable = out / "unreadable.ipynb"
    unreadable.write_bytes((SAMPLES / "correct.ipynb").read_bytes()[:300])  # cut short: not JSON
    return {
        **{f"sample-{kind}": SAMPLES / f"{kind}.ipynb" for kind in demo.SAMPLE_KINDS},
        "broken-raise": write("raise", _bench_course.with_raising_answer(correct)),
        "broken-corpus": write("corpus", _bench_course.with_corpus_answer(
            correct, (REPO / "tests" / "corpus" / ASSIGNMENT / "static_gain.py").read_text())),
        "broken-unreadable": unreadable,
        "hostile-kernel-death": write("death", _bench_course.with_corpus_answer(correct, "import os\nos._exit(1)\n")),
        "hostile-patches-grade": write("patch", _bench_course.with_corpus_answer(
            correct, "import autograder\nautograder.grade = lambda *args, **kwargs: None\n")),
    }


# ---------------------------------------------------------------- running the command


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, "--workers", "2", *args]


def run_until_graded(root: Path, sig: int, after: int = 1) -> tuple[int, list[str], list[str]]:
    """Start a parallel run; once ``after`` students are graded in it, send ``sig``.

    Returns the exit code, the output lines, and the students it reported graded.
    """
    proc = subprocess.Popen(command(), cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, graded = [], []
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        m = GRADED_LINE.match(line)
        if m:
            graded.append(m["student"])
            if len(graded) == after:
                proc.send_signal(sig)
                break
    lines += [line.rstrip("\n") for line in proc.stdout]
    return proc.wait(), lines, graded


def workers_in(root: Path) -> list[int]:
    """Pids of parallel-autograde workers whose working folder is ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if b"autograder.tools.parallel.worker" in (entry / "cmdline").read_bytes() and (entry / "cwd").resolve() == root:
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def wait_for_no_workers(root: Path) -> None:
    """Workers of a killed run kill themselves within a second; wait for that."""
    for _ in range(100):
        if not workers_in(root):
            return
        time.sleep(0.1)
    raise AssertionError(f"workers of the killed run are still alive: {workers_in(root)}")


def snapshot(course: scratch.ScratchCourse, students) -> dict[str, tuple]:
    """Per student: the autograded notebook's mtime and the gradebook rows of its grades."""
    taken = {}
    with sqlite3.connect(course.root / "gradebook.db") as db:
        for sid in students:
            notebook = course.root / "autograded" / sid / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            rows = db.execute(
                "SELECT grade.id, grade.auto_score, grade.needs_manual_grade FROM grade "
                "JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id "
                "JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id "
                "WHERE submitted_assignment.student_id = ? ORDER BY grade.id", (sid,),
            ).fetchall()
            taken[sid] = (notebook.stat().st_mtime_ns, rows)
    return taken


def complete_students(course: scratch.ScratchCourse, students) -> set[str]:
    loaded = course.model()
    with loaded.gradebook() as gb:
        return {s for s in students if state.is_complete(loaded, gb, ASSIGNMENT, s)}


def half_written(course: scratch.ScratchCourse, students) -> set[str]:
    """Students with an autograded folder that does not hold a complete grading."""
    started = {s for s in students if (course.root / "autograded" / s / ASSIGNMENT).exists()}
    return started - complete_students(course, students)


# ---------------------------------------------------------------- the graded courses


@dataclass
class Graded:
    serial: scratch.ScratchCourse
    parallel: scratch.ScratchCourse
    students: list[str]
    serial_problem: str | None
    ctrl_c: tuple[int, list[str], list[str]]
    after_ctrl_c_half_written: set[str]
    after_ctrl_c_complete: set[str]
    killed: tuple[int, list[str], list[str]]
    after_kill_complete: set[str]
    before_resume: dict[str, tuple]
    resume: tuple[int, list[str]]
    after_resume: dict[str, tuple]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Graded:
    work = tmp_path_factory.mktemp("parallel")
    serial = scratch.prepare_course(work / "serial")
    scratch.generate(serial, [ASSIGNMENT])
    handed_in = submissions(work / "notebooks")
    when = datetime.datetime.now(datetime.timezone.utc)
    for sid, notebook in handed_in.items():
        scratch.place_submission(serial, sid, ASSIGNMENT, notebook, when)
    parallel_course = _bench_course.clone_course(serial, work / "parallel")
    students = sorted(handed_in)

    serial_problem = scratch.nbgrader(serial, ["autograde", ASSIGNMENT], serial.root, check=False)

    root = parallel_course.root
    ctrl_c = run_until_graded(root, signal.SIGINT)
    after_ctrl_c = (half_written(parallel_course, students), complete_students(parallel_course, students))
    killed = run_until_graded(root, signal.SIGKILL)
    wait_for_no_workers(root)
    after_kill_complete = complete_students(parallel_course, students)
    before_resume = snapshot(parallel_course, after_kill_complete)
    proc = subprocess.run(command(), cwd=root, capture_output=True, text=True)
    resume = (proc.returncode, proc.stdout.splitlines())
    return Graded(
        serial, parallel_course, students, serial_problem, ctrl_c, *after_ctrl_c, killed, after_kill_complete,
        before_resume, resume, snapshot(parallel_course, after_kill_complete),
    )


# ---------------------------------------------------------------- same grades


@slow
def test_parallel_and_serial_autograde_give_identical_gradebook_scores(graded):
    serial, parallel_scores = scratch.read_scores(graded.serial), scratch.read_scores(graded.parallel)
    assert parallel_scores == serial
    assert {sid for sid, _ in serial} == set(graded.students) - set(CANNOT_GRADE)


@slow
def test_the_comparison_is_not_vacuous(graded):
    """Scores spread over several values, and plain nbgrader too fails exactly the one it cannot grade."""
    scores = {sid: s.points for (sid, _), s in scratch.read_scores(graded.serial).items()}
    assert len(set(scores.values())) >= 3, scores
    assert scores["sample-empty"] == scores["hostile-kernel-death"] == 0 < scores["sample-correct"]
    assert graded.serial_problem is not None
    failed = set(re.findall(r"for student '([^']+)'", graded.serial_problem))
    assert failed == set(CANNOT_GRADE)


@slow
def test_a_submission_nbgrader_cannot_grade_fails_alone_with_its_reason(graded):
    code, lines = graded.resume
    assert code == 1, "\n".join(lines)
    for sid, reason in CANNOT_GRADE.items():
        [line] = [line for line in lines if re.match(rf"^\[\s*\d+/\d+\] {sid}\s", line)]
        assert "FAILED" in line and reason in line, line
    assert f"nbgrader could not grade: {', '.join(sorted(CANNOT_GRADE))}" in "\n".join(lines)


@slow
def test_parallel_autograde_writes_the_same_autograded_notebooks(graded):
    """Same cells, same outputs in every graded cell (the kernels' own counters aside)."""
    for sid in set(graded.students) - set(CANNOT_GRADE):
        notebooks = [
            json.loads((c.root / "autograded" / sid / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
            for c in (graded.serial, graded.parallel)
        ]
        tests = [autograder_tests(nb) for nb in notebooks]
        outputs = [[_stable(cell["outputs"]) for cell in cells] for cells in tests]
        assert outputs[0] == outputs[1], sid


@slow
def test_a_kernel_that_dies_scores_zero_in_every_cell_it_did_not_finish(graded):
    nb = json.loads((graded.parallel.root / "autograded" / "hostile-kernel-death" / ASSIGNMENT
                     / f"{ASSIGNMENT}.ipynb").read_text())
    for cell in autograder_tests(nb):
        [error] = [o for o in cell["outputs"] if o["output_type"] == "error"]
        assert error["ename"] == "KernelDied" and "(exit code 1)" in error["evalue"], error


def _stable(outputs: list[dict]) -> list:
    """Outputs without the kernel's counter, consecutive stream chunks joined (how the
    kernel splits printed text into messages depends on timing, not on the grade)."""
    stable: list[dict] = []
    for output in outputs:
        output = {k: v for k, v in output.items() if k != "execution_count"}
        if output["output_type"] == "stream":
            output["text"] = "".join(output["text"])
            if stable and stable[-1]["output_type"] == "stream" and stable[-1]["name"] == output["name"]:
                stable[-1]["text"] += output["text"]
                continue
        stable.append(output)
    return stable


# ---------------------------------------------------------------- interruptions


@slow
def test_ctrl_c_stops_the_run_and_leaves_nothing_half_written(graded):
    code, lines, graded_before_stop = graded.ctrl_c
    assert code == 130, "\n".join(lines)
    assert "run the same command again to resume" in lines[-1]
    assert graded.after_ctrl_c_half_written == set()
    assert set(graded_before_stop) <= graded.after_ctrl_c_complete


@slow
def test_a_killed_run_resumes_without_regrading_the_finished_students(graded):
    code, lines, graded_before_kill = graded.killed
    assert code == -signal.SIGKILL
    assert graded_before_kill and set(graded_before_kill) <= graded.after_kill_complete
    _, resumed = graded.resume
    skipped = {m["student"] for m in map(SKIPPED_LINE.match, resumed) if m}
    assert skipped == graded.after_kill_complete
    assert graded.after_resume == graded.before_resume  # same files, same gradebook rows


@slow
def test_the_resumed_run_grades_everyone_else(graded):
    _, resumed = graded.resume
    newly = {m["student"] for m in map(GRADED_LINE.match, resumed) if m}
    assert newly == set(graded.students) - graded.after_kill_complete - set(CANNOT_GRADE)
    assert complete_students(graded.parallel, graded.students) == set(graded.students) - set(CANNOT_GRADE)


@slow
def test_a_half_written_or_outdated_grading_does_not_count_as_done(graded, tmp_path):
    """What a run killed mid-student leaves: an unexecuted or cut notebook, or a newer submission."""
    course = _bench_course.clone_course(graded.parallel, tmp_path / "copy")
    sid = "sample-correct"
    notebook = course.root / "autograded" / sid / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert sid in complete_students(course, [sid])
    original = notebook.read_bytes()
    notebook.chmod(0o644)

    nb = json.loads(original)
    for cell in autograder_tests(nb):
        cell["execution_count"], cell["outputs"] = None, []  # as sanitized, before the kernel ran
    notebook.write_text(json.dumps(nb))
    assert sid not in complete_students(course, [sid])

    notebook.write_bytes(original[: len(original) // 2])  # killed while writing
    assert sid not in complete_students(course, [sid])

    notebook.write_bytes(original)
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1)
    timestamp = course.root / "submitted" / sid / ASSIGNMENT / "timestamp.txt"
    timestamp.write_text(later.strftime("%Y-%m-%d %H:%M:%S.%f %Z"))
    assert sid not in complete_students(course, [sid])  # handed in again since


# ---------------------------------------------------------------- a busy gradebook


@slow
def test_a_gradebook_locked_by_another_program_is_waited_for(graded, tmp_path):
    """SQLite's own default gives up after 5 s; the run must outwait a 7 s exclusive lock."""
    course = _bench_course.clone_course(graded.parallel, tmp_path / "locked")
    lock = sqlite3.connect(course.root / "gradebook.db", isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN EXCLUSIVE")
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        sqlite3.connect(course.root / "gradebook.db", timeout=0.1).execute("SELECT * FROM student").fetchall()
    release = threading.Timer(7.0, lambda: lock.execute("COMMIT"))
    release.start()
    try:
        proc = subprocess.run(command("--student", "sample-correct", "--force"), cwd=course.root,
                              capture_output=True, text=True)
    finally:
        release.join()
        lock.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [line] = [line for line in proc.stdout.splitlines() if GRADED_LINE.match(line)]
    expected = scratch.read_scores(graded.serial)["sample-correct", ASSIGNMENT]
    assert f"{expected.points:g}/{expected.max_points:g} automatic points" in line


# ---------------------------------------------------------------- start-up paid once

_IMPORTS_OF = ("import sys; from autograder.tools.cli import main; code = main(sys.argv[1:]); "
               "print('coordinator imported:', sorted({m.split('.')[0] for m in sys.modules} & {'nbgrader', 'jupyter_client'})); "
               "sys.exit(code)")


def _processes() -> dict[int, tuple[int, bytes]]:
    """pid -> (parent pid, command line), for every process now."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_bytes()
            found[int(entry.name)] = (int(stat.rsplit(b")", 1)[1].split()[1]), (entry / "cmdline").read_bytes())
        except (OSError, ValueError, IndexError):
            continue
    return found


@slow
def test_the_coordinator_imports_no_nbgrader_and_its_workers_fork_kernels_from_one_server(graded, tmp_path):
    course = _bench_course.clone_course(graded.parallel, tmp_path / "again")
    three = ["--student", "sample-correct", "--student", "sample-partial", "--student", "broken-raise"]
    proc = subprocess.Popen([sys.executable, "-c", _IMPORTS_OF, "autograde", ASSIGNMENT, "--workers", "2",
                             "--force", *three], cwd=course.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # This run's workers (the coordinator's child and its forks), the fork servers (not their
    # forks) of the coordinator or of a worker, and each kernel's client with the worker it serves.
    # A worker's subprocess shows the worker's command line too, from its fork to its exec: a worker
    # is one seen in two polls and never seen running anything else.
    workers, servers, clients = set(), set(), {}
    polls, ran_else = {}, set()
    while proc.poll() is None:
        now = _processes()
        for pid, (parent, cmdline) in now.items():
            if b"autograder.tools.parallel.worker" in cmdline and (parent == proc.pid or parent in workers):
                polls[pid] = polls.get(pid, 0) + 1
                workers.add(pid)
            elif pid in workers and cmdline:  # a zombie's is empty
                ran_else.add(pid)
        for pid, (parent, cmdline) in now.items():
            if b"autograder.confinement.forkserver" in cmdline and (parent == proc.pid or parent in workers):
                servers.add((pid, parent))
            if b"forkclient.py" in cmdline and parent in workers:
                clients[pid] = parent
        time.sleep(0.05)
    out = proc.stdout.read()
    workers = {pid for pid in workers if polls[pid] >= 2 and pid not in ran_else}
    assert proc.returncode == 0, out
    assert "coordinator imported: []" in out
    assert len(re.findall(r"points  \(", out)) == 3, out
    assert len(workers) == 2, workers
    assert len(clients) >= 3 and set(clients.values()) == workers, clients  # both workers forked kernels
    assert [parent for _, parent in servers] == [proc.pid], servers  # from one server, the coordinator's


# ---------------------------------------------------------------- bad input, no kernels


def test_a_course_without_a_gradebook_is_named_without_a_traceback(tmp_path):
    course = scratch.prepare_course(tmp_path / "course")  # never generated: no gradebook yet
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "autograde", "nope"], cwd=course.root, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "no gradebook" in proc.stderr and "generate_assignment nope" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_workers_must_be_at_least_one(tmp_path):
    with pytest.raises(parallel.ParallelError, match="--workers must be at least 1, not 0"):
        parallel.autograde(ASSIGNMENT, tmp_path, workers=0)


def test_progress_lines_name_each_outcome():
    from autograder.tools.parallel.progress import Outcome

    assert Outcome("ann", "graded", 5, 6, 3.25).describe() == "5/6 automatic points  (3.2 s)"
    assert Outcome("ann", "skipped", 6, 6).describe() == "skipped: already graded, 6/6 automatic points"
    died = Outcome("ann", "failed", error="DeadKernelError: Kernel died")
    assert died.describe() == "FAILED: DeadKernelError: Kernel died"
    assert Outcome("ann", "interrupted").describe().startswith("interrupted: not graded")


def test_the_busy_timeout_is_added_to_sqlite_urls_only():
    from autograder.tools.course import with_busy_timeout

    assert with_busy_timeout("sqlite:////c/gradebook.db", 30) == "sqlite:////c/gradebook.db?timeout=30"
    assert with_busy_timeout("sqlite:////c/gradebook.db?timeout=5") == "sqlite:////c/gradebook.db?timeout=5"
    assert with_busy_timeout("postgresql://host/grades") == "postgresql://host/grades"


def test_the_floor_course_keeps_the_docstring_and_drops_the_grader_call():
    source = (
        '"""Does it work?"""\n'
        "### BEGIN HIDDEN TESTS\nfrom autograder import grade\ngrade(\"a\", \"b\", globals())\n### END HIDDEN TESTS"
    )
    assert _bench_course.strip_hidden(source) == '"""Does it work?"""'


def test_a_course_whose_configuration_raises_is_not_graded_unconfined(tmp_path):
    """nbgrader logs an error raised in nbgrader_config.py and goes on without the rest of the file:
    an error before course_config.py is loaded would leave the kernels unconfined, running as the
    instructor. The course's command stops at any such error, naming it, and grades nobody."""
    course = scratch.prepare_course(tmp_path / "course")
    scratch.generate(course, [ASSIGNMENT])
    scratch.place_submission(course, "s1", ASSIGNMENT, Path(__file__).parent / "samples" / ASSIGNMENT / "correct.ipynb",
                             datetime.datetime.now(datetime.timezone.utc))
    config = course.root / "nbgrader_config.py"
    config.write_text(config.read_text() + "\nc.Exchange.root = exchange_root_not_defined\n")
    proc = subprocess.run([sys.executable, "-m", "autograder", "autograde", ASSIGNMENT, "--workers", "1"],
                          cwd=course.root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    assert "NameError: name 'exchange_root_not_defined' is not defined" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (course.root / "autograded" / "s1").exists()


def test_a_run_interrupted_before_its_plan_says_that_nothing_was_graded():
    result = parallel.BatchResult(ASSIGNMENT, workers=2)
    result.interrupted = True
    result.finish(None, time.monotonic())
    assert result.summary().endswith("interrupted before grading began: nothing was graded; run the same command again")
    assert result.exit_code == 130


# ---------------------------------------------------------------- the run's lock, against another local user

#: A user who is neither the instructor nor root: a student with a shell on the grading machine.
INTRUDER = "nobody"


def as_intruder(argv: list[str], **kwargs) -> subprocess.Popen:
    """Start ``argv`` as :data:`INTRUDER` (skipped unless this runs as root, which can become them)."""
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("acting as another local user needs root and runuser")
    return subprocess.Popen(["runuser", "-u", INTRUDER, "--", "env", "-i", "PATH=/usr/bin:/bin", "HOME=/tmp", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)


@pytest.fixture
def open_course(tmp_path_factory) -> Path:
    """A course folder every local user may enter and read, as a course folder often is (0755, on
    a path open to all): only the command's own care keeps its lock out of their reach."""
    where = Path(tempfile.mkdtemp(prefix="open-course-"))
    where.chmod(0o755)
    root = where / "course"
    root.mkdir(mode=0o755)
    root.chmod(0o755)
    (root / "gradebook.db").write_bytes(b"the gradebook")
    yield root
    shutil.rmtree(where, ignore_errors=True)


def test_another_user_cannot_hold_the_parallel_lock(open_course):
    """Red team (issue 51): a plain user held ``flock`` on the run's lock, at a name anyone could work
    out in /tmp, and every later parallel run stopped with "another parallel autograde is running"."""
    lock = parallel.course_lock(open_course, ASSIGNMENT)
    with lock:
        pass  # the lock file exists now, as after any first run
    holder = as_intruder(["flock", "--nonblock", str(lock.path), "-c", "echo held; sleep 60"])
    try:
        said = holder.stdout.readline()
        if said == "held\n":
            time.sleep(0.2)
        with parallel.course_lock(open_course, ASSIGNMENT):
            pass  # the run goes ahead
    finally:
        holder.kill()
        holder.wait()
    assert said != "held\n", f"{INTRUDER} took the lock {lock.path}"
    assert (open_course / "gradebook.db").read_bytes() == b"the gradebook"


def test_a_private_folder_another_account_made_is_named_as_theirs(open_course):
    """Red team (issue 51, second pass): in a course graded by a group of accounts (a shared TA group,
    the course folder group-writable), the first grader's ``.autograde`` (0700) cannot even be opened by
    the second, who was told it "is not one (Permission denied: a link, or a file)". A plain user
    (not root, who opens any folder) is told whose folder it is and what to do."""
    from conftest import plain_python
    import sysconfig

    python = plain_python()
    if python is None:
        pytest.skip("no Python of this version another user can run")
    lock = parallel.course_lock(open_course, ASSIGNMENT)
    with lock:
        pass  # root made .autograde, 0700: "another account" for the plain user below
    open_course.chmod(0o777)
    path = f"{sysconfig.get_paths()['purelib']}:{REPO}"
    said = as_intruder([f"PYTHONPATH={path}", python, "-c",
                        "import sys; from pathlib import Path; from autograder.tools.parallel.run import course_lock\n"
                        "from autograder.tools.errors import ParallelError\n"
                        "try:\n    course_lock(Path(sys.argv[1]), sys.argv[2]).__enter__(); print('LOCKED')\n"
                        "except ParallelError as e:\n    print(e)", str(open_course), ASSIGNMENT])
    out, _ = said.communicate(timeout=60)
    assert "is not yours (owned by uid 0, mode 0700" in out and "a link, or a file" not in out, out
    assert "move it aside" in out, out


def test_a_link_planted_at_the_lock_name_truncates_nothing(open_course):
    """Red team (issue 51): a link planted at the lock's name before the first run made the run's
    ``open(path, "w")`` truncate ``gradebook.db``. The lock's folder is the instructor's alone, and
    the lock is opened without following a link and without truncating: a link there, or a file
    that is not the instructor's, stops the run, naming it, and changes nothing."""
    lock = parallel.course_lock(open_course, ASSIGNMENT)
    gradebook = open_course / "gradebook.db"
    planted = as_intruder(["ln", "-s", str(gradebook), str(lock.path)])
    planted.wait()
    try:
        with parallel.course_lock(open_course, ASSIGNMENT):
            pass
    except parallel.ParallelError:
        pass  # refused: as good, provided nothing was truncated
    assert gradebook.read_bytes() == b"the gradebook", "the run truncated the file a planted link named"
    assert not lock.path.is_symlink(), f"{INTRUDER} planted a link in the instructor's private folder"
    assert oct(lock.folder.stat().st_mode & 0o777) == "0o700" and lock.folder.stat().st_uid == os.geteuid()

    # Should a link get there anyway (the instructor's own slip), it is refused, not followed.
    lock.path.unlink()
    lock.path.symlink_to(gradebook)
    with pytest.raises(parallel.ParallelError, match=r"cannot open .*autograde-\w+\.lock .*a link planted at its name"):
        with parallel.course_lock(open_course, ASSIGNMENT):
            pass
    assert gradebook.read_bytes() == b"the gradebook"
    lock.path.unlink()
    lock.path.write_bytes(b"")
    os.chown(lock.path, 65534, 65534)  # a lock file another user made
    with pytest.raises(parallel.ParallelError, match=r"autograde-\w+\.lock is not yours \(owned by uid 65534"):
        with parallel.course_lock(open_course, ASSIGNMENT):
            pass
    lock.path.unlink()
    lock.folder.chmod(0o777)  # a private folder opened to all
    with pytest.raises(parallel.ParallelError, match=r"the folder .*\.autograde is open to other users .*chmod go="):
        with parallel.course_lock(open_course, ASSIGNMENT):
            pass


@pytest.mark.skipif(os.geteuid() != 0, reason="gives a folder to another account")
def test_a_lock_is_not_opened_in_a_folder_swapped_for_anothers(tmp_path):
    """The lock's folder is opened again, without following a link, as the lock is opened: a folder
    another user put in its place after it was checked (a group-writable course) is refused, and
    nothing is made in it."""
    import pwd

    from autograder.tools.parallel import private

    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, pwd.getpwnam("nobody").pw_uid, -1)
    with pytest.raises(private.PrivateFileError, match="is not yours"):
        private.open_owned(theirs, "autograde.lock")
    os.symlink(tmp_path / "elsewhere", tmp_path / "link")
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(private.PrivateFileError, match="a link is refused"):
        private.open_owned(tmp_path / "link", "autograde.lock")
    assert os.listdir(theirs) == [] and os.listdir(tmp_path / "elsewhere") == []
