"""repair_clinic: five slow or broken functions, each repaired by the student's own choice of cure.

The notebook gives every function's contract (what it computes, for which inputs, and how it must
behave across calls) and never the cure. So each group has a value property (the repair still
computes what the slow code computed) and a behaviour property judged by JAX's own evidence:
traces at repeated signatures, the program's size against the step count, traces of anything on
datasets of new lengths, and values read back to Python inside the training loop.
"""

from __future__ import annotations

import jax
import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.kit import (
    CallRaised, CompileLog, HostReads, PropertyFailure, SignatureAudit, TraceLog, VALUES, clear_cache_of, close,
    drawn, first_failure,
    prop, render, scalar, signature_of, spoken,
)
from autograder.kit.jaxprs import count_recursive, fully_unrolled, primitive_counts, staged_loops

#: The batch size of the notebook's data loader.
BATCH = 8
_FLOATS = st.floats(-4.0, 4.0, allow_nan=False, width=32)
_SCALES = st.floats(-5.0, 5.0, allow_nan=False, width=32)
_RATES = st.floats(0.0, 0.5, width=32)


def _array(shape, floats=_FLOATS):
    return hnp.arrays(np.float32, shape, elements=floats)


def _values_of(got, text: str, shape: tuple) -> np.ndarray:
    """The array a call returned, as float64, or a failure naming what came back instead."""
    try:
        array = np.asarray(got)
    except Exception:
        raise PropertyFailure(f"`{text}` returned {render.kind(got)}, not an array.") from None
    if array.shape != tuple(shape) or not np.issubdtype(array.dtype, np.number):
        raise PropertyFailure(f"`{text}` returned {render.kind(got)}; it should be an array of shape {shape}.",
                              example=text)
    return array.astype(np.float64)


def _all_close(got: np.ndarray, expected: np.ndarray, magnitude: np.ndarray, products: bool = False) -> int | None:
    """The first index where ``got`` is not close to ``expected``, or None."""
    for index in np.ndindex(expected.shape):
        if not close(float(got[index]), float(expected[index]), float(magnitude[index]), products):
            return index
    return None


def _mismatch(name: str, text: str, got: np.ndarray, expected: np.ndarray, index, what: str) -> PropertyFailure:
    where = f" (first difference at index {index})" if index != () else ""
    return PropertyFailure(
        f"`{name}` does not compute what the slow version computes: {what}{where}.",
        example=text, got=render.value(got.astype(np.float32)), expected=render.value(expected.astype(np.float32)),
    )


# --- Part A: make_scaler, called through the notebook's scale_rows(x, scale) = make_scaler(scale)(x) -----


def _scale_forms(scale: float):
    return (float(scale), jax.device_put(np.float32(scale)))


@prop(
    group="scale",
    points=1,
    title="a scaler computes tanh(x * scale) for any array and scale, float or 0-d array",
    hint="The slow scaler's value is `jnp.tanh(x * scale)`, elementwise, whatever the shape of `x`, for the "
    "scale it was made for.",
)
def test_scaler_values(submission):
    """Input classes the notebook promises (the calls of `scale_rows`):

    - a 0-d array: ``np.asarray(x).ndim == 0``
    - a 1-D array: ``np.asarray(x).ndim == 1``
    - a 2-D array: ``np.asarray(x).ndim == 2``
    - a negative scale: ``float(scale) < 0``
    - a zero scale: ``float(scale) == 0``
    """
    submission.function("make_scaler")

    @VALUES
    @given(x=st.sampled_from([(5,), (2, 3), (1,), ()]).flatmap(_array), scale=_SCALES)
    @example(x=np.array([-1.0, 0.0, 0.5, 2.0], np.float32), scale=1.5)
    @example(x=np.array(0.75, np.float32), scale=-1.5)  # any shape: a 0-d x has no rows to map over
    @example(x=np.array([[-1.0, 3.0], [0.25, -2.0]], np.float32), scale=-2.0)
    @example(x=np.array([1.0, -1.0], np.float32), scale=0.0)
    def check(x, scale):
        expected = np.tanh(x.astype(np.float64) * np.float64(np.float32(scale)))
        for form in _scale_forms(scale):
            array = jax.device_put(x)
            text = render.call("scale_rows", (array, form))
            got = _values_of(submission.call("scale_rows", array, form), text, x.shape)
            index = _all_close(got, expected, np.ones_like(expected))
            if index is not None:
                raise _mismatch("make_scaler(scale)", text, got, expected, index, "tanh(x * scale), element by element")

    check()


