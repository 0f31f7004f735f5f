"""host_sync: a jitted SGD step, two training loops that differ only in when they read
the loss to the host, and a phase ledger that tells tracing from compiling.

The objective is least squares on one batch of B rows: L(θ) = (1/B) Σ_i (x_i·θ − y_i)²,
and one step is θ ← θ − lr · ∇L(θ) with ∇L(θ) = (2/B) Xᵀ(Xθ − y).

The trainers are run with a jitted step of the grader's in place of the notebook's
`sgd_step`, so a wrong step costs only the step's points. That step is not the lesson's:
for each notebook graded it scales the learning rate and the loss by factors drawn afresh
(:func:`_substitute`), and the trainers are judged against that very step, so what a
notebook's code may see of it (its compiled program) is of no use in another run, nor as
`sgd_step` itself, which is judged against the lesson's step. Host reads are counted two
ways (see ``autograder.kit.host_reads``): the `read` the grader hands in counts itself,
and every other conversion of a device value is seen either by instrumenting
`jax.Array`'s conversion methods or by running the loop once with θ a tracer.
The phase ledger is judged against JAX's own trace and compile events on thunks the
grader builds, in scenarios where a prediction from the signature goes wrong.
"""

from __future__ import annotations

import itertools
import secrets
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax import export

from autograder.kit import (
    TRACES, VALUES, CallRaised, CompileLog, HostReads, PropertyFailure, SignatureAudit, TraceLog,
    conversion_under_trace, drawn, first_failure, other_values, prop, render, signature_of, spoken,
)
from autograder.kit import precision
from autograder.kit.handed import Compiled, Thunk
from autograder.kit.jaxprs import sub_jaxprs

#: Batch shapes (rows B, features d) the step is graded at: each is one compile.
STEP_SHAPES = ((4, 3), (2, 3))
#: The one batch shape the trainers run at (their own compile is the grader's step).
TRAIN_SHAPE = (4, 3)
#: Numbers of steps the trainers run: each is one small compile of the notebook's `jnp.stack`.
STEP_COUNTS = (1, 2, 3)

_X = st.floats(-1.0, 1.0, allow_nan=False, width=32)
_Y = st.floats(-2.0, 2.0, allow_nan=False, width=32)
#: Learning rates small enough that a few steps stay well conditioned in float32.
_LR = st.floats(0.0, 0.25, allow_nan=False, width=32)


def _reference(theta, x, y, lr):
    """One step in float64: (new θ, loss before the update)."""
    theta, x, y = (np.asarray(a, np.float64) for a in (theta, x, y))
    residual = x @ theta - y
    loss = float(np.mean(residual ** 2))
    return theta - float(lr) * (2.0 / x.shape[0]) * (x.T @ residual), loss


def _step_avals():
    rows, features = export.symbolic_shape("rows, features")
    return (jax.ShapeDtypeStruct((features,), jnp.float32), jax.ShapeDtypeStruct((rows, features), jnp.float32),
            jax.ShapeDtypeStruct((rows,), jnp.float32), jax.ShapeDtypeStruct((), jnp.float32, weak_type=True))


@dataclass(frozen=True)
class _Substitute:
    """The step the trainers of one notebook are graded with: the lesson's, with the learning rate
    times ``lr_factor`` and the loss times ``loss_scale`` (both exact in float32, never 1)."""

    lr_factor: float
    loss_scale: float

    @classmethod
    def draw(cls) -> "_Substitute":
        """Fresh factors: 2**32 pairs, so a step seen in one run is all but never the next run's."""
        return cls(0.5 + secrets.randbelow(2**16) / 2**18, 1.25 + secrets.randbelow(2**16) / 2**17)

    def step(self):
        lr_factor, loss_scale = self.lr_factor, self.loss_scale

        def sgd_step(theta, x, y, lr):
            residual = x @ theta - y
            return (theta - (lr * lr_factor) * (2.0 / x.shape[0]) * (x.T @ residual),
                    loss_scale * jnp.mean(residual * residual))

        return sgd_step

    def reference(self, theta, x, y, lr):
        """One step of it in float64: (new θ, loss before the update)."""
        theta, x, y = (np.asarray(a, np.float64) for a in (theta, x, y))
        residual = x @ theta - y
        return (theta - float(lr) * self.lr_factor * (2.0 / x.shape[0]) * (x.T @ residual),
                self.loss_scale * float(np.mean(residual ** 2)))


_SUBSTITUTE = "host_sync substitute step"


def _substitute(submission) -> tuple[_Substitute, Compiled]:
    """This notebook's substitute step, drawn once for its whole run, and its program, handed to the
    trainers compiled: where the notebook runs, there is no source of it to read."""
    memo = submission.notebook_memo
    if _SUBSTITUTE not in memo:
        drawn = _Substitute.draw()
        memo[_SUBSTITUTE] = (drawn, Compiled(drawn.step(), *_step_avals()))
    return memo[_SUBSTITUTE]


def _batch(shape):
    rows, features = shape
    return st.tuples(hnp.arrays(np.float32, (rows, features), elements=_X), hnp.arrays(np.float32, (rows,), elements=_Y))


def _step_case():
    return st.sampled_from(STEP_SHAPES).flatmap(
        lambda shape: st.tuples(hnp.arrays(np.float32, (shape[1],), elements=_X), _batch(shape), _LR)
    )


