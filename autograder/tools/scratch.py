"""The instructor's grading cycle, end to end, in a scratch course.

Plain nbgrader does every step, each app in its own process, exactly as an
instructor would type it: generate and release the assignments, let each
student fetch and submit through a real exchange folder, then collect,
autograde, generate feedback and export the grades. Scores are read back from
nbgrader's SQLite gradebook.

Scratch course layout (``course_dir``)::

    nbgrader_config.py    loads the repo's course_config.py, sets the roots
    source/               copied from the repo; nbgrader never writes here
    release/ submitted/ autograded/ feedback/ gradebook.db grades.csv
    exchange/             Exchange.root, where release/submit/collect meet
    students/<id>/        each student's home: own config, fetched folders
    cycle.log             every nbgrader command with its output

Who submits: nbgrader names a submission after ``CourseDirectory.student_id``
when it is set (``nbgrader submit A --student ID``), else after the owner of
the running process (``pwd.getpwuid(os.getuid())``; USER and LOGNAME are not
read). All simulated students share this machine's account, so each submit
passes ``--student``. Fetching needs no name: it copies into the working folder.
"""

from __future__ import annotations

import csv
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, TextIO

from traitlets.config.loader import PyFileConfigLoader

from autograder.tools.course import Course, load
from autograder.tools.errors import CycleError
from autograder.tools.gradebook import autograder_test_grades
from autograder.tools.repository import REPO_ROOT, tool_env
from autograder.tools.words import counted

_FORBIDDEN_IN_STUDENT_ID = ("+", "*", "/", os.sep)
_LOG_LOCK = threading.Lock()


@dataclass(frozen=True)
class Student:
    """A student and the notebook they hand in for each assignment they submit."""

    student_id: str
    submissions: Mapping[str, Path]

    def __post_init__(self) -> None:
        bad = [ch for ch in _FORBIDDEN_IN_STUDENT_ID if ch in self.student_id]
        if not self.student_id or bad:
            raise CycleError(
                f"cycle: student id {self.student_id!r} is not usable by nbgrader: "
                f"it must be non-empty and hold none of {' '.join(_FORBIDDEN_IN_STUDENT_ID)}"
            )
        for assignment, path in self.submissions.items():
            if not Path(path).is_file():
                raise CycleError(
                    f"cycle: student {self.student_id!r} has no notebook for "
                    f"{assignment!r}: {path} does not exist"
                )


@dataclass(frozen=True)
class CellScore:
    grade_id: str
    points: float
    max_points: float


@dataclass(frozen=True)
class Score:
    """Automatic points of one submission, as the gradebook holds them."""

    student_id: str
    assignment: str
    points: float
    max_points: float
    cells: tuple[CellScore, ...]


@dataclass(frozen=True)
class ScratchCourse:
    """A scratch course's folders: the course itself, and the world the cycle simulates around it
    (the exchange, the students' homes, the log of every command). What nbgrader's configuration
    decides, the gradebook and the students' folders, is read through the one model of a course
    (:meth:`model`, :mod:`autograder.tools.course`)."""

    root: Path
    #: The gradebook, where a command line names it rather than the course's configuration.
    db_url: str | None = None

    def model(self) -> Course:
        """The course as nbgrader's configuration in its folder describes it."""
        return load(self.root, "cycle").using(self.db_url)

    @property
    def exchange(self) -> Path:
        return self.root / "exchange"

    @property
    def feedback_dir(self) -> Path:
        return self.root / "feedback"

    @property
    def grades_csv(self) -> Path:
        return self.root / "grades.csv"

    @property
    def log(self) -> Path:
        return self.root / "cycle.log"

    def home(self, student_id: str) -> Path:
        return self.root / "students" / student_id


@dataclass
class CycleResult:
    course: ScratchCourse
    scores: dict[tuple[str, str], Score]
    problems: list[str] = field(default_factory=list)

    def score(self, student_id: str, assignment: str) -> Score:
        try:
            return self.scores[student_id, assignment]
        except KeyError:
            raise KeyError(
                f"no graded submission of {assignment!r} by {student_id!r}; "
                f"graded: {sorted(self.scores)}"
            ) from None


# ---------------------------------------------------------------- inputs


