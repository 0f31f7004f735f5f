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
    ``uses`` names the earlier parts whose functions the examples call: their public checks run
    first, and while one of them fails this check is not run (see :data:`PARTS`).
    """

    def __init__(self, part, title, hint, examples, uses=()):
        self.part, self.title, self.hint, self.examples = part, title, hint, examples
        self.uses = tuple(uses)


CHECKS = []


def public(part, title, hint, uses=()):
    """Register a generator of examples as a public check of ``part``.

    ``uses`` lists the earlier parts whose answers the examples call (say ``uses=("padding",)``
    when the examples build their inputs with the student's ``pad_batch``): a mistake there is
    reported there, and this check says it was not checked, instead of failing for it.
    """

    def register(examples):
        CHECKS.append(Check(part, title, hint, examples, uses))
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


def op_by_op(fn, *args, given_first=False):
    """``fn(*args)`` under ``jax.disable_jit()``: the code run as written, one operation at a time, so no
    compiler rewrite can hide what the arithmetic does. Python numbers go in as the weakly typed arrays
    jit would make of them; with ``given_first``, as the arguments were given first, and as weak arrays
    only if that raises and a Python float is among them (cache_misses' notebook says its graders try
    both). None for a function compiled ahead of time, which cannot run op by op."""
    import jax
    import jax.numpy as jnp

    weak = [jnp.asarray(a) if type(a) in (bool, int, float) else a for a in args]
    if not given_first:
        tries = [weak]
    elif any(isinstance(a, float) for a in args):
        tries = [args, weak]
    else:
        tries = [args]
    for attempt, values in enumerate(tries, 1):
        try:
            with jax.disable_jit():
                return fn(*values)
        except Exception as error:
            if "AOT path" in str(error):  # JAX: disable_jit "is not supported in the AOT path"
                return None
            if attempt == len(tries):
                raise


#: float32's ulp at 1 (its machine epsilon, 2**-23).
ULP = float(np.finfo(np.float32).eps)
#: The float32 error every tolerance here already allows for: 4 ulp for an elementwise function (of
#: the value, or absolute below 1), and 4 ulp of the sum of the terms' sizes for a product. A CPU
#: delivers about 1 ulp and 0.3 ulp, so on a CPU no tolerance is widened (docs/accelerators.md).
BASELINE = 4 * ULP
#: How many times a backend's excess error over :data:`BASELINE` a value may carry: an operation's
#: error goes on through the one or two the lesson's values pass after it (a sum or mean, a step).
PROPAGATION = 2.0


class Precision:
    """The float32 error a backend delivers: ``elementwise``, the largest error of the transcendental
    functions the course uses (log, log1p, exp, sqrt, tanh, sin, cos, power), relative to the exact value
    or absolute below 1; ``products``, the largest error of a default-precision matrix product, relative
    to the sum of its terms' sizes. Both against float64 NumPy, on the same float32 inputs."""

    def __init__(self, elementwise, products, where="?"):
        self.elementwise, self.products, self.where = float(elementwise), float(products), where

    def excess(self, products=False):
        """What a tolerance gains: :data:`PROPAGATION` times the error beyond :data:`BASELINE` (the
        elementwise one, plus the products' for a value that went through matrix products); 0 on a CPU."""
        extra = max(0.0, self.elementwise - BASELINE)
        if products:
            extra += max(0.0, self.products - BASELINE)
        return PROPAGATION * extra

    def __repr__(self):
        return (f"Precision(elementwise={self.elementwise:.3g} ({self.elementwise / ULP:.1f} ulp), "
                f"products={self.products:.3g} ({self.products / ULP:.1f} ulp), where={self.where!r})")


def _probe(positive, symmetric, a, b, v):
    import jax.numpy as jnp

    return (jnp.stack([jnp.log(positive), jnp.log1p(positive), jnp.sqrt(positive), jnp.power(positive, 1.5)]),
            jnp.stack([jnp.exp(symmetric), jnp.tanh(symmetric), jnp.sin(symmetric), jnp.cos(symmetric)]),
            a @ b, jnp.dot(a, v))


def measure_precision(device=None):
    """The :class:`Precision` of ``device`` (JAX's default device when None): one jitted function over a
    small grid, compared with float64 NumPy. About a tenth of a second on a CPU, once per device."""
    import jax

    positive = np.geomspace(2.0 ** -6, 2.0 ** 7, 64).astype(np.float32)
    symmetric = np.linspace(-8.0, 8.0, 64).astype(np.float32)
    a = np.sin(np.arange(32) * 0.7).astype(np.float32).reshape(4, 8)
    b = np.cos(np.arange(64) * 0.37).astype(np.float32).reshape(8, 8)
    v = b[:, 0].copy()
    device = device if device is not None else jax.devices()[0]
    inputs = jax.device_put((positive, symmetric, a, b, v), device)
    with jax.disable_jit(False), jax.default_matmul_precision("default"), jax.numpy_dtype_promotion("standard"):
        got = [np.asarray(out, dtype=np.float64) for out in jax.jit(_probe)(*inputs)]
    p, s = positive.astype(np.float64), symmetric.astype(np.float64)
    exact = [np.stack([np.log(p), np.log1p(p), np.sqrt(p), p ** 1.5]),
             np.stack([np.exp(s), np.tanh(s), np.sin(s), np.cos(s)])]
    elementwise = max(float(np.max(np.abs(g - e) / np.maximum(np.abs(e), 1.0))) for g, e in zip(got, exact))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    products = max(float(np.max(np.abs(got[2] - a64 @ b64) / (np.abs(a64) @ np.abs(b64)))),
                   float(np.max(np.abs(got[3] - a64 @ b64[:, 0]) / (np.abs(a64) @ np.abs(b64[:, 0])))))
    return Precision(elementwise, products, f"{device.platform} ({getattr(device, 'device_kind', '?')})")


_MEASURED = {}


def precision():
    """The :class:`Precision` of the backend this notebook computes on (its default device), measured
    once per process."""
    import jax

    device = jax.devices()[0]
    found = _MEASURED.get((device.platform, device.id))
    if found is None:
        try:
            found = measure_precision(device)
        except Exception as error:  # noqa: BLE001 - a backend that cannot run the probe keeps a CPU's tolerances
            found = Precision(0.0, 0.0, f"no measurement: {type(error).__name__}")
        _MEASURED[(device.platform, device.id)] = found
    return found


def close(got, expected, rtol=1e-5, atol=1e-6, products=False):
    """Whether two numbers or arrays agree to float32 precision (shapes must match): within ``atol +
    rtol * |expected|``, each widened by what this backend's float32 delivers beyond a CPU's
    (:meth:`Precision.excess`; ``products``: the values went through matrix products)."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape:
        return False
    if np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True):
        return True
    if rtol == 0 and atol == 0:
        return False  # exact by contract (a copy): no backend's rounding enters
    extra = precision().excess(products)
    return extra > 0 and bool(np.allclose(got, expected, rtol=rtol + extra, atol=atol + extra, equal_nan=True))


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
        if self.status == "not checked":
            return [f"  NOTE  Not checked: {self.check.title}", " " * 8 + self.problem]
        if self.status == "not written":
            return [f"  NOTE  Not written yet: {self.check.title}", " " * 8 + self.problem]
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
    except NotImplementedError as error:
        stub = _stub(error)
        if stub:
            return Result(check, "not written", problem=f"`{stub}` still raises NotImplementedError: write it, then "
                                                        "run this cell again.")
        return _raised(check, text, error)
    except Exception as error:
        return _raised(check, text, error)
    return Result(check, "pass")


def _stub(error):
    """The name of the notebook's function whose body is still the released ``raise NotImplementedError()``,
    or "" when this NotImplementedError says something (JAX raises some, for what it cannot do) or was
    raised by a library, not by the notebook's own code."""
    import traceback

    if str(error):
        return ""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    library = (os.sep + "site-packages" + os.sep, os.sep + "jax" + os.sep, os.sep + "numpy" + os.sep)
    if any(part in last.filename for part in library) or last.filename == __file__:
        return ""
    return last.name if last.name.isidentifier() else ""


def _raised(check, text, error):
    """An example that raised: a failure, told in one line."""
    message = " ".join(str(error).split())
    if len(message) > 300:
        message = message[:297] + "..."
    problem = f"The example stopped with {type(error).__name__}: {message}" if message else (
        f"The example stopped with {type(error).__name__}.")
    return Result(check, "fail", text, problem)


def _used(part):
    """How a check that uses ``part`` names it: the student's functions there, and the part's name."""
    functions, label = PARTS.get(part, ("", ""))
    label = label or f'the part checked by self_check("{part}")'
    return (f"your {functions}" if functions else label), label


def _blocked(check, names, deadline, verdicts):
    """Why ``check`` is not run (an earlier part it uses fails its own checks), or "" when it may run.

    Each used part's checks run once per :func:`run`, its own uses first; ``verdicts`` keeps their
    outcome ("pass", "fail", "not written" or "unfinished") for the other checks of the same run.
    """
    for part in check.uses:
        if part not in verdicts:
            verdicts[part] = "pass"  # a part that uses itself, however indirectly, is not run twice
            outcome = "pass"
            for earlier in (c for c in CHECKS if c.part == part):
                why = _blocked(earlier, names, deadline, verdicts)
                status = "fail" if why else _run_check(earlier, names, deadline).status
                if status != "pass":
                    outcome = status
                    break
            verdicts[part] = outcome
        if verdicts[part] != "pass":
            what, label = _used(part)
            if verdicts[part] == "not written":
                return f"It uses {what}, which is not written yet: write {label} first, then run this cell again."
            how = ("whose own self-check above fails" if verdicts[part] == "fail" else
                   "whose own self-check did not finish in the time budget")
            return (f"It uses {what}, {how}, so a failure here could be that part's mistake: "
                    f"fix {label} first, then run this cell again.")
    return ""


def run(part, namespace, assignment=None, budget=BUDGET_SECONDS):
    """Run the public checks of ``part`` on ``namespace`` (a notebook's globals); a :class:`Report`.

    A check that uses earlier parts (``uses=`` in :func:`public`) runs only when their public checks
    pass; otherwise it is reported as not checked, naming the earlier part to fix first.
    Nothing reaches stderr: warnings are silenced and what the checked code prints is kept aside.
    """
    checks = [check for check in CHECKS if check.part == part]
    if not checks:
        known = sorted({check.part for check in CHECKS})
        raise ValueError(f"no self-check is named {part!r}; the parts are {', '.join(map(repr, known))}")
    names = Names(namespace)
    precision()  # measured now, once per process, before any check watches JAX's events
    deadline = time.monotonic() + budget
    results = []
    verdicts = {}
    kept = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(kept), contextlib.redirect_stderr(kept):
        warnings.filterwarnings("ignore")
        for check in checks:
            if time.monotonic() > deadline:
                results.append(Result(check, "unfinished"))
                continue
            why = _blocked(check, names, deadline, verdicts)
            if why:
                results.append(Result(check, "not checked", problem=why))
            elif time.monotonic() > deadline:
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
#: Per part a check may use: ("the student's functions there, in words", "the part's name in the
#: notebook"), as the "not checked" note says them. Each assignment's checks set their own.
PARTS = {}


"""Public checks of host_sync: one SGD step, the two trainers' reads, a dynamic lr, the ledger, diagnose."""

import jax
import jax.numpy as jnp

ASSIGNMENT = "host_sync"
PARTS.update({"step": ("`sgd_step`", "Part A"),
              "reads": ("`train_reading_every_step` and `train_reading_once`", "Part B")})


def _step(theta, x, y, lr):
    """The notebook's step in NumPy: the loss before the update, the gradient of the batch mean."""
    theta, x, y = (np.asarray(a, dtype=np.float64) for a in (theta, x, y))
    residual = x @ theta - y
    return theta - lr * (2.0 / len(y)) * (x.T @ residual), float(np.mean(residual ** 2))


@public("step", "`sgd_step` returns the updated theta and the loss before the update, as a device scalar",
        "Compare Got and Expected: is the loss the one before the update, is it a device value, and does "
        "theta move against the gradient by `lr`? (Part A)")
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
            if not close(new_theta, want_theta, products=True):
                raise Mismatch("The updated theta is not one gradient step.", show(new_theta),
                               show(want_theta.astype(np.float32)))

        yield f"sgd_step({', '.join(show(np.asarray(a, dtype=np.float32)) for a in (theta, x, y))}, {lr})", run


@public("step", "`sgd_step` is jitted: one call of it is one jitted program, nothing outside it",
        "Part of one step ran outside one jitted program: which of your step's operations run eagerly, one at "
        "a time? (A timing boundary)")
def jitted(names, rng):
    def run():
        sgd_step = names.function("sgd_step")
        theta, x, y = jnp.zeros(3), jnp.ones((4, 3)), jnp.ones(4)
        staged = jax.make_jaxpr(lambda t, a, b: sgd_step(t, a, b, 0.1))(theta, x, y)
        kinds = [eqn.primitive.name for eqn in staged.jaxpr.eqns]
        programs = [k for k in kinds if k in ("jit", "pjit")]
        outside = [k for k in kinds if k not in ("jit", "pjit", "convert_element_type")]
        if not programs:
            raise Mismatch("`sgd_step` is not jitted: each of its operations runs on its own.",
                           f"operations {kinds}", "one jit equation")
        if outside or len(programs) > 1:
            raise Mismatch("`sgd_step` is not one jitted program: part of it runs outside its jit, or it makes "
                           "several jitted calls.", f"operations {kinds}", "one jit equation, nothing outside it")

    yield "jax.make_jaxpr(lambda t, x, y: sgd_step(t, x, y, 0.1))(float32[3], float32[4, 3], float32[4])", run


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
        "How often did each trainer call `read`, and with what? What does Part B allow each trainer to read, "
        "and when? (Part B)",
        uses=("step",))
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
            if not (close(losses_a, losses_b, products=True) and close(theta_a, theta_b, products=True)):
                raise Mismatch("The trainers disagree.", show(losses_b), show(losses_a))
            if not close(losses_a[0], float(np.mean(batches[0][1].astype(np.float64) ** 2))):
                raise Mismatch("The first loss should be the loss at theta = 0.", repr(losses_a[0]))

        yield f"both trainers from theta = zeros(3), lr 0.1, {steps} batch(es) of float32[4, 3] and float32[4]", run


