"""Avoids the tracer by closing over gain: repaired_branch converts it with float() and builds
jax.jit(lambda v: broken_branch(v, g)) on each call, and the student replaced the provided
`repaired = jax.jit(repaired_branch)` line with `repaired = repaired_branch`. The numbers come
out right, but the Python if is still deciding and every call traces a fresh function.
"""


TEACHER = {'test_failure': 1, 'test_repair': 2, 'test_traces': 0}


WHY = {
    'test_repair': 'results match, but the branch is still a Python if on a baked-in gain rather than lax.cond or jnp.where, and repaired is no longer jax.jit(repaired_branch).',
    'test_traces': 'a new jit around a fresh lambda is built on every call with gain as a constant, so every gain, even a repeated one, traces again.',
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"repaired_matches_branch", "gain_stays_dynamic"}
SCORE = 2
REVIEW = "The teacher gave 2 of 3 for repair; its branch is still Python's (`float(gain)` baked into a fresh jit), so `repaired` cannot be traced as a whole: the value property fails as for a static gain, and the per-call jit costs the trace points, as for `static_gain.py`."


# %% cell 1 [imports] (provided, read-only)
import jax
import jax.numpy as jnp
import numpy as np


# %% cell 3 [trace_watch] (provided, read-only)
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it turns a Python function into a
    jaxpr, named after that function. Eager operations emit one as well, named
    after their primitive (``add``, ``iota``), so build inputs before the block
    and call only the function you are studying inside it.
    """

    EVENT = "/jax/core/compile/jaxpr_trace_duration"

    def __init__(self):
        self.names = []
        self._listener = self._record

    def _record(self, event, duration_secs, **details):
        if event == self.EVENT:
            self.names.append(details.get("fun_name", "?"))

    def __enter__(self):
        jax.monitoring.register_event_duration_secs_listener(self._listener)
        return self

    def __exit__(self, *exc_info):
        jax.monitoring.unregister_event_duration_listener(self._listener)
        return False

    @property
    def count(self):
        """How many traces started inside the block."""
        return len(self.names)


# %% cell 6 (provided)
def head_or_total(values):
    if values.shape[0] > 4:  # a shape: concrete while tracing
        return jnp.sum(values[:4])
    return jnp.sum(values)


compiled_head_or_total = jax.jit(head_or_total)
print(compiled_head_or_total(jnp.arange(3.0)), compiled_head_or_total(jnp.arange(6.0)))


# %% cell 8 (provided)
def cap_at(values, limit):
    return jnp.where(values > limit, limit, values)


jitted_cap_at = jax.jit(cap_at)
readings = jnp.array([-2.0, 0.5, 3.0, 7.5])
for limit in (1.0, 5.0):
    print(limit, jitted_cap_at(readings, limit), jnp.minimum(readings, limit))


# %% cell 10 (provided)
def halve_if_large(values, limit):
    return jax.lax.cond(
        jnp.max(jnp.abs(values)) > limit,
        lambda v: v / 2.0,
        lambda v: v,
        values,
    )


print(jax.make_jaxpr(halve_if_large)(jnp.arange(3.0), 1.0))
compiled_halve = jax.jit(halve_if_large)
print(compiled_halve(jnp.arange(3.0), 1.0), compiled_halve(jnp.arange(3.0), 5.0))


# %% cell 12 [broken_branch] (student answer)
def broken_branch(values, gain):
    """Sum of squares when ``gain > 1.0``, plain sum otherwise, chosen with a Python if.

    Correct eagerly; under jit the if meets a tracer and fails.
    """
    if gain > 1.0:
        return jnp.sum(values ** 2)
    return jnp.sum(values)


# %% cell 14 (provided)
x8 = jnp.arange(8, dtype=jnp.float32)
print(broken_branch(x8, 0.5), broken_branch(x8, 2.0))


# %% cell 16 [show_failure] (student answer)
try:
    jax.jit(broken_branch)(x8, jnp.float32(2.0))
except jax.errors.TracerBoolConversionError as err:
    print("As expected: TracerBoolConversionError. Under jit, gain is a tracer, so Python cannot "
          "decide `gain > 1.0` while the program is being built.")
else:
    raise AssertionError("jax.jit(broken_branch) did not raise TracerBoolConversionError")


# %% cell 20 [repaired_branch] (student answer)
def repaired_branch(values, gain):
    """Sum of squares when ``gain > 1.0``, plain sum otherwise; ``gain`` stays a runtime value."""
    # close over gain as a plain float so the if inside broken_branch sees a concrete number
    g = float(gain)
    compiled = jax.jit(lambda v: broken_branch(v, g))
    return compiled(values)


repaired = repaired_branch  # already jitted inside; jax.jit(repaired_branch) hit the tracer error again


# %% cell 22 (provided)
for gain in (0.5, 1.0, 2.0):
    print(gain, float(repaired(x8, gain)), float(repaired(x8, jnp.float32(gain))))