def _train_case():
    return st.sampled_from(STEP_COUNTS).flatmap(
        lambda n: st.tuples(hnp.arrays(np.float32, (TRAIN_SHAPE[1],), elements=_X),
                            st.lists(_batch(TRAIN_SHAPE), min_size=n, max_size=n), _LR)
    )


def _fixed_case(steps: int, seed: int = 0, lr: float = 0.1):
    rng = np.random.default_rng(seed)
    rows, features = TRAIN_SHAPE
    theta = rng.uniform(-1, 1, features).astype(np.float32)
    batches = [(rng.uniform(-1, 1, (rows, features)).astype(np.float32), rng.uniform(-2, 2, rows).astype(np.float32))
               for _ in range(steps)]
    return theta, batches, lr


def _close(got, expected, scale=1.0, products=False) -> bool:
    """Within float32's reach: ``products`` for a θ the notebook's own step computed, whose gradient may
    go through a matrix-matrix product (``jax.jacfwd`` makes one of the lesson's matrix-vector products),
    with a default-precision product's error on an accelerator (:mod:`autograder.kit.precision`; on a CPU
    the same tolerance either way). The loss and the trainers (the grader's step) take matrix-vector
    products only, as the lesson writes them."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    return got.shape == expected.shape and bool(
        np.all(np.isfinite(got)) and precision.allclose(got, expected, rtol=2e-5, atol=2e-5 * (1.0 + scale),
                                                        products=products)
    )


def _as_array(value, what: str, text: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=np.float64)
    except Exception:  # noqa: BLE001 - anything that is not numbers
        raise PropertyFailure(f"{what} is {render.kind(value)}, not an array of numbers.", example=text) from None


# ---------------------------------------------------------------- the step


def _call_step(submission, theta, x, y, lr):
    args = (jax.device_put(theta), jax.device_put(x), jax.device_put(y), float(lr))
    text = render.call("sgd_step", args)
    result = submission.call("sgd_step", *args)
    if not isinstance(result, tuple) or len(result) != 2:
        raise PropertyFailure("`sgd_step` should return a pair `(theta, loss)`.", example=text,
                              got=render.kind(result))
    return result, text


_PROBE_STEP = (np.array([0.5, -0.25, 1.0], np.float32),
               (np.arange(12, dtype=np.float32).reshape(4, 3) / 12, np.array([1.0, -1.0, 0.5, 2.0], np.float32)), 0.1)
#: The probe's shapes with every number changed: a value read from outside the arguments while
#: tracing is baked into the program, and only a second call at the same shapes shows it.
_OTHER_STEP = other_values(_PROBE_STEP[:2]) + (0.3,)


@prop(
    group="step",
    points=1,
    title="`sgd_step` moves θ by −lr times the gradient of the batch's mean squared error",
    hint="The gradient of (1/B) Σ (x·θ − y)² is (2/B) Xᵀ(Xθ − y): the mean over the batch, not the sum, and "
    "the step subtracts lr times it.",
)
def test_step_updates_theta(submission):
    @VALUES
    @given(case=_step_case())
    @example(case=_PROBE_STEP)
    @example(case=_PROBE_STEP[:2] + (0.75,))  # one step at a large lr: a clipped or fixed lr shows here
    @example(case=_OTHER_STEP)
    def check(case):
        theta, (x, y), lr = case
        (new_theta, _), text = _call_step(submission, theta, x, y, lr)
        expected, _ = _reference(theta, x, y, lr)
        got = _as_array(new_theta, "The θ `sgd_step` returned", text)
        if not _close(got, expected, float(np.abs(expected).max(initial=0.0)), products=True):
            raise PropertyFailure("The θ `sgd_step` returned is not θ − lr · ∇L(θ).", example=text,
                                  got=render.value(np.asarray(got, np.float32)),
                                  expected=render.value(expected.astype(np.float32)))

    check()


@prop(
    group="step",
    points=1,
    title="`sgd_step`'s loss is the batch's mean squared error at θ before the update, as a device scalar",
    hint="Compute the loss from the θ you were given, before the update, as `jnp.mean((x @ theta - y) ** 2)`, and "
    "return it as it is: a scalar `jax.Array`, not a Python float (reading it is the loop's decision).",
)
def test_step_loss_before_update(submission):
    @VALUES
    @given(case=_step_case())
    @example(case=_PROBE_STEP)
    @example(case=_OTHER_STEP)
    def check(case):
        theta, (x, y), lr = case
        (_, loss), text = _call_step(submission, theta, x, y, lr)
        if not isinstance(loss, jax.Array) or loss.shape != ():
            raise PropertyFailure("The loss `sgd_step` returned should be a scalar device array (shape ()), "
                                  "left on the device for the loop to read.", example=text, got=render.kind(loss))
        _, expected = _reference(theta, x, y, lr)
        if not _close(float(np.asarray(loss)), expected, expected):
            after, _ = _reference(theta, x, y, lr)
            _, loss_after = _reference(after, x, y, 0.0)
            after_note = " (it is the loss after the update)" if _close(float(np.asarray(loss)), loss_after,
                                                                           loss_after) else ""
            raise PropertyFailure(f"The loss is not the mean squared error at the θ passed in{after_note}.",
                                  example=text, got=repr(float(np.asarray(loss))), expected=repr(expected))

    check()


# ---------------------------------------------------------------- the trainers


TRAINERS = ("train_reading_every_step", "train_reading_once")


def _grader_step_in(submission):
    """The notebook's `sgd_step` replaced by the grader's substitute while the trainers run."""
    return submission.replaced(sgd_step=_substitute(submission)[1])


def _describe(name, theta, batches, lr) -> str:
    rows, features = np.shape(batches[0][0]) if batches else TRAIN_SHAPE
    return (f"`{name}(theta, batches, lr={lr!r}, read)` with theta {render.value(np.asarray(theta))} and "
            f"{len(batches)} batch(es) of x float32[{rows},{features}], y float32[{rows}]")


@dataclass
class _Run:
    name: str
    text: str
    steps: int
    result: object
    reads: HostReads  # what the kernel counted: read only by the properties that judge reads

    @property
    def read_calls(self) -> int:
        return self.reads.read_calls

    @property
    def bypasses(self) -> list:
        return list(self.reads.bypasses)


def _train(submission, name, theta, batches, lr) -> _Run:
    """One run of a trainer with the grader's step and a counting `read`."""
    device_theta = jax.device_put(theta)
    text = _describe(name, theta, batches, lr)
    with _grader_step_in(submission), HostReads() as reads:
        try:
            result = submission.call(name, device_theta, list(batches), float(lr), reads.read)
        except CallRaised as failure:
            failure.example = text
            raise
    return _Run(name, text, len(batches), result, reads)