@prop(
    group="scale",
    points=1,
    title="scalers are compiled, and new values and new scales at a signature met before start no trace",
    hint="JAX keeps a compiled program for a function object and the signature of its arguments. What is new "
    "to that cache each time the script asks for a scaler, and what would have to stay the same for it to hit?",
)
def test_scalers_reuse_one_program(submission):
    submission.function("make_scaler")
    audit = SignatureAudit(
        submission, "scale_rows",
        "A new scale changed something JAX keys its cache on: the scale reached the program as a constant "
        "baked into a new function, where it should reach it as an argument of one function.",
    ).cold_start()
    fresh = jax.device_put(np.linspace(-1.0, 1.0, 11, dtype=np.float32))  # a shape no other check uses
    audit.require_a_trace(f"x {signature_of(fresh)}, scale a Python float", fresh, 0.5)

    def check(case):
        x, first, second = case
        array = jax.device_put(x)
        for scale in (first, second):
            for form in _scale_forms(scale):
                audit.call(f"x {signature_of(array)}, scale {signature_of(form)}", array, form)

    first_failure(st.tuples(st.sampled_from([(11,), (2, 3)]).flatmap(_array), _SCALES, _SCALES), check)
    audit.finish()


# --- Part B: sgd_step ------------------------------------------------------------------------------------


def _sgd_expected(theta, x, y, lr, clip):
    t, a, b = (np.array(v, dtype=np.float64) for v in (theta, x, y))
    gradient = (2.0 / len(b)) * (a.T @ (a @ t - b))
    if clip:
        gradient = gradient / np.maximum(1.0, np.linalg.norm(gradient))
    scale = 2.0 * np.abs(a.T) @ (np.abs(a) @ np.abs(t) + np.abs(b)) / a.shape[0]
    return t - np.float64(np.float32(lr)) * gradient, np.abs(t) + abs(lr) * (scale + 1.0)


def _regression(rows: int):
    return st.tuples(_array((3,)), _array((rows, 3)), _array((rows,)))


