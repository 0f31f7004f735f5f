"""Does not trace at all: it parses inspect.getsource(fn) with ast, counts calls and binary operators per line and multiplies by the range() of any enclosing for. This gets the notebook's two examples right, but it cannot see jitted helpers, which live in other functions of the file, and it counts a call like lax.scan(...) or a helper call as one equation. The contract asks for the equations of make_jaxpr(fn)(*args) as summarize attributes them. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Reads the source text instead of the jaxpr: the lines of jitted helpers and of scan body functions are outside fn's source and never counted, so it returns a call line when a helper or body line is heaviest.",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"heaviest_line_counts_copies", "heaviest_line_inside_calls"}
SCORE = 6


# %% cell 1 [imports] (provided, read-only)
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import ClosedJaxpr, Jaxpr

# %% cell 4 [slow_functions] (provided, read-only)
@functools.partial(jax.jit, static_argnames="steps")
def unrolled(x, steps):
    """Apply x -> 0.5 * x + sin(x) `steps` times, with a Python loop."""
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


def quantise(tree, scale):
    """Round every leaf of `tree` to a multiple of `scale`, eagerly, one operation at a time."""
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)

# %% cell 12 [rolled] (answer)
@functools.partial(jax.jit, static_argnames="steps")
def rolled(x, steps):
    """x -> 0.5 * x + sin(x), `steps` times, as one fori_loop (a scan, since steps is static)."""
    return lax.fori_loop(0, steps, lambda i, v: 0.5 * v + jnp.sin(v), x)

# %% cell 16 [count_equations] (answer)
def count_equations(fn, *args):
    stack = [jax.make_jaxpr(fn)(*args).jaxpr]
    n = 0
    while stack:
        jaxpr = stack.pop()
        n += len(jaxpr.eqns)
        for eqn in jaxpr.eqns:
            for p in eqn.params.values():
                items = p if isinstance(p, tuple) else [p]
                stack.extend(s.jaxpr if isinstance(s, ClosedJaxpr) else s
                             for s in items if isinstance(s, (ClosedJaxpr, Jaxpr)))
    return n

# %% cell 20 [quantise_jitted] (answer)
_quantise_jit = jax.jit(quantise)  # built once; scale is traced, so a new scale reuses the program


def quantise_jitted(tree, scale):
    return _quantise_jit(tree, scale)

# %% cell 26 [heaviest_line] (answer)
import ast
import inspect
import textwrap
from collections import Counter


def heaviest_line(fn, *args):
    """Read the function's source: each call or arithmetic operator is one equation, times the
    number of turns of every Python `for ... in range(n)` around it."""
    lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    counts = Counter()

    def visit(node, times):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                and getattr(node.iter.func, "id", None) == "range":
            turns = ast.literal_eval(node.iter.args[-1]) if len(node.iter.args) == 1 else \
                ast.literal_eval(node.iter.args[1]) - ast.literal_eval(node.iter.args[0])
            for child in node.body:
                visit(child, times * turns)
            return
        if isinstance(node, (ast.Call, ast.BinOp)) and not isinstance(node, ast.FunctionDef):
            is_range = isinstance(node, ast.Call) and getattr(node.func, "id", None) == "range"
            if not is_range:
                counts[first + node.lineno - 1] += times
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.expr_context,)):
                visit(child, times)

    fdef = tree.body[0]
    for stmt in fdef.body:
        visit(stmt, 1)
    return counts.most_common(1)[0][0]