def _placeholder_read(value):
    """`read` in a run where the values are not known yet: zeros of the value's shape."""
    if isinstance(value, (list, tuple)):
        return np.zeros(len(value), np.float32)
    return 0.0 if np.shape(value) == () else np.zeros(np.shape(value), np.float32)


#: Conversions a tracer does not refuse, in the words of the notebook's list of hidden waits.
_WAITS = {"__format__": "an f-string or `format`", "__str__": "`print`/`str`", "__repr__": "`print`/`repr`",
          "__array__": "`jax.device_get`/`np.asarray`", "block_until_ready": "`.block_until_ready()`"}


class _Waits:
    """Inside ``with``: the conversions of a device array the trainer makes outside the `read` handed to it."""

    def __init__(self):
        self.seen, self.depth, self.saved = [], 0, {}

    def read(self, value):
        self.depth += 1
        try:
            return _CountingRead()(jnp.stack(value) if isinstance(value, (list, tuple)) else value)
        finally:
            self.depth -= 1

    def __enter__(self):
        try:
            from jax._src.array import ArrayImpl
        except ImportError:  # another JAX: the traced run alone watches
            return self
        self.cls = ArrayImpl
        for method in _WAITS:
            original = ArrayImpl.__dict__.get(method)
            if original is None:
                continue
            self.saved[method] = original

            def watched(*args, _method=method, _original=original, **kwargs):
                if self.depth == 0:
                    self.seen.append(_method)
                self.depth += 1
                try:
                    return _original(*args, **kwargs)
                finally:
                    self.depth -= 1

            setattr(ArrayImpl, method, watched)
        return self

    def __exit__(self, *exc_info):
        for method, original in self.saved.items():
            setattr(self.cls, method, original)
        return False


