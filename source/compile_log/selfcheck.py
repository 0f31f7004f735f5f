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


"""Public checks of compile_log: the capture holds the work's records and leaves JAX's option as it was; the
programs listed match two short sessions JAX logged on 0.12.0.1. A failure says what was observed and asks; it never
names the way to capture or to read."""

import itertools

import jax
import jax.numpy as jnp

ASSIGNMENT = "compile_log"
_PROBES = itertools.count(3)


def _selfcheck_probe(v, s):
    return jnp.tanh(v * s) + 1.0


def _fresh_work():
    """A work that makes a new jitted function and calls it at a length no other work used."""
    length = next(_PROBES) + 40

    def work():
        jax.jit(_selfcheck_probe)(np.linspace(0.0, 1.0, length, dtype=np.float32), 0.5)

    return work, length


def _text(names, work):
    text = names.function("compile_log_of")(work)
    if not isinstance(text, str):
        raise Mismatch("`compile_log_of` should return a string.", type(text).__name__, "str")
    return text


@public("capture", "`compile_log_of(work)` returns a text that names the function the work compiled, and the "
        "types of its arguments", "The work made JAX trace, lower and compile `_selfcheck_probe` at float32[n], and your "
        "text does not say so. Was JAX writing its compile log while the work ran, and did each record reach your "
        "text whole? (Part A)")
def capture_names_the_work(names, rng):
    def run():
        work, length = _fresh_work()
        text = _text(names, work)
        shown = text if len(text) < 160 else text[:157] + "..."
        if "_selfcheck_probe" not in text or f"float32[{length}]" not in text:
            raise Mismatch("The text does not name the function the work compiled, and its argument types.",
                           repr(shown), f"a text naming `_selfcheck_probe` and float32[{length}]")

    yield "compile_log_of(work), where work() calls a new jax.jit(_selfcheck_probe) at float32[n]", run


@public("capture", "`compile_log_of` leaves JAX's option as it was, off or on, and a second text holds only its own work",
        "Something of one call outlived it. What did your function change while the work ran, and is it as it "
        "was once your function returns? (Part A)")
def capture_leaves_things_as_found(names, rng):
    def run():
        saved = jax.config.jax_log_compiles
        try:
            for option in (False, True):
                jax.config.update("jax_log_compiles", option)
                work, _ = _fresh_work()
                _text(names, work)
                after = jax.config.jax_log_compiles
                if after != option:
                    raise Mismatch(f"With `jax_log_compiles` {'on' if option else 'off'} before the call, it changed.",
                                   f"{after!r} after the call", f"{option!r}, as before it")
                text = _text(names, lambda: None)
                if "_selfcheck_probe" in text:
                    raise Mismatch("A work that compiles nothing got a text naming the earlier work's function.",
                                   "a text naming `_selfcheck_probe`", "nothing of the earlier work")
        finally:
            jax.config.update("jax_log_compiles", saved)

    yield "compile_log_of(work), then compile_log_of(lambda: None), with the option off and then on", run


#: Two short sessions JAX 0.12.0.1 logged with `jax_log_compiles` on, as a handler wrote them, and what
#: JAX's own monitoring events said each function did while they ran.
_DOUBLE = """\
Finished tracing double for jit in 0.001671791 sec
Compiling jit(double) with global shapes and types (ShapedArray(float32[3]), ShapedArray(float32[], weak_type=True)). Argument mapping: (UnspecifiedValue, UnspecifiedValue).
Finished jaxpr to MLIR module conversion jit(double) in 0.001947880 sec
Finished XLA compilation of jit(double) in 0.033308983 sec
Finished tracing double for jit in 0.001707315 sec
Compiling jit(double) with global shapes and types (ShapedArray(float32[5]), ShapedArray(float32[], weak_type=True)). Argument mapping: (UnspecifiedValue, UnspecifiedValue).
Finished jaxpr to MLIR module conversion jit(double) in 0.001475334 sec
Finished XLA compilation of jit(double) in 0.031301022 sec
"""
_NORM_STEP = """\
WARNING:jax._src.dispatch:Finished tracing norm_step for jit in 0.001913548 sec
INFO:train:epoch 1 finished in 2.31 sec
WARNING:jax._src.interpreters.pxla:Compiling jit(norm_step) with global shapes and types (ShapedArray(float32[4]), ShapedArray(float32[], weak_type=True)). Argument mapping: (UnspecifiedValue, UnspecifiedValue).
WARNING:jax._src.dispatch:Finished jaxpr to MLIR module conversion jit(norm_step) in 0.002134562 sec
WARNING:jax._src.dispatch:Finished XLA compilation of jit(norm_step) in 0.025539160 sec
WARNING:jax._src.dispatch:Finished tracing norm_step for jit in 0.002349377 sec
WARNING:jax._src.interpreters.pxla:Compiling jit(norm_step) with global shapes and types (ShapedArray(float32[6]), ShapedArray(float32[], weak_type=True)). Argument mapping: (UnspecifiedValue, UnspecifiedValue).
WARNING:jax._src.dispatch:Finished jaxpr to MLIR module conversion jit(norm_step) in 0.001618862 sec
WARNING:jax._src.dispatch:Finished XLA compilation of jit(norm_step) in 0.023297787 sec
"""
_T = "(ShapedArray(float32[{}]), ShapedArray(float32[], weak_type=True))"
_SESSIONS = (
    ("the log of `double(x, 0.5)` at float32[3], again at float32[3], then at float32[5] (messages alone)",
     _DOUBLE, "double", [_T.format(3), _T.format(5)]),
    ("the log of `norm_step.trace(x, 0.5)` at float32[4], then `norm_step(x, 0.5)` at float32[4] and at "
     "float32[6] (logging's basic format, one line of another logger)", _NORM_STEP, "norm_step",
     [_T.format(4), _T.format(6)]),
)


@public("programs", "`compiled_programs` lists the programs XLA compiled in two short sessions JAX logged",
        "Your list differs from the programs JAX compiled in this session. Which step of it made which records? "
        "Run the same steps yourself, with your Part A keeping the log, and compare. (Part B)")
def programs_of_two_sessions(names, rng):
    for words, text, name, expected in _SESSIONS:
        def run(text=text, name=name, expected=expected):
            got = names.function("compiled_programs")(text)
            if not isinstance(got, dict):
                raise Mismatch("`compiled_programs` should return a dict.", type(got).__name__, "dict")
            listed = got.get(name)
            if not isinstance(listed, (list, tuple)) or ["".join(str(t).split()) for t in listed] != [
                    "".join(t.split()) for t in expected]:
                raise Mismatch(f"The programs listed for `{name}` differ.", repr(listed), repr(expected))

        yield words, run
