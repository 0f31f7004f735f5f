"""Part C puts every data argument in one list in parameter order, so `scale` passed by keyword
looks like `scale` passed by position. JAX keys positional and keyword arguments apart: the
keyword call traces again."""
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


ORDER = ("x", "scale")


def signature_of(args, kwargs):
    data = list(args) + [kwargs[name] for name in ORDER[len(args):]]
    leaves, structure = jax.tree.flatten(data)
    types = [jax.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((t.shape, str(t.dtype), t.weak_type) for t in types), kwargs["power"])
