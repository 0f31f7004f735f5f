"""Marks property tests and finds them by assignment and group."""

from __future__ import annotations

import importlib

from ._results import Property

ASSIGNMENTS = ("static_max_mode", "padded_masking", "branch_repair", "ledger_extension")


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


def properties(assignment: str, group: str | None = None) -> tuple[Property, ...]:
    """The properties of an assignment (optionally one group), in source order."""
    if assignment not in ASSIGNMENTS:
        known = ", ".join(ASSIGNMENTS)
        raise ValueError(f"unknown assignment {assignment!r}; the course has: {known}")
    module = importlib.import_module(f"autograder.properties.test_{assignment}")
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
    for p in properties(assignment):
        points[p.group] = points.get(p.group, 0.0) + p.points
    return points
