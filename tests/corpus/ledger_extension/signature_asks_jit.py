"""Part C asks JAX instead of predicting: it traces the notebook's function with `.trace(...)` and
reads the input types of the jaxpr. The signature it builds is right, but the part asks for a
prediction made from the arguments alone, and the graders see the traces."""
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


power_log = {"count": 0}


def powered_sum(x, scale, *, power):
    power_log["count"] += 1
    return sum(jnp.sum(scale * leaf ** power) for leaf in jax.tree.leaves(x))


def signature_of(args, kwargs):
    traced = jax.jit(powered_sum, static_argnames=("power",)).trace(*args, **kwargs)
    data = {name: value for name, value in kwargs.items() if name != "power"}
    structure = jax.tree.structure((tuple(args), data))
    return (str(structure), tuple(str(aval) for aval in traced.jaxpr.in_avals), kwargs["power"])
