"""Part C reads each leaf's dtype with NumPy (`np.asarray(leaf).dtype`), which says float64 for a
Python float or `np.array(2.0)`. JAX converts those to float32 (64-bit types are off), so
`np.array(2.0)` after `np.float32(2.0)` reuses the program while this signature changes."""
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
    described = []
    for leaf in leaves:
        weak = getattr(leaf, "weak_type", isinstance(leaf, (int, float)))
        described.append((np.shape(leaf), str(np.asarray(leaf).dtype), weak))
    return (str(structure), tuple(described), kwargs["power"])
