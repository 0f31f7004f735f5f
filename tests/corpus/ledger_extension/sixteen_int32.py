"""The sixteen-element call with `jnp.arange(16)`, which is int32: a new dtype, a different
experiment. The feedback must say the row is int32, not only that a row is missing."""
import jax
import jax.numpy as jnp

FAILS = {"sixteen_element_row"}
SCORE = 7
MESSAGE = r"row of shape \(16,\) has dtype 'int32', not 'float32'"

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []


def observed_call(label, x, scale):
    before = trace_log["count"]
    result = float(compiled_square_sum(x, scale))
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": trace_log["count"] > before, "trace_count": trace_log["count"], "result": result})
    return result


observed_call("new length sixteen", jnp.arange(16), 1.0)


# Part C, answered correctly (this file is about another part).
import jax as _jax_for_signature


def signature_of(args, kwargs):
    static = tuple(sorted((name, value) for name, value in kwargs.items() if name == "power"))
    data = {name: value for name, value in kwargs.items() if name != "power"}
    leaves, structure = _jax_for_signature.tree.flatten((tuple(args), data))
    types = [_jax_for_signature.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((t.shape, str(t.dtype), t.weak_type) for t in types), static)
