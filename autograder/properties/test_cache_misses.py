"""cache_misses: three repairs of a jit built on every call, and `miss_cause`, which names why
JAX missed its tracing cache.

The repairs are `scaled_norm(x, scale)`, `smooth(x, steps)` (`steps` chooses the program:
static, or a loop bound inside the program) and `clipped_mean(x, low, high)`. Their values are
judged against NumPy in float64, compiled and op by op; their traces by JAX's own trace events
(never a fixed count: at most one trace per signature, whatever the number of calls).

`miss_cause(explanation)` is judged on explanations JAX really logs: the grader runs call
sequences of its own while :class:`autograder.kit.cache_log.CacheMissLog` captures JAX's
explanations, reads each with its own :func:`classify`, and hands the student's function the
very same text. An explanation the grader cannot read is skipped, never held against the student.
The texts differ from one notebook graded to the next (:class:`_Draw`: the scenario's function
and file names, its line numbers, the sizes of its arrays and its static values are drawn for each
notebook, the kind of every change kept), so a table of the texts one run handed over names no
cause in the next.
"""

from __future__ import annotations

import itertools
import re
import secrets
import string
from dataclasses import dataclass

import jax
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from autograder.kit import precision
from autograder.kit import (
    CallRaised, PropertyFailure, SignatureAudit, TRACES, VALUES, close, first_failure, float32_values, op_by_op,
    prop,
    render, scalar, signature_of, vectors,
)
from autograder.kit.cache_log import CAUSES, CacheMissLog, classify

#: Value checks: each new shape is a compile of the student's function, so few examples.
_FEW = settings(VALUES, max_examples=10)
#: Two shapes: a vector and a 2-D block (every element counts, not only the first axis).
_VALUE_SHAPES = ((3,), (2, 3))
_SCALES = st.floats(-8.0, 8.0, allow_nan=False, width=32)
_SMOOTH_LENGTH = 5
_STEPS = (1, 2)


def _both_ways(call, x, *numbers, data=True):
    """The student's result compiled (as called) and op by op (every jit disabled).

    Op by op, the numbers are first passed as they are, Python numbers (a plain wrapper may use
    one as it is, say as a dictionary key). If that raises and the numbers are data, they are
    passed again as jit hands them to a jitted function, weakly typed arrays (so `scale.astype(...)`,
    right under jit, is right here too); only if both raise is the first error the student's."""
    compiled = call(x, *numbers)
    try:
        eager = op_by_op(lambda v: call(v, *numbers), x)
    except CallRaised:
        if not data:
            raise
        try:
            eager = op_by_op(lambda v, *values: call(v, *values), x, *numbers)
        except CallRaised:
            eager = op_by_op(lambda v: call(v, *numbers), x)  # raises the first error again
    return ((compiled, ""), (eager, " run op by op"))


def _judge(name, text, results, expected, magnitude):
    for got, how in results:
        value = scalar(got, text)
        if not close(value, expected, magnitude):
            raise PropertyFailure(
                f"`{name}` gives a different number from the original `{name}_slow`{how}.",
                example=text, got=repr(value), expected=repr(expected),
            )


# --- values -----------------------------------------------------------------------------

@prop(
    group="repairs",
    points=1,
    title="`scaled_norm` computes what `scaled_norm_slow` computed, for any array and scale",
    hint="Only where the program is built should change: `scale` becomes an argument of the jitted function, "
    "and the arithmetic stays sqrt(sum((scale * x) ** 2)) over every element.",
)
def test_scaled_norm_matches_original(submission):
    submission.function("scaled_norm")

    @_FEW
    @given(values=float32_values(_VALUE_SHAPES), scale=_SCALES)
    @example(values=np.array([3.0, 4.0, 0.0], np.float32), scale=2.0)
    @example(values=np.array([1.0, -2.0, 0.5], np.float32), scale=-0.5)  # same shape: nothing may be baked in
    @example(values=np.array([[1.0, -2.0, 2.0], [0.0, 0.5, -0.5]], np.float32), scale=-1.5)
    def check(values, scale):
        x = jax.device_put(values)
        text = render.call("scaled_norm", (x, scale))
        wide = values.astype(np.float64)
        expected = float(np.sqrt(np.sum((scale * wide) ** 2)))
        results = _both_ways(lambda v, s: submission.call("scaled_norm", v, s), x, scale)
        _judge("scaled_norm", text, results, expected, abs(expected))

    check()


