"""Does what the guide's diagnostic does: it turns on the eqn_count_pprof dump during a call (restored afterwards), lowers jax.jit(fn), decodes the profile with jaxlib's pprof_profile_to_json and sums the samples by the innermost non-JAX frame. It fails twice. The dump's writer visits each shared sub-jaxpr once, so a helper called in a loop is counted once, against the notebook's 'every equation counts (as in Part B)'. And a sample with no location (an equation with no source, the outer jit of a jitted fn) raises KeyError. It also clears every cache as a side effect. Parts A-C are correct."""

TEACHER = {"test_rolled": 2, "test_counting": 2, "test_pytree": 2, "test_attribution": 0}

WHY = {
    "test_attribution": "Uses the dump: shared sub-jaxprs (helper called 4 times, scan body reused) are counted once, so the call line wins instead of the helper's line. KeyError on a jitted fn (a sample without a location).",
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = set()
SCORE = 8
REVIEW = "The teacher graded an earlier wording; the notebook now says the graders' functions are plain (not jitted) and hold no sub-jaxpr twice, so reading the real dump gives the right line on each of them."


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
def _step(i, v):
    return 0.5 * v + jnp.sin(v)


@jax.jit
def rolled(x, steps):
    # steps stays dynamic: one trace for every step count (a while loop)
    return lax.fori_loop(0, steps, _step, x)

# %% cell 16 [count_equations] (answer)
def _count(jaxpr):
    total = 0
    for eqn in jaxpr.eqns:
        total += 1
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(sub, ClosedJaxpr):
                    total += _count(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    total += _count(sub)
    return total


def count_equations(fn, *args):
    return int(_count(jax.make_jaxpr(fn)(*args).jaxpr))

# %% cell 20 [quantise_jitted] (answer)
@jax.jit
def quantise_jitted(tree, scale):
    return jax.tree.map(lambda leaf: jnp.round(leaf / scale) * scale, tree)

# %% cell 26 [heaviest_line] (answer)
import gzip
import json
import os
import tempfile
from collections import Counter

from jaxlib import _jax  # the dump's writer has a reader next to it


def heaviest_line(fn, *args):
    """Do what the guide does: write the eqn_count_pprof dump and read it back."""
    folder = tempfile.mkdtemp()
    saved = {k: jax.config.values[k] for k in ("jax_dump_ir_to", "jax_dump_ir_modes")}
    jax.clear_caches()  # a cached program writes no dump
    jax.config.update("jax_dump_ir_to", folder)
    jax.config.update("jax_dump_ir_modes", "eqn_count_pprof")
    try:
        jax.jit(fn).lower(*args)
    finally:
        for k, v in saved.items():
            jax.config.update(k, v)
    counts = Counter()
    jax_dir = os.path.dirname(jax.__file__)
    for name in os.listdir(folder):
        if not name.endswith(".eqn_count_pprof"):
            continue
        with open(os.path.join(folder, name), "rb") as fh:
            prof = json.loads(_jax.pprof_profile_to_json(gzip.decompress(fh.read())))
        strings = prof["stringTable"]
        funcs = {f["id"]: f for f in prof["function"]}
        locs = {l["id"]: l for l in prof["location"]}
        for sample in prof["sample"]:
            # the innermost location that is not inside JAX is the line that made the equation
            for loc_id in sample["locationId"]:
                line = locs[loc_id]["line"][0]
                filename = strings[int(funcs[line["functionId"]]["filename"])]
                if not filename.startswith(jax_dir):
                    counts[int(line["line"])] += int(sample["value"][0])
                    break
    return counts.most_common(1)[0][0]
