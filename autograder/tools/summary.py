"""The line ``nbgrader autograde`` ends with: per assignment, what the students graded in this run
earned, automatic points and hand-graded points apart, and who was refused at the boundary."""

from __future__ import annotations

from collections import defaultdict

from nbgrader.api import MissingEntry

from autograder.confinement.boundary import shown
from autograder.tools.course import Course
from autograder.tools.gradebook import automatic_points
from autograder.tools.versions import graded_with
from autograder.tools.words import counted


def _points(x: float) -> str:
    return f"{x:g}"


def summary_lines(course: Course, graded: list[tuple[str, str]],
                  refusals: dict[tuple[str, str], list[str]]) -> list[str]:
    """One line per assignment among ``graded`` ((assignment, student) pairs graded in this run)."""
    students = defaultdict(list)
    for assignment, student in graded:
        students[assignment].append(student)
    lines = []
    with course.gradebook() as gb:
        for assignment, ids in sorted(students.items()):
            earned, auto_max, hand_max = [], 0.0, 0.0
            for student in ids:
                try:
                    got, auto_max = automatic_points(gb, assignment, student)
                    hand_max = gb.find_submission(assignment, student).max_score - auto_max
                except MissingEntry:
                    continue
                earned.append(got)
            if not earned:
                continue
            n = len(earned)
            line = (f"Autograded {assignment}: {counted(n, 'student')}, automatic points "
                    f"(of {_points(auto_max)}): mean {sum(earned) / n:.1f}, lowest {_points(min(earned))}, "
                    f"highest {_points(max(earned))}, {sum(e == auto_max for e in earned)} at full marks")
            if hand_max:
                more = "more point" if hand_max == 1 else "more points"
                line += f"; {_points(hand_max)} {more} each to grade by hand in formgrader"
            refused = sorted(s for (a, s) in refusals if a == assignment and s in ids)
            if refused:
                line += f"; refused in part or whole at the boundary: {', '.join(shown(s) for s in refused)}"
            lines.append(line)
    return lines


def log_summary(log, coursedir, graded: list[tuple[str, str]], refusals: dict) -> None:
    lines = summary_lines(Course(coursedir), graded, refusals)
    for line in lines:
        log.info(line)
    if lines:
        log.info(graded_with())
