"""Makes scale static: every new scale is a new program, so value-only changes trace again."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"traced_only_on_new_signatures"}
SCORE = 5
MESSAGE = r"only values or scale changed"

call_rows = []
trace_count = 0


def _scaled_square_sum(x, scale):
    global trace_count
    trace_count += 1
    return jnp.sum(scale * x**2)


_compiled = jax.jit(_scaled_square_sum, static_argnames=("scale",))


def observed_call(label, x, scale):
    before = trace_count
    result = _compiled(x, scale=scale)
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {"scale": scale},
                      "traced": trace_count > before, "trace_count": trace_count, "result": float(result)})
    return result


observed_call("new length sixteen", jax.device_put(np.arange(16, dtype=np.float32)), 1.0)
