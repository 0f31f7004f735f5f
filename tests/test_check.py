"""``python -m autograder check``, the course's linter: it passes on the course, and
each rule fails, with a line naming the file, the cell and the fix, on a copy of the
course broken in one way."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import REPO

from autograder.tools.check import check

#: The assignment the broken copies hold (one, so that regenerating release/ is quick).
A = "static_max_mode"
SOURCE_NB = f"source/{A}/{A}.ipynb"
RELEASE_NB = f"release/{A}/{A}.ipynb"


def test_the_course_passes_every_rule():
    proc = subprocess.run([sys.executable, "-m", "autograder", "check"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "every rule holds" in proc.stdout


@pytest.fixture
def course(tmp_path) -> Path:
    """A copy of the course with one assignment: its notebook, release, property module and its
    mutants record, samples and corpus, and the course's nbgrader configuration."""
    root = tmp_path / "repo"
    for part in (f"source/{A}", f"release/{A}", f"tests/samples/{A}", f"tests/corpus/{A}"):
        shutil.copytree(REPO / part, root / part)
    (root / "autograder" / "properties").mkdir(parents=True)
    for name in (f"test_{A}.py", f"{A}.mutants.json", f"{A}.equivalent.toml"):
        if (REPO / "autograder" / "properties" / name).is_file():
            shutil.copy(REPO / "autograder" / "properties" / name, root / "autograder" / "properties")
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy(REPO / name, root / name)
    return root


def lines(root: Path, regenerate: bool = False) -> list[str]:
    """The problems, but a stale mutants record: each broken copy edits the notebook, which makes its
    record stale (tests/test_mutants.py holds that rule)."""
    return [str(problem) for problem in check(root, regenerate=regenerate)
            if not str(problem).startswith(f"autograder/properties/{A}.mutants.json: stale")]


def edit_cell(root: Path, relative: str, grade_id: str, change) -> None:
    path = root / relative
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    change(nb, cell)
    nbformat.write(nb, path)


def test_the_copy_passes(course):
    assert lines(course, regenerate=True) == []


def test_a_grade_cell_calling_a_group_that_does_not_exist(course):
    edit_cell(course, SOURCE_NB, "test_errors",
              lambda nb, c: setattr(c, "source", c.source.replace('"errors"', '"error"')))
    assert lines(course) == [
        f"{SOURCE_NB}, cell 'test_errors': grades group 'error', which autograder/properties/test_{A}.py does not "
        "have; use one of its groups: errors, modes, sorting, traces",
        f"{SOURCE_NB}: no grade cell grades group 'errors'; add a grade cell hiding "
        f'grade("{A}", "errors", globals())',
    ]


def test_a_grade_cell_whose_points_are_not_its_groups(course):
    edit_cell(course, SOURCE_NB, "test_modes", lambda nb, c: c.metadata.nbgrader.update(points=2))
    assert lines(course) == [
        f"{SOURCE_NB}, cell 'test_modes': carries 2 points but group 'modes' is worth 3 (sum_matches_numpy 1, "
        "mean_matches_numpy 1, max_matches_numpy 1); set the cell's points to 3",
    ]


def test_a_group_graded_by_two_cells(course):
    def duplicate(nb, cell):
        twin = nbformat.from_dict(dict(cell))
        twin.metadata = nbformat.from_dict({"nbgrader": {**cell.metadata.nbgrader, "grade_id": "test_modes_again"}})
        twin["id"] = "test-modes-again"
        nb.cells.insert(nb.cells.index(cell) + 1, twin)

    edit_cell(course, SOURCE_NB, "test_modes", duplicate)
    problems = lines(course)
    assert f"{SOURCE_NB}: group 'modes' is graded by 2 cells (test_modes, test_modes_again); keep one grade " \
           "cell per group, or split the group in the property module" in problems