def _smoothed(values: np.ndarray, steps: int) -> np.ndarray:
    out = values.astype(np.float64)
    for _ in range(steps):
        out = (np.roll(out, 1) + out + np.roll(out, -1)) / 3.0
    return out


@prop(
    group="repairs",
    points=1,
    title="`smooth` computes what `smooth_slow` computed, for each number of steps",
    hint="Keep the loop as it was: `steps` times, each element becomes the mean of itself and its two "
    "neighbours (wrapping around). Only the way the function is jitted should change.",
)
def test_smooth_matches_original(submission):
    submission.function("smooth")

    @_FEW
    @given(values=vectors(_SMOOTH_LENGTH, bound=100.0), steps=st.sampled_from(_STEPS))
    @example(values=np.array([0.0, 0.0, 3.0, 0.0, 0.0], np.float32), steps=1)
    @example(values=np.array([0.0, 0.0, 9.0, 0.0, 0.0], np.float32), steps=2)
    def check(values, steps):
        x = jax.device_put(values)
        text = render.call("smooth", (x, steps))
        expected = _smoothed(values, steps)
        scale = float(np.abs(values.astype(np.float64)).max()) + 1.0
        for got, how in _both_ways(lambda v, n: submission.call("smooth", v, n), x, steps, data=False):
            try:
                array = np.asarray(got, dtype=np.float64)
            except Exception:  # noqa: BLE001 - a student's result may be anything
                array = None
            if array is None or array.shape != expected.shape:
                raise PropertyFailure(
                    f"`smooth` returned {render.kind(got)}{how}; it should return an array shaped like `x`.",
                    example=text,
                )
            if not precision.allclose(array, expected, rtol=1e-5, atol=1e-5 * scale):
                raise PropertyFailure(
                    f"`smooth` gives different values from the original `smooth_slow`{how}.",
                    example=text, got=render.value(np.asarray(got)), expected=render.value(expected.astype(np.float32)),
                )

    check()


@prop(
    group="repairs",
    points=1,
    title="`clipped_mean` computes what `clipped_mean_slow` computed, for any array and bounds",
    hint="`low` and `high` become arguments of the jitted function; the arithmetic stays "
    "mean(clip(x, low, high)) over every element.",
)
def test_clipped_mean_matches_original(submission):
    submission.function("clipped_mean")

    @_FEW
    @given(values=float32_values(_VALUE_SHAPES), low=_SCALES, width=st.floats(0.0, 10.0, width=32))
    @example(values=np.array([-5.0, 0.5, 5.0], np.float32), low=-1.0, width=2.0)
    @example(values=np.array([2.0, -0.5, 9.0], np.float32), low=0.0, width=3.0)  # same shape, every value new
    def check(values, low, width):
        high = float(np.float32(low + width))
        x = jax.device_put(values)
        text = render.call("clipped_mean", (x, low, high))
        wide = values.astype(np.float64)
        expected = float(np.mean(np.clip(wide, low, high)))
        magnitude = float(np.mean(np.abs(np.clip(wide, low, high))))
        call = lambda v, lo, hi: submission.call("clipped_mean", v, lo, hi)  # noqa: E731
        _judge("clipped_mean", text, _both_ways(call, x, low, high), expected, magnitude)

    check()


# --- traces -----------------------------------------------------------------------------

_DATA_FIX = (
    "A value such as a scale or a bound is data: pass it to the jitted function as an argument (not static, "
    "not baked into a new lambda, partial or inner function), so a new value reuses the program."
)


_JIT_PRIMITIVES = ("jit", "pjit")