def available_assignments(repo_root: Path = REPO_ROOT) -> list[str]:
    """Assignments present in the repo: ``source/<a>/<a>.ipynb``."""
    source = repo_root / "source"
    if not source.is_dir():
        return []
    return sorted(d.name for d in source.iterdir() if (d / f"{d.name}.ipynb").is_file())


def check_assignments(assignments: Iterable[str], repo_root: Path = REPO_ROOT) -> list[str]:
    known = available_assignments(repo_root)
    chosen = list(assignments)
    unknown = [a for a in chosen if a not in known]
    if unknown or not chosen:
        raise CycleError(
            f"cycle: no source notebook for {unknown or 'any assignment'}; "
            f"source/<assignment>/<assignment>.ipynb exists for: {known or 'none'}"
        )
    return chosen


def course_id(repo_root: Path = REPO_ROOT) -> str:
    config = PyFileConfigLoader("course_config.py", path=str(repo_root)).load_config()
    return config.CourseDirectory.course_id


# ---------------------------------------------------------------- course set-up


def prepare_course(course_dir: Path, repo_root: Path = REPO_ROOT, db_url: str | None = None) -> ScratchCourse:
    """Make an empty scratch course: config, a copy of source/, an exchange folder; its gradebook
    at ``db_url`` (an SQLAlchemy URL: ``postgresql+psycopg2://...``), else ``gradebook.db`` in it."""
    course_dir = Path(course_dir).resolve()
    repo_root = repo_root.resolve()
    if course_dir == repo_root or repo_root in course_dir.parents:
        raise CycleError(
            f"cycle: course dir {course_dir} is inside the repository {repo_root}; "
            "the scratch course must live outside it (leave --course-dir out for a temp folder)"
        )
    if course_dir.exists() and any(course_dir.iterdir()):
        raise CycleError(f"cycle: course dir {course_dir} is not empty; give a new or empty folder")
    course_config = repo_root / "course_config.py"
    if not course_config.is_file():
        raise CycleError(f"cycle: {course_config} not found; it holds the course's nbgrader config")

    course = ScratchCourse(course_dir, db_url)
    course.exchange.mkdir(parents=True)
    shutil.copytree(
        repo_root / "source",
        course_dir / "source",
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
    )
    (course_dir / "nbgrader_config.py").write_text(
        _INSTRUCTOR_CONFIG.format(
            course_config=str(course_config), root=str(course_dir), exchange=str(course.exchange)
        ) + (f"c.CourseDirectory.db_url = {db_url!r}\n" if db_url else "")
    )
    return course


def start_kernels_afresh(course: ScratchCourse) -> None:
    """Have the scratch course start each kernel afresh through the jail, not fork it from the
    fork server (autograder/confinement/kernel_manager.py): the other way to compare with."""
    with open(course.root / "nbgrader_config.py", "a") as config:
        config.write("# Each kernel started afresh through the jail, not forked from the fork server.\n"
                     "c.ConfinedKernelManager.fork_server = False\n")


_INSTRUCTOR_CONFIG = '''\
# Written by autograder.tools.scratch: a scratch copy of the course, graded by plain nbgrader.
import os
import re

c = get_config()  # noqa: F821
_course_config = {course_config!r}
if not os.path.isfile(_course_config):  # load_subconfig would skip a missing file silently
    raise FileNotFoundError("course config not found: " + _course_config)
load_subconfig(_course_config)  # noqa: F821
c.CourseDirectory.root = {root!r}
c.Exchange.root = {exchange!r}
# Every simulated student shares this machine's one account, so collect's owner
# check would call each submission a cheating attempt.
c.ExchangeCollect.check_owner = False
'''

_STUDENT_CONFIG = '''\
# Written by autograder.tools.scratch: what a student's own nbgrader setup provides.
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
c.Exchange.cache = {cache!r}
'''


# ---------------------------------------------------------------- running nbgrader


