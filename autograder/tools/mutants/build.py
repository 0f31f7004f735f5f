"""The mutants of an assignment's reference: its source notebook with one solution cell changed."""

from __future__ import annotations

import ast
import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.grading.cells import is_autograder_test
from autograder.tools.mutants.misconceptions import MISCONCEPTIONS, jitted_signatures, wrapped_defs
from autograder.tools.mutants.operators import GENERIC

OPERATORS = GENERIC + MISCONCEPTIONS
REGION = re.compile(r"^[ \t]*### BEGIN SOLUTION[ \t]*$(.*?)^[ \t]*### END SOLUTION[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Mutant:
    id: str  # "<cell>/<operator>#<n>": stable while the reference cell and the operators are
    operator: str
    family: str
    cell: str
    line: int
    what: str
    cells: tuple[tuple[int, str], ...]  # the notebook's code cells, grade cells left out, one changed
    diff: str


@dataclass(frozen=True)
class Reference:
    assignment: str
    cells: tuple[tuple[int, str], ...]  # (index in the notebook, source) of its code cells, grade cells left out
    names: dict[int, str]  # cell index -> its nbgrader grade_id (or "cell <i>")
    solutions: dict[int, range]  # cell index -> lines (1-based) of its solution regions


def reference(notebook: Path, assignment: str) -> Reference:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code, names, solutions = [], {}, {}
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code" or is_autograder_test(cell):
            continue
        source = "".join(cell.get("source", ""))
        code.append((index, source))
        names[index] = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or f"cell {index}"
        lines: list[int] = []
        for match in REGION.finditer(source):
            first = source.count("\n", 0, match.start(1)) + 1
            last = source.count("\n", 0, match.end(1))
            lines += range(first, last + 1)
        if lines:
            solutions[index] = range(min(lines), max(lines) + 1)
    return Reference(assignment, tuple(code), names, solutions)


def mutants(ref: Reference, only: set[str] | None = None) -> list[Mutant]:
    """Every mutant of the reference, by cell then operator; ``only``: operator names."""
    sources = {index: source for index, source in ref.cells if index in ref.solutions}
    modules = [_parse_or_empty(source) for _, source in ref.cells]
    jitted, wrapped = jitted_signatures(modules), wrapped_defs(modules)
    found, sources_seen = [], set()
    for index, lines in ref.solutions.items():
        original = ast.unparse(ast.parse(sources[index]))
        for operator in OPERATORS:
            if only and operator.name not in only:
                continue
            n = 0
            for target in range(10_000):
                tree = ast.parse(sources[index])  # the cell's own lines: the region is counted in them
                op = operator(target, lines, tree)
                op.jitted, op.wrapped = jitted, wrapped
                new = op.visit(tree)
                if op.change is None:
                    break
                if op.helpers:
                    new.body[:0] = ast.parse(op.helpers).body
                ast.fix_missing_locations(new)
                text = ast.unparse(new)
                if text == original or (index, text) in sources_seen:
                    continue
                sources_seen.add((index, text))
                cells = tuple((i, text if i == index else s) for i, s in ref.cells)
                found.append(Mutant(
                    id=f"{ref.names[index]}/{operator.name}#{n}", operator=operator.name, family=operator.family,
                    cell=ref.names[index], line=op.change.line, what=op.change.what, cells=cells,
                    diff=_diff(original, text, ref.names[index]),
                ))
                n += 1
    return found


def _parse_or_empty(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError:  # a cell of IPython magics: nothing jitted in it that an operator could use
        return ast.Module([], [])


def _diff(before: str, after: str, cell: str) -> str:
    return "".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        f"{cell} (reference)", f"{cell} (mutant)", n=1,
    ))
