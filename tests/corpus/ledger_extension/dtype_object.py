"""Records the dtype as a NumPy dtype object instead of its name."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"rows_record_calls"}
SCORE = 4
MESSAGE = r"The row's .dtype. does not describe the call"

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
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": x.dtype, "static": {},
                      "traced": trace_count > before, "trace_count": trace_count, "result": float(result)})
    return result


observed_call("new length sixteen", jax.device_put(np.arange(16, dtype=np.float32)), 1.0)
