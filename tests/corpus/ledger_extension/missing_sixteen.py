"""Completes observed_call but never adds the sixteen-element call."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"sixteen_element_row"}
SCORE = 5
MESSAGE = r"no row with shape \(16,\)"

call_rows = []
trace_count = 0


def _scaled_square_sum(x, scale):
    global trace_count
    trace_count += 1
    return jnp.sum(scale * x**2)


_compiled = jax.jit(_scaled_square_sum)


def observed_call(label, x, scale):
    before = trace_count
    result = _compiled(x, scale)
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": trace_count > before, "trace_count": trace_count, "result": float(result)})
    return result
