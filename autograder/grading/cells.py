"""What kind of nbgrader cell a notebook cell is (notebooks as JSON dicts or nbformat nodes)."""

from __future__ import annotations

import re

#: The call a grade cell's hidden region makes, ``grade("<assignment>", "<group>", ...)``:
#: groups 1 and 2 are the assignment and the group.
GRADE_CALL = re.compile(r"""grade\(\s*["'](\w+)["']\s*,\s*["'](\w+)["']""")


def nbgrader_of(cell: dict) -> dict:
    """The cell's nbgrader metadata (empty for an ordinary cell)."""
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def is_answer(cell: dict) -> bool:
    """A code cell the student fills in (nbgrader's "autograded answer" or solution cell)."""
    meta = nbgrader_of(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("solution")) and not meta.get("grade")


def is_autograder_test(cell: dict) -> bool:
    """A code cell nbgrader grades automatically: a grade cell that is not an answer."""
    meta = nbgrader_of(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def autograder_tests(notebook: dict) -> list[dict]:
    """The notebook's autograder test cells, in order."""
    return [cell for cell in notebook.get("cells", []) if is_autograder_test(cell)]


def is_read_only(cell: dict) -> bool:
    """A cell the student may not change, as nbgrader reads it (``nbgrader.utils.is_locked``): a grade cell
    that is no answer, or a cell marked locked. ``nbgrader autograde`` puts the release's text back in such
    a cell, warning that the student edited it when its checksum differs."""
    meta = nbgrader_of(cell)
    if not meta or meta.get("solution"):
        return False
    return bool(meta.get("grade")) or bool(meta.get("locked"))
