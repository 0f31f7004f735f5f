"""Is the committed release/ exactly what nbgrader makes from source/, and does it
keep solutions, hidden tests and the grader away from students?"""

from __future__ import annotations

import ast
import hashlib
import re
import textwrap
from pathlib import Path

import nbformat
import pytest
from conftest import COURSE_ASSIGNMENTS, REPO

from autograder.grading.cells import is_autograder_test
from autograder.tools import scratch
from autograder.tools.check import HIDDEN_REGION, MARKERS, comparable

SOURCE = REPO / "source"
RELEASE = REPO / "release"


def read(path: Path):
    return nbformat.read(path, as_version=4)


def nbgrader_cells(nb):
    return [c for c in nb.cells if "nbgrader" in c.metadata]


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> Path:
    """release/ as ``nbgrader generate_assignment`` makes it now, in a scratch course."""
    course = scratch.prepare_course(tmp_path_factory.mktemp("regenerate"))
    scratch.generate(course, COURSE_ASSIGNMENTS)
    return course.root / "release"


def test_source_holds_exactly_the_course_assignments():
    found = {d.name for d in SOURCE.iterdir() if d.is_dir()}
    assert found == set(COURSE_ASSIGNMENTS)
    for a in COURSE_ASSIGNMENTS:
        assert (SOURCE / a / f"{a}.ipynb").is_file(), f"source/{a}/{a}.ipynb is missing"


#: Every assignment's release ships the students' self-check beside the notebook (tests/test_self_check.py
#: holds each copy to what ``python -m autograder selfcheck`` writes).
SELF_CHECKED = COURSE_ASSIGNMENTS


def test_release_holds_only_the_course_notebooks_and_their_self_checks():
    files = {str(p.relative_to(RELEASE)) for p in RELEASE.rglob("*") if p.is_file()}
    assert files == {f"{a}/{a}.ipynb" for a in COURSE_ASSIGNMENTS} | {f"{a}/selfcheck.py" for a in SELF_CHECKED}


def test_source_holds_only_the_course_notebooks_and_their_self_checks():
    """nbgrader copies every file of source/<a> into release/<a>: nothing else may sit there."""
    files = {str(p.relative_to(SOURCE)) for p in SOURCE.rglob("*") if p.is_file() and "__pycache__" not in p.parts
             and ".ipynb_checkpoints" not in p.parts}
    assert files == {f"{a}/{a}.ipynb" for a in COURSE_ASSIGNMENTS} | {f"{a}/selfcheck.py" for a in SELF_CHECKED}


@pytest.mark.slow
@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_committed_release_equals_what_nbgrader_generates(assignment, regenerated):
    committed = comparable(read(RELEASE / assignment / f"{assignment}.ipynb"))
    fresh = comparable(read(regenerated / assignment / f"{assignment}.ipynb"))
    hint = f"release/{assignment} is stale: run `nbgrader generate_assignment {assignment} --force`"
    assert committed["metadata"] == fresh["metadata"], hint
    assert len(committed["cells"]) == len(fresh["cells"]), hint
    for i, (old, new) in enumerate(zip(committed["cells"], fresh["cells"])):
        assert old == new, f"{hint} (cell {i} differs)"
    assert committed == fresh, hint


@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_release_has_no_solution_or_hidden_test_marker(assignment):
    text = (RELEASE / assignment / f"{assignment}.ipynb").read_text()
    for marker in MARKERS:
        assert marker not in text, f"release/{assignment} contains {marker!r}"


@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_release_has_no_hidden_region_code(assignment):
    """No line of a source hidden region, no grade( call, no autograder import reaches students."""
    release_code = "\n".join(
        c.source for c in read(RELEASE / assignment / f"{assignment}.ipynb").cells if c.cell_type == "code"
    )
    release_lines = {line.strip() for line in release_code.splitlines()}
    source = read(SOURCE / assignment / f"{assignment}.ipynb")
    hidden = [
        line.strip()
        for c in source.cells
        for region in HIDDEN_REGION.findall(c.source)
        for line in region.splitlines()
        if line.strip()
    ]
    assert hidden, f"source/{assignment} has no hidden test region at all"
    visible = {
        line.strip()
        for c in source.cells
        if c.cell_type == "code"
        for line in HIDDEN_REGION.sub("", c.source).splitlines()
    }
    leaked = [line for line in hidden if line in release_lines and line not in visible]
    assert not leaked, f"release/{assignment} shows hidden test lines: {leaked}"
    assert not re.search(r"\bgrade\s*\(", release_code), f"release/{assignment} calls grade("
    assert not re.search(r"\bautograder\b", release_code), f"release/{assignment} names autograder"


