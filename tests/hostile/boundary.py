"""Hostile entries: what a student hands in beside (or instead of) the notebook, refused at the
submission boundary (autograder/confinement/boundary.py) before nbgrader copies anything.

The links go straight into the student's folder of the exchange's ``inbound/`` after the submit, as
a student who writes there (mode 0733) can: nbgrader's ``submit`` would copy their targets instead.
Before the boundary, ``collect`` copied each link's target as the instructor, and ``autograde`` and
``generate_feedback`` copied what was beside the notebook into the student's ``feedback/``: the
reference notebook, the gradebook and the instructor's environment were handed back, a link to
``/dev/ptmx`` hung the batch and one to ``/dev/zero`` filled the disk; a notebook linked to the
reference solutions earned full points.
"""

from __future__ import annotations

from .model import SMM, Hostile, points, zero

REFERENCE = "{course}/source/static_max_mode/static_max_mode.ipynb"

ENTRIES = (
    Hostile(
        "links-beside-notebook", SMM, (), points(SMM),
        feedback=r"submission refused: notes\.txt is a symbolic link",
        links={"notes.txt": REFERENCE, "grades.txt": "{course}/gradebook.db", "env.txt": "/proc/self/environ",
               "terminal.txt": "/dev/ptmx", "zero.txt": "/dev/zero", "data/solutions.ipynb": REFERENCE},
    ),
    Hostile(
        "notebook-links-to-reference", SMM, (), zero(SMM),
        feedback=r"submission refused: static_max_mode\.ipynb is a symbolic link",
        links={"static_max_mode.ipynb": REFERENCE},
    ),
)
