"""``python -m autograder check``: the course's linter.

It reads the course as nbgrader and the graders will, and reports each problem as
one line naming the notebook, the cell and the fix:

- every assignment is a notebook ``source/<a>/<a>.ipynb`` and a property module
  ``autograder/properties/test_<a>.py``, each with the other;
- a property module imports course code only from ``autograder.kit``;
- every autograder test cell's hidden region calls ``grade("<a>", "<group>", globals())``
  for a group the module has, with the points that group's properties add up to, and
  every group has exactly one such cell;
- ``release/`` is what ``nbgrader generate_assignment`` makes of ``source/`` now, and
  shows no solution, hidden test or grader line;
- every assignment has sample submissions (correct, partial, empty) and a corpus of
  submissions, ``tests/corpus/<a>/correct.py`` and wrong ones;
- every read-only cell of a sample is the release's, word for word: the samples are the release
  notebook with their own answers, so that ``nbgrader autograde`` warns of no edited cell for them;
- the mutants of every reference were graded since the notebook, the property module or the kit
  last changed, and every survivor is declared equivalent, with a reason
  (:mod:`autograder.tools.mutants.record`).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.grading.cells import autograder_tests, is_read_only, nbgrader_of
from autograder.grading.registry import MODULE_PREFIX
from autograder.tools.errors import CycleError
from autograder.tools.mutants import record as mutants_record
from autograder.tools.repository import SAMPLE_KINDS

MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
HIDDEN_REGION = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
#: Cell fields that nbgrader or nbformat fill in afresh on each run.
VOLATILE_CELL_FIELDS = ("id", "execution_count")
#: The one place of the course a property module may import from.
KIT = "autograder.kit"


@dataclass(frozen=True)
class Problem:
    where: str  # the file, and the cell when there is one
    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}; {self.fix}"


@dataclass(frozen=True)
class Layout:
    """Where a course repository keeps each part (``root`` is the repository)."""

    root: Path

    def notebook(self, folder: str, assignment: str) -> Path:
        return self.root / folder / assignment / f"{assignment}.ipynb"

    def property_module(self, assignment: str) -> Path:
        return self.root / "autograder" / "properties" / f"{MODULE_PREFIX}{assignment}.py"

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.root))

    def notebooks(self) -> set[str]:
        source = self.root / "source"
        return {d.name for d in source.iterdir() if (d / f"{d.name}.ipynb").is_file()} if source.is_dir() else set()

    def modules(self) -> set[str]:
        folder = self.root / "autograder" / "properties"
        return {p.stem.removeprefix(MODULE_PREFIX) for p in folder.glob(f"{MODULE_PREFIX}*.py")}


def check(root: Path, regenerate: bool = True) -> list[Problem]:
    """Every problem of the course at ``root``; ``regenerate=False`` skips running nbgrader."""
    layout = Layout(Path(root).resolve())
    problems = _pairs(layout)
    both = sorted(layout.notebooks() & layout.modules())
    for assignment in both:
        problems += _imports(layout, assignment)
        groups, trouble = _groups(layout, assignment)
        problems += trouble
        if groups is not None:
            problems += _grade_cells(layout, assignment, groups)
        problems += _release_hides(layout, assignment)
        problems += _examples(layout, assignment)
        problems += _samples_in_step(layout, assignment)
        problems += [Problem(*found) for found in mutants_record.problems(layout.root, assignment)]
    if regenerate and both:
        problems += _release_in_sync(layout, both)
    return problems


def _pairs(layout: Layout) -> list[Problem]:
    notebooks, modules = layout.notebooks(), layout.modules()
    problems = [
        Problem(layout.rel(layout.notebook("source", a)), "no property module grades this notebook",
                f"write {layout.rel(layout.property_module(a))}")
        for a in sorted(notebooks - modules)
    ]
    problems += [
        Problem(layout.rel(layout.property_module(a)), "no notebook for these properties",
                f"write {layout.rel(layout.notebook('source', a))}, or rename the module after its notebook")
        for a in sorted(modules - notebooks)
    ]
    extra = (layout.root / "release").is_dir() and {
        d.name for d in (layout.root / "release").iterdir() if d.is_dir()
    } - notebooks
    problems += [
        Problem(f"release/{a}", "released, but there is no source/ notebook for it",
                f"delete release/{a}, or restore source/{a}/{a}.ipynb")
        for a in sorted(extra or ())
    ]
    return problems


def _imports(layout: Layout, assignment: str) -> list[Problem]:
    path = layout.property_module(assignment)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    problems = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            names = ["." * node.level + (node.module or "")]
        for name in names:
            course = name.startswith(".") or name == "autograder" or name.startswith("autograder.")
            if course and name != KIT and not name.startswith(KIT + "."):
                problems.append(Problem(
                    f"{layout.rel(path)}, line {node.lineno}", f"imports {name!r}",
                    f"import what a property needs from {KIT} (its face lists everything an author may use)",
                ))
        if isinstance(node, ast.Attribute) and node.attr == "namespace":
            problems.append(Problem(
                f"{layout.rel(path)}, line {node.lineno}", "reads `.namespace`",
                "under autograde the notebook's names live in its kernel, not beside the properties: read them "
                "with submission.get, bind one with submission.replaced (docs/authoring.md)",
            ))
    return problems


def _groups(layout: Layout, assignment: str) -> tuple[dict[str, list] | None, list[Problem]]:
    """``{group: [(property name, points), ...]}`` of the assignment's property module."""
    path = layout.property_module(assignment)
    name = f"_course_check_{assignment}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it runs
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # an author's module that does not import: say so, check the rest
        return None, [Problem(layout.rel(path), f"does not import: {type(error).__name__}: {error}",
                              "fix the module; python -m pytest on it shows the traceback")]
    finally:
        sys.modules.pop(name, None)
    groups: dict[str, list] = {}
    for value in vars(module).values():
        found = getattr(value, "graded_property", None)
        if callable(value) and found is not None:
            groups.setdefault(found.group, []).append((found.name, found.points))
    if not groups:
        return None, [Problem(layout.rel(path), "declares no property",
                              "mark each test function with @prop(group=..., points=..., title=..., hint=...)")]
    return groups, []


