"""Appends the sixteen-element row by hand, copying numbers from the lesson instead of calling observed_call."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"sixteen_element_row"}
SCORE = 5
MESSAGE = r"looks written by hand"

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


observed_call("first", jax.device_put(np.arange(8, dtype=np.float32)), 1.0)
observed_call("values changed", jax.device_put(np.arange(8, dtype=np.float32) + 1), 1.0)
observed_call("new length", jax.device_put(np.arange(5, dtype=np.float32)), 1.0)
call_rows.append({"label": "new length sixteen", "shape": (16,), "dtype": "float32", "static": {},
                  "traced": True, "trace_count": 1, "result": 1240.0})
