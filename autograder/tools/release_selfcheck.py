"""``python -m autograder selfcheck``: write each assignment's ``source/<a>/selfcheck.py``.

The file a student runs is the runner (:mod:`autograder.public.runner`, the one definition of the
self-check's form) followed by the assignment's public checks (``autograder/public/<a>.py``), with
the checks' import of the runner left out: one standalone module of the standard library, NumPy
and JAX. nbgrader copies it into ``release/<a>/`` with the notebook. ``tests/test_self_check.py``
fails while a copy in ``source/`` or ``release/`` differs from what :func:`render` makes now.
"""

from __future__ import annotations

import re
from pathlib import Path

from autograder.tools.repository import REPO_ROOT

PUBLIC = Path(__file__).resolve().parents[1] / "public"
#: The file's name beside each notebook (the notebooks' check cells import it).
FILE_NAME = "selfcheck.py"
#: The checks' import of the runner, on one line or in parentheses over several.
_RUNNER_IMPORT = re.compile(r"\n?^from autograder\.public\.runner import (?:\([^)]*\)|[^\n]*)\n", re.MULTILINE)
#: Imports the runner already made, left out of the checks in the joined file.
_RUNNER_HAS = re.compile(r"^import numpy as np\n", re.MULTILINE)
_HEADER = (
    "# The self-check of this assignment: run by the notebook's self-check cells.\n"
    "# Made from the course's public checks; a new copy replaces it, so leave it as it is.\n\n"
)


def assignments_with_checks() -> list[str]:
    """The assignments that have public checks: ``autograder/public/<a>.py``."""
    return sorted(p.stem for p in PUBLIC.glob("*.py") if p.stem not in ("__init__", "runner"))


def render(assignment: str) -> str:
    """The text of ``selfcheck.py`` for ``assignment``."""
    checks = (PUBLIC / f"{assignment}.py").read_text(encoding="utf-8")
    if not _RUNNER_IMPORT.search(checks):
        raise ValueError(f"autograder/public/{assignment}.py does not import the runner "
                         "(`from autograder.public.runner import ...`)")
    runner = (PUBLIC / "runner.py").read_text(encoding="utf-8")
    return _HEADER + runner + "\n\n" + _RUNNER_HAS.sub("", _RUNNER_IMPORT.sub("", checks))


def write(root: Path = REPO_ROOT) -> list[Path]:
    """Write ``source/<a>/selfcheck.py`` for every assignment with public checks; the paths written."""
    written = []
    for assignment in assignments_with_checks():
        path = Path(root) / "source" / assignment / FILE_NAME
        text = render(assignment)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main() -> int:
    for path in write():
        print(f"wrote {path.relative_to(REPO_ROOT)}; regenerate its release with nbgrader generate_assignment")
    return 0
