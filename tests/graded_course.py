"""A scratch course with one submission autograded and its feedback generated, quickly.

Plain nbgrader, each app in its own process as an instructor types it
(:func:`autograder.tools.scratch.nbgrader`), minus the exchange: the notebook is put
in ``submitted/<student>/<assignment>/`` as ``nbgrader collect`` would put it, so a
test pays for three nbgrader runs (generate, autograde, feedback) instead of eight.
``tests/test_cycle.py`` covers release, fetch, submit and collect.
"""

from __future__ import annotations

from pathlib import Path

from autograder.tools import scratch


def autograded(course_dir: Path, assignment: str, student_id: str, notebook: Path) -> scratch.ScratchCourse:
    course = scratch.prepare_course(course_dir)
    scratch.generate(course, [assignment])
    scratch.place_submission(course, student_id, assignment, notebook)
    scratch.nbgrader(course, ["autograde", assignment], course.root)
    scratch.nbgrader(course, ["generate_feedback", assignment], course.root)
    return course


def autograde_each(course: scratch.ScratchCourse, notebooks: dict[tuple[str, str], Path]) -> scratch.ScratchCourse:
    """Every ``(student, assignment) -> notebook`` handed in to ``course`` (prepared, its config as the
    caller left it), each assignment generated and then autograded in one ``nbgrader autograde``."""
    assignments = sorted({assignment for _, assignment in notebooks})
    scratch.generate(course, assignments)
    for (student, assignment), notebook in notebooks.items():
        scratch.place_submission(course, student, assignment, notebook)
    for assignment in assignments:
        scratch.nbgrader(course, ["autograde", assignment], course.root)
    return course
