"""An unusual correct answer: `lax.scan` with `steps` static (one compile per step count),
`count_equations` through `jax.tree_util` over the parameters, and a jit of a lambda built once."""
FAILS = set()
SCORE = 8

import functools

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
from jax import lax


@functools.partial(jax.jit, static_argnames="steps")
def unrolled(x, steps):
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


def quantise(tree, scale):
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)


@functools.partial(jax.jit, static_argnames="steps")
def rolled(x, steps):
    def step(v, _):
        return 0.5 * v + jnp.sin(v), None

    out, _ = lax.scan(step, x, None, length=steps)
    return out


def count_equations(fn, *args):
    def count(jaxpr):
        n = 0
        for eqn in jaxpr.eqns:
            n += 1
            for p in jax.tree_util.tree_leaves(list(eqn.params.values()),
                                               is_leaf=lambda v: isinstance(v, jax.extend.core.ClosedJaxpr)):
                if isinstance(p, jax.extend.core.ClosedJaxpr):
                    n += count(p.jaxpr)
                elif isinstance(p, jax.extend.core.Jaxpr):
                    n += count(p)
        return n

    return count(jax.make_jaxpr(fn)(*args).jaxpr)


_quantise = jax.jit(lambda tree, scale: jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree))


def quantise_jitted(tree, scale):
    return _quantise(tree, jnp.float32(scale))


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