def _unpack(run: _Run):
    result = run.result
    if not isinstance(result, tuple) or len(result) != 2:
        raise PropertyFailure(f"`{run.name}` should return a pair `(final_theta, losses)`.", example=run.text,
                              got=render.kind(result))
    theta, losses = result
    if not isinstance(losses, list) or len(losses) != run.steps:
        raise PropertyFailure(f"`losses` should be a list with one loss per step ({run.steps}).", example=run.text,
                              got=render.kind(losses))
    wrong = [v for v in losses if not isinstance(v, float)]
    if wrong:
        raise PropertyFailure("`losses` should hold Python floats (`.tolist()` of the NumPy array `read` returns, "
                              "or the float `read` returns for one loss).", example=run.text,
                              got=f"an element that is {render.kind(wrong[0])}")
    return _as_array(theta, "The final θ", run.text), losses


@prop(
    group="reads",
    points=1,
    title="both trainers give the same final θ and losses as a float64 reference, for any batches, lr and steps",
    hint="Both loops run the same steps, `theta, loss = sgd_step(theta, x, y, lr)`, and keep the loss of each step "
    "in order: only when the losses reach the host differs. The trainers are graded with a step of the grader's "
    "put in place of `sgd_step` (not quite the lesson's), so call `sgd_step` by that name inside the loop.",
)
def test_trainers_match_reference(submission):
    substitute = _substitute(submission)[0]

    def steps_of(reference, theta, batches, lr):
        theta, losses = np.asarray(theta, np.float64), []
        for x, y in batches:
            theta, loss = reference(theta, x, y, lr)
            losses.append(loss)
        return theta, losses

    @VALUES
    @given(case=_train_case())
    @example(case=_fixed_case(3))
    def check(case):
        theta, batches, lr = case
        expected_theta, expected_losses = steps_of(substitute.reference, theta, batches, lr)
        lesson_theta, lesson_losses = steps_of(_reference, theta, batches, lr)
        scale = float(max(np.abs(expected_theta).max(), max(expected_losses)))
        seen = {}
        for name in TRAINERS:
            run = _train(submission, name, theta, batches, lr)
            got_theta, got_losses = _unpack(run)
            own = ("; they are those of a step of its own: the trainers are graded with a step of the grader's put "
                   "in place of `sgd_step`, so call `sgd_step` by that name inside the loop"
                   if _close(got_losses, lesson_losses, scale) and _close(got_theta, lesson_theta, scale)
                   and lr > 0 else "")
            if not _close(got_losses, expected_losses, scale):
                raise PropertyFailure(f"`{name}`'s losses are not the losses of the steps, in order{own}.",
                                      example=run.text, got=render.value(got_losses),
                                      expected=render.value([float(np.float32(v)) for v in expected_losses]))
            if not _close(got_theta, expected_theta, scale):
                raise PropertyFailure(f"`{name}`'s final θ is not θ after {run.steps} step(s){own}.",
                                      example=run.text, got=render.value(got_theta.astype(np.float32)),
                                      expected=render.value(expected_theta.astype(np.float32)))
            seen[name] = (got_theta, got_losses)
        (theta_a, losses_a), (theta_b, losses_b) = seen.values()
        if not (_close(theta_a, theta_b) and _close(losses_a, losses_b)):
            raise PropertyFailure("The two trainers disagree with each other.", example=run.text,
                                  got=f"{render.value(losses_a)} and {render.value(losses_b)}")

    check()


def _runs(submission) -> dict:
    """Each trainer run once per step count (shared by the read properties)."""
    if "host_sync runs" not in submission.memo:
        runs, raised = {}, []
        for name in TRAINERS:
            for steps in STEP_COUNTS + (4,):
                try:
                    runs[name, steps] = _train(submission, name, *_fixed_case(steps, seed=steps))
                except CallRaised as failure:
                    raised.append(failure)
        submission.memo["host_sync runs"] = (runs, raised)
    return submission.memo["host_sync runs"]


