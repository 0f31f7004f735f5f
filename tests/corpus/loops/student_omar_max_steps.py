"""Omar: wanted dynamic steps with lax.scan, so scans a fixed MAX_STEPS=64 and masks steps >= `steps`
with jnp.where. One scan, constant jaxpr, self-check (up to 30 steps) passes, but any steps > 64
silently stops at 64. Hard to see: the map converges to its fixed point (~1.8955) well before 64 steps
for ordinary inputs; a tiny input (1e-12 at 100 steps) exposes it. Other parts correct. Runs top to bottom.
"""

# Teacher's split per graded cell (same for every file):
#   test_rolled  (2): 0.5 right values/shape/dtype at few steps (incl. 0), 0.5 at many steps,
#                     1.0 structure (jitted; one scan/while equation; jaxpr does not grow; nothing unrolls).
#   test_counting(2): 0.4 each for flat elementwise chains, nested jit, scan, while_loop, cond
#                     (each category also covering one- and two-argument functions and nesting).
#   test_pytree  (2): 0.5 values and containers on any pytree, 1.0 one compile per fresh tree
#                     (2 and 6 leaves), 0.5 no compile for a repeat call with a new scale.

TEACHER = {'test_rolled': 1.5, 'test_counting': 2, 'test_pytree': 2, 'test_attribution': 2}

WHY = {'test_rolled': "Steps beyond 64 are silently dropped (visible for small inputs such as 1e-12 at 100 steps; ordinary inputs have converged), against 'the same result as unrolled(x, steps) for ... "
                "any int steps >= 0'."}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'rolled_matches_loop'}
SCORE = 7
REVIEW = 'The teacher split the cell into fractions; the graders give one point per property, and this submission loses exactly the properties that name its mistake: `rolled_matches_loop`.'


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
MAX_STEPS = 64  # scan needs a fixed length; mask out the steps we do not want


@jax.jit
def rolled(x, steps):
    def body(v, i):
        new = 0.5 * v + jnp.sin(v)
        return jnp.where(i < steps, new, v), None
    out, _ = lax.scan(body, x, jnp.arange(MAX_STEPS))
    return out


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
def _is_jaxpr(v):
    return isinstance(v, (ClosedJaxpr, Jaxpr))


def _count(jaxpr):
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        # params are nested containers; let tree_util find the jaxprs in them
        for leaf in jax.tree_util.tree_leaves(dict(eqn.params), is_leaf=_is_jaxpr):
            if _is_jaxpr(leaf):
                n += _count(leaf.jaxpr if isinstance(leaf, ClosedJaxpr) else leaf)
    return n


def count_equations(fn, *args):
    return _count(jax.make_jaxpr(fn)(*args).jaxpr)


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
@jax.jit
def _quantise_leaves(leaves, scale):
    return [jnp.round(leaf / scale) * scale for leaf in leaves]


def quantise_jitted(tree, scale):
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return jax.tree_util.tree_unflatten(treedef, _quantise_leaves(leaves, scale=scale))


# %% cell 19 [check_quantise]
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
