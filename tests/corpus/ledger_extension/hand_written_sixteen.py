"""Appends the sixteen-element row by hand, copying numbers from the lesson instead of calling observed_call."""
import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"sixteen_element_row"}
SCORE = 7
MESSAGE = r"does not continue the ledger: its `trace_count` is lower than the row before it"

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
                      "traced": trace_log["count"] > before, "trace_count": trace_log["count"], "result": float(result)})
    return float(result)


observed_call("first", jax.device_put(np.arange(8, dtype=np.float32)), 1.0)
observed_call("values changed", jax.device_put(np.arange(8, dtype=np.float32) + 1), 1.0)
observed_call("new length", jax.device_put(np.arange(5, dtype=np.float32)), 1.0)
call_rows.append({"label": "new length sixteen", "shape": (16,), "dtype": "float32", "static": {},
                  "traced": True, "trace_count": 1, "result": 1240.0})


# Part C, answered correctly (this file is about another part).
import jax as _jax_for_signature


def signature_of(args, kwargs):
    static = tuple(sorted((name, value) for name, value in kwargs.items() if name == "power"))
    data = {name: value for name, value in kwargs.items() if name != "power"}
    leaves, structure = _jax_for_signature.tree.flatten((tuple(args), data))
    types = [_jax_for_signature.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((t.shape, str(t.dtype), t.weak_type) for t in types), static)