def nbgrader(course: ScratchCourse, args: list[str], cwd: Path, check: bool = True) -> str | None:
    """Run ``python -m nbgrader ARGS`` in ``cwd``; log it; on failure raise or return the reason."""
    cmd = [sys.executable, "-m", "nbgrader", *args]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, env=tool_env(), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    entry = f"$ (cd {cwd} && nbgrader {' '.join(args)})  # exit {proc.returncode}, {seconds:.1f} s\n"
    with _LOG_LOCK, course.log.open("a") as log:
        log.write(entry + proc.stdout + proc.stderr + "\n")
    if proc.returncode == 0:
        return None
    reason = f"nbgrader {' '.join(args)} failed (exit {proc.returncode}) in {cwd}:\n{_gist(proc)}"
    if check:
        raise CycleError(f"cycle: {reason}\nfull output: {course.log}")
    return reason


def _gist(proc: subprocess.CompletedProcess) -> str:
    """nbgrader's own ERROR lines and the exceptions named in its output, else its last lines."""
    lines = (proc.stderr + proc.stdout).strip().splitlines()
    gist = [
        line.strip()
        for line in lines
        if "| ERROR]" in line or re.match(r"[\w.]*(Error|Exception): ", line.strip())
    ]
    return "\n".join(gist or lines[-15:])


class Steps:
    """Says each step of the cycle as it starts and as it ends, with the time it took, to
    ``out`` (the demo's progress); says nothing when ``out`` is None."""

    def __init__(self, out: TextIO | None = None):
        self.out = out
        self.began = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.began

    def say(self, text: str) -> None:
        if self.out is not None:
            elapsed = self.elapsed()
            print(f"[{int(elapsed // 60):02d}:{elapsed % 60:04.1f}] {text}", file=self.out, flush=True)

    @contextmanager
    def step(self, text: str):
        self.say(f"{text} ...")
        start = time.monotonic()
        yield
        self.say(f"{text}: done in {time.monotonic() - start:.1f} s")


QUIET = Steps()


def generate(course: ScratchCourse, assignments: Iterable[str], steps: Steps = QUIET) -> None:
    for a in assignments:
        with steps.step(f"nbgrader generate_assignment {a}"):
            nbgrader(course, ["generate_assignment", a], course.root)


def release(course: ScratchCourse, assignments: Iterable[str], steps: Steps = QUIET) -> None:
    for a in assignments:
        with steps.step(f"nbgrader release_assignment {a} (into the exchange)"):
            nbgrader(course, ["release_assignment", a], course.root)


def hand_in(course: ScratchCourse, student: Student, cid: str) -> None:
    """The student fetches each assignment, replaces the notebook with theirs, and submits."""
    home = course.home(student.student_id)
    home.mkdir(parents=True, exist_ok=True)
    (home / "nbgrader_config.py").write_text(
        _STUDENT_CONFIG.format(course_id=cid, exchange=str(course.exchange), cache=str(home / ".nbgrader_cache"))
    )
    for a, notebook in student.submissions.items():
        nbgrader(course, ["fetch_assignment", a], home)
        fetched = home / a / f"{a}.ipynb"
        if not fetched.is_file():
            raise CycleError(f"cycle: fetch_assignment {a} did not produce {fetched}")
        shutil.copyfile(notebook, fetched)
        nbgrader(course, ["submit", a, "--student", student.student_id], home)


