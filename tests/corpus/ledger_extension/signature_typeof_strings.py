"""An unusual correct Part C: the structure written out by hand (positional and keyword parts apart,
each container by its kind, dict keys sorted) with `str(jax.typeof(leaf))` at each leaf, whose
`~` marks a weak type."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = set()
SCORE = 8

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
    if isinstance(value, tuple):
        return ("tuple",) + tuple(_describe(v) for v in value)
    if isinstance(value, list):
        return ("list",) + tuple(_describe(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple((key, _describe(value[key])) for key in sorted(value))
    return str(jax.typeof(value))


def signature_of(args, kwargs):
    positional = _describe(tuple(args))
    keywords = tuple((name, _describe(kwargs[name])) for name in sorted(kwargs) if name != "power")
    return ("positional", positional, "keywords", keywords, "power", kwargs.get("power"))
