"""Hidden graders of the JAX tracing course.

Hidden test regions call :func:`grade`; instructors and the project's tests use
:func:`run_group` with a :class:`Submission` loaded from a notebook, a Python
file or a namespace. Property modules live in :mod:`autograder.properties` and
also run under plain pytest (``pytest autograder/properties --submission NB``).
"""

from ._grade import grade, run_group
from ._registry import ASSIGNMENTS, group_points, properties
from ._results import GroupReport, PropertyFailure, PropertyResult
from ._submission import Submission, from_namespace, from_notebook, from_python

__all__ = [
    "ASSIGNMENTS",
    "GroupReport",
    "PropertyFailure",
    "PropertyResult",
    "Submission",
    "from_namespace",
    "from_notebook",
    "from_python",
    "grade",
    "group_points",
    "properties",
    "run_group",
]