def _computed_inside_jit(submission, name: str, x, *numbers) -> None:
    """Fail if `name` does arithmetic outside any jit: traced from outside with `jax.make_jaxpr`, a jitted
    computation is one `jit` equation, while operations run eagerly around a jitted no-op show up
    beside it. A function that cannot be traced this way (compiled ahead of time) is not judged here."""
    try:
        jaxpr = submission.call_staged("make_jaxpr", name, x, *numbers,
                                       static_argnums=tuple(range(1, 1 + len(numbers))))
    except CallRaised:  # the audit and the value properties judge calls that raise
        return
    loose = sorted({e.primitive.name for e in jaxpr.jaxpr.eqns if e.primitive.name not in _JIT_PRIMITIVES})
    if loose:
        raise PropertyFailure(
            f"`{name}` computes part of its result outside `jax.jit` ({', '.join(loose)}): those operations run "
            "one by one on every call, and only what is inside the jitted function is compiled once and reused.",
            example=render.call(name, (x, *numbers)),
            got="operations outside any jit", expected="the whole computation inside one jitted function",
        )


def _data_audit(submission, name: str, extra: int, shape: tuple[int, ...]):
    """Calls of `name` at one fresh shape with new values, and new Python-float extras, each time."""
    submission.function(name)
    audit = SignatureAudit(submission, name, _DATA_FIX).cold_start()
    words = ", ".join(["a Python float"] * extra)
    size = int(np.prod(shape))
    base = jax.device_put(np.linspace(-3.0, 3.0, size, dtype=np.float32).reshape(shape))
    signature = f"{signature_of(base)}, {words}"
    audit.require_a_trace(signature, base, *([0.5] * extra))

    def check(case):
        values, numbers = case
        x = jax.device_put(values.reshape(shape))
        numbers = sorted(float(n) for n in numbers)  # low <= high for clipped_mean
        audit.call(signature, x, *numbers)

    first_failure(st.tuples(vectors(size, bound=50.0), st.lists(_SCALES, min_size=extra, max_size=extra)),
                  check, settings(TRACES, max_examples=4))
    audit.finish()
    _computed_inside_jit(submission, name, base, *([0.5] * extra))


#: `x` may have any shape (the notebook's table): a vector and a matrix, each new to the program.
_DATA_SHAPES = ((7,), (2, 4))


@prop(
    group="traces",
    points=1,
    title="new values of `x`, `scale`, `low` and `high` never trace `scaled_norm` or `clipped_mean` again",
    hint="jit's cache is keyed on the function object and the signature. A lambda or inner `def` created inside "
    "the call is a new function every time; build the jitted function once, at top level, and pass the numbers "
    "in as arguments. That holds for an `x` of any shape, not only vectors.",
)
def test_data_repairs_reuse_their_program(submission):
    for shape in _DATA_SHAPES:
        _data_audit(submission, "scaled_norm", 1, shape)
        _data_audit(submission, "clipped_mean", 2, shape)


@prop(
    group="traces",
    points=1,
    title="`smooth` traces at most once per number of steps, however often it is called",
    hint="`steps` chooses the program (the Python loop is unrolled `steps` times), so make it static with "
    "`static_argnames=(\"steps\",)` on a jit built once at top level: a new value traces once, repeats reuse it. "
    "A fresh `functools.partial` per call is a new function every time, and a cache of them that forgets old "
    "entries (`lru_cache(maxsize=2)`) makes a repeat trace again.",
)
def test_smooth_traces_once_per_steps(submission):
    submission.function("smooth")
    audit = SignatureAudit(
        submission, "smooth",
        "Values of `x` are data: at a length and a number of steps already seen, jit must reuse its program.",
    ).cold_start()
    length = 6
    base = jax.device_put(np.arange(length, dtype=np.float32))
    audit.require_a_trace(f"{signature_of(base)}, steps=1", base, 1)

    def check(sequence):
        for values, steps in sequence:
            x = jax.device_put(values)
            audit.call(f"{signature_of(x)}, steps={steps}", x, steps)

    # eight numbers of steps, then the first two again: a cache that keeps only the latest few (up to seven)
    # forgets them
    check([(np.arange(length, dtype=np.float32) + i, steps) for i, steps in enumerate((2, 3, 4, 5, 6, 7, 8, 1, 2))])
    first_failure(st.lists(st.tuples(vectors(length, bound=50.0), st.sampled_from((1, 2, 3, 4))), min_size=2,
                           max_size=4),
                  check, settings(TRACES, max_examples=4))
    audit.finish()
    _computed_inside_jit(submission, "smooth", base, 1)