def _grade_call(cell) -> tuple[tuple[str, str] | None, str]:
    """The ``(assignment, group)`` a test cell's hidden region grades, or None and why not."""
    regions = HIDDEN_REGION.findall(cell.source)
    if not regions:
        return None, "has no hidden test region (### BEGIN HIDDEN TESTS ... ### END HIDDEN TESTS)"
    try:
        tree = ast.parse("\n".join(regions))
    except SyntaxError as error:
        return None, f"its hidden region is not Python ({error.msg}, line {error.lineno})"
    calls = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "grade"
    ]
    if len(calls) != 1:
        return None, f"its hidden region makes {len(calls)} grade(...) calls, not one"
    args = calls[0].args
    literal = [a.value for a in args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    globals_call = len(args) == 3 and isinstance(args[2], ast.Call) and getattr(args[2].func, "id", "") == "globals"
    if len(literal) != 2 or not globals_call:
        return None, "its hidden region does not call grade(\"<assignment>\", \"<group>\", globals())"
    return (literal[0], literal[1]), ""


def _grade_cells(layout: Layout, assignment: str, groups: dict[str, list]) -> list[Problem]:
    path = layout.notebook("source", assignment)
    where = layout.rel(path)
    notebook = nbformat.read(path, as_version=4)
    problems, cells_of = [], {group: [] for group in groups}
    for cell in autograder_tests(notebook):
        meta = nbgrader_of(cell)
        here = f"{where}, cell {meta.get('grade_id', '?')!r}"
        call, why = _grade_call(cell)
        if call is None:
            problems.append(Problem(here, why, f'hide grade("{assignment}", "<group>", globals()) in it'))
            continue
        named, group = call
        if named != assignment:
            problems.append(Problem(here, f"grades assignment {named!r}, not this notebook's",
                                    f'call grade("{assignment}", "{group}", globals())'))
            continue
        if group not in groups:
            known = ", ".join(sorted(groups))
            problems.append(Problem(here, f"grades group {group!r}, which {layout.rel(layout.property_module(assignment))}"
                                    f" does not have", f"use one of its groups: {known}"))
            continue
        cells_of[group].append(meta.get("grade_id", "?"))
        worth = sum(points for _, points in groups[group])
        if meta.get("points") != worth:
            parts = ", ".join(f"{name} {points:g}" for name, points in groups[group])
            problems.append(Problem(here, f"carries {meta.get('points')!r} points but group {group!r} is worth "
                                    f"{worth:g} ({parts})", f"set the cell's points to {worth:g}"))
    for group, cells in cells_of.items():
        if not cells:
            problems.append(Problem(where, f"no grade cell grades group {group!r}",
                                    f'add a grade cell hiding grade("{assignment}", "{group}", globals())'))
        elif len(cells) > 1:
            problems.append(Problem(where, f"group {group!r} is graded by {len(cells)} cells ({', '.join(cells)})",
                                    "keep one grade cell per group, or split the group in the property module"))
    return problems


def _release_hides(layout: Layout, assignment: str) -> list[Problem]:
    """No solution, hidden test or grader line in the released notebook."""
    released = layout.notebook("release", assignment)
    where = layout.rel(released)
    if not released.is_file():
        return [Problem(where, "missing", f"run nbgrader generate_assignment {assignment} --force")]
    notebook = nbformat.read(released, as_version=4)
    source = nbformat.read(layout.notebook("source", assignment), as_version=4)
    hidden = {
        line.strip() for c in source.cells for region in HIDDEN_REGION.findall(c.source)
        for line in region.splitlines() if line.strip()
    }
    visible = {line.strip() for c in source.cells for line in HIDDEN_REGION.sub("", c.source).splitlines()}
    problems = []
    for index, cell in enumerate(notebook.cells):
        here = f"{where}, cell {nbgrader_of(cell).get('grade_id', index)!r}"
        marker = next((m for m in MARKERS if m in cell.source), None)
        leaked = sorted(line.strip() for line in cell.source.splitlines() if line.strip() in hidden - visible)
        if marker or leaked:
            shown = marker or leaked[0]
            problems.append(Problem(here, f"shows hidden material to students ({shown!r})",
                                    f"run nbgrader generate_assignment {assignment} --force"))
        elif cell.cell_type == "code" and re.search(r"\bgrade\s*\(|\bautograder\b", cell.source):
            problems.append(Problem(here, "names the grader (a grade( call or autograder)",
                                    "keep grader calls inside the source notebook's hidden test regions"))
    return problems


def comparable(notebook) -> dict:
    """A notebook without the fields nbgrader or nbformat fill in afresh on each run."""
    cells = [{k: v for k, v in c.items() if k not in VOLATILE_CELL_FIELDS} for c in notebook.cells]
    return {"metadata": notebook.metadata, "nbformat": (notebook.nbformat, notebook.nbformat_minor), "cells": cells}


def _release_in_sync(layout: Layout, assignments: list[str]) -> list[Problem]:
    """release/ against what nbgrader generate_assignment makes of source/ now."""
    from autograder.tools import scratch

    with tempfile.TemporaryDirectory(prefix="course-check-") as scratch_dir:
        try:
            course = scratch.prepare_course(Path(scratch_dir) / "course", layout.root)
            scratch.generate(course, assignments)
        except CycleError as error:
            return [Problem("source/", f"nbgrader generate_assignment failed: {str(error).splitlines()[0]}",
                            "run it by hand in the repository to see nbgrader's full error")]
        problems = []
        for assignment in assignments:
            committed_path = layout.notebook("release", assignment)
            if not committed_path.is_file():
                continue  # reported by _release_hides
            committed = comparable(nbformat.read(committed_path, as_version=4))
            fresh = comparable(nbformat.read(course.root / "release" / assignment / f"{assignment}.ipynb",
                                             as_version=4))
            if committed == fresh:
                continue
            differ = next((i for i, (a, b) in enumerate(zip(committed["cells"], fresh["cells"])) if a != b), None)
            if differ is None and len(committed["cells"]) != len(fresh["cells"]):
                differ = min(len(committed["cells"]), len(fresh["cells"]))
            cell = f", cell {differ}" if differ is not None else " (metadata)"
            problems.append(Problem(f"{layout.rel(committed_path)}{cell}", "is stale: it differs from what "
                                    "nbgrader makes of source/ now",
                                    f"run nbgrader generate_assignment {assignment} --force, then commit release/"))
        return problems


def _examples(layout: Layout, assignment: str) -> list[Problem]:
    problems = []
    for kind in SAMPLE_KINDS:
        path = layout.root / "tests" / "samples" / assignment / f"{kind}.ipynb"
        if not path.is_file():
            problems.append(Problem(layout.rel(path), f"missing: every assignment has a {kind} sample submission",
                                    "write it from the release notebook (the demo and the cycle tests hand it in)"))
    corpus = layout.root / "tests" / "corpus" / assignment
    if not (corpus / "correct.py").is_file():
        problems.append(Problem(layout.rel(corpus / "correct.py"), "missing: the corpus needs a correct submission",
                                "write one that earns full points"))
    if not [p for p in corpus.glob("*.py") if p.stem != "correct"]:
        problems.append(Problem(layout.rel(corpus), "has no wrong submission",
                                "add submissions that lose points the way students do (docs/authoring.md)"))
    return problems


def _samples_in_step(layout: Layout, assignment: str) -> list[Problem]:
    """Each read-only cell of the release, in each sample, as the release has it (its text, its kind, its
    points): nbgrader autograde compares them by checksum and warns that the student edited a read-only cell."""
    released = layout.notebook("release", assignment)
    if not released.is_file():
        return []  # reported by _release_hides
    release = nbformat.read(released, as_version=4)
    fixed = {nbgrader_of(c).get("grade_id"): c for c in release.cells if is_read_only(c)}
    problems = []
    for kind in SAMPLE_KINDS:
        path = layout.root / "tests" / "samples" / assignment / f"{kind}.ipynb"
        if not path.is_file():
            continue  # reported by _examples
        fix = (f"copy the cell from {layout.rel(released)} into the sample, keeping the sample's own answer "
               "cells (a sample is the release notebook with its answers)")
        sample = {nbgrader_of(c).get("grade_id"): c for c in nbformat.read(path, as_version=4).cells
                  if nbgrader_of(c).get("grade_id")}
        for grade_id, cell in fixed.items():
            here = f"{layout.rel(path)}, cell {grade_id!r}"
            mine = sample.get(grade_id)
            if mine is None:
                problems.append(Problem(here, f"missing: {layout.rel(released)} has this read-only cell", fix))
                continue
            differs = [what for what, a, b in (
                ("source", mine.source, cell.source), ("cell type", mine.cell_type, cell.cell_type),
                ("read-only mark", is_read_only(mine), True),
                ("points", nbgrader_of(mine).get("points"), nbgrader_of(cell).get("points")),
            ) if a != b]
            if differs:
                problems.append(Problem(here, f"read-only, but not {layout.rel(released)}'s: its "
                                        f"{' and '.join(differs)} (nbgrader autograde warns that the student "
                                        "edited it)", fix))
    return problems


def main(root: Path, regenerate: bool = True) -> int:
    problems = check(root, regenerate)
    for problem in problems:
        print(problem)
    layout = Layout(Path(root).resolve())
    count = len(layout.notebooks() | layout.modules())
    if problems:
        print(f"course check: {len(problems)} problem(s) in {count} assignment(s)", file=sys.stderr)
        return 1
    print(f"course check: {count} assignments, every rule holds")
    return 0
