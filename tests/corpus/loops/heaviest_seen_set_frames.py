"""An unusual correct Part D: it walks sub-jaxprs with a "seen" set (as the dump does) and finds each
equation's line in `eqn.source_info.traceback.frames`, the innermost frame in the function's own file
(`inspect.getsourcefile(fn)`).
The graders' functions hold no sub-jaxpr twice, so both choices give the right line."""
import functools

import jax
import jax.extend.core
import jax.numpy as jnp
from jax import lax

FAILS = set()
SCORE = 8


@functools.partial(jax.jit, static_argnames="steps")
def unrolled(x, steps):
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


def quantise(tree, scale):
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)


@jax.jit
def rolled(x, steps):
    return lax.fori_loop(0, steps, lambda i, v: 0.5 * v + jnp.sin(v), x)


def count_equations(fn, *args):
    def count(jaxpr):
        total = 0
        for eqn in jaxpr.eqns:
            total += 1
            for value in eqn.params.values():
                for sub in value if isinstance(value, (tuple, list)) else (value,):
                    if isinstance(sub, jax.extend.core.ClosedJaxpr):
                        total += count(sub.jaxpr)
                    elif isinstance(sub, jax.extend.core.Jaxpr):
                        total += count(sub)
        return total

    return count(jax.make_jaxpr(fn)(*args).jaxpr)


quantise_jitted = jax.jit(quantise)

import collections
import inspect
import re

from jax.extend import source_info_util

_LINE = re.compile(r":(\d+)(?::\d+)? \(")


def _line(eqn):
    found = _LINE.search(source_info_util.summarize(eqn.source_info))
    return int(found.group(1)) if found else None


def _subs(eqn):
    for value in eqn.params.values():
        for sub in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(sub, jax.extend.core.ClosedJaxpr):
                yield sub.jaxpr
            elif isinstance(sub, jax.extend.core.Jaxpr):
                yield sub

def heaviest_line(fn, *args):
    file_name = inspect.getsourcefile(fn)
    per_line, seen = collections.Counter(), set()

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            traceback = eqn.source_info.traceback
            for frame in traceback.frames if traceback is not None else ():
                if frame.file_name == file_name:
                    per_line[frame.line_num] += 1
                    break
            for sub in _subs(eqn):
                if id(sub) not in seen:
                    seen.add(id(sub))
                    walk(sub)

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    (line, _), = per_line.most_common(1)
    return line