# --- causes -------------------------------------------------------------------------------

#: The grader's own call sequences, run from a fresh module each time, so that the functions
#: are new to JAX and the call sites have no history of earlier misses.
_SCENARIO_SOURCE = string.Template('''$padding
import functools
import jax
import jax.numpy as jnp


def $weigh(x, s, k=1):
    return jnp.sum(x * s) * k


${weigh}_jit = jax.jit($weigh, static_argnames=("k",))


def call(args, kwargs):
    return ${weigh}_jit.trace(*args, **kwargs)


def $total(xs, k=1):
    return sum(jnp.sum(v) for v in xs) * k


${total}_jit = jax.jit($total, static_argnames=("k",))


def call_total(args, kwargs):
    return ${total}_jit.trace(*args, **kwargs)


def fresh_lambda(x):
    return jax.jit(lambda v: jnp.sum(v * 2.0)).trace(x)


def fresh_partial(x, k):
    return jax.jit(functools.partial($weigh, s=1.0, k=k)).trace(x)


def fresh_def(x):
    def $inner(v):
        return jnp.sum(v + 1.0)
    return jax.jit($inner).trace(x)


@jax.jit
def ${inner}_sum(v):
    return jnp.sum(v)


@jax.jit
def ${inner}_max(v):
    return jnp.max(v)


def two_kept(x):
    for jitted in (${inner}_sum, ${inner}_max):  # one call site, two functions, each built once
        jitted.trace(x)
''')

_COUNTER = itertools.count(1)
_ID = re.compile(r"id=\d+")
_WORDS = ("weigh", "scale", "blend", "tally", "gauge", "score", "fold", "mix", "spread", "sift", "shift", "pool")
#: The array sizes and static values the scenarios are written with; each notebook's draw maps them,
#: one to one, onto others, so a change of size (or of value) stays a change, and a transpose a transpose.
_SIZES, _STATICS = (2, 3, 4, 5), (1, 2)


@dataclass(frozen=True)
class _Draw:
    """How one notebook's scenarios are written: names, file, line offset, sizes, static values."""

    weigh: str
    total: str
    inner: str
    module: str
    padding: int
    sizes: dict
    statics: dict

    @classmethod
    def new(cls) -> "_Draw":
        words = list(_WORDS)
        names = []
        for _ in range(3):
            word = words.pop(secrets.randbelow(len(words)))
            names.append(f"{word}_{secrets.token_hex(2)}")
        sizes = _distinct(range(2, 10), len(_SIZES))
        statics = _distinct(range(1, 40), len(_STATICS))
        return cls(*names, module=f"scenario_{secrets.token_hex(3)}", padding=secrets.randbelow(40),
                   sizes=dict(zip(_SIZES, sizes)), statics=dict(zip(_STATICS, statics)))

    def aval(self, a):
        """A scenario's argument as this draw writes it."""
        if isinstance(a, jax.ShapeDtypeStruct):
            return _abstract(tuple(self.sizes.get(d, d) for d in a.shape), a.dtype, a.weak_type)
        if isinstance(a, (tuple, list)):
            return type(a)(self.aval(v) for v in a)
        return a


def _distinct(choices, n: int) -> list:
    pool = list(choices)
    return [pool.pop(secrets.randbelow(len(pool))) for _ in range(n)]


_DRAW = "cache_misses scenario draw"


def _draw(submission) -> _Draw:
    """The notebook's draw, made once for its whole run."""
    memo = submission.notebook_memo
    if _DRAW not in memo:
        memo[_DRAW] = _Draw.new()
    return memo[_DRAW]


def _scenario(draw: _Draw):
    name = f"{draw.module}_{next(_COUNTER)}.py"
    namespace: dict = {"__name__": name.removesuffix(".py")}
    source = _SCENARIO_SOURCE.substitute(padding="\n" * draw.padding, weigh=draw.weigh, total=draw.total,
                                         inner=draw.inner)
    exec(compile(source, name, "exec"), namespace)
    return namespace


def _abstract(shape, dtype, weak=False):
    return jax.ShapeDtypeStruct(shape, np.dtype(dtype), weak_type=weak)