@prop(
    group="step",
    points=1,
    title="`sgd_step` takes the slow version's step, clipped or not, for any rate, float or 0-d array",
    hint="The slow version: the gradient of the mean loss; with `clip=True`, divided by `max(1, its norm)`; then "
    "`theta - lr * gradient`.",
)
def test_sgd_step_values(submission):
    """Input classes the notebook promises (the calls of `sgd_step`):

    - a learning rate as a Python float: ``isinstance(lr, float)``
    - a learning rate as a 0-d array: ``isinstance(lr, jax.Array)``
    - a learning rate of zero: ``float(lr) == 0``
    - clipping on: ``clip is True``
    - clipping off: ``clip is False``
    - a gradient whose norm is above 1: ``float(np.linalg.norm(2 * np.asarray(x).T @ (np.asarray(x) @ np.asarray(theta) - np.asarray(y)) / len(y))) > 1``
    - a gradient whose norm is below 1: ``float(np.linalg.norm(2 * np.asarray(x).T @ (np.asarray(x) @ np.asarray(theta) - np.asarray(y)) / len(y))) < 1``
    """
    submission.function("sgd_step")

    @VALUES
    @given(data=st.sampled_from([4, 8]).flatmap(_regression), lr=_RATES, clip=st.booleans())
    @example(data=(np.array([0.5, -1.0, 2.0], np.float32), np.eye(4, 3, dtype=np.float32),
                   np.array([1.0, 0.0, -1.0, 2.0], np.float32)), lr=0.1, clip=True)
    @example(data=(np.array([0.5, -1.0, 2.0], np.float32), np.eye(4, 3, dtype=np.float32),
                   np.array([1.0, 0.0, -1.0, 2.0], np.float32)), lr=0.1, clip=False)
    # a gradient of norm below 1: clipping leaves it as it is
    @example(data=(np.array([0.1, 0.0, 0.0], np.float32), np.eye(4, 3, dtype=np.float32) * 0.5,
                   np.zeros(4, np.float32)), lr=0.25, clip=True)
    @example(data=(np.zeros(3, np.float32), np.ones((8, 3), np.float32), np.ones(8, np.float32)), lr=0.0, clip=True)
    def check(data, lr, clip):
        theta, x, y = data
        expected, magnitude = _sgd_expected(theta, x, y, lr, clip)
        args = [jax.device_put(v) for v in (theta, x, y)]
        for form in _scale_forms(lr):
            text = render.call("sgd_step", (*args, form, clip))
            got = _values_of(submission.call("sgd_step", *args, form, clip), text, (3,))
            index = _all_close(got, expected, magnitude, products=True)
            if index is not None:
                what = ("theta - lr * the gradient, scaled down to a norm of at most 1" if clip
                        else "theta - lr * the gradient of the mean loss, not clipped")
                raise _mismatch("sgd_step", text, got, expected, index, what)

    check()


@prop(
    group="step",
    points=1,
    title="`sgd_step` is compiled, and a learning-rate schedule (a new rate every call) starts no trace",
    hint="A schedule hands `sgd_step` a new rate at every step, and `clip` stays the same for a run. Which of "
    "its arguments does JAX need to know while it traces, which only when the program runs, and where does "
    "the rate belong?",
)
def test_sgd_step_schedule_reuses_its_program(submission):
    submission.function("sgd_step")
    audit = SignatureAudit(
        submission, "sgd_step",
        "A new learning rate made a new program: the rate reached the cache by its value (a static argument, or "
        "a constant baked into a new function), where its shape and dtype are all that should count.",
    ).cold_start()
    theta, x, y = (jax.device_put(v) for v in (np.ones(3, np.float32), np.ones((5, 3), np.float32),
                                               np.zeros(5, np.float32)))
    audit.require_a_trace("x float32[5,3], lr a Python float, clip=True", theta, x, y, 0.25, True)

    def check(case):
        (t, a, b), rates, clip = case
        args = [jax.device_put(v) for v in (t, a, b)]
        for rate in rates:
            for form in _scale_forms(rate):
                audit.call(f"x {signature_of(args[1])}, lr {signature_of(form)}, clip={clip}", *args, form, clip)

    first_failure(st.tuples(_regression(5), st.lists(_RATES, min_size=2, max_size=4), st.booleans()), check)
    audit.finish()


# --- Part C: smooth --------------------------------------------------------------------------------------

#: Step counts whose programs are compared: none, one, a few, more, many.
STEP_COUNTS = (0, 1, 2, 9, 40)


def _smoothed(x: np.ndarray, steps: int) -> np.ndarray:
    v = x.astype(np.float64)
    for _ in range(steps):
        v = 0.5 * (v + np.roll(v, 1))
    return v


