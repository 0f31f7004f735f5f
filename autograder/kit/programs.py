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


# --- listings: functions with source lines of their own -----------------------------------------
#
# A property asking *which line* made a program big needs a function whose equations come from known
# lines. A listing is built from a description of blocks, as source text compiled under a file name
# of its own (and put in ``linecache``, so ``inspect.getsource`` reads it), the same text on both
# sides, so the line numbers the judge expects are the kernel's. A block is one of:
#
# - ``("line", k)``: one statement ``x = ...`` doing ``k`` elementwise operations;
# - ``("loop", n, k)``: a Python ``for`` loop of ``n`` turns whose one body line does ``k``;
# - ``("fori", n, k)``: ``lax.fori_loop(0, n, ...)`` on one line, its body a lambda doing ``k``;
# - ``("scan", n, k)``: ``lax.scan`` of length ``n`` on one line, its body a lambda doing ``k``;
# - ``("foridef", n, k)``: ``lax.fori_loop(0, n, body, x)`` on one line, its body a plain function,
#   defined above the function, whose one line does ``k``;
# - ``("helper", n, k)``: a call of a jitted helper, defined above the function, whose Python loop
#   of ``n`` turns has one body line doing ``k``;
# - ``("helperloop", n, k)``: a call of a jitted helper whose one line is a ``lax.fori_loop`` of ``n``
#   turns, its body a lambda doing ``k`` (equations two jaxprs deep);
# - ``("softmax",)``: one statement ``x = jax.nn.softmax(x)``, one call that writes nine equations.

#: Elementwise operations of a listing's expressions, in turn: each is one equation on float32.
_LISTING_OPS = ("jnp.sin({})", "{} * 2.0", "jnp.cos({})", "{} + 1.0", "jnp.tanh({})", "{} - 0.5")
#: Bounds a listing keeps (it may come from over the wire).
MAX_BLOCKS, MAX_TURNS, MAX_LOOP_TURNS, MAX_OPS_PER_LINE = 8, 10_000, 64, 8
LISTING_KINDS = ("line", "loop", "fori", "scan", "foridef", "helper", "helperloop", "softmax")
LISTING_FILE = "<graders_function_27.py>"
_HEADER_LINES = 5  # the imports and two blank lines


def expression(var: str, k: int) -> str:
    """``k`` elementwise operations applied in turn to ``var``, as one Python expression."""
    text, binary = var, False
    for i in range(k):
        op = _LISTING_OPS[i % len(_LISTING_OPS)]
        called = op.startswith("jnp.")
        text = op.format(f"({text})" if binary and not called else text)
        binary = not called
    return text


def checked_blocks(blocks) -> tuple:
    """A listing's description as nested tuples, or :class:`ProgramError` if it leaves the grammar."""
    if not isinstance(blocks, (list, tuple)) or not 1 <= len(blocks) <= MAX_BLOCKS:
        raise ProgramError("not a list of blocks")
    checked_list = []
    for block in blocks:
        if not isinstance(block, (list, tuple)) or not block or block[0] not in LISTING_KINDS:
            raise ProgramError("a block must start with its kind")
        kind, rest = block[0], tuple(block[1:])
        if kind == "line" and len(rest) == 1 and type(rest[0]) is int and 1 <= rest[0] <= MAX_OPS_PER_LINE:
            checked_list.append((kind, rest[0]))
            continue
        if kind == "softmax" and not rest:
            checked_list.append((kind,))
            continue
        most = MAX_TURNS if kind in ("fori", "scan", "foridef", "helperloop") else MAX_LOOP_TURNS
        if (kind not in ("line", "softmax") and len(rest) == 2 and all(type(v) is int for v in rest)
                and 1 <= rest[0] <= most and 1 <= rest[1] <= MAX_OPS_PER_LINE):
            checked_list.append((kind, rest[0], rest[1]))
            continue
        raise ProgramError(f"no block {kind!r} of that form")
    return tuple(checked_list)