def _step_words(step, draw: _Draw) -> str:
    if isinstance(step[-1], str):  # a step that says itself what it is
        return step[-1]
    kind = step[0]
    if kind == "call":
        _, args, kwargs, by_keyword = step
        x = draw.aval(args[0])
        s_value = draw.aval(kwargs["s"] if by_keyword else args[1])
        words = f"x {_words(x)}, s {_words(s_value)}" + (f", k={draw.statics[kwargs['k']]}" if "k" in kwargs else "")
        return f"{draw.weigh}_jit({words}" + (" (s passed by keyword))" if by_keyword else ")")
    if kind == "total":
        _, (xs,), kwargs, n = step
        elements = [_words(draw.aval(v)) for v in xs]
        if isinstance(xs, list):
            return f"{draw.total}_jit(a list of {n} arrays {elements[0]}, k={draw.statics[kwargs['k']]})"
        if len(set(elements)) == 1:
            return f"{draw.total}_jit({n} arrays {elements[0]}, k={draw.statics[kwargs['k']]})"
        return f"{draw.total}_jit(({', '.join(elements)}), k={draw.statics[kwargs['k']]})"
    return step[2]


def _run(steps, draw: _Draw) -> tuple[list[str], list[str]]:
    """Run one scenario as ``draw`` writes it; return (the explanations JAX logged, what each step was, in words)."""
    space = _scenario(draw)
    done = []
    with CacheMissLog() as log:
        for step in steps:
            kind = step[0]
            if kind in ("call", "total"):
                args = draw.aval(tuple(step[1]))
                kwargs = {key: draw.statics[v] if key == "k" else draw.aval(v) for key, v in step[2].items()}
                space["call" if kind == "call" else "call_total"](args, kwargs)
            else:
                _, shape, _words_said = step
                x = draw.aval(_abstract(shape, np.float32))
                space[{"lambda": "fresh_lambda", "partial": "fresh_partial", "def": "fresh_def",
                       "two_kept": "two_kept"}[kind]](
                    *((x, 2) if kind == "partial" else (x,)))
            done.append(_step_words(step, draw))
    return log.explanations, done


def _judge_explanations(submission, explanations, story) -> int:
    """Feed each explanation the grader can read to `miss_cause`; fail at the first disagreement.
    Returns the number of explanations judged."""
    submission.function("miss_cause")
    judged = 0
    for text in explanations:
        cause = classify(text)
        if cause is None:
            continue  # JAX's wording is internal: a text the grader cannot read is not held against anyone
        judged += 1
        shown = _ID.sub("id=...", text)
        try:
            got = submission.call("miss_cause", text)
        except CallRaised as raised:
            raise PropertyFailure(
                f"`miss_cause` raised {raised.error_name} on an explanation JAX logged.",
                example=f"after {story}, JAX explained:\n{shown}",
            ) from None
        if not isinstance(got, str) or got not in CAUSES:
            raise PropertyFailure(
                f"`miss_cause` returned {render.value(got)}, which is not one of the causes "
                f"({', '.join(repr(c) for c in CAUSES)}).",
                example=f"after {story}, JAX explained:\n{shown}",
                expected=repr(cause),
            )
        if got != cause:
            raise PropertyFailure(
                f"`miss_cause` named the cause {got!r}, but JAX's explanation says {cause!r}." + _path_note(text),
                example=f"after {story}, JAX explained:\n{shown}",
                got=repr(got), expected=repr(cause),
            )
    return judged


#: The argument a type line names, up to ", now": a name (`x`) or an indexed path (`xs[0]`).
_TYPE_PATH = re.compile(r"^\s*\*\s*at\s+(?P<path>[^,]*),\s*now\s", re.MULTILINE)


def _path_note(explanation: str) -> str:
    """A sentence when the first listed argument sits at an indexed path, whose brackets are not a shape."""
    if "different input types" not in explanation:
        return ""
    found = _TYPE_PATH.search(explanation.split("different input types", 1)[1])
    if found is None or "[" not in found["path"]:
        return ""
    return (f" The first listed argument sits at an indexed path, `{found['path'].strip()}`: its brackets are "
            "part of the path, not a shape. Compare only the types after `now` and after `and before`: dtype, "
            "then shape, then the `{weak_type=...}` marker.")


