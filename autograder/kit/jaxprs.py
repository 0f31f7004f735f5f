"""Independent jaxpr evidence: how many equations a staged computation holds, counted by the grader.

``jax.make_jaxpr(f)(*args)`` returns a ``ClosedJaxpr`` (jax 0.10.2); its ``.jaxpr.eqns`` are the
top-level equations. Some equations hold whole jaxprs in their parameters: a nested ``jit`` (its
``jaxpr``), ``scan`` (``jaxpr``), ``while`` (``cond_jaxpr`` and ``body_jaxpr``), ``cond`` (the tuple
``branches``), custom derivative rules (``call_jaxpr``). The count here finds them by type, never by
primitive name, so a primitive the grader did not foresee is still walked into.

The course's definition of the *recursive* count: every equation of the jaxpr counts once, the
equations holding sub-jaxprs included, plus the recursive count of every jaxpr held in any
equation's parameters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import jax
from jax.extend import core as jax_core

__all__ = ["count_top_level", "count_recursive", "primitive_counts", "sub_jaxprs", "jaxpr_of", "staged_loops"]


def _open(jaxpr):
    """The open ``Jaxpr`` of a ``ClosedJaxpr`` or ``Jaxpr``."""
    return jaxpr.jaxpr if isinstance(jaxpr, jax_core.ClosedJaxpr) else jaxpr


def _jaxprs_in(value) -> Iterator:
    if isinstance(value, (jax_core.ClosedJaxpr, jax_core.Jaxpr)):
        yield _open(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _jaxprs_in(item)


def sub_jaxprs(eqn) -> list:
    """Every jaxpr (open) held in one equation's parameters, in parameter order."""
    found = []
    for value in eqn.params.values():
        found.extend(_jaxprs_in(value))
    return found


def count_top_level(jaxpr) -> int:
    """The equations of the jaxpr itself, without looking inside any of them."""
    return len(_open(jaxpr).eqns)


def count_recursive(jaxpr) -> int:
    """Every equation, and every equation of every jaxpr held in an equation's parameters."""
    total = 0
    for eqn in _open(jaxpr).eqns:
        total += 1 + sum(count_recursive(sub) for sub in sub_jaxprs(eqn))
    return total


def primitive_counts(jaxpr) -> Counter:
    """How many equations of each primitive, counted recursively."""
    counts: Counter = Counter()
    for eqn in _open(jaxpr).eqns:
        counts[eqn.primitive.name] += 1
        for sub in sub_jaxprs(eqn):
            counts.update(primitive_counts(sub))
    return counts


def staged_loops(jaxpr) -> list:
    """The ``scan`` and ``while`` equations anywhere in the jaxpr (a loop staged as one equation)."""
    loops = []
    for eqn in _open(jaxpr).eqns:
        if eqn.primitive.name in ("scan", "while"):
            loops.append(eqn)
        for sub in sub_jaxprs(eqn):
            loops.extend(staged_loops(sub))
    return loops


def jaxpr_of(fn, *args, static_argnums=()):
    """``jax.make_jaxpr(fn, static_argnums)(*args)``: tracing only, nothing is compiled."""
    return jax.make_jaxpr(fn, static_argnums=static_argnums)(*args)
