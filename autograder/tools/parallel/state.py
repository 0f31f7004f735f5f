"""Which students of an assignment still need autograding, read from the course itself.

No journal of our own: a student counts as done only when nbgrader's own outputs
say so, so a run killed at any instant (or a plain ``nbgrader autograde``) leaves
nothing that could be mistaken for a finished grade.

nbgrader autogrades one student in this order: rewrite ``autograded/`` with the
sanitized, *unexecuted* notebook; run it; commit the scores to the gradebook;
overwrite the notebook with the executed one. So an autograded notebook whose
test cells have all run was written after its scores were committed, and a
student is *complete* when, for every notebook the gradebook knows:

- the autograded notebook reads as JSON and every autograder test cell in it has run;
- the gradebook holds an automatic score for every autograder test cell;
- both are at least as new as the submission (nbgrader's timestamp.txt rule, and
  the notebook file's modification time).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from autograder.confinement.boundary import is_regular_file, read_timestamp_text, readable_time
from autograder.grading.cells import autograder_tests
from autograder.tools.course import Course
from autograder.tools.errors import ParallelError
from autograder.tools.parallel import private
from autograder.tools.gradebook import autograder_test_grades


def plan(course: Course, assignment: str, students: list[str] | None, force: bool) -> dict:
    """What a run must do: the students chosen (every submission, or those named); of them
    those already fully graded, with their points, unless ``force``; and for each student to
    grade, the :func:`graded_mark` it has now. Raises :class:`ParallelError` when nbgrader
    could grade nobody."""
    from autograder.tools.gradebook import automatic_points

    check_assignment(course, assignment)
    everyone = submitted_students(course, assignment)
    chosen = everyone if students is None else _chosen(course, assignment, students, everyone)
    if not chosen:
        raise ParallelError(f"autograde: no submissions of {assignment!r}: nothing matches "
                            f"{submitted_pattern(course, assignment)}")
    done, marks = [], {}
    with course.gradebook() as gb:
        for student in chosen:
            mark = graded_mark(course, gb, assignment, student)
            if mark is not None and not force:
                earned, possible = automatic_points(gb, assignment, student)
                done.append({"student_id": student, "points": earned, "max_points": possible})
            else:
                marks[student] = mark
    return {"students": chosen, "done": done, "marks": marks}


def sqlite_refusal(db_url: str, remote: list[str]) -> str | None:
    """Why a run must not start, when its gradebook is a SQLite file and workers run on other machines."""
    if not db_url.startswith("sqlite") or not remote:
        return None
    return (f"autograde: the gradebook is a SQLite file ({db_url.split('?')[0]}) and workers run on other machines "
            f"({', '.join(remote)}); nbgrader's writers must not share one SQLite file over the network: give the "
            "course a PostgreSQL gradebook (--db-url postgresql+psycopg2://...)")


def _chosen(course: Course, assignment: str, students: list[str], everyone: list[str]) -> list[str]:
    chosen = sorted(set(students))
    missing = [s for s in chosen if s not in everyone]
    if missing:
        raise ParallelError(f"autograde: no submission of {assignment!r} by {', '.join(map(repr, missing))} "
                            f"under {submitted_pattern(course, assignment)}")
    return chosen


def check_assignment(course: Course, assignment: str) -> None:
    """Fail early, in nbgrader's words, when nbgrader autograde could grade nobody."""
    db = course.root / "gradebook.db"
    if course.db_url.startswith("sqlite:") and str(db) in course.db_url and not db.is_file():
        raise ParallelError(
            f"autograde: no gradebook at {db}; run `nbgrader generate_assignment {assignment}` "
            f"in {course.root} first (is this the course folder?)"
        )
    with course.gradebook() as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            known = ", ".join(sorted(a.name for a in gb.assignments)) or "none"
            raise ParallelError(
                f"autograde: the gradebook has no assignment {assignment!r} (it has: {known}); "
                f"run `nbgrader generate_assignment {assignment}` first"
            ) from None


def submitted_pattern(course: Course, assignment: str) -> str:
    """Where every student's submission of ``assignment`` lies, as a glob."""
    return course.pattern("submitted", assignment)