def listing_source(blocks) -> tuple[str, dict[int, tuple]]:
    """The source text of a listing, and which block each interesting line belongs to:
    ``{line: (block index, role)}`` with role ``"body"`` (where a loop's or a helper's operations
    are written), ``"call"`` (a helper's call) or ``"line"`` (a one-line block)."""
    blocks = checked_blocks(blocks)
    head = ["import jax", "import jax.numpy as jnp", "from jax import lax", "", ""]
    helpers: dict[int, tuple[str, ...]] = {}  # block index -> the lines defined above the function
    roles = {}
    for index, block in enumerate(blocks):
        kind = block[0]
        if kind == "helper":
            helpers[index] = ("@jax.jit", f"def helper_{index}(v):", f"    for _ in range({block[1]}):",
                              f"        v = {expression('v', block[2])}", "    return v", "", "")
        elif kind == "helperloop":
            helpers[index] = ("@jax.jit", f"def helper_{index}(v):",
                              f"    return lax.fori_loop(0, {block[1]}, lambda i, w: {expression('w', block[2])}, v)",
                              "", "")
        elif kind == "foridef":
            helpers[index] = (f"def body_{index}(i, v):", f"    return {expression('v', block[2])}", "", "")
    lines = list(head)
    helper_body = {}
    for index, chunk in helpers.items():
        lines.extend(chunk)
        helper_body[index] = len(lines) - (3 if blocks[index][0] == "helper" else 2)  # the body line, 1-based
    lines.append("def fn(x):")
    for index, block in enumerate(blocks):
        kind = block[0]
        if kind == "line":
            lines.append(f"    x = {expression('x', block[1])}")
            roles[len(lines)] = (index, "line")
        elif kind == "softmax":
            lines.append("    x = jax.nn.softmax(x)")
            roles[len(lines)] = (index, "line")
        elif kind == "loop":
            lines.append(f"    for _ in range({block[1]}):")
            lines.append(f"        x = {expression('x', block[2])}")
            roles[len(lines)] = (index, "body")
        elif kind == "fori":
            lines.append(f"    x = lax.fori_loop(0, {block[1]}, lambda i, v: {expression('v', block[2])}, x)")
            roles[len(lines)] = (index, "body")
        elif kind == "scan":
            lines.append(f"    x = lax.scan(lambda c, _: ({expression('c', block[2])}, None), x, None, "
                         f"length={block[1]})[0]")
            roles[len(lines)] = (index, "body")
        elif kind == "foridef":
            lines.append(f"    x = lax.fori_loop(0, {block[1]}, body_{index}, x)")
            roles[len(lines)] = (index, "call")
            roles[helper_body[index]] = (index, "body")
        else:
            lines.append(f"    x = helper_{index}(x)")
            roles[len(lines)] = (index, "call")
            roles[helper_body[index]] = (index, "body")
    lines.append("    return x")
    return "\n".join(lines) + "\n", roles


def listing(blocks):
    """The function ``fn(x)`` of a listing; it carries the description as ``fn.listing``, which is
    how it travels."""
    import linecache

    text, _ = listing_source(blocks)
    namespace: dict = {}
    exec(compile(text, LISTING_FILE, "exec"), namespace)  # noqa: S102 - the course's own text, from a checked description
    linecache.cache[LISTING_FILE] = (len(text), None, text.splitlines(True), LISTING_FILE)
    fn = namespace["fn"]
    fn.listing = checked_blocks(blocks)
    return fn


def describe_listing(blocks) -> str:
    """A listing's source with numbered lines, for feedback."""
    text, _ = listing_source(blocks)
    numbered = []
    for number, source in enumerate(text.splitlines(), start=1):
        if number <= _HEADER_LINES:
            continue
        numbered.append(f" {number:3d}  {source}")
    return "\n".join(numbered)
