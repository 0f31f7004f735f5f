"""Does a whole nbgrader cycle (release, fetch, submit, collect, autograde,
feedback, export) grade the sample submissions right, and does a broken
submission cost only the points that depend on it while the batch goes on?

One scratch course is graded once per module: the three samples hand in every
assignment; four broken copies of the correct sample hand in one assignment.
Their ids sort before ``sample-*``, and nbgrader autogrades in sorted order,
so the samples are the "next students" after each broken one.
"""

from __future__ import annotations

import ast
import copy
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from conftest import COURSE_ASSIGNMENTS, DEMO_ASSIGNMENT, REPO, tree_digest

from autograder.grading.cells import is_answer, is_autograder_test
from autograder.tools import demo, scratch


SAMPLES = REPO / "tests" / "samples"
BROKEN_ASSIGNMENT = "padded_masking"  # broken inputs cost kernels: one assignment is enough
BREAKAGES = ("syntax", "missing", "raise")  # of one answer cell
UNREADABLE = "broken-unreadable"  # a notebook cut short: nbgrader cannot even read it

slow = pytest.mark.slow  # each test below that uses the graded course `run`


# ---------------------------------------------------------------- broken notebooks


def broken_cell_index(nb) -> int:
    """The last answer cell with an autograder test before it: tests before it cannot depend on it."""
    candidates = [
        i for i, c in enumerate(nb.cells) if is_answer(c) and any(is_autograder_test(t) for t in nb.cells[:i])
    ]
    assert candidates, "the correct sample has no answer cell after a test cell to break"
    return candidates[-1]


def defined_names(source: str) -> list[str]:
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def break_cell(source: str, kind: str) -> str:
    if kind == "syntax":
        return source + "\n\ndef unfinished(:\n"
    if kind == "missing":
        names = defined_names(source)
        assert names, f"the answer cell defines no name to remove:\n{source}"
        return source + "\n\ndel " + ", ".join(names) + "\n"
    if kind == "raise":
        return 'raise RuntimeError("a student cell that raises")\n' + source
    raise ValueError(f"unknown breakage {kind!r}")


def make_broken(correct: Path, out_dir: Path) -> dict[str, Path]:
    """Copies of the correct sample, each with its last answer cell broken one way."""
    nb = nbformat.read(correct, as_version=4)
    index = broken_cell_index(nb)
    out_dir.mkdir(parents=True)
    paths = {}
    for kind in BREAKAGES:
        broken = copy.deepcopy(nb)
        broken.cells[index].source = break_cell(nb.cells[index].source, kind)
        paths[kind] = out_dir / f"{kind}.ipynb"
        nbformat.write(broken, paths[kind])
    return paths


def make_unreadable(correct: Path, path: Path) -> Path:
    path.write_bytes(correct.read_bytes()[:300])
    return path


# ---------------------------------------------------------------- the graded course


@dataclass
class Run:
    result: scratch.CycleResult
    students: list[scratch.Student]
    source_before: dict[str, str]
    broken_index: int

    @property
    def root(self) -> Path:
        return self.result.course.root

    def submitted(self):
        return [(s.student_id, a, path) for s in self.students for a, path in s.submissions.items()]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Run:
    work = tmp_path_factory.mktemp("cycle")
    correct = SAMPLES / BROKEN_ASSIGNMENT / "correct.ipynb"
    broken = make_broken(correct, work / "broken")
    students = [scratch.Student(f"broken-{k}", {BROKEN_ASSIGNMENT: p}) for k, p in broken.items()]
    students.append(scratch.Student(UNREADABLE, {BROKEN_ASSIGNMENT: make_unreadable(correct, work / "cut.ipynb")}))
    students += demo.sample_students(COURSE_ASSIGNMENTS, samples_dir=SAMPLES)
    source_before = tree_digest(REPO / "source")
    result = scratch.run_cycle(work / "course", students, COURSE_ASSIGNMENTS)
    index = broken_cell_index(nbformat.read(correct, as_version=4))
    return Run(result, students, source_before, index)