def _runs_of(submission, name) -> list[_Run]:
    runs, raised = _runs(submission)
    mine = [run for (trainer, _), run in runs.items() if trainer == name]
    if not mine:
        first = next(f for f in raised if f"`{name}`" in f.problem)
        raise first
    return mine


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@prop(
    group="reads",
    points=1,
    title="`train_reading_every_step` calls `read` once per step, on that step's loss",
    hint="Convert each loss as soon as the step returns it: `losses.append(read(loss))`. `read` is the only "
    "device-to-host conversion the loop may use.",
)
def test_every_step_reads_each_step(submission):
    for run in _runs_of(submission, "train_reading_every_step"):
        if run.read_calls != run.steps:
            raise PropertyFailure(
                f"`train_reading_every_step` called `read` {_plural(run.read_calls, 'time')} in {run.steps} "
                "step(s); the per-step loop reads each step's loss, once, through `read`.",
                example=run.text, got=f"{_plural(run.read_calls, 'read')}", expected=_plural(run.steps, "read"))


@prop(
    group="reads",
    points=1,
    title="`train_reading_once` calls `read` exactly once, whatever the number of steps",
    hint="Keep the device losses in a list during the loop and read them all at the end in one call: "
    "`read(jnp.stack(losses))` returns a NumPy array.",
)
def test_reads_once_in_total(submission):
    for run in _runs_of(submission, "train_reading_once"):
        if run.read_calls != 1:
            raise PropertyFailure(
                f"`train_reading_once` called `read` {_plural(run.read_calls, 'time')} in {run.steps} step(s): "
                + ("the count grows with the steps, so every step still waits."
                   if run.read_calls > 1 else "the losses never went through `read`."),
                example=run.text, got=_plural(run.read_calls, "read"), expected="1 read, for any number of steps")


@prop(
    group="reads",
    points=1,
    title="neither trainer converts a device value to the host except through `read`",
    hint="`float(loss)`, `loss.item()`, `np.asarray(loss)`, `print(loss)`, an f-string of a loss, "
    "`jax.device_get` or `.tolist()` each make Python wait for the device, just like `read`, but unseen. Pass the "
    "value to `read` instead, and return the final θ as the device array the step gave you.",
)
def test_no_read_bypasses_read(submission):
    for name in TRAINERS:
        for run in _runs_of(submission, name):
            if run.bypasses:
                methods = sorted(set(run.bypasses), key=run.bypasses.index)
                raise PropertyFailure(
                    f"`{name}` brought a device value to the host (or waited for one) "
                    f"{_plural(len(run.bypasses), 'time')} without `read`, by {', '.join(spoken(m) for m in methods)}.",
                    example=run.text, got=f"{_plural(len(run.bypasses), 'hidden read')}", expected="none")
        theta, batches, lr = _fixed_case(2, seed=11)
        with _grader_step_in(submission):
            found = conversion_under_trace(submission, name, jax.device_put(theta), batches, lr)
        if found is not None:
            raise PropertyFailure(
                f"`{name}` converted a value computed from θ to the host without `read` (for instance "
                "`np.asarray(loss)`, `np.float32(loss)`, or a NumPy array of θ). Run with θ traced, JAX said: "
                f"{type(found).__name__ if found.error_type is Exception else found.error_type.__name__}.",
                example=_describe(name, theta, batches, lr), got="a host read outside `read`", expected="none")


# ---------------------------------------------------------------- traces


@prop(
    group="traces",
    points=1,
    title="`sgd_step` is one jitted program that traces once per signature: new data values or a new lr trace "
    "nothing",
    hint="The learning rate is data, like x and y: keep it a dynamic argument (no `static_argnums`) and build the "
    "jitted step once, at top level, around the whole step (gradient, loss and update). Then only a new shape or "
    "dtype is a new program.",
)
def test_step_reuses_program(submission):
    audit = SignatureAudit(submission, "sgd_step", "Keep `lr` dynamic and build the jitted step once, at top level.")
    audit.cold_start()
    rng = np.random.default_rng(5)

    def args(lr, rows=5):
        return (jax.device_put(rng.uniform(-1, 1, 3).astype(np.float32)),
                jax.device_put(rng.uniform(-1, 1, (rows, 3)).astype(np.float32)),
                jax.device_put(rng.uniform(-2, 2, rows).astype(np.float32)), lr)

    first = args(0.1)
    signature = ", ".join(signature_of(a) for a in first[:3]) + ", lr a Python float"
    audit.require_a_trace(signature, *first)
    for lr in (0.1, 0.05, 0.2, 0.0125):
        audit.call(signature, *args(lr))
    audit.finish()
    _one_program(submission, first)


#: Top-level equations that only convert an input on its way into the jitted step (`jnp.float32(lr)`).
_INPUT_CONVERSIONS = frozenset({"convert_element_type"})