@public("reads", "the trainers bring nothing to Python outside `read`: no `float`, `print`, f-string, "
        "`np.asarray`, `.item()`, `.tolist()`, `if` or `.block_until_ready()` on a device value",
        "The problem line names the conversion found: where in your loop does a device value become a Python "
        "value, and does the loop need it there? (The idea)",
        uses=("step",))
def hidden_waits(names, rng):
    for label in ("train_reading_every_step", "train_reading_once"):
        def traced(label=label):
            batches = _batches(2, 3)
            trainer = names.function(label)
            try:
                jax.make_jaxpr(lambda theta: trainer(theta, batches, 0.1, _placeholder_read)[0])(jnp.zeros(3))
            except Exception as error:
                message = " ".join(str(error).split())[:160]
                raise Mismatch(f"`{label}` needs a value computed in the loop as a Python value outside `read`: "
                               "a hidden wait for the device.", f"{type(error).__name__}: {message}",
                               "only `read` converts") from None

        def watched(label=label):
            batches = _batches(3, 3)
            with _Waits() as waits:
                names.function(label)(jnp.zeros(3), batches, 0.1, waits.read)
            if waits.seen:
                spoken = sorted({_WAITS[m] for m in waits.seen})
                raise Mismatch(f"`{label}` converts or waits for a device value outside `read`: a hidden wait.",
                               f"{len(waits.seen)} time(s): {', '.join(spoken)}", "none")

        where = "θ traced (no value known), so converting a loss or θ in the loop stops it"
        yield f"{label}(zeros(3), 3 batches, 0.1, read) run with {where}", traced
        yield f"{label}(zeros(3), 3 batches, 0.1, read), watching print, f-strings, device_get and blocking", watched


