"""The fifth literal student (docs/literal-student.md, 2026-12-07, after seven parts were reworded to
state their contract and no cure): it saw only release/, passed every self-check on its first run and
earns every automatic point. Part B: `lax.cond` copied from the worked cell `halve_if_large`; "Choose, do not blend" ruled out a weight."""

FAILS = set()
SCORE = 6


# %% cell 1
import jax
import jax.numpy as jnp
import numpy as np

COURSE_JAX = "0.12.0.1"  # the JAX version this notebook's text and outputs were checked on
if jax.__version__ != COURSE_JAX:
    print(f"Note: this notebook was checked on JAX {COURSE_JAX}; you are running JAX {jax.__version__}. "
          "Printed jaxprs, the names and counts of JAX's trace and compile events, and JAX's error messages may differ from what the text describes.")

# %% cell 3
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it starts a top-level trace, named after the
    function traced (a jitted function traced inside another trace emits none). The
    event is not proof that the function's Python ran: after another jitted function's
    ``.clear_cache()``, a ``.trace()`` or a call with a committed array, at a signature
    already traced, emits it again while JAX reuses the jaxpr it kept. Eager operations emit one as well, because
    JAX runs each as a small jitted function of its own (``multiply``,
    ``_reduce_sum``, ``iota``...), but only the first time an operation meets a
    signature: a repeat at a signature already met emits nothing. So build inputs
    before the block, call only the function you are studying inside it, and look
    for its name in ``names``.
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

# %% cell 6
def head_or_total(values):
    if values.shape[0] > 4:  # a shape: concrete while tracing
        return jnp.sum(values[:4])
    return jnp.sum(values)


compiled_head_or_total = jax.jit(head_or_total)
print(compiled_head_or_total(jnp.arange(3.0)), compiled_head_or_total(jnp.arange(6.0)))

# %% cell 8
def cap_at(values, limit):
    return jnp.where(values > limit, limit, values)


jitted_cap_at = jax.jit(cap_at)
readings = jnp.array([-2.0, 0.5, 3.0, 7.5])
for limit in (1.0, 5.0):
    print(limit, jitted_cap_at(readings, limit), jnp.minimum(readings, limit))

# %% cell 10
def halve_if_large(values, limit):
    return jax.lax.cond(
        jnp.max(jnp.abs(values)) > limit,
        lambda v: v / 2.0,
        lambda v: v,
        values,
    )


print(jax.make_jaxpr(halve_if_large)(jnp.arange(3.0), 1.0))
print(jax.make_jaxpr(jax.vmap(halve_if_large, in_axes=(0, None)))(jnp.arange(6.0).reshape(2, 3), 1.0))
compiled_halve = jax.jit(halve_if_large)
print(compiled_halve(jnp.arange(3.0), 1.0), compiled_halve(jnp.arange(3.0), 5.0))

# %% cell 12
def broken_branch(values, gain):
    """Sum of squares when ``gain > 1.0``, plain sum otherwise, chosen with a Python if.

    Correct eagerly; under jit the if meets a tracer and fails.
    """
    if gain > 1.0:
        return jnp.sum(values ** 2)
    return jnp.sum(values)

# %% cell 14
x8 = jnp.arange(8, dtype=jnp.float32)
print(broken_branch(x8, 0.5), broken_branch(x8, 2.0))

# %% cell 16
try:
    jax.jit(broken_branch)(x8, jnp.float32(2.0))
except jax.errors.TracerBoolConversionError as error:
    print("jit rejected broken_branch: the Python if met a tracer for gain,", type(error).__name__)
else:
    raise AssertionError("jax.jit(broken_branch) did not raise TracerBoolConversionError")

# %% cell 20
def repaired_branch(values, gain):
    """Sum of squares when ``gain > 1.0``, plain sum otherwise; ``gain`` stays a runtime value."""
    return jax.lax.cond(
        gain > 1.0,
        lambda v: jnp.sum(v ** 2),
        lambda v: jnp.sum(v),
        values,
    )


repaired = jax.jit(repaired_branch)

# %% cell 22
for gain in (0.5, 1.0, 2.0):
    print(gain, float(repaired(x8, gain)), float(repaired(x8, jnp.float32(gain))))
