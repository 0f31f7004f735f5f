"""The repair keeps gain dynamic with jnp.where, but the squares branch is written as
jnp.sum(values) ** 2 (square of the sum) instead of jnp.sum(values ** 2), so gains above 1.0
give 784 instead of 140 for x8. broken_branch and the failure cell are right.
"""


TEACHER = {'test_failure': 1, 'test_repair': 1, 'test_traces': 2}


WHY = {
    'test_repair': 'the gain > 1.0 branch returns the square of the sum, not the sum of squares, so every gain above 1.0 is wrong.',
}

# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {"repaired_matches_branch"}
SCORE = 4


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
    total = jnp.sum(values)
    return jnp.where(gain > 1.0, total ** 2, total)


repaired = jax.jit(repaired_branch)


# %% cell 22 (provided)
for gain in (0.5, 1.0, 2.0):
    print(gain, float(repaired(x8, gain)), float(repaired(x8, jnp.float32(gain))))