_EAGER = ("stack", "concatenate", "broadcast_in_dim", "expand_dims")


@public("traces", "new data and a new learning rate reuse `sgd_step`'s program, in the step and the trainers",
        "Something traced again for new data or a new learning rate: what did JAX see as new, the signature "
        "or the function itself? (Part C)",
        uses=("step", "reads"))
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
        "Your row disagrees with what JAX did while the thunk ran: is your answer observed during the call, "
        "or decided from something else? (Watching the phases)")
def ledger(names, rng):
    def run():
        def shrink(v, rate):  # a new function each run, so nothing of it is cached yet
            return v - rate * v

        shrinker = jax.jit(shrink)
        v4, v3, v5 = jnp.arange(4.0), jnp.arange(3.0), jnp.arange(5.0)
        phases = [("trace only", lambda: shrinker.trace(v4, 0.5), (True, False)),
                  ("call after trace", lambda: shrinker(v4, 0.5), (False, True)),
                  ("cached call, new rate", lambda: shrinker(v4, 0.25), (False, False)),
                  ("lower only, a new shape", lambda: shrinker.lower(v3, 0.5), (True, False)),
                  ("lower and compile after a trace", lambda: shrinker.lower(v5, 0.5).compile(), (False, True))]
        for label, thunk, (traced, compiled) in phases:
            if label.endswith("after a trace"):
                shrinker.trace(v5, 0.5)  # outside the thunk: the trace at shape 5 is cached
            row = names.function("phase_row")(label, thunk)
            if not isinstance(row, dict) or not {"label", "traced", "compiled", "traces", "compiles"} <= set(row):
                raise Mismatch(f"The row for {label!r} lacks a key.", show(row),
                               "keys label, traced, compiled, traces, compiles")
            if (bool(row["traced"]), bool(row["compiled"])) != (traced, compiled):
                raise Mismatch(f"The {label!r} row's traced and compiled columns are not what JAX did.",
                               f"traced={row['traced']}, compiled={row['compiled']}",
                               f"traced={traced}, compiled={compiled}")

    yield ("a fresh jit of v - rate * v: .trace(v4, 0.5), then a call, then a call with a new rate, then "
           ".lower(v3, 0.5), then .lower(v5, 0.5).compile() after .trace(v5, 0.5)"), run


@public("diagnosis", "`diagnose` says \"traces\", \"waits\" and \"compiles\" for the lesson's three loops, and "
        "\"waits\" for a loop that only lowers",
        "Run the example's loop yourself with the compile log on: which messages does each repeat print, and "
        "what does each message mean? (JAX's own compile log)")
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

    def lowers():
        tiny, _ = fresh()
        nine = jnp.ones(9)
        tiny.trace(nine, 0.1)

        def loop():
            for _ in range(2):
                tiny.lower(nine, 0.1)

        got = names.function("diagnose")(loop)
        if got != "waits":
            raise Mismatch("Lowering a program traced before logs *Compiling* but compiles nothing, and traces "
                           "nothing.", repr(got), repr("waits"))

    yield "a loop that jits a new lambda at each of 2 steps", traces_each_step
    yield "a loop that calls a compiled step twice and reads each result", waits
    yield "a call of a jitted function at a shape it was traced at (`.trace`) but never compiled", compiles
    yield "a loop that only lowers (`.lower`) a program traced earlier, twice", lowers
