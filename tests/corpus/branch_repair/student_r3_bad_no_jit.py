"""Student: Marco Rossi.
Part B's body is a correct lax.cond on module-level branch functions, but the student deleted
`jax.jit`, reasoning that "lax.cond already compiles both branches", and set
repaired = repaired_branch. Values are right and, because the branch functions are reused,
changing the gain traces nothing, so the visible checks pass. But repaired is not one compiled
program: it runs op by op (a `greater`, then a `cond` dispatched on its own), which misreads
what jit does and is not what the cell asks for.
"""
# Teacher's split per graded cell:
#   test_failure (1 point):
#     0.5  broken_branch is right eagerly: jnp.sum(values ** 2) when gain > 1.0, jnp.sum(values)
#          otherwise (1.0 takes the plain sum), for any batch, gain as float or 0-d array
#     0.5  the Python `if` on gain is kept, so jax.jit(broken_branch) raises
#          jax.errors.TracerBoolConversionError (not another error, not no error)
#   test_repair (3 points):
#     1.0  same meaning as broken_branch for any batch and any gain, given as a Python float
#          or as a 0-d array
#     1.0  threshold exactly 1.0 and strict: 1.0 -> plain sum, 1.0000001 -> sum of squares,
#          no tolerance
#     1.0  chooses instead of blending: no nan / wrong value when a side overflows, and it
#          runs op by op under jax.disable_jit() for both kinds of gain
#   test_traces (2 points):
#     1.0  changing only the gain's value (on either side of 1.0) traces nothing
#     1.0  repaired is one jitted program per signature (gain not static, not re-wrapped);
#          a Python float gain and a 0-d float32 gain each trace exactly once
TEACHER = {'test_failure': 1, 'test_repair': 3, 'test_traces': 1}
WHY = {'test_traces': 'repaired is no longer jitted, so there is no single compiled program for the gain to reuse; it runs op by op.'}


# Graded as reviewed (the teacher's verdict above, unless REVIEW says why not):
FAILS = {'gain_stays_dynamic'}
SCORE = 4
REVIEW = 'test_traces: the teacher kept 1 of 2 for the parts still right; the properties do not split that finely: the submission breaks `gain_stays_dynamic` (2), each is lost whole (0 left).'

# %% cell 1 [imports]
import jax
import jax.numpy as jnp
import numpy as np


# %% cell 3 [trace_watch]
class TraceWatch:
    """Collect the functions JAX traces while a ``with`` block runs.

    JAX emits a monitoring event each time it turns a Python function into a
    jaxpr, named after that function. Eager operations emit one as well, because
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


# %% cell 6 [worked_shape]
def head_or_total(values):
    if values.shape[0] > 4:  # a shape: concrete while tracing
        return jnp.sum(values[:4])
    return jnp.sum(values)


compiled_head_or_total = jax.jit(head_or_total)
print(compiled_head_or_total(jnp.arange(3.0)), compiled_head_or_total(jnp.arange(6.0)))


# %% cell 8 [worked_where]
def cap_at(values, limit):
    return jnp.where(values > limit, limit, values)


jitted_cap_at = jax.jit(cap_at)
readings = jnp.array([-2.0, 0.5, 3.0, 7.5])
for limit in (1.0, 5.0):
    print(limit, jitted_cap_at(readings, limit), jnp.minimum(readings, limit))


# %% cell 10 [worked_cond]
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


# %% cell 12 [broken_branch]
def broken_branch(values, gain):
    """Sum of squares when ``gain > 1.0``, plain sum otherwise, chosen with a Python if.

    Correct eagerly; under jit the if meets a tracer and fails.
    """
    if gain > 1.0:
        return jnp.sum(values ** 2)
    return jnp.sum(values)


# %% cell 14 [eager_demo]
x8 = jnp.arange(8, dtype=jnp.float32)
print(broken_branch(x8, 0.5), broken_branch(x8, 2.0))


# %% cell 16 [show_failure]
try:
    jax.jit(broken_branch)(x8, jnp.float32(2.0))
except jax.errors.TracerBoolConversionError as err:
    print("As expected, jit refused the Python if:", type(err).__name__,
          "- under jit gain is a tracer with no value, so `gain > 1.0` has no True/False.")
else:
    raise AssertionError("jax.jit(broken_branch) ran without TracerBoolConversionError")


# %% cell 17 [check_failure]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
values = jnp.arange(8, dtype=jnp.float32)
for gain, expected in ((0.5, 28.0), (1.0, 28.0), (2.0, 140.0)):
    got = float(broken_branch(values, gain))
    assert np.isclose(got, expected), f"broken_branch(x8, {gain}) gave {got}, expected {expected}"
try:
    jax.jit(broken_branch)(values, 2.0)
except jax.errors.TracerBoolConversionError:
    pass
else:
    raise AssertionError("broken_branch should fail under jit with TracerBoolConversionError")


# %% cell 20 [repaired_branch]
def _sum_of_squares(v):
    return jnp.sum(v ** 2)


def _plain_sum(v):
    return jnp.sum(v)


def repaired_branch(values, gain):
    """Sum of squares when ``gain > 1.0``, plain sum otherwise; ``gain`` stays a runtime value."""
    return jax.lax.cond(gain > 1.0, _sum_of_squares, _plain_sum, values)


# lax.cond is already compiled, so jit is not needed here
repaired = repaired_branch


# %% cell 22 [repair_demo]
for gain in (0.5, 1.0, 2.0):
    print(gain, float(repaired(x8, gain)), float(repaired(x8, jnp.float32(gain))))


# %% cell 23 [check_repair]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
for values in (jnp.arange(8, dtype=jnp.float32), jnp.array([-1.5, 0.5, 2.0], dtype=jnp.float32)):
    as_float64 = np.asarray(values, dtype=np.float64)
    squares, plain = float(np.sum(as_float64 ** 2)), float(np.sum(as_float64))
    for gain in (-3.0, 0.0, 0.5, 1.0, 1.001, 2.0, 50.0):
        expected = squares if gain > 1.0 else plain
        for given in (gain, jnp.float32(gain)):
            got = float(repaired(values, given))
            assert np.isclose(got, expected, rtol=1e-6), (
                f"repaired(values, {given!r}) gave {got}, expected {expected} for values {as_float64.tolist()}"
            )


# %% cell 25 [check_traces]
# Self-check: a few quick examples. The graded cell below runs hidden checks on many more.
values = jnp.linspace(0.0, 1.0, 5, dtype=jnp.float32)
float_gains = (0.25, 1.0, 1.5, 4.0)
array_gains = [jnp.float32(g) for g in float_gains]
array_warmup = jnp.float32(0.75)
repaired(values, 0.75)          # the program for Python-float gains at this shape
repaired(values, array_warmup)  # the program for float32 array gains at this shape
with TraceWatch() as watch:
    for gain in float_gains:
        repaired(values, gain)
    for gain in array_gains:
        repaired(values, gain)
assert watch.count == 0, f"changing only the gain traced {watch.count} time(s); gain should stay a runtime value"