def submitted_students(course: Course, assignment: str) -> list[str]:
    """Students with a submission of ``assignment``, found as ``nbgrader autograde`` finds them."""
    return list(course.students("submitted", assignment))


def _executed(path: Path) -> bool:
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    tests = autograder_tests(notebook)
    return bool(tests) and all(_ran(cell) for cell in tests)


def _ran(cell: dict) -> bool:
    """Executed, or marked as lost to a kernel that died (autograder.confinement.preprocessors.ConfinedExecute)."""
    died = any(output.get("ename") == "KernelDied" for output in cell.get("outputs", []))
    return cell.get("execution_count") is not None or died


def _timestamp(folder: Path):
    """A ``timestamp.txt`` read through the boundary (never a link's target); None when it holds no
    time nbgrader can read."""
    return readable_time(read_timestamp_text(str(folder)))


def is_complete(course: Course, gb: Gradebook, assignment: str, student: str) -> bool:
    """Whether nbgrader has fully autograded this student's current submission."""
    src, dest = course.submitted(student, assignment), course.autograded(student, assignment)
    if not dest.is_dir():
        return False
    submitted_at = _timestamp(src)
    graded_at = _timestamp(dest)
    if submitted_at is not None and (graded_at is None or submitted_at > graded_at):
        return False
    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        return False
    for nb in submission.notebooks:
        if any(g.auto_score is None for g in autograder_test_grades(nb)):
            return False
        handed_in = src / f"{nb.name}.ipynb"
        if not is_regular_file(str(handed_in)):
            continue  # missing (nbgrader scored it zero) or refused at the boundary (graded as released)
        graded = dest / f"{nb.name}.ipynb"
        if not _executed(graded) or graded.stat().st_mtime < handed_in.stat().st_mtime:
            return False
    return True


def graded_mark(course: Course, gb: Gradebook, assignment: str, student: str) -> list | None:
    """The student's complete grading as it is now (its autograded notebooks' names and
    modification times, as JSON would carry them); None when there is none.

    A task that may run twice (a cluster reruns the tasks of a worker that died) compares
    this with the mark its run planned with: a different mark means another attempt of the
    same run graded the student meanwhile. No clock is compared, so machines need not agree
    on the time."""
    if not is_complete(course, gb, assignment, student):
        return None
    dest = course.autograded(student, assignment)
    return [[path.name, path.stat().st_mtime_ns] for path in sorted(dest.glob("*.ipynb"))]


#: Seconds a grader waits for another that is grading the same student before giving up.
LOCK_WAIT_SECONDS = 900


@contextlib.contextmanager
def student_lock(course: Course, assignment: str, student: str, wait: float = LOCK_WAIT_SECONDS):
    """Hold the lock on grading this student's ``assignment``: one grader at a time, on any machine.

    The lock is a file beside the student's autograded folder (``autograded/<student>/.<assignment>.lock``,
    hidden from nbgrader's globs), so it lives on the course's shared folder and a lock of the
    file system (``flock``; NFSv4 and Lustre pass it to the server) keeps two machines apart.
    It is opened as the command's own lock is (:func:`private.open_owned`: no link followed,
    nothing truncated, only a regular file of the instructor's). Raises :class:`ParallelError`
    after ``wait`` seconds."""
    dest = course.autograded(student, assignment)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(private.open_owned(dest.parent, f".{assignment}.lock"), "r+b", buffering=0) as lock:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ParallelError(f"autograde: another grader has held {student!r}'s {assignment!r} "
                                        f"for over {wait:g} s; not grading it twice at once") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def discard_partial(course: Course, assignment: str, student: str) -> bool:
    """Remove a half-written autograded folder, as nbgrader does after a failure; True if removed.

    Plain ``nbgrader autograde`` skips any student whose autograded folder exists,
    so one left half-written would never be graded by it.
    """
    with course.gradebook() as gb:
        if is_complete(course, gb, assignment, student):
            return False
    dest = course.autograded(student, assignment)
    if dest.exists():
        shutil.rmtree(dest)
        return True
    return False