def test_a_grade_cell_without_its_hidden_call(course):
    edit_cell(course, SOURCE_NB, "test_traces", lambda nb, c: setattr(c, "source", "# nothing hidden here\n"))
    problems = lines(course)
    assert problems[0] == (
        f"{SOURCE_NB}, cell 'test_traces': has no hidden test region (### BEGIN HIDDEN TESTS ... "
        f'### END HIDDEN TESTS); hide grade("{A}", "<group>", globals()) in it'
    )
    assert f"{SOURCE_NB}: no grade cell grades group 'traces'" in problems[1]


def test_a_grade_cell_grading_another_assignment(course):
    edit_cell(course, SOURCE_NB, "test_errors",
              lambda nb, c: setattr(c, "source", c.source.replace(f'grade("{A}"', 'grade("padded_masking"')))
    assert lines(course)[0] == (
        f"{SOURCE_NB}, cell 'test_errors': grades assignment 'padded_masking', not this notebook's; "
        f'call grade("{A}", "errors", globals())'
    )


def test_a_stale_release(course):
    edit_cell(course, SOURCE_NB, "choose_reduction",
              lambda nb, c: setattr(c, "source", c.source.replace("def choose_reduction", "def  choose_reduction")))
    problems = lines(course, regenerate=True)
    assert len(problems) == 1 and problems[0].startswith(f"{RELEASE_NB}, cell ")
    assert problems[0].endswith(
        f"is stale: it differs from what nbgrader makes of source/ now; run nbgrader generate_assignment {A} "
        "--force, then commit release/"
    )


def test_a_release_that_shows_a_solution(course):
    edit_cell(course, RELEASE_NB, "choose",
              lambda nb, c: setattr(c, "source", "### BEGIN SOLUTION\nchoose = None\n### END SOLUTION\n"))
    assert lines(course) == [
        f"{RELEASE_NB}, cell 'choose': shows hidden material to students ('BEGIN SOLUTION'); "
        f"run nbgrader generate_assignment {A} --force",
    ]


def test_a_release_that_calls_the_grader(course):
    edit_cell(course, RELEASE_NB, "choose", lambda nb, c: setattr(c, "source", "import autograder\n"))
    assert lines(course) == [
        f"{RELEASE_NB}, cell 'choose': names the grader (a grade( call or autograder); keep grader calls inside "
        "the source notebook's hidden test regions",
    ]


def test_a_missing_sample_and_an_empty_corpus(course):
    (course / f"tests/samples/{A}/partial.ipynb").unlink()
    for wrong in (course / f"tests/corpus/{A}").glob("*.py"):
        if wrong.stem != "correct":
            wrong.unlink()
    assert lines(course) == [
        f"tests/samples/{A}/partial.ipynb: missing: every assignment has a partial sample submission; write it "
        "from the release notebook (the demo and the cycle tests hand it in)",
        f"tests/corpus/{A}: has no wrong submission; add submissions that lose points the way students do "
        "(docs/authoring.md)",
    ]


def test_a_sample_whose_read_only_cell_is_not_the_releases(course):
    """A sample carrying an older text of a read-only cell, or missing one, is named with its cell; its own
    answers are its own (nbgrader autograde keeps those and warns of neither)."""
    released = f"release/{A}/{A}.ipynb"
    edit_cell(course, f"tests/samples/{A}/partial.ipynb", "trace_watch",
              lambda nb, c: setattr(c, "source", c.source.replace("class ", "class  ", 1)))
    edit_cell(course, f"tests/samples/{A}/correct.ipynb", "check_modes", lambda nb, c: nb.cells.remove(c))
    edit_cell(course, f"tests/samples/{A}/correct.ipynb", "test_traces",
              lambda nb, c: c.metadata.nbgrader.update(points=5))
    edit_cell(course, f"tests/samples/{A}/empty.ipynb", "choose",
              lambda nb, c: setattr(c, "source", "choose = None  # an answer: the sample's own\n"))
    fix = (f"copy the cell from {released} into the sample, keeping the sample's own answer cells (a sample is "
           "the release notebook with its answers)")
    assert lines(course) == [
        f"tests/samples/{A}/correct.ipynb, cell 'check_modes': missing: {released} has this read-only cell; {fix}",
        f"tests/samples/{A}/correct.ipynb, cell 'test_traces': read-only, but not {released}'s: its points "
        f"(nbgrader autograde warns that the student edited it); {fix}",
        f"tests/samples/{A}/partial.ipynb, cell 'trace_watch': read-only, but not {released}'s: its source "
        f"(nbgrader autograde warns that the student edited it); {fix}",
    ]