@prop(
    group="smooth",
    points=1,
    title="`smooth` gives the slow version's result for any step count, zero included",
    hint="Each step replaces every element by the mean of itself and its left neighbour, wrapping around "
    "(`0.5 * (v + jnp.roll(v, 1))`); zero steps give `x` back.",
)
def test_smooth_values(submission):
    """Input classes the notebook promises (the calls of `smooth`):

    - zero steps: ``n_steps == 0``
    - one step: ``n_steps == 1``
    - many steps: ``n_steps >= 20``
    - a one-element x: ``np.asarray(x).shape == (1,)``
    """
    submission.function("smooth")

    @VALUES
    @given(x=st.sampled_from([6, 1, 10]).flatmap(lambda n: _array((n,))), steps=st.integers(0, 30))
    @example(x=np.array([4.0, 0.0, 0.0, 0.0], np.float32), steps=1)
    @example(x=np.array([4.0, 0.0, 0.0, 0.0], np.float32), steps=0)
    @example(x=np.array([1.0, -2.0, 3.0, 0.5, 8.0, -1.0], np.float32), steps=25)
    @example(x=np.array([2.5], np.float32), steps=3)
    def check(x, steps):
        expected = _smoothed(x, steps)
        array = jax.device_put(x)
        text = render.call("smooth", (array, steps))
        got = _values_of(submission.call("smooth", array, steps), text, x.shape)
        # products: a closed form (a matrix power, an FFT) is a repair too, and a TPU runs its matrix products
        # in bfloat16 passes; the tolerance follows the backend (on a CPU it is the same either way)
        index = _all_close(got, expected, np.full(expected.shape, float(np.max(np.abs(x), initial=0.0))), products=True)
        if index is not None:
            raise _mismatch("smooth", text, got, expected, index, f"{steps} smoothing step(s)")

    check()


@prop(
    group="smooth",
    points=1,
    title="`smooth`'s program does not grow with the step count",
    hint="Print `jax.make_jaxpr` of your function at two step counts: what in the program repeats once per "
    "step, and how could one copy of the step serve every count?",
)
def test_smooth_program_is_flat(submission):
    submission.function("smooth")
    x = jax.device_put(np.array([1.0, -2.0, 3.0, 0.5, 8.0], np.float32))
    counts = {}
    for steps in STEP_COUNTS:
        try:
            closed = submission.call_staged("make_jaxpr", "smooth", x, steps, static_argnums=(1,))
        except CallRaised as failure:
            raise PropertyFailure(
                f"`smooth` could not be traced with a step count of {steps}: {failure.problem}",
                example=f"jax.make_jaxpr of {render.call('smooth', (x, steps))}",
            ) from None
        callbacks = sorted(name for name in primitive_counts(closed) if "callback" in name)
        if callbacks:
            raise PropertyFailure(
                f"`smooth`'s program calls back into Python ({', '.join(callbacks)}): the steps run outside the "
                "compiled program.",
                example=f"jax.make_jaxpr of {render.call('smooth', (x, steps))}",
            )
        counts[steps] = count_recursive(closed)
        if any(fully_unrolled(eqn) for eqn in staged_loops(closed)):
            raise PropertyFailure(
                f"`smooth`'s loop asks XLA to unroll every one of its {steps} steps (`unroll`): the jaxpr holds one "
                "loop, but the compiled program still holds a copy of the step per step.",
                example=f"jax.make_jaxpr of {render.call('smooth', (x, steps))}",
            )
    if len(set(counts.values())) > 1:
        grows = counts[STEP_COUNTS[-1]] > counts[STEP_COUNTS[2]]
        problem = ("`smooth`'s program grows with the step count: something in it is repeated per step, so every new "
                   "count costs a longer trace and a longer compile." if grows else
                   "`smooth`'s program is not the same at every step count: the contract asks for one program size "
                   "whatever `n_steps` is, a step count of 0 or 1 included.")
        raise PropertyFailure(
            problem,
            example="jax.make_jaxpr of " + ", of ".join(render.call("smooth", (x, s)) for s in STEP_COUNTS),
            got=", ".join(f"{counts[s]} equations at {s} steps" for s in STEP_COUNTS),
            expected="the same number of equations at every step count",
        )


# --- Part D: dataset_loss --------------------------------------------------------------------------------