def _grader_files() -> list[Path]:
    """Every file of autograder/ but autograder/public/, which is released on purpose (selfcheck.py)."""
    public = REPO / "autograder" / "public"
    return [p for p in (REPO / "autograder").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and public not in p.parents]


def _distinctive_lines(path: Path) -> set[str]:
    """Lines of a grader module specific enough that a release would only hold them by copying.

    Left out: short lines, comments, imports, docstring quotes and block headers such
    as ``except jax.errors.TracerBoolConversionError:``, which any JAX code may share.
    """
    lines = set()
    for line in path.read_text().splitlines():
        line = line.strip()
        common = line.startswith(("#", "import ", "from ", '"""', "'''")) or line.endswith(":")
        if len(line) >= 30 and not common:
            lines.add(line)
    return lines


def test_release_holds_nothing_from_the_grader():
    graders = _grader_files()
    assert any(p.suffix == ".py" for p in graders), "autograder/ holds no module to compare with"
    grader_hashes = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in graders}
    grader_names = {p.name for p in graders}
    grader_lines = set().union(*(_distinctive_lines(p) for p in graders if p.suffix == ".py"))
    for path in RELEASE.rglob("*"):
        if not path.is_file():
            continue
        assert path.name not in grader_names, f"{path} has the name of a grader file"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest not in grader_hashes, f"{path} is a copy of {grader_hashes.get(digest)}"
        if path.suffix == ".ipynb":
            shown = [line for c in read(path).cells for line in c.source.splitlines()]
        else:
            shown = path.read_text().splitlines()
        copied = {line.strip() for line in shown} & grader_lines
        assert not copied, f"{path} holds lines of autograder/: {sorted(copied)}"


@pytest.mark.parametrize("folder", ["source", "release"])
@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_every_grade_cell_has_points_and_a_unique_grade_id(folder, assignment):
    nb = read(REPO / folder / assignment / f"{assignment}.ipynb")
    meta = [c.metadata.nbgrader for c in nbgrader_cells(nb)]
    ids = [m.get("grade_id") for m in meta]
    assert all(ids), f"{folder}/{assignment}: an nbgrader cell has no grade_id"
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, f"{folder}/{assignment}: grade_id used twice: {repeated}"
    grades = [m for m in meta if m.get("grade")]
    assert grades, f"{folder}/{assignment} has no grade cell"
    for m in grades:
        points = m.get("points")
        assert isinstance(points, (int, float)) and points > 0, (
            f"{folder}/{assignment}: grade cell {m['grade_id']} has points={points!r}"
        )


@pytest.mark.parametrize("assignment", COURSE_ASSIGNMENTS)
def test_every_grade_cell_grades_its_own_assignment(assignment):
    """Each source grade cell hides a grade("<this assignment>", "<group>", globals()) call."""
    nb = read(SOURCE / assignment / f"{assignment}.ipynb")
    for cell in nbgrader_cells(nb):
        m = cell.metadata.nbgrader
        if not is_autograder_test(cell):
            continue
        regions = HIDDEN_REGION.findall(cell.source)
        assert regions, f"source/{assignment}: grade cell {m['grade_id']} has no hidden test region"
        calls = [
            node
            for region in regions
            for node in ast.walk(ast.parse(textwrap.dedent(region)))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "grade"
        ]
        assert calls, f"source/{assignment}: grade cell {m['grade_id']} never calls grade("
        for call in calls:
            first = call.args[0] if call.args else None
            assert isinstance(first, ast.Constant) and first.value == assignment, (
                f"source/{assignment}: grade cell {m['grade_id']} grades "
                f"{ast.unparse(first) if first else 'nothing'}, not {assignment!r}"
            )
