"""Predicts `traced` from the (shape, dtype) pairs it has seen, a fair guess that the lesson
warns against; its trace_count is read honestly from trace_log. A weakly typed scale after a
float32 one, a program traced outside `observed_call`, and cleared caches all defeat the guess."""
import jax
import jax.numpy as jnp

FAILS = {"ledger_matches_jax_events"}
SCORE = 7
MESSAGE = r"disagrees with JAX: JAX traced 1 time\(s\) during this call"

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []

_seen = set()


def observed_call(label, x, scale):
    signature = (tuple(x.shape), str(x.dtype))
    traced = signature not in _seen
    _seen.add(signature)
    result = float(compiled_square_sum(x, scale))
    call_rows.append({"label": label, "shape": signature[0], "dtype": signature[1], "static": {},
                      "traced": traced, "trace_count": trace_log["count"], "result": result})
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