def test_a_property_module_importing_the_graders_internals(course):
    module = course / "autograder" / "properties" / f"test_{A}.py"
    text = module.read_text()
    module.write_text(text.replace("from autograder.kit import", "from autograder.grading.submission import "
                                   "Submission  # noqa\nfrom autograder.kit import", 1))
    (problem,) = lines(course)
    assert problem.startswith(f"autograder/properties/test_{A}.py, line ")
    assert problem.endswith(": imports 'autograder.grading.submission'; import what a property needs from "
                            "autograder.kit (its face lists everything an author may use)")


def test_a_property_module_reaching_into_the_notebooks_namespace(course):
    module = course / "autograder" / "properties" / f"test_{A}.py"
    text = module.read_text()
    module.write_text(text + "\n\ndef _peek(submission):\n    return submission.namespace.get('x')\n")
    (problem,) = lines(course)
    assert problem.startswith(f"autograder/properties/test_{A}.py, line ")
    assert ": reads `.namespace`; under autograde the notebook's names live in its kernel" in problem


def test_a_notebook_without_properties_and_properties_without_a_notebook(course):
    shutil.copytree(course / f"source/{A}", course / "source/extra")
    (course / "source/extra" / f"{A}.ipynb").rename(course / "source/extra/extra.ipynb")
    (course / "autograder/properties" / f"test_{A}.py").rename(course / "autograder/properties/test_renamed.py")
    problems = lines(course)
    assert problems == [
        "source/extra/extra.ipynb: no property module grades this notebook; write "
        "autograder/properties/test_extra.py",
        f"source/{A}/{A}.ipynb: no property module grades this notebook; write autograder/properties/test_{A}.py",
        "autograder/properties/test_renamed.py: no notebook for these properties; write "
        "source/renamed/renamed.ipynb, or rename the module after its notebook",
    ]


def test_the_command_prints_one_line_per_problem_and_fails(course):
    edit_cell(course, SOURCE_NB, "test_modes", lambda nb, c: c.metadata.nbgrader.update(points=5))
    proc = subprocess.run([sys.executable, "-m", "autograder", "check", "--repo", str(course), "--quick"],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"{SOURCE_NB}, cell 'test_modes': carries 5 points but group 'modes' is worth 3 (sum_matches_numpy 1, "
        "mean_matches_numpy 1, max_matches_numpy 1); set the cell's points to 3",
    ]
    assert "course check: 1 problem(s) in 1 assignment(s)" in proc.stderr


def test_the_readme_goal_table_names_real_properties():
    """Each row of the README's learning-goal table names notebooks and properties that exist."""
    from autograder import assignments, properties_of

    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Learning goals"):]
    section = section[:section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| 00")]
    assert len(rows) >= 10, rows
    for row in rows:
        _, seed, goal, notebooks, checked, corpus, mutants, _ = [cell.strip() for cell in row.split("|")]
        if checked.startswith(("taught, not graded", "not taught")):
            continue  # no property grades it (tests/test_claims.py holds the graded rows to the corpus)
        named = [n.strip(" `") for n in notebooks.split(",")]
        assert set(named) <= set(assignments()), row
        known = {p.name for a in named for p in properties_of(a)}
        listed = {n.strip(" `") for n in checked.split(",")}
        assert listed <= known, (row, sorted(listed - known))