#: Dataset lengths of the first pass (every remainder of 8 but 1, 2, 4 and 6, and several batch counts) ...
FIRST_LENGTHS = (16, 3, 21, 13, 8, 40, 31, 5)
#: ... and of the second, which must start no trace of anything: the other remainders, new batch counts.
SECOND_LENGTHS = (9, 18, 50, 2, 100, 12, 4, 6, 1, 333)


def _dataset(rng: np.random.Generator, rows: int):
    return rng.standard_normal((rows, 3), dtype=np.float32), rng.standard_normal(rows, dtype=np.float32)


def _mean_loss(theta: np.ndarray, x: np.ndarray, y: np.ndarray):
    residual = x.astype(np.float64) @ theta.astype(np.float64) - y
    scale = (np.abs(x) @ np.abs(theta.astype(np.float64)) + np.abs(y)) ** 2
    return float(np.mean(residual ** 2)), float(np.mean(scale))


def _check_dataset_loss(submission, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    expected, magnitude = _mean_loss(theta, x, y)
    text = render.call("dataset_loss", (jax.device_put(theta), x, y))
    got = scalar(submission.call("dataset_loss", jax.device_put(theta), x, y), text)
    if not close(got, expected, magnitude, products=True):
        rows = x.shape[0]
        last = rows % BATCH or BATCH
        raise PropertyFailure(
            f"`dataset_loss` does not give the mean squared error over the {rows} rows (a last batch of {last} "
            f"row{'s' if last != 1 else ''}).",
            example=text, got=repr(got), expected=repr(expected),
        )


@prop(
    group="dataset",
    points=1,
    title="`dataset_loss` is the mean squared error over every row, whatever the dataset's length",
    hint="Every real row counts once, and nothing else does: the mean is over the dataset's rows, not over "
    "batches or over rows the code added.",
)
def test_dataset_loss_values(submission):
    """Input classes the notebook promises (the calls of `dataset_loss`):

    - a length that is a multiple of the batch size: ``np.asarray(x).shape[0] % 8 == 0``
    - a length that is not: ``np.asarray(x).shape[0] % 8 != 0``
    - fewer rows than a batch: ``np.asarray(x).shape[0] < 8``
    - one row: ``np.asarray(x).shape[0] == 1``
    """
    submission.function("dataset_loss")

    @VALUES
    @given(rows=st.sampled_from([1, 5, 8, 13, 21]), seed=st.integers(0, 2**16), big=st.booleans())
    @example(rows=13, seed=0, big=False)
    @example(rows=16, seed=1, big=False)
    @example(rows=1, seed=2, big=True)
    @example(rows=3, seed=3, big=True)
    def check(rows, seed, big):
        rng = np.random.default_rng(seed)
        x, y = _dataset(rng, rows)
        if big:  # a real row with a large error: dropping or halving it shows
            y[-1] = 50.0
        theta = rng.normal(size=3).astype(np.float32)
        _check_dataset_loss(submission, theta, x, y)

    check()


@prop(
    group="dataset",
    points=1,
    title="`dataset_loss` on datasets of new lengths makes JAX trace nothing new",
    hint="Run it under the notebook's `TraceWatch` on two datasets whose last batches differ in length. What "
    "did JAX meet for the first time, and what could make every batch look the same to it?",
)
def test_dataset_loss_traces_nothing_new(submission):
    submission.function("dataset_loss")
    rng = np.random.default_rng(8)
    theta = jax.device_put(np.array([0.5, -1.0, 2.0], np.float32))
    clear_cache_of(submission.function("dataset_loss"))
    with TraceLog() as first:
        for rows in FIRST_LENGTHS:
            x, y = _dataset(rng, rows)
            submission.call("dataset_loss", theta, x, y)
    if not first.count:
        raise PropertyFailure(
            "`dataset_loss` ran datasets of " + ", ".join(map(str, FIRST_LENGTHS)) + " rows from a cold cache, and "
            "JAX traced none of your code: the per-batch work is not compiled, so there is no program to reuse.",
            example=render.call("dataset_loss", (theta, "x", "y")),
            got="0 traces of your code", expected="the batch work compiled once",
        )
    for rows in SECOND_LENGTHS:
        x, y = _dataset(rng, rows)
        with TraceLog() as log, CompileLog() as compiled:
            submission.call("dataset_loss", theta, x, y)
        # compiles too: a jit called inside an eager transformation (`jax.checkpoint`, `vmap`) traces
        # within that transformation's trace, which fires no trace event, and still compiles
        if log.count or log.jax_own or compiled.count or compiled.jax_own:
            what = []
            if log.count:
                what.append(f"{log.count} trace(s) of your code ({', '.join(sorted(set(log.names)))})")
            if log.jax_own:
                what.append(f"{log.jax_own} trace(s) of JAX's own eager operations")
            if not log.count and not log.jax_own:
                what.append(f"{compiled.count + compiled.jax_own} compile(s) of a program traced inside another "
                            "transformation")
            raise PropertyFailure(
                f"After datasets of {', '.join(map(str, FIRST_LENGTHS))} rows, a dataset of {rows} rows (a last "
                f"batch of {rows % BATCH or BATCH}) made JAX trace again: something it ran had a shape it had not "
                "met, so every new length of dataset, or of its last batch, costs a new trace and compile.",
                example=render.call("dataset_loss", (theta, x, y)),
                got=" and ".join(what), expected="no new trace once a few lengths have run",
            )


# --- Part E: train ---------------------------------------------------------------------------------------


def _train_expected(theta, batches, lr):
    t = np.array(theta, dtype=np.float64)
    losses = []
    magnitude = 1.0 + np.sum(np.abs(t))
    for x, y in batches:
        a, b = np.array(x, dtype=np.float64), np.array(y, dtype=np.float64)
        residual = a @ t - b
        losses.append(np.mean(residual ** 2))
        magnitude = max(magnitude, float(np.mean((np.abs(a) @ np.abs(t) + np.abs(b)) ** 2)))
        t = t - np.float64(np.float32(lr)) * 2.0 * a.T @ residual / a.shape[0]
    return t, np.array(losses), magnitude


def _batches(rng: np.random.Generator, count: int):
    return [(rng.normal(size=(BATCH, 3)).astype(np.float32), rng.normal(size=BATCH).astype(np.float32))
            for _ in range(count)]


def _device_batches(batches):
    return [(jax.device_put(x), jax.device_put(y)) for x, y in batches]


@prop(
    group="train",
    points=1,
    title="`train` returns the final theta and the loss before each step, as arrays",
    hint="The slow version's values: at each batch, the mean squared error at the current theta, then one step "
    "`theta - lr * gradient`; it returns the last theta and the losses in batch order.",
)
def test_train_values(submission):
    """Input classes the notebook promises (the calls of `train`):

    - one batch: ``len(batches) == 1``
    - several batches: ``len(batches) > 1``
    - a learning rate of zero: ``lr == 0``
    """
    submission.function("train")

    @VALUES
    @given(count=st.integers(1, 6), seed=st.integers(0, 2**16), lr=_RATES)
    @example(count=3, seed=0, lr=0.1)
    @example(count=1, seed=1, lr=0.05)
    @example(count=4, seed=2, lr=0.0)
    def check(count, seed, lr):
        rng = np.random.default_rng(seed)
        theta = rng.normal(size=3).astype(np.float32)
        batches = _device_batches(_batches(rng, count))
        expected_theta, expected_losses, magnitude = _train_expected(theta, batches, lr)
        text = f"train({render.value(theta)}, {count} batch(es) of float32[8,3] and float32[8], {lr!r})"
        got = submission.call("train", jax.device_put(theta), batches, lr)
        if not isinstance(got, tuple) or len(got) != 2:
            raise PropertyFailure(f"`train` returned {render.kind(got)}, not a pair (theta, losses).", example=text)
        if isinstance(got[1], (list, tuple)):
            raise PropertyFailure(
                f"`train` returned its losses as {render.kind(got[1])}: the part asks for one 1-D array, in batch order.",
                example=text, expected=f"an array of shape ({count},)",
            )
        got_theta = _values_of(got[0], text, (3,))
        got_losses = _values_of(got[1], text, (count,))
        for name, value, expected in (("the losses", got_losses, expected_losses),
                                      ("the final theta", got_theta, expected_theta)):
            index = _all_close(value, expected, np.full(expected.shape, magnitude), products=True)
            if index is not None:
                raise _mismatch("train", text, value, expected, index, name)

    check()


def _part_of(result, index: int):
    """Element ``index`` of a returned pair, as a float64 array, or None."""
    if not isinstance(result, tuple) or len(result) != 2:
        return None
    try:
        return np.asarray(result[index], dtype=np.float64)
    except Exception:
        return None


_READ_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                jax.errors.TracerIntegerConversionError)


