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


"""Public checks of ledger_extension: the ledger's rows, their traced flags, the sixteen row, signature_of.

The ledger is a list the graded cells read too: these checks add a few rows of their own (an int32
matrix, a random float32 vector, lengths 5, 5 and 7), each labelled as what it is. The notebook's
first three rows are checked where they are (a ledger built without them skips those examples).
"""

import jax.numpy as jnp

ASSIGNMENT = "ledger_extension"


_FIRST = (("first call", 140.0), ("new values", 204.0), ("new scale", 280.0))


def _rows(names):
    rows = names["call_rows"]
    if not isinstance(rows, list):
        raise Mismatch(f"`call_rows` should be a list, but it is a {type(rows).__name__}.")
    return rows


def _has_first_rows(names):
    """Whether the ledger starts with the notebook's three worked rows (labelled as the notebook labels them)."""
    rows = names["call_rows"]
    return isinstance(rows, list) and [row.get("label") for row in rows[:3] if isinstance(row, dict)] == [
        label for label, _ in _FIRST]


def _row(names, index):
    return _rows(names)[index]


@public("rows", "each row records the call's shape (a tuple), dtype (a string) and result (a float)",
        "Compare Got with Expected: which field of the row is missing, or of another type? (The ledger you "
        "will extend)")
def rows(names, rng):
    for index, (label, result) in enumerate(_FIRST if _has_first_rows(names) else ()):
        def run(index=index, label=label, result=result):
            row = _row(names, index)
            got = {key: row.get(key) for key in ("label", "shape", "dtype", "result", "static")}
            expected = {"label": label, "shape": (8,), "dtype": "float32", "result": result, "static": {}}
            for key, want in expected.items():
                if type(got[key]) is not type(want) or got[key] != want:
                    raise Mismatch(f"The row's {key!r} is not what the call was.", show(got[key]), repr(want))

        yield f"call_rows[{index}], the {label!r} row of float32[8]", run

    def matrix():
        rows = names["call_rows"]
        before = len(rows)
        returned = names.function("observed_call")("int32 matrix", jnp.arange(6, dtype=jnp.int32).reshape(2, 3), 2.0)
        if len(rows) != before + 1:
            raise Mismatch("`observed_call` should append exactly one row.", f"{len(rows) - before} new rows", "1")
        row = rows[-1]
        got = (row.get("shape"), row.get("dtype"), row.get("result"), returned)
        if got != ((2, 3), "int32", 110.0, 110.0):
            raise Mismatch("The int32 matrix row does not record the call.", f"shape, dtype, result, returned = {got}",
                           "((2, 3), 'int32', 110.0, 110.0)")

    yield "observed_call('int32 matrix', int32[2, 3] [[0, 1, 2], [3, 4, 5]], 2.0)", matrix

    values, scale = rng.uniform(-3, 3, 5).astype(np.float32), float(rng.uniform(0.5, 2.0))

    def vector():
        returned = names.function("observed_call")("self-check vector", jnp.asarray(values), scale)
        row = _rows(names)[-1]
        expected = float(jnp.asarray(scale, dtype=jnp.float32) * jnp.sum(jnp.asarray(values) ** 2))
        got = (row.get("shape"), row.get("dtype"))
        if got != ((5,), "float32") or type(row.get("result")) is not float:
            raise Mismatch("The row does not record the call's shape, dtype and a float result.",
                           f"shape, dtype, result = {got + (row.get('result'),)}", "((5,), 'float32', a float)")
        if abs(row["result"] - expected) > 1e-4 * max(1.0, abs(expected)) or returned != row["result"]:
            raise Mismatch("The row's result (or the returned value) is not the call's result.",
                           f"row {row['result']!r}, returned {returned!r}", repr(expected))

    yield f"observed_call('self-check vector', {show(values)}, {scale:.4g})", vector

    ints = jnp.array([1, 2, 3], dtype=jnp.int32)
    for given, how, expected in ((3, "3 (a Python int)", 42.0), (np.float32(0.5), "np.float32(0.5)", 7.0),
                                 (jnp.float32(2.0), "jnp.float32(2.0) (a float32 array)", 28.0)):
        def kinds(given=given, how=how, expected=expected):
            returned = names.function("observed_call")(f"scale {how}", ints, given)
            row = _rows(names)[-1]
            got = (row.get("shape"), row.get("dtype"), row.get("result"))
            if got != ((3,), "int32", expected) or type(row.get("result")) is not float or type(returned) is not float:
                raise Mismatch("The row does not record the call, or its result (or the returned value) is not a "
                               "Python float.", f"shape, dtype, result = {got}, returned {returned!r}",
                               f"((3,), 'int32', {expected!r}), returned {expected!r}")

        yield f"observed_call('scale {how}', int32[3] [1, 2, 3], {how})", kinds


