"""Part C describes `x` by its containers and its leaves, but a dict by its values alone, taken in
sorted key order so that the order the keys were written in does not matter. The keys themselves
are left out: `{"a": x}` then `{"b": x}` get equal signatures, yet JAX traces again, since a
dict's keys are part of the pytree structure."""
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


def _describe(value):
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_describe(item) for item in value))
    if isinstance(value, dict):
        return ("dict", tuple(_describe(value[key]) for key in sorted(value)))
    kind = jax.typeof(value)
    return (kind.shape, str(kind.dtype), kind.weak_type)


def signature_of(args, kwargs):
    data = tuple(sorted((name, _describe(value)) for name, value in kwargs.items() if name != "power"))
    return (tuple(_describe(arg) for arg in args), data, kwargs["power"])