def _one_program(submission, args) -> None:
    """Evidence that the whole step is one compiled program: staged with `jax.make_jaxpr` (the arrays
    traced, lr the Python float the calls pass), a call of `sgd_step` is one equation holding the
    jitted step, beside at most conversions of its inputs. A step with only the gradient jitted leaves the update (and
    perhaps the loss) as top-level operations, which every call dispatches one by one, and whose
    first call compiles programs of their own."""
    closed = submission.call_staged("make_jaxpr", "sgd_step", *args, static_argnums=(3,))  # lr as called: a float
    equations = closed.jaxpr.eqns
    programs = [eqn for eqn in equations if sub_jaxprs(eqn)]
    outside = [eqn.primitive.name for eqn in equations
               if not sub_jaxprs(eqn) and eqn.primitive.name not in _INPUT_CONVERSIONS]
    text = "jax.make_jaxpr of " + render.call("sgd_step", args)
    if outside:
        names = ", ".join(dict.fromkeys(outside))
        raise PropertyFailure(
            f"`sgd_step` is not one compiled program: a call runs {_plural(len(outside), 'operation')} ({names}) "
            f"outside {'its jitted part' if programs else 'any jit'}, so every call dispatches them one by one, "
            "eagerly, and their first call at a shape compiles small programs of their own. Jit the whole step, "
            "gradient, loss and update, as one function.",
            example=text, got=f"{_plural(len(programs), 'jitted program')} and {len(outside)} eager operation(s)",
            expected="one jitted program, nothing outside it",
        )
    if len(programs) > 1:
        raise PropertyFailure(
            f"`sgd_step` is not one compiled program: a call dispatches {len(programs)} jitted programs one "
            "after the other (the gradient in one, the update in another, say). Jit the whole step, gradient, "
            "loss and update, as one function.",
            example=text, got=f"{len(programs)} jitted programs per call", expected="one",
        )


@prop(
    group="traces",
    points=1,
    title="running a trainer again with new data and a new lr traces nothing new",
    hint="Call the one jitted step built at top level inside the loop. A lambda, `functools.partial` or inner "
    "`def` made inside the trainer and handed to `jax.jit` is a new function on every run, and retraces.",
)
def test_trainers_reuse_program(submission):
    for name in TRAINERS:
        theta, batches, lr = _fixed_case(2, seed=21)
        _train(submission, name, theta, batches, lr)  # may trace: the first run at this signature
        theta, batches, _ = _fixed_case(2, seed=22)
        with TraceLog() as log:
            run = _train(submission, name, theta, batches, 0.05)
        if log.count:
            raise PropertyFailure(
                f"`{name}` traced {_plural(log.count, 'time')} when run again with only new values and a new lr "
                f"(JAX traced: {', '.join(sorted(set(log.names)))}).",
                example=f"the same call twice, the second {run.text}", got=_plural(log.count, "new trace"),
                expected="no new trace")
    for index, name in enumerate(TRAINERS):
        _calls_step_as_the_notebook_does(submission, name, extra_rows=2 * index)


#: The trainers' signature for the keyword evidence: shapes no other check and no lesson cell uses
#: (each trainer's own, two rows further on: a keyword call met for one is no new key for the next).
_KEYWORD_SHAPE = (6, 5)


#: How many of `sgd_step`'s arguments a keyword call passes by name: `lr` alone, or all four.
_KEYWORD_FORMS = (1, 4)


def _traces(submission, form: int, theta, x, y, lr) -> int:
    """The traces of one call of `sgd_step` with its last ``form`` arguments passed by keyword."""
    values = {"theta": theta, "x": x, "y": y, "lr": lr}
    names = list(values)
    args = tuple(values[n] for n in names[:len(names) - form])
    kwargs = {n: values[n] for n in names[len(names) - form:]}
    with TraceLog() as log:
        submission.call("sgd_step", *args, **kwargs)
    return log.count


def _calls_step_as_the_notebook_does(submission, name: str, extra_rows: int) -> None:
    """With the notebook's own `sgd_step`: after positional calls at a signature (as the notebook's
    cells make them), a trainer run at that signature must trace nothing. Passing `lr` by keyword
    there is a new cache key, so `sgd_step` traces again at a signature already met. Judged only
    when the evidence is clean: `sgd_step` reuses its program for positional repeats, a keyword call
    is a key of its own for it (checked at another signature first), and the trainer's trace is
    the keyword call's (made again afterwards, it traces nothing)."""
    rng = np.random.default_rng(31)
    rows, features = _KEYWORD_SHAPE
    rows += extra_rows

    def batch(rows):
        return (rng.uniform(-1, 1, (rows, features)).astype(np.float32), rng.uniform(-2, 2, rows).astype(np.float32))

    theta = jax.device_put(rng.uniform(-1, 1, features).astype(np.float32))
    batches = [batch(rows) for _ in range(2)]
    lr = 0.05
    x, y = batches[0]
    other_x, other_y = batch(rows + 1)
    try:
        with TraceLog() as repeat:
            submission.call("sgd_step", theta, other_x, other_y, lr)  # as the notebook calls it: by position
            traced = repeat.count
            submission.call("sgd_step", theta, other_x, other_y, 0.1)
        if repeat.count > traced:
            return  # the step retraces on its own: `test_step_reuses_program` judges that
        forms = [form for form in _KEYWORD_FORMS if _traces(submission, form, theta, other_x, other_y, lr)]
        if not forms:
            return  # for this step a keyword call is the positional one (a plain wrapper): no such retrace
        submission.call("sgd_step", theta, x, y, lr)
        with TraceLog() as log, HostReads() as reads:
            submission.call(name, theta, list(batches), lr, reads.read)
        if not log.count or all(_traces(submission, form, theta, x, y, lr) for form in forms):
            return  # no new trace, or not the trace of a keyword call: not this mistake
    except CallRaised:
        return  # a step or trainer that raises is judged by the value properties
    raise PropertyFailure(
        f"`{name}` made `sgd_step` trace again ({_plural(log.count, 'new trace')}) at a signature the notebook had "
        "already called it at, by position: the trainer passes arguments by keyword (such as `lr=lr`), and jit keys a "
        "keyword argument apart from a positional one, as the lesson on static arguments shows. Call `sgd_step` in the "
        "trainers exactly as the rest of the notebook does, `sgd_step(theta, x, y, lr)`.",
        example=f"`sgd_step(theta, x, y, {lr})` by position at θ float32[{features}], x float32[{rows},{features}], "
                f"y float32[{rows}], then `{name}(theta, batches, lr={lr}, read)` with the notebook's own `sgd_step`",
        got=_plural(log.count, "new trace"), expected="no new trace",
    )


