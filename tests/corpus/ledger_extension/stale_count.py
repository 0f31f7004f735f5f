"""Reads trace_count before the call, so each row carries the previous call's count."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"trace_count_consistent"}
SCORE = 7
MESSAGE = r"`trace_count` is not the number of traces `trace_log` has seen after the call"

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []


def observed_call(label, x, scale):
    before = trace_log["count"]
    result = compiled_square_sum(x, scale)
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": trace_log["count"] > before, "trace_count": before, "result": float(result)})
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