def place_submission(
    course: ScratchCourse, student: str, assignment: str, notebook: Path, when: datetime.datetime | None = None
) -> Path:
    """Put a notebook in ``submitted/`` as ``nbgrader collect`` leaves it (stamped ``when``, default now):
    for tools and tests that autograde without going through the exchange."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    dest = course.root / "submitted" / student / assignment
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(notebook, dest / f"{assignment}.ipynb")
    (dest / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f %Z"))
    return dest


def collect_and_grade(
    course: ScratchCourse, assignments: Iterable[str], steps: Steps = QUIET, workers: int | None = None
) -> list[str]:
    """Collect, autograde and give feedback; return the problems of steps that failed.

    With ``workers``, autograde runs through the course's parallel command (its progress
    bar goes to the steps' output), one assignment after another, instead of plain ``nbgrader
    autograde``. Plain nbgrader grades one kernel at a time, mostly on one core: two assignments
    go at once, as an instructor with two terminals runs them (each command stages its own copies),
    once every student who handed in is in the gradebook (two commands adding the same new student
    at once: one of them fails that student)."""
    assignments = list(assignments)
    at_once = 1 if workers else min(2, os.cpu_count() or 1, len(assignments) or 1)
    if at_once > 1:
        with steps.step("nbgrader collect"):
            for a in assignments:
                nbgrader(course, ["collect", a], course.root)
        add_students(course, assignments)

    def one(a: str) -> str | None:
        if at_once == 1:
            with steps.step(f"nbgrader collect {a}"):
                nbgrader(course, ["collect", a], course.root)
        with steps.step(f"autograde {a}" + (f" ({workers} workers)" if workers else "")):
            reason = _autograde(course, a, steps, workers)
        with steps.step(f"nbgrader generate_feedback {a}"):
            return nbgrader(course, ["generate_feedback", a], course.root, check=False) or reason

    with ThreadPoolExecutor(at_once) as pool:
        problems = [reason for reason in pool.map(one, assignments) if reason]
    with steps.step("nbgrader export"):
        nbgrader(course, ["export", "--to", str(course.grades_csv)], course.root)
    return problems


def add_students(course: ScratchCourse, assignments: Iterable[str]) -> None:
    """Every student with a collected submission of ``assignments``, in the gradebook."""
    model = course.model()
    model.add_students(student for a in assignments for student in model.students("submitted", a))


def _autograde(course: ScratchCourse, assignment: str, steps: Steps, workers: int | None) -> str | None:
    if not workers:
        return nbgrader(course, ["autograde", assignment], course.root, check=False)
    import io

    from autograder.tools.parallel.run import autograde

    result = autograde(assignment, course.root, workers, out=steps.out or io.StringIO(), log=course.log)
    return None if result.exit_code == 0 else f"autograde {assignment}: {result.exit_code=} (see {course.log})"


# ---------------------------------------------------------------- reading grades


def read_scores(course: ScratchCourse) -> dict[tuple[str, str], Score]:
    """Automatic points of every autograded submission, from nbgrader's gradebook."""
    scores = {}
    with course.model().gradebook() as gb:
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                tests = [g for nb in sub.notebooks for g in autograder_test_grades(nb)]
                if not tests or any(g.auto_score is None for g in tests):
                    continue  # not (fully) autograded
                cells = tuple(CellScore(g.name, g.auto_score, g.max_score) for g in tests)
                scores[sub.student.id, assignment.name] = Score(
                    sub.student.id,
                    assignment.name,
                    sum(c.points for c in cells),
                    sum(c.max_points for c in cells),
                    cells,
                )
    return scores


def read_grades_csv(course: ScratchCourse) -> list[dict[str, str]]:
    with course.grades_csv.open(newline="") as fh:
        return list(csv.DictReader(fh))


# ---------------------------------------------------------------- the cycle


def run_cycle(
    course_dir: Path | None,
    students: Iterable[Student],
    assignments: Iterable[str],
    repo_root: Path = REPO_ROOT,
    steps: Steps = QUIET,
    workers: int | None = None,
    db_url: str | None = None,
) -> CycleResult:
    """Run the whole cycle in ``course_dir`` (a new temp folder if None) and read the grades;
    ``steps`` says what is happening, ``workers`` autogrades through the parallel command,
    ``db_url`` names the gradebook (default: ``gradebook.db`` in the course)."""
    assignments = check_assignments(assignments, repo_root)
    students = list(students)
    ids = [s.student_id for s in students]
    if len(set(ids)) != len(ids):
        raise CycleError(f"cycle: student ids repeat: {ids}")
    for s in students:
        stray = sorted(set(s.submissions) - set(assignments))
        if stray:
            raise CycleError(f"cycle: {s.student_id!r} submits {stray}, which this cycle does not release")
    if course_dir is None:
        course_dir = Path(tempfile.mkdtemp(prefix="jax-tracing-cycle-"))

    course = prepare_course(Path(course_dir), repo_root, db_url)
    steps.say(f"scratch course: {course.root}")
    generate(course, assignments, steps)
    release(course, assignments, steps)
    cid = course_id(repo_root)
    # Students work side by side; each runs its own nbgrader processes.
    verb = "fetches and submits" if len(students) == 1 else "fetch and submit"
    with steps.step(f"{counted(len(students), 'student')} {verb} through the exchange"):
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for done in [pool.submit(hand_in, course, student, cid) for student in students]:
                done.result()
    problems = collect_and_grade(course, assignments, steps, workers)
    return CycleResult(course, read_scores(course), problems)
