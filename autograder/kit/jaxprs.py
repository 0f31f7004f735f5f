"""Independent jaxpr evidence: how many equations a staged computation holds, counted by the grader.

``jax.make_jaxpr(f)(*args)`` returns a ``ClosedJaxpr`` (in jax 0.12 one class with ``Jaxpr``, whose
``.jaxpr`` is itself); its ``.jaxpr.eqns`` are the
top-level equations. Some equations hold whole jaxprs in their parameters: a nested ``jit`` (its
``jaxpr``), ``scan`` (``jaxpr``), ``while`` (``cond_jaxpr`` and ``body_jaxpr``), ``cond`` (the tuple
``branches``), custom derivative rules (``call_jaxpr``). The count here finds them by type, never by
primitive name, so a primitive the grader did not foresee is still walked into.

The course's definition of the *recursive* count: every equation of the jaxpr counts once, the
equations holding sub-jaxprs included, plus the recursive count of every jaxpr held in any
equation's parameters.

A jaxpr staged in a kernel for a judge outside it reaches the judge as an :class:`Outline`: the
same equations, each with its primitive's name, its parameters that are plain values (``length``,
``unroll``...) and the jaxprs it holds (:func:`outline`, :func:`from_outline`). Every function
here reads an outline as it reads a jaxpr.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import jax
from jax.extend import core as jax_core

__all__ = [
    "count_top_level", "count_recursive", "primitive_counts", "sub_jaxprs", "jaxpr_of", "staged_loops",
    "Outline", "outline", "from_outline", "equations_by_line", "line_of",
]


def _open(jaxpr):
    """The open ``Jaxpr`` of a ``ClosedJaxpr`` or ``Jaxpr`` (an :class:`Outline` is its own)."""
    return jaxpr.jaxpr if isinstance(jaxpr, jax_core.ClosedJaxpr) else jaxpr


def _jaxprs_in(value) -> Iterator:
    if isinstance(value, (jax_core.ClosedJaxpr, jax_core.Jaxpr, Outline)):
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


def fully_unrolled(loop_eqn) -> bool:
    """A ``scan`` whose ``unroll`` parameter copies every step into the compiled program: one equation
    in the jaxpr, but a program that grows with the step count once XLA has it."""
    if loop_eqn.primitive.name != "scan":
        return False
    unroll, length = loop_eqn.params.get("unroll", 1), loop_eqn.params.get("length", 0)
    return length > 1 and (unroll is True or (isinstance(unroll, int) and unroll >= length))


def jaxpr_of(fn, *args, static_argnums=()):
    """``jax.make_jaxpr(fn, static_argnums)(*args)``: tracing only, nothing is compiled."""
    return jax.make_jaxpr(fn, static_argnums=static_argnums)(*args)


# --- the outline of a jaxpr staged in another process ---------------------------------------

#: Bounds on an outline: equations in all, and jaxprs nested in one another.
MAX_EQUATIONS = 200_000
MAX_NESTING = 32
_PLAIN = (bool, int, float, str, type(None))


@dataclass(frozen=True)
class Primitive:
    name: str


@dataclass(frozen=True)
class Equation:
    """One equation of an :class:`Outline`: ``primitive.name``, and ``params`` holding its plain
    values and, as outlines, the jaxprs it holds."""

    primitive: Primitive
    params: dict


@dataclass(frozen=True)
class Outline:
    """A jaxpr's equations without their variables: what the counts here read."""

    eqns: tuple

    @property
    def jaxpr(self) -> "Outline":  # read like a ClosedJaxpr's open jaxpr
        return self


class OutlineError(ValueError):
    """Data that is not an outline within the bounds."""


def is_jaxpr(value) -> bool:
    return isinstance(value, (jax_core.ClosedJaxpr, jax_core.Jaxpr))


def outline(jaxpr) -> list:
    """The JSON-able outline of a ``ClosedJaxpr`` or ``Jaxpr``: a list of equations
    ``[primitive name, {parameter: plain value or list of outlines}]``."""
    budget = [MAX_EQUATIONS]

    def walk(open_jaxpr, depth: int) -> list:
        if depth > MAX_NESTING:
            raise OutlineError("jaxprs nested too deeply")
        eqns = []
        for eqn in open_jaxpr.eqns:
            budget[0] -= 1
            if budget[0] < 0:
                raise OutlineError(f"more than {MAX_EQUATIONS} equations")
            params = {}
            for key, value in eqn.params.items():
                held = list(_jaxprs_in(value))
                if held:
                    params[str(key)] = [walk(sub, depth + 1) for sub in held]
                elif isinstance(value, _PLAIN) and not (isinstance(value, str) and len(value) > 200):
                    params[str(key)] = value
            eqns.append([eqn.primitive.name, params])
        return eqns

    return walk(_open(jaxpr), 0)


def from_outline(data) -> Outline:
    """The :class:`Outline` :func:`outline` made; :class:`OutlineError` for anything else."""
    budget = [MAX_EQUATIONS]

    def build(eqns, depth: int) -> Outline:
        if depth > MAX_NESTING or not isinstance(eqns, list):
            raise OutlineError("not an outline")
        built = []
        for item in eqns:
            budget[0] -= 1
            if budget[0] < 0 or not (isinstance(item, list) and len(item) == 2):
                raise OutlineError("not an outline's equation")
            name, params = item
            if not isinstance(name, str) or not isinstance(params, dict):
                raise OutlineError("not an outline's equation")
            kept = {}
            for key, value in params.items():
                if isinstance(value, list):
                    value = tuple(build(sub, depth + 1) for sub in value)
                    value = value[0] if len(value) == 1 else value
                elif not isinstance(value, _PLAIN):
                    raise OutlineError("an equation's parameter must be a plain value or jaxprs")
                kept[str(key)] = value
            built.append(Equation(Primitive(name[:200]), kept))
        return Outline(tuple(built))

    return build(data, 0)


def line_of(eqn, file_name: str) -> int | None:
    """The line of ``file_name`` that created an equation: the innermost frame of its traceback in that
    file (the line that ran the operation, inside a function it called too), as the ``eqn_count_pprof``
    dump and ``jax.extend.source_info_util.summarize`` attribute it; None where no frame is there
    (JAX's own bookkeeping, such as a loop's counter)."""
    traceback = eqn.source_info.traceback
    for frame in traceback.frames if traceback is not None else ():
        if frame.file_name == file_name:
            return frame.line_num
    return None


def equations_by_line(jaxpr, file_name: str) -> Counter:
    """How many equations, counted recursively, each line of ``file_name`` created (:func:`line_of`);
    an equation that belongs to no line is not counted."""
    counts: Counter = Counter()
    for eqn in _open(jaxpr).eqns:
        line = line_of(eqn, file_name)
        if line is not None:
            counts[line] += 1
        for sub in sub_jaxprs(eqn):
            counts.update(equations_by_line(sub, file_name))
    return counts