@public("traces", "the first rows' traced flags, and fresh calls' flags and counts, agree with JAX's own trace events",
        "Your traced flag disagrees with JAX's own trace event for that call: is your flag observed during "
        "the call, or guessed from its arguments? (Worked example: a counter inside the function)")
def traced(names, rng):
    def first_rows():
        first, new_values, new_scale = (_row(names, i) for i in range(3))
        for row in (first, new_values, new_scale):
            if not isinstance(row.get("traced"), (bool, np.bool_)):
                raise Mismatch(f"The {row.get('label')!r} row's traced should be a bool.", show(row.get("traced")))
        flags = [bool(row["traced"]) for row in (first, new_values, new_scale)]
        if flags != [True, False, False]:
            raise Mismatch("The first three rows' traced flags are not what JAX did.", str(flags), "[True, False, False]")

    if _has_first_rows(names):
        yield "the first three rows: first call, new values, new scale", first_rows
    for length in (5, 5, 7):
        def fresh(length=length):
            x = jnp.ones(length, dtype=jnp.float32)
            with TraceCount() as watch:
                names.function("observed_call")(f"fresh length {length}", x, 0.5)
            row = names["call_rows"][-1]
            jax_traced = "scaled_square_sum" in watch.names
            if bool(row.get("traced")) != jax_traced:
                raise Mismatch("The row's traced flag is not what JAX did.", f"traced={row.get('traced')}",
                               f"traced={jax_traced}")
            count = names["trace_log"]["count"]
            if row.get("trace_count") != count:
                raise Mismatch("The row's trace_count is not trace_log's count after the call.",
                               repr(row.get("trace_count")), repr(count))

        yield f"observed_call('fresh length {length}', float32[{length}] ones, 0.5)", fresh

    def observed(label, x, scale, before=None):
        def run():
            if before is not None:
                before(names["compiled_square_sum"])
            with TraceCount() as watch:
                names.function("observed_call")(label, x, scale)
            row = names["call_rows"][-1]
            jax_traced = "scaled_square_sum" in watch.names
            if not isinstance(row.get("traced"), (bool, np.bool_)) or bool(row["traced"]) != jax_traced:
                raise Mismatch("The row's traced flag is not what JAX did.", f"traced={row.get('traced')}",
                               f"traced={jax_traced}")

        return run

    x6 = jnp.full(6, 0.5, dtype=jnp.float32)
    yield ("`compiled_square_sum.trace(float32[6], 0.5)` (traced, not compiled), then "
           "observed_call('after .trace', float32[6], 0.5)"), observed(
        "after .trace", x6, 0.5, before=lambda f: f.trace(x6, 0.5))
    yield ("`compiled_square_sum.clear_cache()`, then observed_call('after clear_cache', float32[6], 0.5), a shape "
           "met before"), observed("after clear_cache", x6, 0.5, before=lambda f: f.clear_cache())
    yield ("observed_call('scale float32 array', float32[6], jnp.float32(0.5)) after the Python float 0.5"), observed(
        "scale float32 array", x6, jnp.float32(0.5))


@public("sixteen", "a row labelled 'new length sixteen' records float32[16] and its result",
        "Is there one row with that label, recorded by the ledger for a float32 array of sixteen values? "
        "(Part B)")
def sixteen(names, rng):
    def run():
        found = [row for row in names["call_rows"] if row.get("label") == "new length sixteen"]
        if not found:
            raise Mismatch("No row is labelled 'new length sixteen'.")
        row = found[0]
        got = (row.get("shape"), row.get("dtype"), row.get("result"))
        if got != ((16,), "float32", 1240.0):
            raise Mismatch("The sixteen row does not record the call.", f"shape, dtype, result = {got}",
                           "((16,), 'float32', 1240.0)")

    yield "the row labelled 'new length sixteen'", run


