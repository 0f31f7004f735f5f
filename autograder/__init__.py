"""Hidden graders of the JAX tracing course.

Hidden test regions call :func:`grade`; instructors and the project's tests use
:func:`run_group` with a :class:`Submission` loaded from a notebook, a Python
file or a namespace. Property modules live in :mod:`autograder.properties` and
also run under plain pytest (``pytest autograder/properties --submission NB``).
"""

from autograder.grading.grade import grade, run_group
from autograder.grading.registry import assignments, group_points, properties_of
from autograder.grading.results import GroupReport, PropertyFailure, PropertyResult
from autograder.grading.submission import Submission, from_namespace, from_notebook, from_python

__all__ = [
    "GroupReport",
    "PropertyFailure",
    "PropertyResult",
    "Submission",
    "assignments",
    "from_namespace",
    "from_notebook",
    "from_python",
    "grade",
    "group_points",
    "properties_of",
    "run_group",
]
