"""Build hostile submissions from a correct sample notebook, at test time.

An entry of the corpus (``corpus.py``) says how its notebook differs from
``tests/samples/<assignment>/correct.ipynb``: a few :class:`Edit` steps on named
cells (by their nbgrader ``grade_id``), or one function on the file's bytes for a
file nbgrader cannot read. What the test needs to know afterwards (process ids,
counts) the cells print: a grading kernel sees no folder of the test's.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
#: What ``nbgrader generate_assignment`` leaves in an answer cell (course_config.py).
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


def correct(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(SAMPLES / assignment / "correct.ipynb", as_version=4)


def index_of(nb, grade_id: str) -> int:
    found = [i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    if len(found) != 1:
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
        raise KeyError(f"no single cell with grade_id {grade_id!r}; the notebook has {ids}")
    return found[0]


@dataclass(frozen=True)
class Edit:
    """One change to the correct notebook: what to do, to which cell, with what source.

    ``replace``: the cell's source becomes ``source``; ``append``: ``source`` is added
    to the end of the cell; ``insert_after``: a new plain code cell after it (or at
    the end of the notebook when ``cell`` is ``"END"``); ``delete``: the cell goes.
    """

    action: str
    cell: str
    source: str = ""

    def apply(self, nb) -> None:
        source = self.source
        if self.action == "insert_after" and self.cell == "END":
            nb.cells.append(nbformat.v4.new_code_cell(source))
            return
        i = index_of(nb, self.cell)
        if self.action == "replace":
            nb.cells[i].source = source
        elif self.action == "append":
            nb.cells[i].source = nb.cells[i].source + "\n\n" + source
        elif self.action == "insert_after":
            nb.cells.insert(i + 1, nbformat.v4.new_code_cell(source))
        elif self.action == "delete":
            del nb.cells[i]
        else:
            raise ValueError(f"unknown edit {self.action!r}")


def replace(cell: str, source: str) -> Edit:
    return Edit("replace", cell, source)


def append(cell: str, source: str) -> Edit:
    return Edit("append", cell, source)


def insert_after(cell: str, source: str) -> Edit:
    return Edit("insert_after", cell, source)


def delete(cell: str) -> Edit:
    return Edit("delete", cell)


def stub(*cells: str) -> tuple[Edit, ...]:
    """Leave answer cells as released: the student wrote nothing there."""
    return tuple(replace(cell, STUB) for cell in cells)


Build = tuple[Edit, ...] | Callable[[bytes], bytes]


def build(assignment: str, how: Build, path: Path) -> Path:
    """Write the hostile notebook for ``assignment`` to ``path``."""
    if callable(how):
        path.write_bytes(how((SAMPLES / assignment / "correct.ipynb").read_bytes()))
        return path
    nb = copy.deepcopy(correct(assignment))
    for edit in how:
        edit.apply(nb)
    nbformat.write(nb, path)
    return path


# ---------------------------------------------------------------- files nbgrader cannot read as they are


def not_json(_: bytes) -> bytes:
    return b"this is not a notebook, just some words\n"


def not_utf8(data: bytes) -> bytes:
    """The correct notebook in Latin-1: a JSON string with a byte UTF-8 never uses."""
    return data.replace(b'"# ', '"# caf\xe9 '.encode("latin-1"), 1)


def _edited_json(change: Callable[[dict], None]) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        nb = json.loads(data)
        change(nb)
        return json.dumps(nb, indent=1).encode()

    return edit


no_cells_key = _edited_json(lambda nb: nb.pop("cells"))
no_metadata_key = _edited_json(lambda nb: nb.pop("metadata"))


def nbformat_v3(data: bytes) -> bytes:
    """The correct notebook written as nbformat 3 (worksheets, no cell ids)."""
    nb = nbformat.reads(data.decode(), as_version=4)
    return nbformat.writes(nbformat.convert(nb, 3), version=3).encode()


def with_junk_markdown(megabytes: int) -> Callable[[bytes], bytes]:
    """The correct notebook plus a markdown cell of ``megabytes`` MB of text."""

    def edit(data: bytes) -> bytes:
        nb = nbformat.reads(data.decode(), as_version=4)
        line = "junk " * 19 + "\n"  # 96 bytes
        nb.cells.append(nbformat.v4.new_markdown_cell(line * (megabytes * 2**20 // len(line))))
        return nbformat.writes(nb).encode()

    return edit