_FUNCTION_SCENARIOS = (
    [("call", (_abstract((3,), np.float32), 2.0), {}, "the first call of a jitted function")],
    [("lambda", (3,), "a call that jits a new lambda"), ("lambda", (3,), "the same call again"),
     ("lambda", (3,), "and once more")],
    [("partial", (4,), "a call that jits a new functools.partial"), ("partial", (4,), "the same call again")],
    [("def", (2,), "a call that jits an inner def"), ("def", (2,), "the same call again")],
    # JAX's guess, not the truth: two functions defined once, on lines of their own, called from one line
    [("two_kept", (3,), "one line of a loop calling two jitted functions, each defined once at top level")],
)


@prop(
    group="causes",
    points=1,
    title="`miss_cause` tells a new function from one re-defined on every call, as JAX explains them",
    hint="\"never seen function\" means the cache has no entry for this function object: \"new function\". "
    "When JAX adds that it saw another function defined on the same line (\"maybe the function is being "
    "re-defined repeatedly\"), that is JAX's guess, made from the call site: answer \"redefined function\" "
    "too. The guess is often right (a lambda or partial made on every call) but not always: two functions "
    "built once and called from one line get the same remark.",
)
def test_names_function_misses(submission):
    submission.function("miss_cause")
    draw = _draw(submission)
    for steps in _FUNCTION_SCENARIOS:
        explanations, done = _run(steps, draw)
        _judge_explanations(submission, explanations, ", then ".join(done))


def _f32(shape, weak=False):
    return _abstract(shape, np.float32, weak)


def _words(a) -> str:
    if isinstance(a, float):
        return "a Python float"
    if isinstance(a, int):
        return "a Python int"
    weak = " (weakly typed)" if a.weak_type else ""
    return f"{a.dtype}[{','.join(str(d) for d in a.shape)}]{weak}"


def _call(x, s, k=None, s_by_keyword=False):
    """A call of the scenario's jitted ``weigh`` (as the scenarios write it, before a draw maps it)."""
    kwargs = {} if k is None else {"k": k}
    if s_by_keyword:
        kwargs["s"] = s
        return ("call", (x,), kwargs, True)
    return ("call", (x, s), kwargs, False)


def _total(n: int, k: int):
    """A call of the scenario's jitted ``total`` with a tuple of ``n`` float32[3] arrays and static ``k``."""
    return ("total", (tuple(_f32((3,)) for _ in range(n)),), {"k": k}, n)


def _total_list(n: int, k: int):
    """As :func:`_total`, with the arrays in a list where the function was called with a tuple."""
    return ("total", ([_f32((3,)) for _ in range(n)],), {"k": k}, n)


def _total_of(elements, k: int = 1):
    """A call of the scenario's jitted ``total`` with a tuple of the given arguments (arrays or
    Python floats): JAX names each at an indexed path, `xs[0]`, `xs[1]`."""
    return ("total", (tuple(elements),), {"k": k}, len(elements))


