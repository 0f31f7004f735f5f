"""Public checks of branch_repair: the branch's two totals, its failure under jit, and a dynamic gain."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from autograder.public.runner import Mismatch, TraceCount, close, op_by_op, public, show

ASSIGNMENT = "branch_repair"


def _totals(values):
    wide = np.asarray(values, dtype=np.float64)
    return float(np.sum(wide ** 2)), float(np.sum(wide))


def _branch_cases(rng, gains):
    fixed = [np.arange(8, dtype=np.float32), np.array([-1.5, 0.5, 2.0], dtype=np.float32)]
    for values in fixed:
        for gain in gains:
            yield values, gain
    for size in (8, 3, 8):  # the fixed examples' shapes: new values, no new program
        yield rng.uniform(-4, 4, size).astype(np.float32), float(rng.choice([-1.0, 0.5, 1.5, 3.0]))


@public("failure", "`broken_branch` gives the sum of squares when gain > 1.0 and the plain sum otherwise, eagerly",
        "Which total does the problem ask for on each side of the threshold, and on which side does 1.0 "
        "itself fall? (The problem)")
def eager_totals(names, rng):
    for values, gain in _branch_cases(rng, (0.5, 1.0, 2.0)):
        def run(values=values, gain=gain):
            got = names.function("broken_branch")(jnp.asarray(values), gain)
            squares, plain = _totals(values)
            expected = squares if gain > 1.0 else plain
            if not close(got, expected):
                raise Mismatch("`broken_branch` does not give the total its gain asks for.", show(got), repr(expected))

        yield f"broken_branch({show(values)}, {gain!r})", run


@public("failure", "`jax.jit(broken_branch)` fails with TracerBoolConversionError",
        "What does `gain` hold while `jax.jit` traces the function, and what does a Python `if` need from it? "
        "(The idea)")
def fails_under_jit(names, rng):
    def run():
        values = jnp.arange(8, dtype=jnp.float32)
        try:
            got = jax.jit(names.function("broken_branch"))(values, 2.0)
        except jax.errors.TracerBoolConversionError:
            return
        raise Mismatch("`jax.jit(broken_branch)` ran without an error.", show(got), "TracerBoolConversionError")

    yield "jax.jit(broken_branch)(float32[8] [0.0, ..., 7.0], 2.0)", run


def _total_matches(names, values, gain, given):
    """`repaired(values, given)` is the total the gain asks for: the squares' above 1.0, the plain one else."""
    got = names.function("repaired")(jnp.asarray(values), given)
    squares, plain = _totals(values)
    expected = squares if gain > 1.0 else plain
    if not close(got, expected):
        raise Mismatch("`repaired` does not give the total its gain asks for.", show(got), repr(expected))


@public("repair", "`repaired` gives the branch's total for gains on both sides of 1.0, as floats and 0-d arrays",
        "Which total came back, and which was expected for that gain? Is the choice made each time the "
        "function runs, or was it settled once, while JAX traced it? (Worked example: three kinds of "
        "decision)")
def repaired_totals(names, rng):
    for values, gain in _branch_cases(rng, (-3.0, 0.0, 0.5, 1.0, 1.001, 2.0, 50.0)):
        for given, how in ((gain, repr(gain)), (jnp.float32(gain), f"float32[] {gain!r}")):
            run = functools.partial(_total_matches, names, values, gain, given)
            yield f"repaired({show(values)}, {how})", run


_ABOVE_ONE = float(np.nextafter(np.float32(1.0), np.float32(2.0)))  # 1.0000001, the next float32


@public("repair", "`repaired` keeps the notebook's details: int32 and 2-D batches, a nan gain, the strict threshold "
        "at the next float32 above 1.0, and a choice, not a blend, when run op by op",
        "Look at the example's gain and values: what does your function compute right at the threshold, just "
        "above it, for a nan gain, or when the total it did not choose overflows? (The idea)")
def details(names, rng):
    ints = np.array([1, -2, 3, 4], dtype=np.int32)
    grid = np.array([[1.0, -2.0], [0.5, 3.0]], dtype=np.float32)
    cases = [(ints, 2.0, "an int32 batch"), (ints, 0.5, "an int32 batch"), (grid, 2.0, "a 2-D batch"),
             (grid, 1.0, "a 2-D batch, a gain of exactly 1.0"), (grid, float("nan"), "a nan gain (nan > 1.0 is false)"),
             (grid, _ABOVE_ONE, "the next float32 above 1.0 (1.0000001)")]
    for values, gain, what in cases:
        for given, how in ((gain, repr(gain)), (jnp.float32(gain), f"float32[] {gain!r}")):
            run = functools.partial(_total_matches, names, values, gain, given)
            yield f"repaired({show(values)}, {how}): {what}", run

    huge = np.array([3e20, -1e20, 1.0], dtype=np.float32)  # its squares overflow float32 to inf
    for gain in (0.5, 1.0):
        def blend(gain=gain):
            got = op_by_op(names.function("repaired"), jnp.asarray(huge), gain)
            if got is None:  # compiled ahead of time: it cannot run op by op
                return
            expected = float(np.sum(huge.astype(np.float64)))
            if not close(got, expected):
                raise Mismatch("Run op by op, `repaired` does not give the plain sum when the sum of squares "
                               "overflows: the side not taken reached the result.", show(got), repr(expected))

        yield f"repaired({show(huge)}, {gain!r}) under jax.disable_jit(): the squares overflow to inf", blend


@public("traces", "new gains, as floats or as 0-d arrays, reuse `repaired`'s program",
        "How many programs did the new gains make? When only the gain's value changes, what does JAX see as "
        "new? (Worked example: three kinds of decision)")
def gain_dynamic(names, rng):
    def run():
        repaired = names.function("repaired")
        values = jnp.linspace(0.0, 1.0, 5, dtype=jnp.float32)
        gains = (0.25, 1.0, 1.5, 4.0)
        arrays = [jnp.float32(g) for g in gains]
        repaired(values, 0.75)
        repaired(values, jnp.float32(0.75))
        with TraceCount() as watch:
            for gain in gains:
                repaired(values, gain)
            for gain in arrays:
                repaired(values, gain)
        if watch.count:
            raise Mismatch("Changing only the gain traced again.", f"{watch.count} new trace(s)", "none")

    yield "repaired(float32[5], gain) for gains 0.25, 1.0, 1.5, 4.0 after one call at 0.75", run
