# The self-check of this assignment: run by the notebook's self-check cells.
# Made from the course's public checks; a new copy replaces it, so leave it as it is.

"""Self-check runner: public examples for one part of a notebook, reported as the graders report.

Run a part's checks from its notebook with ``self_check("<part>")``. Each check tries a few fixed
examples, smallest first, then a few seeded random ones, and reports the first example that fails.
Passing the self-check does not promise full marks: the hidden graders check much more.

Only the standard library, NumPy and JAX are used here.
"""

import contextlib
import io
import os
import sys
import time
import warnings

import numpy as np

#: Seconds one part may spend; checked between examples, so a slow example can run past it once.
BUDGET_SECONDS = 20.0
#: The seed of every check's random examples: the same examples on every run.
SEED = 0
_LABELS = ("Problem", "Example", "Got", "Expected", "Hint")


class Mismatch(Exception):
    """Raised by an example whose answer is not what the notebook promises."""

    def __init__(self, problem, got="", expected=""):
        super().__init__(problem)
        self.problem, self.got, self.expected = problem, got, expected


class Check:
    """One public check: its part, a one-line title, a hint, and its examples.

    ``examples(names, rng)`` yields ``(text, run)`` pairs, smallest first: ``text`` says the input
    in plain words, ``run()`` raises :class:`Mismatch` (or any error) when the answer is wrong.
    """

    def __init__(self, part, title, hint, examples):
        self.part, self.title, self.hint, self.examples = part, title, hint, examples


CHECKS = []


def public(part, title, hint):
    """Register a generator of examples as a public check of ``part``."""

    def register(examples):
        CHECKS.append(Check(part, title, hint, examples))
        return examples

    return register


class Names:
    """The notebook's names, read as the checks need them."""

    def __init__(self, namespace):
        self._namespace = namespace

    def __getitem__(self, name):
        if name not in self._namespace:
            raise Mismatch(f"`{name}` is not defined: run every cell above this one, then this one again.")
        return self._namespace[name]

    def function(self, name):
        value = self[name]
        if not callable(value):
            raise Mismatch(f"`{name}` should be a function, but it is a {type(value).__name__}.")
        return value


class TraceCount:
    """The functions JAX traces while a ``with`` block runs, from JAX's own monitoring events."""

    EVENT = "/jax/core/compile/jaxpr_trace_duration"

    def __init__(self):
        self.names = []

    def _record(self, event, duration_secs, **details):
        if event == self.EVENT:
            self.names.append(details.get("fun_name", "?"))

    def __enter__(self):
        import jax

        jax.monitoring.register_event_duration_secs_listener(self._record)
        return self

    def __exit__(self, *exc_info):
        import jax

        jax.monitoring.unregister_event_duration_listener(self._record)
        return False

    @property
    def count(self):
        return len(self.names)


def close(got, expected, rtol=1e-5, atol=1e-6):
    """Whether two numbers or arrays agree to float32 precision (shapes must match)."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    return got.shape == expected.shape and bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))


def show(value, limit=120):
    """A short plain rendering of a value: dtype and shape for arrays, then the numbers."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        numbers = np.asarray(value).tolist()
        text = f"{value.dtype}{list(value.shape)} {numbers}"
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Result:
    """What one check gave: passed, failed at an example, or not finished in the time budget."""

    def __init__(self, check, status, example="", problem="", got="", expected=""):
        self.check, self.status = check, status
        self.example, self.problem, self.got, self.expected = example, problem, got, expected

    def lines(self):
        if self.status == "pass":
            return [f"  PASS  {self.check.title}"]
        if self.status == "unfinished":
            return [f"  NOTE  Not finished in the time budget, so not judged: {self.check.title}"]
        lines = [f"  FAIL  {self.check.title}"]
        values = (self.problem, self.example, self.got, self.expected, self.check.hint)
        for label, text in zip(_LABELS, values):
            if text:
                lines.append(" " * 8 + (label + ":").ljust(10) + text)
        return lines


class Report:
    """The self-check of one part: a header, a note, then a line (or a block) per check."""

    def __init__(self, assignment, part, results):
        self.assignment, self.part, self.results = assignment, part, results

    @property
    def passed(self):
        return all(result.status == "pass" for result in self.results)

    def lines(self):
        passing = sum(result.status == "pass" for result in self.results)
        lines = [f"Self-check {self.assignment} / {self.part}: {passing} of {len(self.results)} public checks pass",
                 "  NOTE  Passing the self-check does not promise full marks: the hidden graders check much more."]
        for result in self.results:
            lines.extend(result.lines())
        return lines

    def text(self):
        return "\n".join(self.lines())


def _run_check(check, names, deadline):
    rng = np.random.default_rng(SEED)
    text = ""
    try:
        for text, run in check.examples(names, rng):
            if time.monotonic() > deadline:
                return Result(check, "unfinished")
            run()
            text = ""
    except Mismatch as failure:
        return Result(check, "fail", text, failure.problem, failure.got, failure.expected)
    except Exception as error:  # an example that raises is a failure, told in one line
        message = " ".join(str(error).split())
        if len(message) > 300:
            message = message[:297] + "..."
        problem = f"The example stopped with {type(error).__name__}: {message}" if message else (
            f"The example stopped with {type(error).__name__}.")
        return Result(check, "fail", text, problem)
    return Result(check, "pass")


