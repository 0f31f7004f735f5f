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


"""Public checks of loops: the rolled loop, equation counts, one jitted map, the heaviest line."""

import functools

import jax
import jax.numpy as jnp
from jax import lax

ASSIGNMENT = "loops"


def _loop(x, steps):
    """The notebook's loop, x -> 0.5 * x + sin(x), in NumPy."""
    x = np.asarray(x, dtype=np.float64)
    for _ in range(steps):
        x = 0.5 * x + np.sin(x)
    return x


def _one_level(closed):
    """Equations directly inside the top-level equations (enough here; Part B counts everything)."""
    return sum(len(sub.jaxpr.eqns) for eqn in closed.jaxpr.eqns for sub in [eqn.params.get("jaxpr")] if sub)


@public("rolled", "`rolled` gives the loop's result at 0, 1, 3 and 30 steps, as float32 of x's shape (any shape)",
        "Which step count gave another result? Does your loop take the step that many times, zero included, "
        "keeping x's shape and dtype? (The two slow functions)")
def rolled_values(names, rng):
    x = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    cases = [(x, steps) for steps in (0, 1, 3, 30)]
    cases += [(np.array([[0.25, -1.0], [3.0, 0.0]], dtype=np.float32), 4), (np.array(1.5, dtype=np.float32), 2)]
    cases += [(rng.uniform(-2, 2, 3).astype(np.float32), int(rng.integers(2, 12)))]
    for values, steps in cases:
        def run(values=values, steps=steps):
            got = names.function("rolled")(jnp.asarray(values), steps)
            if np.shape(got) != values.shape or np.asarray(got).dtype != np.float32:
                raise Mismatch("`rolled` should return float32 of x's shape.", show(got), f"float32{list(values.shape)}")
            if not close(got, _loop(values, steps)):
                raise Mismatch("`rolled` does not give the loop's result.", show(got),
                               show(_loop(values, steps).astype(np.float32)))

        yield f"rolled({show(values)}, {steps})", run


@public("rolled", "`rolled`'s jaxpr does not grow with the step count",
        "The program grew with the step count: what does tracing a Python loop leave in the jaxpr for every "
        "turn? (Worked example: the jaxpr of the unrolled loop at 3 and at 30 steps)")
def rolled_does_not_grow(names, rng):
    def run():
        rolled = names.function("rolled")
        x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
        few = _one_level(jax.make_jaxpr(lambda v: rolled(v, 3))(x))
        many = _one_level(jax.make_jaxpr(lambda v: rolled(v, 30))(x))
        if many > few:
            raise Mismatch("The jaxpr grows with the steps.", f"{few} equations at 3 steps, {many} at 30",
                           "no more at 30 than at 3")

    yield "jax.make_jaxpr(lambda v: rolled(v, 3)) and (v, 30), equations inside the jit", run

    def staged_loop():
        rolled = names.function("rolled")
        x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
        loops = []

        def visit(jaxpr):
            for eqn in jaxpr.eqns:
                if eqn.primitive.name in ("scan", "while"):
                    loops.append(eqn)
                held = [v for p in eqn.params.values() for v in (p if isinstance(p, (tuple, list)) else (p,))]
                for item in held:
                    inner = getattr(item, "jaxpr", item)
                    if hasattr(inner, "eqns"):
                        visit(inner)

        visit(jax.make_jaxpr(lambda v: rolled(v, 40))(x).jaxpr)
        if not loops:
            raise Mismatch("At 40 steps the jaxpr holds no `scan` or `while` equation: the loop was not staged.",
                           "no scan or while", "a scan or while equation")
        unrolls = [eqn.params.get("unroll", 1) for eqn in loops if eqn.primitive.name == "scan"]
        if any(u is True or (not isinstance(u, bool) and isinstance(u, int) and u >= 40) for u in unrolls):
            raise Mismatch("At 40 steps the scan unrolls the whole loop (`unroll=True` or 40 and more).",
                           f"unroll={unrolls}", "a fixed unroll below 40")

    yield "jax.make_jaxpr(lambda v: rolled(v, 40))(float32[3]): a scan or while equation, not fully unrolled", staged_loop


@functools.partial(jax.jit, static_argnames="steps")
def _unrolled(x, steps):
    for _ in range(steps):
        x = 0.5 * x + jnp.sin(x)
    return x


@public("counting", "`count_equations` counts the lesson's small functions right, nested jit equations included",
        "Print the example's jaxpr: where do the equations of a nested jit or loop body live, and did your "
        "count reach them? (Part B)")