# ---------------------------------------------------------------- the phase ledger


#: The grader's programs of θ and lr the ledger is judged on (:mod:`autograder.kit.programs`
#: descriptions, built where the notebook runs): a tiny one, and one whose trace is long (150
#: elementwise steps, unrolled) while XLA compiles it quickly.
_TINY = ((("ops", 2),), 2)
_SLOW_TO_TRACE = ((("ops", 150),), 2)
#: A new program name for every scenario, so that none meets another's cache.
_SCENARIO_NUMBERS = itertools.count(1)


ROW_KEYS = ("label", "traced", "compiled", "traces", "compiles")


@dataclass(frozen=True)
class _Phase:
    row: dict
    traces: int  # JAX's traces during the thunk
    compiles: int  # JAX's compiles during the thunk
    story: str


class _Scenario:
    """Steps on one program of the grader's, from a fresh cache; each observed through `phase_row`."""

    def __init__(self, submission, recipe, name: str):
        self.submission, self.recipe, self.name = submission, recipe, name
        self.program = f"{name} {next(_SCENARIO_NUMBERS)}"
        self.story: list[str] = [f"`{name} = jax.jit(...)`, cache cleared"]
        self.phases: list[_Phase] = []

    def thunk(self, *actions) -> Thunk:
        return Thunk(self.program, self.recipe, actions)

    def action(self, kind: str, length: int, lr_form: str):
        """The action (see :class:`Thunk`), and what it does in words."""
        said = f"θ float32[{length}], lr " + ("a Python float" if lr_form == "weak" else "a float32 array")
        n = self.name
        text = {"call": f"`{n}(theta, lr)`", "trace": f"`{n}.trace(theta, lr)`", "lower": f"`{n}.lower(theta, lr)`",
                "aot": f"`{n}.trace(theta, lr).lower().compile()`"}[kind]
        return (kind, length, lr_form), f"{text} with {said}"

    def observe(self, thunk: Thunk, text: str) -> None:
        label = f"grader step {len(self.phases) + 1}"
        self.story.append(text)
        story = "; then ".join(self.story[-4:])
        with TraceLog() as traces, CompileLog() as compiles:
            row = self.submission.call("phase_row", label, thunk)
        if thunk.calls != 1:
            raise PropertyFailure(f"`phase_row` should call the thunk exactly once, it called it {thunk.calls} "
                                  "time(s).", example=story)
        if not isinstance(row, dict) or set(ROW_KEYS) - set(row):
            missing = ", ".join(sorted(set(ROW_KEYS) - set(row))) if isinstance(row, dict) else "it is not a dict"
            raise PropertyFailure(f"The row `phase_row` returned is missing keys: {missing}.", example=story,
                                  got=render.value(row))
        self.phases.append(_Phase(row, traces.count, compiles.count, story))

    def step(self, kind: str, length: int = 3, lr_form: str = "weak") -> "_Scenario":
        action, text = self.action(kind, length, lr_form)
        self.observe(self.thunk(action), text)
        return self

    def both_shapes(self) -> "_Scenario":
        (first, said_a), (second, said_b) = self.action("call", 3, "weak"), self.action("call", 5, "weak")
        self.observe(self.thunk(first, second), f"one thunk making two calls, {said_a} and {said_b}")
        return self

    def clear(self) -> "_Scenario":
        self.submission.run_grader(self.thunk(("clear", 1, "weak")))
        self.story.append(f"`{self.name}.clear_cache()` (outside `phase_row`)")
        return self


def _explicit_scenarios(submission) -> list[_Scenario]:
    """Where a ledger that predicts from the signature, or copies one column into the other, goes wrong."""
    make = lambda recipe=_TINY, name="program": _Scenario(submission, recipe, name)  # noqa: E731
    return [
        make().step("lower").step("call").step("call"),  # traced, not compiled; compiled, not traced; neither
        make().step("trace").step("aot").step("call"),  # an ahead-of-time compile of a traced signature: no trace
        make().step("aot").step("call"),  # both, then neither: the call reuses the AOT program
        make().step("call").step("call", lr_form="strong").step("call"),  # a float32 lr after a weak one: new
        make().step("call").clear().step("call"),  # a cleared cache: the same call traces and compiles again
        make().both_shapes(),  # two new shapes in one thunk: two of each
        make(_SLOW_TO_TRACE, "slow_program").step("trace").step("call"),  # a long trace that compiles nothing
    ]