def run(part, namespace, assignment=None, budget=BUDGET_SECONDS):
    """Run the public checks of ``part`` on ``namespace`` (a notebook's globals); a :class:`Report`.

    Nothing reaches stderr: warnings are silenced and what the checked code prints is kept aside.
    """
    checks = [check for check in CHECKS if check.part == part]
    if not checks:
        known = sorted({check.part for check in CHECKS})
        raise ValueError(f"no self-check is named {part!r}; the parts are {', '.join(map(repr, known))}")
    names = Names(namespace)
    deadline = time.monotonic() + budget
    results = []
    kept = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(kept), contextlib.redirect_stderr(kept):
        warnings.filterwarnings("ignore")
        for check in checks:
            if time.monotonic() > deadline:
                results.append(Result(check, "unfinished"))
            else:
                results.append(_run_check(check, names, deadline))
    return Report(assignment or ASSIGNMENT, part, results)


def self_check(part, namespace=None):
    """Run the public checks of ``part`` on the calling notebook's names and print the report.

    While nbgrader autogrades (it sets ``NBGRADER_EXECUTION=autograde``) nothing runs: the graded
    cells check the answers, and a class's grading is not slowed down by examples meant for students.
    """
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        print(f"Self-check {ASSIGNMENT} / {part}: not run while nbgrader grades; the graded cell below checks.")
        return
    if namespace is None:
        namespace = sys._getframe(1).f_globals
    print(run(part, namespace).text())


ASSIGNMENT = "?"


"""Public checks of host_sync: one SGD step, the two trainers' reads, a dynamic lr, the ledger, diagnose."""

import jax
import jax.numpy as jnp

ASSIGNMENT = "host_sync"


def _step(theta, x, y, lr):
    """The notebook's step in NumPy: the loss before the update, the gradient of the batch mean."""
    theta, x, y = (np.asarray(a, dtype=np.float64) for a in (theta, x, y))
    residual = x @ theta - y
    return theta - lr * (2.0 / len(y)) * (x.T @ residual), float(np.mean(residual ** 2))


@public("step", "`sgd_step` returns the updated theta and the loss before the update, as a device scalar",
        "Take `jax.value_and_grad` of the mean squared error at `theta`, then step: `theta - lr * grad`.")
def step(names, rng):
    cases = [(np.zeros(2), np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 0.0]), 0.5),
             (np.array([0.5, 0.0]), np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 0.0]), 0.5)]
    cases += [(rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, 4), 0.1)]
    for theta, x, y, lr in cases:
        def run(theta=theta, x=x, y=y, lr=lr):
            args = [jnp.asarray(a, dtype=jnp.float32) for a in (theta, x, y)]
            new_theta, loss = names.function("sgd_step")(*args, lr)
            want_theta, want_loss = _step(theta, x, y, lr)
            if not isinstance(loss, jax.Array) or loss.shape != ():
                raise Mismatch("The loss should stay on the device, as a 0-d jax.Array.", show(loss), "float32[]")
            if not close(loss, want_loss):
                raise Mismatch("The loss is not the mean squared error before the update.", show(loss), repr(want_loss))
            if not close(new_theta, want_theta):
                raise Mismatch("The updated theta is not one gradient step.", show(new_theta),
                               show(want_theta.astype(np.float32)))

        yield f"sgd_step({', '.join(show(np.asarray(a, dtype=np.float32)) for a in (theta, x, y))}, {lr})", run


