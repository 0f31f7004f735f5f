"""An unusual correct answer: `traced` from JAX's own monitoring events for
`scaled_square_sum` (observing, like the counter), `trace_count` from trace_log, and the row
built with `dict(zip(...))`."""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 8

trace_log = {"count": 0}


def scaled_square_sum(x, scale):
    trace_log["count"] += 1  # runs only while JAX traces (the notebook's read-only cell)
    return jnp.sum(scale * x ** 2)


compiled_square_sum = jax.jit(scaled_square_sum)
call_rows = []

_KEYS = ("label", "shape", "dtype", "static", "traced", "trace_count", "result")


def observed_call(label, x, scale):
    events = []

    def listen(event, duration, **details):
        if event == "/jax/core/compile/jaxpr_trace_duration" and details.get("fun_name") == "scaled_square_sum":
            events.append(event)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        result = compiled_square_sum(x, scale).item()
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    values = (label, tuple(x.shape), x.dtype.name, {}, bool(events), trace_log["count"], float(result))
    call_rows.append(dict(zip(_KEYS, values)))
    return float(result)


observed_call("new length sixteen", jnp.arange(16, dtype=jnp.float32), 1.0)


# Part C, answered correctly (this file is about another part).
import jax as _jax_for_signature


def signature_of(args, kwargs):
    static = tuple(sorted((name, value) for name, value in kwargs.items() if name == "power"))
    data = {name: value for name, value in kwargs.items() if name != "power"}
    leaves, structure = _jax_for_signature.tree.flatten((tuple(args), data))
    types = [_jax_for_signature.typeof(leaf) for leaf in leaves]
    return (str(structure), tuple((t.shape, str(t.dtype), t.weak_type) for t in types), static)
