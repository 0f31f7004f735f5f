"""nbgrader's marks on a submitted notebook's cells, checked against the gradebook: :func:`check_marks`.

A cell's ``metadata.nbgrader`` (its grade id, whether it is graded, locked, an answer) travels
with the notebook, so a student can change it, and Jupyter copies it with a copied cell. nbgrader
validates it in its own process, and one notebook it cannot validate stops far more than that
notebook: a ``schema_version`` other than 3, or the empty marks ``DeduplicateIds`` leaves on a
copied grade cell (read as schema 0), make ``BaseConverter.convert_notebooks`` raise a fatal error
for the whole ``nbgrader autograde``, and the students sorted after are never graded.

So before nbgrader reads a notebook, every cell that carries marks gets marks nbgrader accepts,
and never marks that earn anything the gradebook does not give:

- a cell whose grade id the gradebook knows (the last cell of that id, as ``DeduplicateIds``
  keeps it) keeps its marks when nbgrader would accept them, and otherwise gets the gradebook's,
  as ``OverwriteCells`` writes a missing cell's;
- an earlier cell of the same grade id (a copy), a cell of a grade id the gradebook does not know,
  and marks that are not nbgrader's at all lose them: the cell is read as one of the student's own;
- ordinary marks (nothing graded, locked, an answer or a task) that nbgrader accepts stay.

A grade cell whose marks are dropped scores nothing, as one deleted does; one whose marks are
restored has its source put back from the gradebook by ``OverwriteCells``: no mark gains a point.
Each change is a :class:`~autograder.confinement.boundary.Refusal` naming the cell and why.
"""

from __future__ import annotations

from dataclasses import dataclass

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import SchemaMismatchError

from autograder.confinement.boundary import Refusal


@dataclass(frozen=True)
class KnownCell:
    """One cell of the assignment's notebook as the gradebook holds it."""

    cell_type: str
    marks: dict  #: the ``metadata.nbgrader`` nbgrader would write for it


def known_cells(db_url: str, course_id: str, notebook: str, assignment: str) -> dict[str, KnownCell]:
    """The gradebook's cells of ``notebook`` by grade id (none when the gradebook does not know it:
    nbgrader names that itself)."""
    with Gradebook(db_url, course_id) as gb:
        try:
            nb = gb.find_notebook(notebook, assignment)
        except MissingEntry:
            return {}
        points = {cell.name: cell.max_score for cell in nb.grade_cells}
        answers = {cell.name for cell in nb.solution_cells}
        tasks = {cell.name for cell in nb.task_cells}
        cells = {}
        for cell in nb.source_cells:
            marks = {"schema_version": MetadataValidator.schema_version, "grade_id": cell.name,
                     "grade": cell.name in points, "solution": cell.name in answers, "task": cell.name in tasks,
                     "locked": bool(cell.locked), "cell_type": cell.cell_type}
            if cell.name in points:
                marks["points"] = points[cell.name]
            if cell.checksum:
                marks["checksum"] = cell.checksum
            cells[cell.name] = KnownCell(cell.cell_type, marks)
        return cells


def _problem(cell, cell_type: str) -> str | None:
    """Why nbgrader would not accept ``cell``'s marks, read as a cell of ``cell_type`` (the type
    ``OverwriteCells`` gives it back before nbgrader validates); None when it would."""
    shaped = nbformat.NotebookNode(cell_type=cell_type, metadata=cell.metadata, source=cell.get("source", ""))
    try:
        MetadataValidator().validate_cell(shaped)
    except SchemaMismatchError as error:
        return f"nbgrader marks of schema version {error.actual_version} (nbgrader reads {error.expected_version})"
    except ValidationError as error:
        return f"nbgrader marks nbgrader rejects ({str(error).splitlines()[0][:120]})"
    except Exception as error:  # noqa: BLE001 - marks of any other shape: a KeyError, a TypeError...
        return f"nbgrader marks nbgrader cannot read ({type(error).__name__})"
    return None


def _is_ordinary(marks: dict) -> bool:
    return not any(marks.get(flag) for flag in ("grade", "solution", "locked", "task"))


def check_marks(nb: nbformat.NotebookNode, known: dict[str, KnownCell], name: str) -> list[Refusal]:
    """Give every cell of ``nb`` (the notebook ``name``) marks nbgrader accepts, as the module says,
    in place; what was changed and why."""
    changed: list[Refusal] = []
    last = {}  # grade id -> (its last cell, that cell's number)
    for index, cell in enumerate(nb.cells, start=1):
        marks = cell.get("metadata", {}).get("nbgrader")
        if isinstance(marks, dict) and isinstance(marks.get("grade_id"), str):
            last[marks["grade_id"]] = (cell, index)
    for index, cell in enumerate(nb.cells, start=1):
        if "nbgrader" not in cell.get("metadata", {}):
            continue
        marks = cell.metadata["nbgrader"]
        where = f"{name}, cell {index},"
        grade_id = marks.get("grade_id") if isinstance(marks, dict) else None
        ours = known.get(grade_id) if isinstance(grade_id, str) else None
        if ours is not None and last[grade_id][0] is cell:
            problem = _problem(cell, ours.cell_type)
            if problem:
                cell.metadata["nbgrader"] = dict(ours.marks)
                changed.append(Refusal(where, f"held {problem}: its marks are the gradebook's again"))
            continue
        if ours is not None:
            why = f"shares grade id {grade_id} with cell {last[grade_id][1]}, which keeps it (a copied cell?)"
        elif isinstance(marks, dict) and _is_ordinary(marks) and not _problem(cell, cell.get("cell_type", "")):
            continue
        elif isinstance(grade_id, str):
            why = f"claims grade id {grade_id[:60]!r}, which this notebook was not released with"
        else:
            why = f"held {_problem(cell, cell.get('cell_type', '')) or 'nbgrader marks of no cell of the release'}"
        del cell.metadata["nbgrader"]
        changed.append(Refusal(where, f"{why}: it was read as a cell of your own, without nbgrader's marks"))
    return changed


def accepted(nb: nbformat.NotebookNode, known: dict[str, KnownCell]) -> bool:
    """Whether nbgrader accepts the marks of the whole of ``nb`` (each cell as the type
    ``OverwriteCells`` gives it back), grade ids unique included."""
    shaped = nbformat.NotebookNode(cells=[
        nbformat.NotebookNode(cell_type=known[cell.metadata["nbgrader"].get("grade_id")].cell_type
                              if "nbgrader" in cell.metadata and cell.metadata["nbgrader"].get("grade_id") in known
                              else cell.cell_type, metadata=cell.metadata, source=cell.get("source", ""))
        for cell in nb.cells])
    try:
        MetadataValidator().validate_nb(shaped)
    except Exception:  # noqa: BLE001 - whatever nbgrader's validator raises, nbgrader would stop on it
        return False
    return True
