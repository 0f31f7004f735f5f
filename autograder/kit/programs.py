"""Functions the grader hands to a student's function, built from a description.

A property that passes a function of its own to the student's (``count_equations(fn, *args)``)
cannot send the function itself to a kernel judged from outside: code does not travel. It
sends the description instead, and :func:`program` builds the same function on both sides,
from this module, which the kernel imports before any student code runs.

A description is a tuple of parts, each done in turn to the value:

- ``("ops", n)``: ``n`` elementwise operations (sin, times 2, plus 1, cos, tanh, in turn);
- ``("jit", parts)``: a nested ``jax.jit`` of the parts;
- ``("scan", length, parts)``: a ``lax.scan`` of that length whose body does the parts;
- ``("while", parts)``: a ``lax.while_loop`` of three turns whose body does the parts;
- ``("cond", parts, parts)``: a ``lax.cond`` on the sign of the sum, between two part lists;
- ``("twice", parts)``: one ``jax.jit`` of the parts, built once and called twice in a row;
- ``("same_cond", parts)``: a ``lax.cond`` whose two branches are the same function;
- ``("round", n)``: ``jnp.round`` (itself a small jit) applied ``n`` times.

The last three make a jaxpr hold the very same sub-jaxpr in more than one equation (JAX reuses
the trace of a function it has met at the same input types), which the printed jaxpr shows once,
out of line.

A function of two arguments multiplies them first. :func:`describe` says it in words.
"""

from __future__ import annotations

import jax
from jax import lax

#: Elementwise operations of an ``("ops", n)`` part: (how feedback names it, the op).
OPS = (
    ("sin", lambda v: jax.numpy.sin(v)),
    ("times 2", lambda v: v * 2.0),
    ("plus 1", lambda v: v + 1.0),
    ("cos", lambda v: jax.numpy.cos(v)),
    ("tanh", lambda v: jax.numpy.tanh(v)),
)
#: Bounds a description must keep (it may come from over the wire).
MAX_OPS, MAX_LENGTH, MAX_NESTING, MAX_PARTS = 256, 64, 8, 16
ARITIES = (1, 2)


class ProgramError(ValueError):
    """A description outside the grammar or its bounds."""


def describe(parts) -> str:
    """A description's body in plain words."""
    words = []
    for part in parts:
        kind = part[0]
        if kind == "ops":
            words.append(f"{part[1]} elementwise operation{'s' if part[1] != 1 else ''}")
        elif kind == "jit":
            words.append(f"a nested `jax.jit` of ({describe(part[1])})")
        elif kind == "scan":
            words.append(f"a `lax.scan` of length {part[1]} whose body does ({describe(part[2])})")
        elif kind == "while":
            words.append(f"a `lax.while_loop` whose body does ({describe(part[1])})")
        elif kind == "cond":
            words.append(f"a `lax.cond` choosing between ({describe(part[1])}) and ({describe(part[2])})")
        elif kind == "twice":
            words.append(f"the same jitted function of ({describe(part[1])}) called twice")
        elif kind == "same_cond":
            words.append(f"a `lax.cond` whose two branches are the same function of ({describe(part[1])})")
        elif kind == "round":
            words.append(f"`jnp.round` applied {part[1]} time{'s' if part[1] != 1 else ''}")
    return ", then ".join(words) if words else "nothing (it returns its input)"


def _build(parts):
    steps = []
    for part in parts:
        kind = part[0]
        if kind == "ops":
            steps.extend(OPS[i % len(OPS)][1] for i in range(part[1]))
        elif kind == "jit":
            steps.append(jax.jit(_build(part[1])))
        elif kind == "scan":
            body, length = _build(part[2]), part[1]
            steps.append(lambda v, body=body, length=length: lax.scan(
                lambda c, _: (body(c), None), v, None, length=length)[0])
        elif kind == "while":
            body = _build(part[1])
            steps.append(lambda v, body=body: lax.while_loop(
                lambda c: c[0] < 3, lambda c: (c[0] + 1, body(c[1])), (0, v))[1])
        elif kind == "cond":
            first, second = _build(part[1]), _build(part[2])
            steps.append(lambda v, first=first, second=second: lax.cond(
                jax.numpy.sum(v) > 0, first, second, v))
        elif kind == "twice":
            inner = jax.jit(_build(part[1]))
            steps.append(lambda v, inner=inner: inner(inner(v)))
        elif kind == "same_cond":
            branch = _build(part[1])
            steps.append(lambda v, branch=branch: lax.cond(jax.numpy.sum(v) > 0, branch, branch, v))
        elif kind == "round":
            steps.extend(jax.numpy.round for _ in range(part[1]))

    def fn(v):
        for step in steps:
            v = step(v)
        return v

    return fn


def program(parts, arity: int = 1):
    """The function a description describes, of ``arity`` float32 arrays; it carries the
    description as ``fn.program`` (``(parts, arity)``), which is how it travels."""
    parts = checked(parts)
    if arity not in ARITIES:
        raise ProgramError(f"a program takes {' or '.join(map(str, ARITIES))} arguments")
    body = _build(parts)
    fn = body if arity == 1 else (lambda x, y: body(x * y))
    fn.program = (parts, arity)
    return fn


def words(parts, arity: int = 1) -> str:
    """The function :func:`program` builds, in words."""
    if arity == 1:
        return f"a function of `x` doing {describe(parts)}"
    return f"a function of `x, y` multiplying them, then doing {describe(parts)}"


def checked(parts, depth: int = 0) -> tuple:
    """The description as nested tuples, or :class:`ProgramError` if it leaves the grammar."""
    if depth > MAX_NESTING or not isinstance(parts, (list, tuple)) or len(parts) > MAX_PARTS:
        raise ProgramError("not a list of parts")
    checked_parts = []
    for part in parts:
        if not isinstance(part, (list, tuple)) or not part or not isinstance(part[0], str):
            raise ProgramError("a part must start with its kind")
        kind, rest = part[0], tuple(part[1:])
        if kind in ("ops", "round") and len(rest) == 1 and _count(rest[0], MAX_OPS):
            checked_parts.append((kind, rest[0]))
        elif kind in ("jit", "while", "twice", "same_cond") and len(rest) == 1:
            checked_parts.append((kind, checked(rest[0], depth + 1)))
        elif kind == "scan" and len(rest) == 2 and _count(rest[0], MAX_LENGTH):
            checked_parts.append(("scan", rest[0], checked(rest[1], depth + 1)))
        elif kind == "cond" and len(rest) == 2:
            checked_parts.append(("cond", checked(rest[0], depth + 1), checked(rest[1], depth + 1)))
        else:
            raise ProgramError(f"no part {kind!r} of that form")
    return tuple(checked_parts)


def _count(value, most: int) -> bool:
    return type(value) is int and 0 <= value <= most
