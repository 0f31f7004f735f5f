"""Finds the assignments and their graded properties.

An assignment is whatever has a property module, ``autograder/properties/test_<name>.py``
(its notebook is ``source/<name>/<name>.ipynb``): no list of names is kept anywhere.
A property is a pytest test function marked with :func:`prop`.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil

from autograder.grading.results import Property

#: A property module's name is this prefix and the assignment's name (pytest collects it).
MODULE_PREFIX = "test_"
PROPERTIES_PACKAGE = "autograder.properties"


def prop(*, group: str, points: float, title: str, hint: str):
    """Declare a pytest test function as a graded property of one grade-cell group."""

    def mark(test):
        test.graded_property = Property(
            name=test.__name__.removeprefix("test_"),
            group=group,
            points=points,
            title=title,
            hint=hint,
            run=test,
        )
        return test

    return mark


@functools.cache
def assignments() -> tuple[str, ...]:
    """Every assignment with a property module, sorted by name. Found once per process
    (the kernel's sandbox calls it before it hides the grader's files)."""
    package = importlib.import_module(PROPERTIES_PACKAGE)
    return tuple(sorted(
        info.name.removeprefix(MODULE_PREFIX)
        for info in pkgutil.iter_modules(package.__path__)
        if info.name.startswith(MODULE_PREFIX) and not info.ispkg
    ))


def module_name(assignment: str) -> str:
    return f"{PROPERTIES_PACKAGE}.{MODULE_PREFIX}{assignment}"


def properties_of(assignment: str, group: str | None = None) -> tuple[Property, ...]:
    """The properties of an assignment (optionally one group), in source order."""
    if assignment not in assignments():
        known = ", ".join(assignments())
        raise ValueError(f"unknown assignment {assignment!r}; the course has: {known}")
    module = importlib.import_module(module_name(assignment))
    found = tuple(
        value.graded_property
        for value in vars(module).values()
        if callable(value) and hasattr(value, "graded_property")
    )
    if group is None:
        return found
    chosen = tuple(p for p in found if p.group == group)
    if not chosen:
        groups = ", ".join(sorted({p.group for p in found}))
        raise ValueError(f"assignment {assignment!r} has no group {group!r}; its groups are: {groups}")
    return chosen


def group_points(assignment: str) -> dict[str, float]:
    """Points per group, as the notebooks' grade cells must carry them."""
    points: dict[str, float] = {}
    for p in properties_of(assignment):
        points[p.group] = points.get(p.group, 0.0) + p.points
    return points
