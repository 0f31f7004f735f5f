"""Run a group of properties against a submission and report, as one grade cell does."""

from __future__ import annotations

from . import _feedback
from ._quiet import quiet
from ._registry import properties
from ._results import GroupReport, PropertyFailure, PropertyResult
from ._submission import Submission


def run_group(assignment: str, group: str, submission: Submission) -> GroupReport:
    """Run every property of ``group``; each is caught on its own so one failure hides no other."""
    results = []
    with quiet():  # importing the property module (hypothesis, JAX) may warn too
        for prop in properties(assignment, group):
            failure = _run_one(prop, submission)
            results.append(PropertyResult(prop, passed=failure is None, failure=failure))
    return GroupReport(assignment, group, tuple(results))


def grade(assignment: str, group: str, namespace: dict) -> float:
    """The call a hidden test region makes: print feedback, return the points earned.

    The returned number is the cell's value, which nbgrader reads as partial credit.
    """
    report = run_group(assignment, group, Submission(namespace))
    print(_feedback.render(report))
    return report.earned


def _run_one(prop, submission) -> PropertyFailure | None:
    try:
        prop.run(submission)
    except Exception as error:  # one property's crash must not stop the others
        return _as_failure(error)
    return None


def _as_failure(error: BaseException) -> PropertyFailure:
    """Find the student-facing failure inside whatever hypothesis or JAX raised."""
    found = _find_failure(error)
    if found is not None:
        return found
    return PropertyFailure(
        f"The check stopped with {type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        .rstrip(": ")
        + ". This usually means a function returned something of an unexpected kind."
    )


def _find_failure(error: BaseException | None) -> PropertyFailure | None:
    seen = set()
    stack = [error]
    while stack:
        current = stack.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, PropertyFailure):
            return current
        stack.extend(getattr(current, "exceptions", ()))
        stack.extend([current.__cause__, current.__context__])
    return None
