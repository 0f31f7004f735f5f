"""Every input class a property's docstring promises is met by a call the property makes.

A property whose inputs the notebook promises lists them in its docstring, in a block the
people reading it and this test both read::

    Input classes the notebook promises (the calls of `rolled`):

    - x 0-d: ``np.ndim(x) == 0``
    - steps 0: ``steps == 0``

Each class is a Python expression over the arguments of one call of the student's function (by
its parameter names; ``*args`` as a tuple). The property is run against the reference solution
with every call recorded, and a class that no call meets fails here, naming the property and the
class: a grader whose strategy never draws an input the notebook promises (a padded mode, a 0-d
array, a cause at an indexed path) passes students it should not, and nothing else would say so.
"""

from __future__ import annotations

import inspect
import re

import jax
import numpy as np
import pytest
from conftest import REPO

from autograder import assignments, from_notebook, properties_of
from autograder.grading.submission import Submission

BLOCK = re.compile(r"Input classes the notebook promises \(the calls of `(\w+)`\):\n(.*?)(?:\n\s*\n|\Z)", re.S)
CLASS = re.compile(r"^\s*- (.+?): ``(.+?)``\s*$", re.M)


def declared():
    """``(assignment, property, function, {class: expression})`` of every property with a block."""
    found = []
    for assignment in assignments():
        for prop in properties_of(assignment):
            block = BLOCK.search(inspect.getdoc(prop.run) or "")
            if block:
                found.append((assignment, prop, block[1], dict(CLASS.findall(block[2]))))
    return found


def test_the_value_properties_of_every_assignment_declare_their_input_classes():
    by_assignment = {a for a, *_ in declared()}
    assert by_assignment == set(assignments()) - {"ledger_extension", "host_sync"}, sorted(by_assignment)
    assert all(classes for *_, classes in declared())


class Recording(Submission):
    """The reference, with every call of a student function kept as its bound arguments."""

    def __init__(self, inner: Submission):
        super().__init__(inner.namespace, inner.label)
        self.calls: list[tuple[str, dict]] = []

    def _note(self, name, args, kwargs):
        fn = self.namespace.get(name)
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except (TypeError, ValueError):
            return
        self.calls.append((name, dict(bound.arguments)))

    def call(self, name, *args, **kwargs):
        self._note(name, args, kwargs)
        return super().call(name, *args, **kwargs)

    def call_staged(self, stage, name, *args, static_argnums=(), **kwargs):
        self._note(name, args, kwargs)
        return super().call_staged(stage, name, *args, static_argnums=static_argnums, **kwargs)

    def raises(self, expected, name, *args, **kwargs):
        self._note(name, args, kwargs)
        return super().raises(expected, name, *args, **kwargs)


def primitives(fn, *args) -> set[str]:
    """The primitive names of ``jax.make_jaxpr(fn)(*args)``, nested jaxprs included."""
    from autograder.kit.jaxprs import primitive_counts

    return set(primitive_counts(jax.make_jaxpr(fn)(*args)))


def shared(fn, *args) -> bool:
    """Whether one sub-jaxpr object is held by two equations of ``jax.make_jaxpr(fn)(*args)``."""
    from jax.extend.core import ClosedJaxpr, Jaxpr

    seen: list[int] = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(sub, (ClosedJaxpr, Jaxpr)):
                        inner = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
                        seen.append(id(inner))
                        walk(inner)

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    return len(seen) != len(set(seen))


_TYPE_LINE = re.compile(r"\* at ([^,]+), now (\w+)\[([^\]]*)\](\S*) and before (\w+)\[([^\]]*)\](\S*)")


def type_change(explanation: str) -> set[str]:
    """What differs in the first type line of a cache-miss explanation: dtype, shape, weak type."""
    found = _TYPE_LINE.search(explanation)
    if not found:
        return set()
    _, dtype_now, shape_now, rest_now, dtype_before, shape_before, rest_before = found.groups()
    parts = {"dtype"} if dtype_now != dtype_before else set()
    parts |= {"shape"} if shape_now != shape_before else set()
    return parts or ({"weak type"} if "weak_type" in rest_now + rest_before else set())


def indexed(explanation: str) -> bool:
    """Whether the first type line names an indexed path (``xs[0]``), not a plain argument (``x``)."""
    found = _TYPE_LINE.search(explanation)
    return bool(found) and "[" in found.group(1)


HELPERS = {"np": np, "jax": jax, "primitives": primitives, "shared": shared, "type_change": type_change,
           "indexed": indexed}


def _holds(expression: str, arguments: dict) -> bool:
    try:
        # one namespace: a generator in the expression sees the arguments too
        return bool(eval(expression, {**HELPERS, **arguments}))  # noqa: S307
    except Exception:  # noqa: BLE001 - a class that does not apply to this call's arguments
        return False


@pytest.fixture(scope="module")
def references():
    return {}


@pytest.mark.parametrize("assignment, prop, function, classes",
                         [pytest.param(*d, id=f"{d[0]}/{d[1].name}") for d in declared()])
def test_every_declared_class_is_met(references, assignment, prop, function, classes):
    if assignment not in references:
        references[assignment] = from_notebook(REPO / "source" / assignment / f"{assignment}.ipynb")
    submission = Recording(references[assignment])
    with submission.quiet():
        prop.run(submission)  # the property alone (its group's others make calls of their own)
    calls = [arguments for name, arguments in submission.calls if name == function]
    assert calls, f"{prop.name} never calls `{function}`"
    never = [label for label, expression in classes.items() if not any(_holds(expression, c) for c in calls)]
    assert not never, f"{assignment}/{prop.name}: no call of `{function}` meets {never}"
