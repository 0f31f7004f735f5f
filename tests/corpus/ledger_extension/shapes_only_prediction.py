"""Predicts traces from shapes it has seen, ignoring dtype: an int32 call at a known shape is missed.

Its trace_count counts the shapes it has seen, a prediction as well.
"""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"trace_count_consistent", "ledger_matches_jax_events"}
SCORE = 6
MESSAGE = r"disagrees with JAX: JAX traced 1 time"

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []
_seen_shapes = set()


def observed_call(label, x, scale):
    shape = tuple(x.shape)
    traced = shape not in _seen_shapes
    _seen_shapes.add(shape)
    result = compiled_square_sum(x, scale)
    call_rows.append({"label": label, "shape": shape, "dtype": str(x.dtype), "static": {},
                      "traced": traced, "trace_count": len(_seen_shapes), "result": float(result)})
    return float(result)


observed_call("new length sixteen", jax.device_put(np.arange(16, dtype=np.float32)), 1.0)


# Part C, answered correctly (this file is about another part).
import jax as _jax_for_signature


def signature_of(args, kwargs):
    static = tuple(sorted((name, value) for name, value in kwargs.items() if name == "power"))
    data = {name: value for name, value in kwargs.items() if name != "power"}
    leaves, structure = _jax_for_signature.tree.flatten((tuple(args), data))
    types = [_jax_for_signature.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((t.shape, str(t.dtype), t.weak_type) for t in types), static)