_KINDS = st.sampled_from(["call", "trace", "lower", "aot", "clear"])
_SIGNATURES = st.sampled_from([(3, "weak"), (3, "strong"), (5, "weak")])
_GENERATED = st.lists(st.tuples(_KINDS, _SIGNATURES), min_size=2, max_size=4)
_SCENARIO_SEARCH = settings(TRACES, max_examples=3)


def _phases(submission) -> list[_Phase]:
    """Every observed step of the explicit and generated scenarios, made once per submission."""
    if "host_sync phases" not in submission.memo:
        phases: list[_Phase] = []
        failure = None
        try:
            for scenario in _explicit_scenarios(submission):
                phases += scenario.phases

            def generated(steps):
                scenario = _Scenario(submission, _TINY, "program")
                try:
                    for kind, (length, form) in steps:
                        scenario.clear() if kind == "clear" else scenario.step(kind, length, form)
                finally:
                    phases.extend(scenario.phases)

            first_failure(_GENERATED, generated, _SCENARIO_SEARCH)
        except PropertyFailure as found:
            failure = found
        submission.memo["host_sync phases"] = (phases, failure)
    phases, failure = submission.memo["host_sync phases"]
    if failure is not None:
        raise failure
    return phases


def _judge(phases, flag: str, count: str, noun: str) -> None:
    for phase in phases:
        observed = getattr(phase, count)
        said_flag, said_count = phase.row[flag], phase.row[count]
        if not isinstance(said_flag, (bool, np.bool_)):
            raise PropertyFailure(f"`{flag}` should be True or False, got {render.kind(said_flag)}.",
                                  example=phase.story)
        if not isinstance(said_count, (int, np.integer)) or isinstance(said_count, bool):
            raise PropertyFailure(f"`{count}` should be an int, got {render.kind(said_count)}.", example=phase.story)
        if bool(said_flag) != (observed > 0) or said_count != observed:
            raise PropertyFailure(
                f"The row's `{flag}`/`{count}` disagree with JAX, which {noun} {_plural(observed, 'time')} during the "
                "last step.", example=phase.story, got=f"{flag}={said_flag}, {count}={said_count}",
                expected=f"{flag}={observed > 0}, {count}={observed}")


@prop(
    group="ledger",
    points=1,
    title="the ledger's `traced`/`traces` are JAX's trace events during the thunk",
    hint="Observe, don't predict: listen for JAX's trace event while the thunk runs. `.trace()` and `.lower()` "
    "trace a new signature; a call after them, or a cached call, traces nothing; a cleared cache or a float32 lr "
    "after a Python float traces again.",
)
def test_ledger_traced_column(submission):
    _judge(_phases(submission), "traced", "traces", "traced")


@prop(
    group="ledger",
    points=1,
    title="the ledger's `compiled`/`compiles` are JAX's compile events during the thunk, not a copy of `traced`",
    hint="Compiling is its own event (the backend compile), not a consequence of tracing: `.trace()` and "
    "`.lower()` compile nothing, the first call after them compiles without tracing, `.lower().compile()` "
    "compiles, and a call that reuses that program does neither.",
)
def test_ledger_compiled_column(submission):
    _judge(_phases(submission), "compiled", "compiles", "compiled")


# ---------------------------------------------------------------- which loop is slow, and why

LABELS = ("traces", "compiles", "waits")

#: What each kind of loop step does, in the words feedback uses.
_LOOP_WORDS = {
    "call": "calls the step",
    "read": "calls the compiled step and converts the result to NumPy",
    "static": "calls the step jitted with `lr` static, at a new learning rate",
    "commit": "calls the compiled step on θ committed to the device with `jax.device_put(theta, device)`",
    "trace": "traces the step with `.trace(theta, lr)`, compiling nothing",
    "lower": "lowers the step for XLA with `.lower(theta, lr)`, compiling nothing",
    "stack": "calls the compiled step and stacks copies of the result with `jnp.stack`, a number never stacked before",
    "work": "multiplies 1024-by-1024 matrices with a compiled program and converts the result to NumPy",
}


#: What each kind of loop, run on its program as `_loop_story` prepares it, makes JAX do: the answer.
_DESIGNED = {"call": "compiles", "read": "waits", "static": "traces", "commit": "compiles", "trace": "traces",
             "stack": "traces", "work": "waits", "lower": "waits"}


@dataclass(frozen=True)
class _Diagnosis:
    said: object
    truth: str  # what the loop does, as the grader built it
    calls: int  # how often `diagnose` ran the loop
    traces: int  # JAX's trace events while `diagnose` ran
    compiles: int  # JAX's compile events while `diagnose` ran
    story: str


def _diagnose(submission, program: str, steps: tuple, truth: str, length: int, story: list[str]) -> _Diagnosis:
    """`diagnose(loop)` on a loop of the grader's, with JAX's own events while it ran."""
    loop = Thunk(program, _TINY, tuple((kind, length, "weak") for kind in steps))
    kinds = sorted(set(steps), key=steps.index)
    said = (f"a loop of {len(steps)} step(s) that each " + " or ".join(_LOOP_WORDS[k] for k in kinds)
            + f", θ float32[{length}]")
    story.append(said)
    with TraceLog() as traces, CompileLog() as compiles:
        answer = submission.call("diagnose", loop)
    return _Diagnosis(answer, truth, loop.calls, traces.count, compiles.count, "; then ".join(story[-3:]))


