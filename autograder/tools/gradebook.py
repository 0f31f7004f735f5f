"""Reading automatic points from nbgrader's gradebook."""

from __future__ import annotations


def is_automatic_grade(cell_type: str, name, answers) -> bool:
    """Whether a grade cell is an autograder test, whose points are automatic: a code cell that is
    not among ``answers`` (the solution cells graded by hand, by the same kind of ``name``)."""
    return cell_type == "code" and name not in answers


def autograder_test_grades(submitted_notebook) -> list:
    """Grades of a submitted notebook's autograder tests: code grade cells that are not answers."""
    answers = {c.name for c in submitted_notebook.notebook.solution_cells}
    return [g for g in submitted_notebook.grades if is_automatic_grade(g.cell_type, g.name, answers)]


def automatic_points(gb, assignment: str, student: str) -> tuple[float, float]:
    """(automatic points, their maximum) of a student's autograder tests in one assignment."""
    submission = gb.find_submission(assignment, student)
    grades = [g for nb in submission.notebooks for g in autograder_test_grades(nb)]
    return sum(g.auto_score or 0.0 for g in grades), sum(g.max_score for g in grades)
