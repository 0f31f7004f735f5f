"""Observes `traced` honestly, but keeps its own tally for trace_count (one more per traced
row), so traces made outside `observed_call` never reach the count."""
import jax
import jax.numpy as jnp

FAILS = {"trace_count_consistent"}
SCORE = 7
MESSAGE = r"`trace_count` is not the number of traces `trace_log` has seen after the call"

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []

_tally = 0


def observed_call(label, x, scale):
    global _tally
    before = trace_log["count"]
    result = float(compiled_square_sum(x, scale))
    traced = trace_log["count"] > before
    _tally += traced
    call_rows.append({"label": label, "shape": tuple(x.shape), "dtype": str(x.dtype), "static": {},
                      "traced": traced, "trace_count": _tally, "result": result})
    return result


observed_call("new length sixteen", jnp.arange(16, dtype=jnp.float32), 1.0)


# Part C, answered correctly (this file is about another part).
import jax as _jax_for_signature


def signature_of(args, kwargs):
    static = tuple(sorted((name, value) for name, value in kwargs.items() if name == "power"))
    data = {name: value for name, value in kwargs.items() if name != "power"}
    leaves, structure = _jax_for_signature.tree.flatten((tuple(args), data))
    types = [_jax_for_signature.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((t.shape, str(t.dtype), t.weak_type) for t in types), static)
