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
        if self.status == "not checked":
            return [f"  NOTE  Not checked: {self.check.title}", " " * 8 + self.problem]
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


def _used(part):
    """How a check that uses ``part`` names it: the student's functions there, and the part's name."""
    functions, label = PARTS.get(part, ("", ""))
    label = label or f'the part checked by self_check("{part}")'
    return (f"your {functions}" if functions else label), label


def _blocked(check, names, deadline, verdicts):
    """Why ``check`` is not run (an earlier part it uses fails its own checks), or "" when it may run.

    Each used part's checks run once per :func:`run`, its own uses first; ``verdicts`` keeps their
    outcome ("pass", "fail" or "unfinished") for the other checks of the same run.
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


"""Public checks of branch_repair: the branch's two totals, its failure under jit, and a dynamic gain."""

import functools

import jax
import jax.numpy as jnp

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
        "Write the Python `if gain > 1.0:` the lesson shows; it is right eagerly and fails only under jit.")
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
        "Under jit, `gain` is a tracer with no value yet: a Python `if` on it cannot choose a branch.")
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
        "Choose between the two totals with `lax.cond(gain > 1.0, ...)` or `jnp.where`; keep `gain` a runtime value.")
def repaired_totals(names, rng):
    for values, gain in _branch_cases(rng, (-3.0, 0.0, 0.5, 1.0, 1.001, 2.0, 50.0)):
        for given, how in ((gain, repr(gain)), (jnp.float32(gain), f"float32[] {gain!r}")):
            run = functools.partial(_total_matches, names, values, gain, given)
            yield f"repaired({show(values)}, {how})", run


_ABOVE_ONE = float(np.nextafter(np.float32(1.0), np.float32(2.0)))  # 1.0000001, the next float32


@public("repair", "`repaired` keeps the notebook's details: int32 and 2-D batches, a nan gain, the strict threshold "
        "at the next float32 above 1.0, and a choice, not a blend, when run op by op",
        "Compare `gain > 1.0` exactly (no tolerance, `>` not `>=`), and choose with `lax.cond` or `jnp.where` between "
        "the two totals; a 0/1 weight times a total that overflowed to `inf` gives `nan` under `jax.disable_jit()`.")
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
        "A static `gain` compiles one program per gain value: leave it out of `static_argnames`.")
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
