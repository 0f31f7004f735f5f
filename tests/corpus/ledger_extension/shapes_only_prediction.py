"""Predicts traces from shapes it has seen, ignoring dtype: an int32 call at a known shape is missed."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"ledger_matches_jax_events"}
SCORE = 5
MESSAGE = r"disagrees with JAX: JAX traced 1 time"

call_rows = []
_seen_shapes = set()


@jax.jit
def _scaled_square_sum(x, scale):
    return jnp.sum(scale * x**2)


def observed_call(label, x, scale):
    shape = tuple(x.shape)
    traced = shape not in _seen_shapes
    _seen_shapes.add(shape)
    result = _scaled_square_sum(x, scale)
    call_rows.append({"label": label, "shape": shape, "dtype": str(x.dtype), "static": {},
                      "traced": traced, "trace_count": len(_seen_shapes), "result": float(result)})
    return result


observed_call("new length sixteen", jax.device_put(np.arange(16, dtype=np.float32)), 1.0)