def counts(names, rng):
    x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
    cases = [
        ("lambda v: v", lambda v: v, (x,), 0),
        ("lambda v: jnp.sin(v) * 2.0", lambda v: jnp.sin(v) * 2.0, (x,), 2),
        ("lambda v, w: jax.jit(jnp.cos)(v + w)", lambda v, w: jax.jit(jnp.cos)(v + w), (x, x), 3),
        ("the notebook's `unrolled` at 3 steps (one jit equation holding 9)", lambda v: _unrolled(v, 3), (x,), 10),
        ("a `lax.scan` of 4 steps whose body is sin then * 2.0 (1 + 2)",
         lambda v: lax.scan(lambda c, _: (jnp.sin(c) * 2.0, None), v, None, length=4)[0], (x,), 3),
        ("a `lax.while_loop` whose cond holds 1 equation and whose body holds 2 (1 + 1 + 2)",
         lambda v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, v))[1], (x,), 4),
        ("a `lax.cond` after 4 equations, its two branches holding 1 and 2 (5 + 1 + 2)",
         lambda v: lax.cond(v[0] > 0.0, jnp.sin, lambda w: jnp.cos(w) * 2.0, v), (x,), 8),
    ]
    for text, fn, args, expected in cases:
        def run(fn=fn, args=args, expected=expected):
            got = names.function("count_equations")(fn, *args)
            if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
                raise Mismatch("`count_equations` should return a Python int.", f"{type(got).__name__} {got!r}", "int")
            if got != expected:
                raise Mismatch("`count_equations` gives another count.", repr(got), repr(expected))

        yield f"count_equations({text}, float32[3])", run


def _quantise(tree, scale):
    return jax.tree.map(lambda x: jnp.round(x / scale) * scale, tree)


@public("pytree", "`quantise_jitted` gives eager `quantise`'s tree, as one jitted call",
        "Where does your tree differ from the expected one: structure, dtypes or values? And how many "
        "programs does one call of your function run? (Part C)")
def quantised(names, rng):
    trees = [{"w": jnp.array([[0.26, -0.74], [1.6, 2.4]]), "b": [jnp.array([0.1, -0.3, 0.9])]}]
    trees += [{"a": jnp.asarray(rng.uniform(-3, 3, (2, 3)).astype(np.float32)),
               "c": (jnp.asarray(rng.uniform(-3, 3, 4).astype(np.float32)),)}]
    trees += [[jnp.array([0.25, 0.75, -0.25, 1.25, -0.75], dtype=jnp.float32)]]  # exact halves of the scale
    for tree, scale in ((trees[0], 0.5), (trees[1], 0.25), (trees[2], 0.5)):
        def run(tree=tree, scale=scale):
            got = names.function("quantise_jitted")(tree, scale)
            want = _quantise(tree, scale)
            if jax.tree.structure(got) != jax.tree.structure(want):
                raise Mismatch("The tree changed its structure.", str(jax.tree.structure(got)),
                               str(jax.tree.structure(want)))
            for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
                if not close(g, w, rtol=0, atol=1e-6):
                    raise Mismatch("A leaf differs from eager `quantise`'s.", show(g), show(w))

        yield f"quantise_jitted({jax.tree.map(show, tree)}, {scale})", run

    def one_call():
        staged = jax.make_jaxpr(names.function("quantise_jitted"))(trees[0], 0.5)
        primitives = [eqn.primitive.name for eqn in staged.jaxpr.eqns]
        jits = [name for name in primitives if name in ("jit", "pjit")]
        if len(jits) != 1 or "round" in primitives:
            raise Mismatch("`jax.make_jaxpr(quantise_jitted)` should show the whole map inside one jit equation.",
                           str(primitives), "one jit equation, and no `round` outside it")

    yield "jax.make_jaxpr(quantise_jitted)(the first tree, 0.5)", one_call

    def new_scale():
        quantise_jitted = names.function("quantise_jitted")
        tree = {"p": jnp.ones((3, 2), jnp.float32), "q": (jnp.arange(5.0, dtype=jnp.float32),)}
        quantise_jitted(tree, 0.5)
        with TraceCount() as watch:
            for scale in (0.25, 2.0, 0.1):
                quantise_jitted(tree, scale)
        if watch.count:
            raise Mismatch("A new `scale` traced again: `scale` should stay a runtime argument.", str(watch.names),
                           "no trace")

    yield "quantise_jitted on one tree at scale 0.5, then at 0.25, 2.0 and 0.1", new_scale


def _many_short_turns(v):
    for _ in range(10):
        v = jnp.sin(v)  # one equation a turn
    for _ in range(2):
        v = jnp.cos(v) * 2.0 + 1.0  # three equations a turn
    return v


def _one_long_line(v):
    v = lax.fori_loop(0, 1000, lambda i, w: jnp.sin(w) * 2.0, v)
    return jnp.tanh(jnp.cos(v) + 1.0) * 0.5 - v


@public("attribution", "`heaviest_line` names the line that made the most equations, as a Python int",
        "Which line did you name, and which made more equations? Which source line does each equation carry, "
        "nested ones included? (Part D)")
def heaviest(names, rng):
    x = jnp.array([0.5, 1.0, 2.0], dtype=jnp.float32)
    first = _many_short_turns.__code__.co_firstlineno
    long_first = _one_long_line.__code__.co_firstlineno
    cases = [
        (_many_short_turns, first + 2, f"a function whose line {first + 2} makes 10 equations, line {first + 4} 6"),
        (_one_long_line, long_first + 2, f"a function whose line {long_first + 2} makes 5 equations, "
                                         f"line {long_first + 1} 3 (inside a fori_loop)"),
    ]
    for fn, expected, text in cases:
        def run(fn=fn, expected=expected):
            got = names.function("heaviest_line")(fn, x)
            if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
                raise Mismatch("`heaviest_line` should return a Python int.", f"{type(got).__name__} {got!r}", "int")
            if got != expected:
                raise Mismatch("`heaviest_line` names another line.", repr(got), repr(expected))

        yield text, run