class _CountingRead:
    """The notebook's `CountingRead`: a host value (float for a scalar) and a count of the calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, value):
        self.calls += 1
        host = np.asarray(value)
        return float(host) if host.ndim == 0 else host


def _batches(seed, steps=5):
    draw = np.random.default_rng(seed).uniform
    return [(draw(-1, 1, (4, 3)).astype(np.float32), draw(-1, 1, 4).astype(np.float32)) for _ in range(steps)]


@public("reads", "both trainers give the same losses, a list of floats, reading once a step and once in all",
        "Keep each step's loss on the device; `train_reading_once` reads them all with one `read(jnp.stack(...))`.")
def reads(names, rng):
    for steps in (1, 5):
        def run(steps=steps):
            batches = _batches(0, steps)
            every, once = _CountingRead(), _CountingRead()
            theta_a, losses_a = names.function("train_reading_every_step")(jnp.zeros(3), batches, 0.1, every)
            theta_b, losses_b = names.function("train_reading_once")(jnp.zeros(3), batches, 0.1, once)
            for label, losses in (("train_reading_every_step", losses_a), ("train_reading_once", losses_b)):
                if not (isinstance(losses, list) and len(losses) == steps and all(type(v) is float for v in losses)):
                    raise Mismatch(f"`{label}` should return a list of {steps} Python floats.", show(losses))
            if every.calls != steps:
                raise Mismatch("`train_reading_every_step` should read once a step.", f"{every.calls} reads",
                               f"{steps} reads")
            if once.calls != 1:
                raise Mismatch("`train_reading_once` should read once in all.", f"{once.calls} reads", "1 read")
            if not (close(losses_a, losses_b) and close(theta_a, theta_b)):
                raise Mismatch("The trainers disagree.", show(losses_b), show(losses_a))
            if not close(losses_a[0], float(np.mean(batches[0][1].astype(np.float64) ** 2))):
                raise Mismatch("The first loss should be the loss at theta = 0.", repr(losses_a[0]))

        yield f"both trainers from theta = zeros(3), lr 0.1, {steps} batch(es) of float32[4, 3] and float32[4]", run


_EAGER = ("stack", "concatenate", "broadcast_in_dim", "expand_dims")


@public("traces", "new data and a new learning rate reuse `sgd_step`'s program, in the step and the trainers",
        "`lr` is data: leave it out of `static_argnums`, and jit `sgd_step` once, not inside a loop.")
def traces(names, rng):
    def run():
        batches = _batches(1)
        sgd_step = names.function("sgd_step")
        sgd_step(jnp.zeros(3), *batches[0], 0.1)
        with TraceCount() as watch:
            for lr in (0.1, 0.05, 0.2):
                sgd_step(jnp.ones(3), *batches[1], lr)
            names.function("train_reading_every_step")(jnp.zeros(3), batches, 0.3, _CountingRead())
            names.function("train_reading_once")(jnp.zeros(3), batches, 0.3, _CountingRead())
        traced = [name for name in watch.names if name not in _EAGER]
        if traced:
            raise Mismatch("New learning rates or data traced again.", str(traced), "no trace")

    yield "sgd_step at lr 0.1, 0.05 and 0.2 on new data, then both trainers at lr 0.3", run


@public("ledger", "`phase_row` tells a trace from a compile on the lesson's three phases",
        "Run the thunk inside a `PhaseWatch` and report what it saw; never predict from the label.")
def ledger(names, rng):
    def run():
        def shrink(v, rate):  # a new function each run, so nothing of it is cached yet
            return v - rate * v

        shrinker = jax.jit(shrink)
        v4 = jnp.arange(4.0)
        phases = [("trace only", lambda: shrinker.trace(v4, 0.5), (True, False)),
                  ("call after trace", lambda: shrinker(v4, 0.5), (False, True)),
                  ("cached call, new rate", lambda: shrinker(v4, 0.25), (False, False))]
        for label, thunk, (traced, compiled) in phases:
            row = names.function("phase_row")(label, thunk)
            if not isinstance(row, dict) or not {"label", "traced", "compiled", "traces", "compiles"} <= set(row):
                raise Mismatch(f"The row for {label!r} lacks a key.", show(row),
                               "keys label, traced, compiled, traces, compiles")
            if (bool(row["traced"]), bool(row["compiled"])) != (traced, compiled):
                raise Mismatch(f"The {label!r} row's traced and compiled columns are not what JAX did.",
                               f"traced={row['traced']}, compiled={row['compiled']}",
                               f"traced={traced}, compiled={compiled}")

    yield "a fresh jit of v - rate * v: .trace(v4, 0.5), then a call, then a call with a new rate", run


@public("diagnosis", "`diagnose` says \"traces\", \"waits\" and \"compiles\" for the lesson's three loops",
        "Read the compile log: a trace message means \"traces\"; a compile without a trace, \"compiles\"; "
        "neither, \"waits\".")
def diagnosis(names, rng):
    def fresh():
        def tiny_step(theta, lr):
            return theta - lr * jnp.sin(theta)

        return jax.jit(tiny_step), jnp.linspace(0.5, 1.0, 4)

    def traces_each_step():
        _, theta4 = fresh()

        def loop():
            for _ in range(2):
                jax.jit(lambda v: v * 2.0)(theta4)  # a new function every step

        got = names.function("diagnose")(loop)
        if got != "traces":
            raise Mismatch("A new lambda jitted each step traces each step.", repr(got), repr("traces"))

    def waits():
        tiny, theta4 = fresh()
        tiny(theta4, 0.1)

        def loop():
            for _ in range(2):
                float(np.asarray(tiny(theta4, 0.1))[0])

        got = names.function("diagnose")(loop)
        if got != "waits":
            raise Mismatch("A compiled step, read each time, neither traces nor compiles.", repr(got), repr("waits"))

    def compiles():
        tiny, _ = fresh()
        nine = jnp.ones(9)
        tiny.trace(nine, 0.1)
        got = names.function("diagnose")(lambda: tiny(nine, 0.1))
        if got != "compiles":
            raise Mismatch("The call compiles a program traced before, and traces nothing.", repr(got), repr("compiles"))

    yield "a loop that jits a new lambda at each of 2 steps", traces_each_step
    yield "a loop that calls a compiled step twice and reads each result", waits
    yield "a call of a jitted function at a shape it was traced at (`.trace`) but never compiled", compiles
