"""The README's first command, ``python -m autograder demo``, as a newcomer runs it: it says
each step as it starts and ends, autogrades through the parallel command with a line per
student, and ends with the grade table, where everything is, and how long it took."""

from __future__ import annotations

import csv
import re

import nbformat
import pytest
from conftest import DEMO_ASSIGNMENT, REPO

from autograder.grading.cells import is_autograder_test

A = DEMO_ASSIGNMENT  # a quick one to grade
STEP = re.compile(r"^\[\d\d:\d\d\.\d\] (?P<text>.+)$")


@pytest.fixture(scope="module")
def demo(demo_run):
    return demo_run


def full_points() -> float:
    nb = nbformat.read(REPO / "source" / A / f"{A}.ipynb", as_version=4)
    return sum(c.metadata.nbgrader["points"] for c in nb.cells if is_autograder_test(c))


def hand_points() -> float:
    """What the answers graded by hand are worth: the grade cells that are no autograder test."""
    nb = nbformat.read(REPO / "source" / A / f"{A}.ipynb", as_version=4)
    return sum(c.metadata.nbgrader["points"] for c in nb.cells
               if c.metadata.get("nbgrader", {}).get("grade") and not is_autograder_test(c))


@pytest.mark.slow
def test_the_demo_says_each_step_as_it_starts_and_ends(demo):
    proc, _ = demo
    assert proc.returncode == 0, proc.stdout + proc.stderr
    steps = [m["text"] for m in map(STEP.match, proc.stdout.splitlines()) if m]
    for step in (f"nbgrader generate_assignment {A}", f"nbgrader release_assignment {A} (into the exchange)",
                 "3 students fetch and submit through the exchange", f"nbgrader collect {A}",
                 f"autograde {A} (", f"nbgrader generate_feedback {A}", "nbgrader export", "class report"):
        started = [s for s in steps if s.startswith(step) and s.endswith(" ...")]
        ended = [s for s in steps if s.startswith(step) and re.search(r": done in \d+\.\d s$", s)]
        assert started and ended, f"no start and end line for {step!r} in:\n{proc.stdout}"
    assert re.search(r"demo: done in \d+ s$", steps[-1]), steps[-1]


@pytest.mark.slow
def test_the_demo_grades_through_the_parallel_command_and_ends_with_the_table(demo):
    proc, course = demo
    full, hand = full_points(), hand_points()
    assert hand > 0, "the assignment has no answer graded by hand: the table's second column says nothing"
    lines = proc.stdout.splitlines()
    assert any(re.search(rf"demo: 3 sample students x 1 assignment \({A}\)$", line) for line in lines), lines[:3]
    for kind in ("correct", "partial", "empty"):
        assert any(re.match(rf"\[\d/3\] sample-{kind}\s+[\d.]+/{full:g} automatic points", line) for line in lines), kind
    header = next(line for line in lines if line.startswith("assignment "))
    assert re.split(r"\s{2,}", header) == ["assignment", "student", "automatic", "by hand"]
    table = {cells[1]: cells[2:] for cells in (re.split(r"\s{2,}", line) for line in lines if line.startswith(A + " "))}
    assert set(table) == {"sample-correct", "sample-partial", "sample-empty"}
    # automatic and hand-graded points apart: nobody has graded the written answers yet
    assert table["sample-correct"] == [f"{full:g}/{full:g}", f"-/{hand:g} (not graded yet)"]
    assert table["sample-empty"] == [f"0/{full:g}", f"-/{hand:g} (not graded yet)"]
    partial = float(table["sample-partial"][0].split("/")[0])
    assert 0 < partial < full
    assert any(line.startswith("by hand: the written answers") and "grades.csv counts one not graded yet as 0" in line
               for line in lines)
    # grades.csv says the same: the automatic points, of the automatic and the hand-graded ones together
    with open(course / "grades.csv", newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f) if row["assignment"] == A}
    for sid, (automatic, _) in table.items():
        points, most = automatic.split("/")
        assert float(rows[sid]["score"]) == float(points), rows[sid]
        assert float(rows[sid]["max_score"]) == float(most) + hand, rows[sid]
    assert f"feedback HTML: {course / 'feedback'}" in lines
    assert f"class report:  {course / 'reports'} ({A}.html)" in lines
    assert (course / "reports" / f"{A}.html").is_file()


def test_counts_say_one_and_many():
    from autograder.tools.words import counted

    assert [counted(n, "student") for n in (0, 1, 2)] == ["0 students", "1 student", "2 students"]
    assert counted(1, "sample student") == "1 sample student" and counted(2, "class", "classes") == "2 classes"