@prop(
    group="train",
    points=1,
    title="`train` brings nothing back from the device and waits for nothing: the caller chooses when to read",
    hint="Count the places where the loop asks the device for a Python number or waits for it. What does each "
    "one cost the steps queued behind it, and who needs the numbers, and when?",
)
def test_train_reads_nothing(submission):
    submission.function("train")
    # Drawn once per notebook (the same at every regrade): no submission can single out these inputs.
    order = drawn.rng(submission.notebook_memo)
    count, lr = order.randint(3, 6), float(np.float32(order.uniform(0.02, 0.3)))
    rng = np.random.default_rng(order.getrandbits(64))
    theta = rng.standard_normal(3, dtype=np.float32)
    batches = _device_batches(_batches(rng, count))
    text = f"train({render.value(theta)}, {count} batches of float32[8,3] and float32[8], {lr!r})"
    with HostReads() as reads:
        got = submission.call("train", jax.device_put(theta), batches, lr)
    if reads.bypasses:
        methods = sorted(set(reads.bypasses))
        raise PropertyFailure(
            f"`train` read values back from the device, or waited for it, {len(reads.bypasses)} time(s) in one "
            f"call of {count} batches ({', '.join(spoken(m) for m in methods)}): each one stops the loop until the "
            "device has caught up.",
            example=text, got=f"{len(reads.bypasses)} read(s) or wait(s)", expected="none inside `train`",
        )
    # The run that read nothing must be the run the notebook makes: the same numbers as the same call made
    # again, unwatched (a run that skips its work while it is watched shows nothing of the real one).
    again = submission.call("train", jax.device_put(theta), batches, lr)
    for name, index in (("theta", 0), ("losses", 1)):
        watched, unwatched = (_part_of(result, index) for result in (got, again))
        if watched is None and unwatched is None:
            continue  # not a pair of arrays either time: the values property says what came back
        if watched is None or unwatched is None or watched.shape != unwatched.shape or not np.allclose(
                watched, unwatched, rtol=1e-5, atol=1e-6, equal_nan=True):
            raise PropertyFailure(
                f"`train` returned another {name} while the grader watched its reads than when it did not: what "
                "it does unwatched is what the notebook runs, so the watched run shows nothing about it.",
                example=text, got=render.kind(watched), expected=render.kind(unwatched),
            )
    # NumPy reads a CPU array through a slot nothing above sees: run once more with theta and the batches
    # traced, where no value computed from them, nor a batch itself, can be made concrete.
    try:
        submission.call_staged("make_jaxpr", "train", jax.device_put(theta), batches, lr, static_argnums=(2,))
    except CallRaised as failure:
        if issubclass(failure.error_type, _READ_ERRORS):
            raise PropertyFailure(
                "`train` turns an array into a concrete Python or NumPy value: run with theta and the batches "
                "traced, it raised " + failure.error_name + ". Each such read waits for the device to finish "
                "computing that array.",
                example=f"jax.make_jaxpr of {text}",
            ) from None
