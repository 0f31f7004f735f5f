"""Part C records each leaf by its dtype, its number of elements and its weak type, as if a program
were sized by how much data it gets. An array of shape (4,) and one of shape (2, 2) then get equal
signatures, yet JAX traces again: a program is specialised to the shape, not to the size."""
import math

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'signature_matches_jax'}
SCORE = 6

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []


def observed_call(label, x, scale):
    before = trace_log["count"]
    result = compiled_square_sum(x, scale)
    call_rows.append(
        {
            "label": label,
            "shape": tuple(x.shape),
            "dtype": str(x.dtype),
            "static": {},
            "traced": trace_log["count"] > before,
            "trace_count": trace_log["count"],
            "result": float(result),
        }
    )
    return float(result)


observed_call("new length sixteen", jax.device_put(np.arange(16, dtype=np.float32)), 1.0)


def signature_of(args, kwargs):
    data = {name: value for name, value in kwargs.items() if name != "power"}
    leaves, structure = jax.tree.flatten((tuple(args), data))
    types = [jax.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((math.prod(t.shape), str(t.dtype), t.weak_type) for t in types), kwargs["power"])