def _calls(rng):
    x3 = jnp.arange(3.0)
    yield "x float32[3], scale 1.0, power 2; then new values of x and scale", ((x3, 1.0), {"power": 2}), (
        (x3 + 1.0, 5.0), {"power": 2}), True
    yield "x float32[3]; then x float32[4] (a new shape)", ((x3, 1.0), {"power": 2}), (
        (jnp.arange(4.0), 1.0), {"power": 2}), False
    for _ in range(2):
        n = int(rng.integers(2, 6))
        a, b = (jnp.asarray(rng.uniform(-2, 2, n).astype(np.float32)) for _ in range(2))
        yield f"x float32[{n}], random values; then other random values, same shape", ((a, 0.5), {"power": 3}), (
            (b, 2.0), {"power": 3}), True


def _traced_again(first, second):
    """Whether the second call traced, made right after the first, on a fresh jit of the notebook's computation."""
    import jax

    def powered_sum(x, scale, power):
        return sum(jnp.sum(scale * leaf ** power) for leaf in jax.tree.leaves(x))

    compiled = jax.jit(powered_sum, static_argnames=("power",))
    compiled(*first[0], **first[1])
    with TraceCount() as watch:
        compiled(*second[0], **second[1])
    return "powered_sum" in watch.names


def _kinds():
    """The notebook's questions, each a pair of calls that differ in one way; JAX answers each."""
    x3 = jnp.arange(3.0)
    two = ((x3, 2.0), {"power": 2})
    yield "scale 2 (an int), then 2.0", ((x3, 2), {"power": 2}), two
    yield "scale 2.0, then np.float32(2.0)", two, ((x3, np.float32(2.0)), {"power": 2})
    yield "scale 2.0, then jnp.array(2.0)", two, ((x3, jnp.array(2.0)), {"power": 2})
    yield "scale by position, then by keyword", two, ((x3,), {"scale": 2.0, "power": 2})
    yield "x a tuple of two float32[3], then a list of them", (((x3, x3), 1.0), {"power": 1}), (([x3, x3], 1.0),
                                                                                            {"power": 1})
    yield "power 2, then power 3", two, ((x3, 2.0), {"power": 3})
    yield "x float32[3], then int32[3]", two, ((jnp.arange(3, dtype=jnp.int32), 2.0), {"power": 2})
    yield "x a dict of two float32[2, 2], then new values", (({"a": jnp.ones((2, 2)), "b": jnp.zeros((2, 2))}, 1.5),
                                                             {"power": 1}), (({"a": jnp.zeros((2, 2)),
                                                                              "b": jnp.ones((2, 2))}, 0.5), {"power": 1})


@public("signature", "`signature_of` agrees with JAX on the notebook's questions: int or float scale, NumPy or JAX "
        "scalar, keyword or position, tuple or list, a new power, a new dtype",
        "For this pair of calls JAX's answer (a new trace or not) and your signatures' (equal or not) differ: "
        "what changed between the two calls, and does your signature hold it? (Part C)")
def kinds(names, rng):
    for text, first, second in _kinds():
        def run(first=first, second=second):
            signature_of = names.function("signature_of")
            a, b = signature_of(*first), signature_of(*second)
            traced = _traced_again(first, second)
            if (a == b) == traced:
                raise Mismatch("JAX " + ("traced again, so the signatures should differ." if traced else
                                         "reused the program, so the signatures should be equal."),
                               f"equal = {a == b}", f"equal = {not traced}")

        yield text, run


@public("signature", "`signature_of` is hashable, stable, equal for new values and different for a new shape",
        "Which difference between the two calls (see Example) does your signature record that JAX's cache "
        "ignores, or ignore that it records? (Part C)")
def signature(names, rng):
    for text, first, second, same in _calls(rng):
        def run(first=first, second=second, same=same):
            signature_of = names.function("signature_of")
            a = signature_of(*first)
            try:
                hash(a)
            except TypeError:
                raise Mismatch(f"`signature_of` returned a {type(a).__name__}, which is not hashable.") from None
            if signature_of(*first) != a:
                raise Mismatch("The same call gave two different signatures.")
            b = signature_of(*second)
            if (a == b) != same:
                raise Mismatch("JAX " + ("reused the program, so the signatures should be equal." if same else
                                         "traced again, so the signatures should differ."),
                               f"equal = {a == b}", f"equal = {same}")

        yield text, run