_ARGUMENT_SCENARIOS = (
    # the lesson's five, one at a time
    [_call(_f32((3,)), 2.0), _call(_f32((5,)), 2.0)],
    [_call(_f32((3,)), 2.0), _call(_abstract((3,), np.int32), 2.0)],
    [_call(_f32((3,)), 2.0), _call(_f32((3,)), _f32(()))],
    [_call(_f32((3,)), 2.0, k=1), _call(_f32((3,)), 2.0, k=2)],
    [_call(_f32((3,)), 2.0), _call(_f32((3,)), 2.0, s_by_keyword=True)],
    # where a keyword test goes wrong: the weak-type marker beside a dtype that changed
    [_call(_f32((3,)), _f32(()), k=1), _call(_abstract((3,), np.int32), 2.0, k=1)],
    [_call(_f32((3,)), _f32(())), _call(_f32((3,)), 2)],
    # a dtype and a shape changed at once: the dtype decides
    [_call(_f32((3,)), 2.0), _call(_abstract((5,), np.int32), 2.0)],
    [_call(_f32((3,)), _f32(())), _call(_f32((2, 3)), 2.0)],
    # a new shape of a 2-D array, and a weak type back the other way
    [_call(_f32((2, 3)), 2.0), _call(_f32((3, 2)), 2.0)],
    [_call(_f32((3,)), _f32(())), _call(_f32((3,)), 2.0)],
    # a dtype of the same kind but another width, and one of another kind (independent-student pass)
    [_call(_f32((3,)), 2.0), _call(_abstract((3,), np.float16), 2.0), _call(_abstract((3,), np.bool_), 2.0)],
    # a structure change and a new static value at once: the structure is listed, the static value never is
    [_total(2, 1), _total(3, 2)],
    # a list where a tuple was: the pytree line says their Python *types* differ; still a new structure
    [_total(2, 1), _total_list(2, 1)],
    # every type cause at an indexed path (`* at xs[0], now ...`): the brackets of the path are not a shape
    [_total_of((_f32(()), _f32((3,)))), _total_of((2.0, _f32((3,))))],
    [_total_of((_f32((3,)), _f32((3,)))), _total_of((_f32((3,)), _abstract((3,), np.int32)))],
    [_total_of((_f32((3,)), _f32((3,)))), _total_of((_f32((3,)), _f32((2,))))],
    [_total_of((_f32((3,)), _f32(()))), _total_of((_f32((3,)), 2.0))],
    [_total_of((_f32((3,)), _f32((3,)))), _total_of((_abstract((2,), np.int32), _f32((3,))))],
)

#: What a tuple element of the generated `total` calls may be: a type of its own at an indexed path.
_ELEMENTS = st.sampled_from([_f32((3,)), _f32((2,)), _abstract((3,), np.int32), _f32(()), 2.0])
_GENERATED_TOTAL = st.builds(
    lambda elements, k: _total_of(elements, k),
    st.lists(_ELEMENTS, min_size=2, max_size=2), st.sampled_from([1, 2]),
)

_GENERATED_STEP = st.builds(
    lambda shape, dtype, weak, k: _call(
        _abstract(shape, dtype), 2.0 if weak else _f32(()), k=k
    ),
    st.sampled_from([(2,), (3,)]), st.sampled_from([np.float32, np.int32]), st.booleans(), st.sampled_from([1, 2]),
)


@prop(
    group="causes",
    points=1,
    title="`miss_cause` names a new shape, dtype, weak type, static value or argument structure as JAX explains it",
    hint="Read the first difference JAX lists. `different input types`: compare the dtype, then the shape, then "
    "the `{weak_type=...}` marker of `now ... and before ...`, in that order. `different input pytree` is a "
    "new structure; `cache miss explanation unavailable` is how JAX reports a new static value.",
)
def test_names_argument_misses(submission):
    """Input classes the notebook promises (the calls of `miss_cause`):

    - a new shape at a name: ``type_change(explanation) == {"shape"} and not indexed(explanation)``
    - a new shape at an indexed path: ``type_change(explanation) == {"shape"} and indexed(explanation)``
    - a new dtype at a name: ``type_change(explanation) == {"dtype"} and not indexed(explanation)``
    - a new dtype at an indexed path: ``type_change(explanation) == {"dtype"} and indexed(explanation)``
    - a weak type at a name: ``type_change(explanation) == {"weak type"} and not indexed(explanation)``
    - a weak type at an indexed path: ``type_change(explanation) == {"weak type"} and indexed(explanation)``
    - dtype and shape at once: ``type_change(explanation) == {"dtype", "shape"}``
    - a static value: ``"explanation unavailable" in explanation``
    - a structure: ``"different input pytree" in explanation``
    """
    submission.function("miss_cause")
    draw = _draw(submission)
    for steps in _ARGUMENT_SCENARIOS:
        explanations, done = _run(steps, draw)
        _judge_explanations(submission, explanations[1:], ", then ".join(done))

    def check(steps):
        explanations, done = _run(steps, draw)
        _judge_explanations(submission, explanations[1:], ", then ".join(done))

    first_failure(st.lists(_GENERATED_STEP, min_size=2, max_size=4), check, settings(TRACES, max_examples=6))
    first_failure(st.lists(_GENERATED_TOTAL, min_size=2, max_size=3), check, settings(TRACES, max_examples=4))