def _loop_story(submission, kind: str, turns: int, length: int = 3, then: str | None = None) -> list[_Diagnosis]:
    """A fresh program, warmed by a first loop (one plain call, a `.trace` for a compile-only story, one
    heavy step for a slow one), then a loop of `turns` steps of the kind (and one step of `then`, whose
    trace comes after the loop's compiles): each diagnosed."""
    program = f"slow loop {next(_SCENARIO_NUMBERS)}"
    story = ["a fresh `step = jax.jit(...)`"]
    warm = {"call": "trace", "lower": "trace", "work": "work"}.get(kind, "call")
    steps = (kind,) * turns + ((then,) if then else ())
    truth = "traces" if then and _DESIGNED[then] == "traces" else _DESIGNED[kind]
    return [_diagnose(submission, program, (warm,), "traces", length, story),
            _diagnose(submission, program, steps, truth, length, story)]


def _judge_diagnoses(diagnoses, which) -> None:
    for d in diagnoses:
        if d.truth not in which:
            continue
        if d.calls != 1:
            raise PropertyFailure(f"`diagnose` should run the loop exactly once, it ran it {d.calls} time(s): a "
                                  "second run meets what the first compiled, and tells another story.", example=d.story)
        if not isinstance(d.said, str) or d.said not in LABELS:
            raise PropertyFailure(f"`diagnose` returned {render.kind(d.said)}; it should return one of "
                                  f"{', '.join(map(repr, LABELS))}.", example=d.story)
        if d.said == d.truth:
            continue
        events = f"while it ran, JAX traced {_plural(d.traces, 'time')} and compiled {_plural(d.compiles, 'time')}"
        seen = "traces" if d.traces else "compiles" if d.compiles else "waits"
        if seen != d.truth:
            raise PropertyFailure(
                f"`diagnose` said {d.said!r}, but the loop, run once on its own, {d.truth} ({events}, so something "
                "`diagnose` did besides running the loop, such as clearing JAX's caches or running it again, changed "
                "what JAX did). Run the loop once, as it is, and report what it made JAX do.",
                example=d.story, got=repr(d.said), expected=repr(d.truth))
        note = {
            ("compiles", "traces"): " A compile is not a trace: *Finished XLA compilation* with no *Finished tracing* "
                                    "before it means XLA compiled a program JAX had traced already.",
            ("compiles", "waits"): " The log was not silent: XLA compiled, with no trace before it (the signature "
                                   "was traced already, or the same trace met a new placement of θ).",
            ("waits", "traces"): " Nothing was traced or compiled: the loop's time went to running steps and "
                                 "waiting for their results, which the compile log does not show.",
            ("waits", "compiles"): " Nothing was compiled: the steps reused their programs (or only lowered them: "
                                   "*Compiling* is logged when a program is lowered, and compiles nothing), and the "
                                   "time went to running them and waiting for results.",
            ("traces", "compiles"): " JAX traced while the loop ran: look for *Finished tracing*, which comes "
                                    "before the compile of a new trace.",
            ("traces", "waits"): " JAX traced while the loop ran: its log has *Finished tracing* messages.",
        }.get((d.truth, d.said), "")
        raise PropertyFailure(f"`diagnose` said {d.said!r}, but {events}: {d.truth!r}.{note}", example=d.story,
                              got=repr(d.said), expected=repr(d.truth))


def _diagnoses(submission) -> list[_Diagnosis]:
    """Every diagnosed loop of the explicit and generated stories, made once per submission."""
    if "host_sync diagnoses" not in submission.memo:
        diagnoses: list[_Diagnosis] = []
        failure = None
        try:
            stories = [("read", 3, None), ("static", 3, None), ("commit", 3, None), ("call", 2, None),
                       ("static", 1, None), ("stack", 2, None), ("work", 2, None), ("lower", 2, None),
                       ("commit", 1, "static")]  # the last: compiles first, then traces
            drawn.rng(submission.notebook_memo).shuffle(stories)  # "in an order they draw": one per notebook
            for kind, turns, then in stories:
                diagnoses += _loop_story(submission, kind, turns, then=then)

            def generated(order):
                for kind, turns in order:
                    diagnoses.extend(_loop_story(submission, kind, turns, 5))

            first_failure(st.permutations([("read", 2), ("static", 2), ("commit", 2)]), generated,
                          settings(TRACES, max_examples=1))
        except PropertyFailure as found:
            failure = found
        submission.memo["host_sync diagnoses"] = (diagnoses, failure)
    diagnoses, failure = submission.memo["host_sync diagnoses"]
    if failure is not None:
        raise failure
    return diagnoses


@prop(
    group="diagnosis",
    points=1,
    title="`diagnose` tells a loop that traces from one that only compiles",
    hint="Run the loop once inside `compile_log` and read what JAX logged: *Finished tracing* means a new "
    "trace (then, usually, a compile); *Finished XLA compilation* with no trace before it means XLA compiled "
    "a program that was traced already.",
)
def test_diagnose_tells_traces_from_compiles(submission):
    _judge_diagnoses(_diagnoses(submission), ("traces", "compiles"))


@prop(
    group="diagnosis",
    points=1,
    title="`diagnose` hears a silent compile log as a loop that waits",
    hint="A loop whose log is silent traced and compiled nothing: whatever time it took went to running its "
    "steps and waiting for their results (a host read each step, for one).",
)
def test_diagnose_hears_waiting(submission):
    _judge_diagnoses(_diagnoses(submission), ("waits",))