def source_points(assignment: str, graded_by: str = "autograder") -> float:
    """Points of the source notebook's autograder tests, or of all its grade cells."""
    nb = nbformat.read(REPO / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    counted = is_autograder_test if graded_by == "autograder" else lambda c: c.metadata.get("nbgrader", {}).get("grade")
    return sum(c.metadata.nbgrader["points"] for c in nb.cells if counted(c))


# ---------------------------------------------------------------- samples


@slow
@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_correct_sample_gets_every_automatic_point(run, assignment):
    score = run.result.score("sample-correct", assignment)
    assert score.max_points == source_points(assignment) > 0
    assert score.points == score.max_points, score.cells


@slow
@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_empty_sample_gets_zero(run, assignment):
    score = run.result.score("sample-empty", assignment)
    assert score.max_points == source_points(assignment)
    assert score.points == 0, score.cells


@slow
@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_partial_sample_gets_some_but_not_all(run, assignment):
    score = run.result.score("sample-partial", assignment)
    assert score.max_points == source_points(assignment)
    assert 0 < score.points < score.max_points, score.cells


@slow
def test_every_readable_submission_is_graded(run):
    assert set(run.result.scores) == {(sid, a) for sid, a, _ in run.submitted() if sid != UNREADABLE}


@slow
def test_the_unreadable_submission_is_the_one_problem_reported(run):
    [problem] = run.result.problems
    assert problem.startswith(f"nbgrader autograde {BROKEN_ASSIGNMENT} failed")
    assert f"for student '{UNREADABLE}'" in problem


@slow
def test_exported_csv_agrees_with_the_gradebook(run):
    """The CSV's max counts the hand-graded answers too; nobody has graded those yet."""
    rows = {(r["student_id"], r["assignment"]): r for r in scratch.read_grades_csv(run.result.course)}
    for (sid, a), score in run.result.scores.items():
        row = rows[sid, a]
        assert float(row["score"]) == score.points
        assert float(row["max_score"]) == source_points(a, graded_by="anyone")


@slow
def test_scratch_source_is_untouched(run):
    assert tree_digest(run.root / "source") == run.source_before


@slow
def test_exchange_names_each_submission_after_its_student(run):
    inbound = run.root / "exchange" / scratch.course_id() / "inbound"
    handed_in = {tuple(d.name.split("+")[:2]) for d in inbound.iterdir()}
    assert handed_in == {(sid, a) for sid, a, _ in run.submitted()}


@slow
def test_each_student_gets_exactly_what_they_handed_in_graded(run):
    for sid, a, path in run.submitted():
        submitted = run.root / "submitted" / sid / a / f"{a}.ipynb"
        assert submitted.read_bytes() == path.read_bytes(), f"{sid}/{a} was not submitted as handed in"


@slow
def test_feedback_html_for_every_graded_submission(run):
    for sid, a in run.result.scores:
        html = run.result.course.feedback_dir / sid / a / f"{a}.html"
        assert html.is_file() and html.stat().st_size > 0, f"no feedback at {html}"


@slow
@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_no_line_a_correct_notebook_prints_is_taken_for_the_graders(run, assignment):
    """The scrubber removes the hidden grader's lines from outputs; a correct notebook's own outputs
    (JAX's cache-miss explanations and compile log among them) must reach the student whole."""
    from autograder.confinement.preprocessors import REMOVED

    graded = run.root / "autograded" / "sample-correct" / assignment / f"{assignment}.ipynb"
    page = run.result.course.feedback_dir / "sample-correct" / assignment / f"{assignment}.html"
    assert REMOVED not in graded.read_text(encoding="utf-8")
    assert REMOVED not in page.read_text(encoding="utf-8")


# ---------------------------------------------------------------- broken submissions


def lost_cells(score: scratch.Score) -> set[str]:
    return {c.grade_id for c in score.cells if c.points < c.max_points}


@slow
def test_batch_goes_on_to_grade_students_after_the_broken_ones(run):
    def graded_at(sid: str) -> float:
        return (run.root / "autograded" / sid / BROKEN_ASSIGNMENT / f"{BROKEN_ASSIGNMENT}.ipynb").stat().st_mtime

    last_broken = max(graded_at(f"broken-{k}") for k in BREAKAGES)
    for kind in demo.SAMPLE_KINDS:
        assert graded_at(f"sample-{kind}") >= last_broken
    assert UNREADABLE < min(f"sample-{kind}" for kind in demo.SAMPLE_KINDS)  # graded before them
    assert run.result.score("sample-correct", BROKEN_ASSIGNMENT).points == source_points(BROKEN_ASSIGNMENT)


@slow
@pytest.mark.parametrize("kind", BREAKAGES)
def test_broken_answer_costs_points_but_not_those_of_earlier_tests(run, kind):
    score = run.result.score(f"broken-{kind}", BROKEN_ASSIGNMENT)
    assert score.points < score.max_points, f"breaking an answer cost nothing: {score.cells}"
    nb = nbformat.read(SAMPLES / BROKEN_ASSIGNMENT / "correct.ipynb", as_version=4)
    earlier = {c.metadata.nbgrader["grade_id"] for c in nb.cells[: run.broken_index] if is_autograder_test(c)}
    assert earlier and not (lost_cells(score) & earlier), score.cells


@slow
def test_every_breakage_of_one_answer_costs_the_same_dependent_tests(run):
    lost = {kind: lost_cells(run.result.score(f"broken-{kind}", BROKEN_ASSIGNMENT)) for kind in BREAKAGES}
    assert len({frozenset(cells) for cells in lost.values()}) == 1, lost


@slow
def test_regrading_one_broken_student_leaves_everyone_else_untouched(run):
    """Runs after the checks above that read broken-raise's files: it autogrades that student again."""
    autograded = run.root / "autograded"
    others = [d for d in autograded.iterdir() if d.name != "broken-raise"]
    before = {d.name: tree_digest(d) for d in others}
    scratch.nbgrader(run.result.course, ["autograde", BROKEN_ASSIGNMENT, "--student", "broken-raise", "--force"], run.root)
    assert {d.name: tree_digest(d) for d in others} == before
    assert scratch.read_scores(run.result.course) == run.result.scores


# ---------------------------------------------------------------- the demo command


@slow
def test_demo_prints_the_grade_table_and_feedback_folder(run, demo_run):
    """The demo (the parallel command, tests/test_demo.py) and this nbgrader cycle give the samples
    the same automatic points."""
    proc, course = demo_run
    a = DEMO_ASSIGNMENT
    assert proc.returncode == 0, proc.stderr
    # One row per assignment and student: the automatic points, then the hand-graded ones apart.
    table = {line.split()[1]: line.split()[2:] for line in proc.stdout.splitlines() if line.startswith(f"{a} ")}
    for kind in demo.SAMPLE_KINDS:
        score = run.result.score(f"sample-{kind}", a)
        assert table[f"sample-{kind}"][0] == f"{score.points:g}/{score.max_points:g}", table
        assert table[f"sample-{kind}"][1:] == ["-/2", "(not", "graded", "yet)"], table
    feedback = course / "feedback"
    assert f"feedback HTML: {feedback}" in proc.stdout
    assert sorted(p.relative_to(feedback).parts[0] for p in feedback.glob(f"*/{a}/{a}.html")) == [
        f"sample-{kind}" for kind in sorted(demo.SAMPLE_KINDS)
    ]


# ---------------------------------------------------------------- bad input


def test_a_student_without_the_notebook_is_refused_by_name(tmp_path):
    missing = tmp_path / "nope.ipynb"
    with pytest.raises(scratch.CycleError, match=f"'ann' has no notebook for 'x': {missing} does not exist"):
        scratch.Student("ann", {"x": missing})


def test_a_student_id_nbgrader_cannot_use_is_refused():
    with pytest.raises(scratch.CycleError, match=r"student id 'a\+b' is not usable"):
        scratch.Student("a+b", {})


def test_a_course_dir_inside_the_repository_is_refused():
    inside = REPO / "build" / "scratch-course"
    with pytest.raises(scratch.CycleError, match="inside the repository"):
        scratch.prepare_course(inside)
    assert not inside.exists()


def test_a_course_dir_that_is_not_empty_is_refused(tmp_path):
    (tmp_path / "old-run.txt").write_text("")
    with pytest.raises(scratch.CycleError, match="is not empty"):
        scratch.prepare_course(tmp_path)


def test_an_unknown_assignment_is_named_before_any_work(tmp_path):
    with pytest.raises(scratch.CycleError, match=r"no source notebook for \['nope'\]"):
        scratch.run_cycle(tmp_path / "course", [], ["nope"])
    assert not (tmp_path / "course").exists()


def test_a_failing_nbgrader_step_is_reported_with_its_command(tmp_path):
    course = scratch.prepare_course(tmp_path / "course")
    with pytest.raises(scratch.CycleError, match="nbgrader release_assignment nope failed") as err:
        scratch.nbgrader(course, ["release_assignment", "nope"], course.root)
    assert str(course.log) in str(err.value)


def test_demo_command_names_bad_input_without_a_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "demo", "--assignment", "nope", "--course-dir", str(tmp_path / "c")],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert proc.returncode == 1
    assert "'nope'" in proc.stderr and "Traceback" not in proc.stderr
