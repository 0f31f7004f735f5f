"""Jo: copied the `unrolled` pattern and made `scale` static (static_argnames="scale").
Values and the one-compile-per-tree are right, but each new scale recompiles, and the visible
self-check cell 19 RAISES (ValueError: non-hashable static argument) at its make_jaxpr line.
rolled and count_equations are correct.
"""

# Teacher's split per graded cell (same for every file):
#   test_rolled  (2): 0.5 right values/shape/dtype at few steps (incl. 0), 0.5 at many steps,
#                     1.0 structure (jitted; one scan/while equation; jaxpr does not grow; nothing unrolls).
#   test_counting(2): 0.4 each for flat elementwise chains, nested jit, scan, while_loop, cond
#                     (each category also covering one- and two-argument functions and nesting).
#   test_pytree  (2): 0.5 values and containers on any pytree, 1.0 one compile per fresh tree
#                     (2 and 6 leaves), 0.5 no compile for a repeat call with a new scale.

TEACHER = {'test_rolled': 2, 'test_counting': 2, 'test_pytree': 1.5, 'test_attribution': 2}

WHY = {'test_pytree': "scale is static, so each new scale value compiles a new program, against 'scale stays dynamic: a new scale must not compile again'."}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'quantise_compiles_once'}
SCORE = 7
REVIEW = 'The teacher split the cell into fractions; the graders give one point per property, and this submission loses exactly the properties that name its mistake: `quantise_compiles_once`.'


# %% cell 1 [imports]
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import ClosedJaxpr, Jaxpr


# %% cell 4 [slow_functions]
@functools.partial(jax.jit, static_argnames="steps")
def unrolled(x, steps):
    """Apply x -> 0.5 * x + sin(x) `steps` times, with a Python loop."""
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


def quantise(tree, scale):
    """Round every leaf of `tree` to a multiple of `scale`, eagerly, one operation at a time."""
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)


# %% cell 6 [none]
x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)

three = jax.make_jaxpr(unrolled, static_argnums=1)(x, 3)
print(three)

thirty = jax.make_jaxpr(unrolled, static_argnums=1)(x, 30)
for label, closed in (("3 steps", three), ("30 steps", thirty)):
    inner = closed.jaxpr.eqns[0].params["jaxpr"]  # the jit equation's sub-jaxpr
    print(f"{label}: {len(closed.jaxpr.eqns)} top-level equation, {len(inner.eqns)} inside the jit")


# %% cell 8 [none]
params = {"w": jnp.ones((4, 3)), "b": jnp.ones(3), "gain": jnp.ones(())}
print(jax.make_jaxpr(quantise)(params, 0.5))


# %% cell 10 [rolled]
@functools.partial(jax.jit, static_argnums=1)
def rolled(x, steps):
    update = lambda _, v: 0.5 * v + jnp.sin(v)
    # with a Python int trip count fori_loop lowers to a single scan
    return lax.fori_loop(lower=0, upper=steps, body_fun=update, init_val=x)


# %% cell 11 [check_rolled]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
for steps in (0, 1, 3, 30):
    got, want = np.asarray(rolled(x, steps)), np.asarray(unrolled(x, steps))
    assert got.shape == x.shape and got.dtype == np.float32, f"{steps} steps: returned {got.dtype}{got.shape}"
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), f"{steps} steps: rolled gives {got}, the loop {want}"

def inner_equations(closed):
    """Equations under the top-level jit equation (enough for this check; Part B counts everything)."""
    return sum(len(sub.jaxpr.eqns) for eqn in closed.jaxpr.eqns for sub in [eqn.params.get("jaxpr")] if sub)

few = inner_equations(jax.make_jaxpr(lambda v: rolled(v, 3))(x))
many = inner_equations(jax.make_jaxpr(lambda v: rolled(v, 30))(x))
assert many <= few, f"rolled's jaxpr grows: {few} equations inside its jit at 3 steps, {many} at 30"


# %% cell 14 [count_equations]
def count_equations(fn, *args):
    closed = jax.make_jaxpr(fn)(*args)
    stack = [closed.jaxpr]
    total = 0
    while stack:
        jaxpr = stack.pop()
        total += len(jaxpr.eqns)
        for eqn in jaxpr.eqns:
            for value in eqn.params.values():
                candidates = value if isinstance(value, (tuple, list)) else (value,)
                for c in candidates:
                    if isinstance(c, ClosedJaxpr):
                        stack.append(c.jaxpr)
                    elif isinstance(c, Jaxpr):
                        stack.append(c)
    return int(total)


# %% cell 15 [check_count]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
assert count_equations(lambda v: v, x) == 0, "a function that returns its input has no equations"
assert count_equations(lambda v: jnp.sin(v) * 2.0, x) == 2, "sin, then mul: two equations"
got = count_equations(lambda v: unrolled(v, 3), x)
assert got == 10, f"unrolled at 3 steps: one jit equation holding 9, so 10; got {got}"
got = count_equations(lambda v, w: jax.jit(jnp.cos)(v + w), x, x)
assert got == 3, f"add, then a jit equation holding one cos: 3; got {got}"
assert isinstance(count_equations(jnp.sin, x), int), "return a Python int"


# %% cell 18 [quantise_jitted]
@functools.partial(jax.jit, static_argnames="scale")
def quantise_jitted(tree, scale):
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)


# %% cell 19 [check_quantise]
# This student's visible self-check raises ValueError here, as it does in the notebook,
# where the cell errors and the notebook goes on; here it is caught so the file runs on.
try:
    # Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
    params = {"w": jnp.array([[0.26, -0.74], [1.6, 2.4]]), "b": [jnp.array([0.1, -0.3, 0.9])]}
    got, want = quantise_jitted(params, 0.5), quantise(params, 0.5)
    assert jax.tree.structure(got) == jax.tree.structure(params), f"the tree changed shape: {jax.tree.structure(got)}"
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        assert np.array_equal(np.asarray(g), np.asarray(w)), f"got {g}, quantise gives {w}"
    staged = jax.make_jaxpr(quantise_jitted)(params, 0.5)
    assert len(staged.jaxpr.eqns) == 1 and staged.jaxpr.eqns[0].primitive.name == "jit", (
        "make_jaxpr of quantise_jitted should show one jit equation: the whole tree in one jitted call"
    )
except ValueError:
    pass


# %% Part D, answered as the reference does (the same in every file that is not about Part D)
import collections as _collections
import re as _re

from jax.extend import source_info_util as _source_info_util
from jax.extend.core import ClosedJaxpr as _ClosedJaxpr, Jaxpr as _Jaxpr

_LINE = _re.compile(r":(\d+)(?::\d+)? \(")


def heaviest_line(fn, *args):
    per_line = _collections.Counter()

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            found = _LINE.search(_source_info_util.summarize(eqn.source_info))
            if found:
                per_line[int(found.group(1))] += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(sub, _ClosedJaxpr):
                        walk(sub.jaxpr)
                    elif isinstance(sub, _Jaxpr):
                        walk(sub)

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    return per_line.most_common(1)[0][0]
