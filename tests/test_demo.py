"""The README's first command, ``python -m autograder demo``, as a newcomer runs it: it says
each step as it starts and ends, autogrades through the parallel command with a line per
student, and ends with the grade table, where everything is, and how long it took."""

from __future__ import annotations

import re
import subprocess
import sys

import nbformat
import pytest
from conftest import REPO

from autograder.grading.cells import is_autograder_test

A = "loops"  # a quick one to grade
STEP = re.compile(r"^\[\d\d:\d\d\.\d\] (?P<text>.+)$")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    course = tmp_path_factory.mktemp("demo") / "course"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "demo", "--assignment", A, "--course-dir", str(course)],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
    )
    return proc, course


def full_points() -> float:
    nb = nbformat.read(REPO / "source" / A / f"{A}.ipynb", as_version=4)
    return sum(c.metadata.nbgrader["points"] for c in nb.cells if is_autograder_test(c))


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
    full = full_points()
    lines = proc.stdout.splitlines()
    for kind in ("correct", "partial", "empty"):
        assert any(re.match(rf"\[\d/3\] sample-{kind}\s+[\d.]+/{full:g} points", line) for line in lines), kind
    table = {line.split()[0]: line.split()[1] for line in lines if line.startswith("sample-")}
    assert table["sample-correct"] == f"{full:g}/{full:g}"
    assert table["sample-empty"] == f"0/{full:g}"
    partial = float(table["sample-partial"].split("/")[0])
    assert 0 < partial < full
    assert f"feedback HTML: {course / 'feedback'}" in lines
    assert f"class report:  {course / 'reports'} ({A}.html)" in lines
    assert (course / "reports" / f"{A}.html").is_file()
