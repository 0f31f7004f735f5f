"""loops: `rolled(x, steps)` (an unrolled Python loop rewritten with `lax.fori_loop`/`lax.scan`),
`count_equations(fn, *args)` (the recursive equation count of `jax.make_jaxpr(fn)(*args)`) and
`quantise_jitted(tree, scale)` (an eager `jax.tree.map` quantisation as one jitted call).

The lesson: a Python loop under `jit` is unrolled into the jaxpr, one copy of its body per step,
so the program grows with the step count; a structured loop is one equation whatever the count.
An eager map over a pytree dispatches (and compiles) every operation for every leaf shape; one
jitted call over the whole tree compiles once. `make_jaxpr` is how you see the difference.
"""

from __future__ import annotations

from collections import Counter

import jax
import jax.extend.source_info_util
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from autograder.kit import precision
from autograder.kit import (
    BAKED, CallRaised, CompileLog, PropertyFailure, SignatureAudit, VALUES, clear_cache_of, other_values, programs,
    prop, render, signature_of,
)
from autograder.kit.jaxprs import (
    count_recursive, count_top_level, equations_by_line, fully_unrolled, line_of, primitive_counts, staged_loops,
    sub_jaxprs,
)

# ---------------------------------------------------------------------------------------- rolled

#: Shapes the value property draws `x` from ("any shape": 0-d, 1-d and n-d): each is one compile of
#: a jitted `rolled` (and one per step count when `steps` is static).
ROLLED_SHAPES = ((), (3,), (2, 3))

#: The most steps the value property draws.
MAX_STEPS = 40

#: Step counts whose jaxprs are compared: one, a few, and many. Consecutive small counts catch a
#: Python loop kept below a threshold (the program grows up to it, then stops); zero is left out,
#: since returning `x` unchanged at zero steps is a fine special case with an empty program.
JAXPR_STEPS = (1, 2, 3, 5, 8, 13, 21, 40)
FEW_STEPS, MANY_STEPS = JAXPR_STEPS[1], JAXPR_STEPS[-1]

#: The signature the jit evidence uses: a shape no other check and no lesson cell uses.
_FRESH_X = np.linspace(-1.5, 1.5, 7, dtype=np.float32)

#: The lesson's own input.
_LESSON_X = np.array([0.5, 1.0, 2.0], np.float32)


def _reference(x: np.ndarray, steps: int) -> np.ndarray:
    """The Python loop, in float64 NumPy."""
    wide = x.astype(np.float64)
    for _ in range(steps):
        wide = 0.5 * wide + np.sin(wide)
    return wide


def _matches(got: np.ndarray, expected: np.ndarray) -> bool:
    """float32 agreement with the float64 loop (measured error below 4e-7 relative)."""
    return precision.allclose(got.astype(np.float64), expected, rtol=1e-4, atol=1e-5)


def _as_array(result, text: str, like: np.ndarray) -> np.ndarray:
    """The float32 array of `like`'s shape a call returned, or a failure saying what came back."""
    if not hasattr(result, "shape") or not hasattr(result, "dtype"):
        raise PropertyFailure(f"`{text}` returned {render.kind(result)}, not an array.", example=text)
    array = np.asarray(result)
    if array.shape != like.shape or array.dtype != np.float32:
        raise PropertyFailure(
            f"`{text}` returned {render.kind(result)}; it should return float32 with the shape of `x` "
            f"{tuple(like.shape)}.",
            example=text,
        )
    return array


def _steps_it_looks_like(got: np.ndarray, x: np.ndarray, steps: int) -> str:
    """A sentence when the result is the loop run for a nearby number of steps."""
    for other in range(max(0, steps - 2), steps + 3):
        if other != steps and _matches(got, _reference(x, other)) and not _matches(got, _reference(x, steps)):
            return f" It equals the loop run for {other} step(s) instead of {steps}."
    return ""


@prop(
    group="rolled",
    points=1,
    title="`rolled(x, steps)` gives what the Python loop gives, for any `x` and any step count, 0 included",
    hint="Carry `x` through `lax.fori_loop(0, steps, body, x)` (or `lax.scan` of length `steps`), with "
    "`body` doing one step, `0.5 * x + jnp.sin(x)`. Zero steps returns `x` unchanged.",
)
def test_rolled_matches_loop(submission):
    """Input classes the notebook promises (the calls of `rolled`):

    - x 0-d: ``np.ndim(x) == 0``
    - x 1-d: ``np.ndim(x) == 1``
    - x n-d: ``np.ndim(x) >= 2``
    - no steps: ``steps == 0``
    - one step: ``steps == 1``
    - a few steps: ``2 <= steps <= 5``
    - many steps: ``steps >= 30``
    """

    @VALUES
    @given(
        x=st.sampled_from(ROLLED_SHAPES).flatmap(
            lambda shape: st.builds(
                np.asarray,
                st.lists(st.floats(-10.0, 10.0, width=32), min_size=int(np.prod(shape)),
                         max_size=int(np.prod(shape))),
                st.just(np.float32),
            ).map(lambda flat: flat.reshape(shape))
        ),
        steps=st.integers(0, MAX_STEPS),
    )
    @example(x=_LESSON_X, steps=3)
    @example(x=_LESSON_X, steps=30)
    @example(x=other_values(_LESSON_X), steps=3)  # the same shape, other numbers: nothing may be baked in
    @example(x=_LESSON_X, steps=0)
    @example(x=_LESSON_X, steps=1)
    # Near 0 a step multiplies x by about 1.5, so these are still moving after 64 steps: a loop
    # capped at some length (or masked past it) stops short of the fixed point.
    @example(x=np.array([1e-16, -1e-16, 1.0], np.float32), steps=100)
    # "any shape": a 0-d x (a single number) and an n-d one
    @example(x=np.array(0.75, np.float32), steps=0)
    @example(x=np.array(0.75, np.float32), steps=1)
    @example(x=np.array(-2.5, np.float32), steps=5)
    @example(x=np.arange(8, dtype=np.float32).reshape(2, 2, 2) - 3.5, steps=4)
    def check(x, steps):
        device_x = jax.device_put(x)
        text = render.call("rolled", (device_x, steps))
        try:
            result = submission.call("rolled", device_x, steps)
        except CallRaised as failure:
            if x.ndim:
                raise
            raise PropertyFailure(
                f"{failure.problem.rstrip('. ')}. That `x` is 0-d (a single number, shape ()), and the notebook "
                "promises any shape, 0-d included: a loop carried by `lax.fori_loop` or `lax.scan` needs no `vmap`, "
                "reshape or indexing over elements, and works on every shape as it is.",
                example=failure.example,
            ) from None
        got = _as_array(result, text, x)
        expected = _reference(x, steps)
        if not _matches(got, expected):
            raise PropertyFailure(
                f"`rolled` does not give what the Python loop gives after {steps} step(s)."
                + _steps_it_looks_like(got, x, steps),
                example=text, got=render.value(got), expected=render.value(expected.astype(np.float32)),
            )

    check()


def _rolled_jaxpr(submission, x, steps):
    """The jaxpr of `rolled(x, steps)` with `steps` a Python int (static or dynamic, the student's choice)."""
    return submission.call_staged("make_jaxpr", "rolled", x, steps, static_argnums=(1,))


@prop(
    group="rolled",
    points=1,
    title="`rolled` is jitted, and its jaxpr holds one staged loop that does not grow with the step count",
    hint="A Python `for` over `range(steps)` is unrolled into the jaxpr, one copy of the body per step, "
    "even inside `fori_loop`'s body, with `steps` static, or only for step counts below some threshold. Let "
    "`lax.fori_loop` or `lax.scan` carry every step count, compare `jax.make_jaxpr` at 3 and at 30 steps, "
    "and jit `rolled` once, at top level, so that a repeat call reuses its program.",
)
def test_rolled_jaxpr_does_not_grow(submission):
    """Input classes: step counts 1, a few and many, consecutive small ones included (a Python loop
    below a threshold grows there and nowhere else); the jit evidence at a fresh shape, then a
    repeat with new values."""
    x = jax.device_put(_LESSON_X)
    jaxprs = {steps: _rolled_jaxpr(submission, x, steps) for steps in JAXPR_STEPS}
    counts = {steps: count_recursive(closed) for steps, closed in jaxprs.items()}
    _no_growth(counts, jaxprs, x)
    many = jaxprs[MANY_STEPS]
    callbacks = sorted(name for name in primitive_counts(many) if "callback" in name)
    if callbacks:
        raise PropertyFailure(
            f"`rolled`'s jaxpr calls back into Python ({', '.join(callbacks)}): the loop runs outside "
            "the compiled program.",
            example=f"jax.make_jaxpr of {render.call('rolled', (x, MANY_STEPS))}",
        )
    loops = staged_loops(many)
    if not loops:
        raise PropertyFailure(
            f"`rolled`'s jaxpr at {MANY_STEPS} steps holds no `scan` or `while` equation: the steps must "
            "be a loop staged in the program, which is what `lax.fori_loop` and `lax.scan` make.",
            example=f"jax.make_jaxpr of {render.call('rolled', (x, MANY_STEPS))}",
        )
    if any(fully_unrolled(eqn) for eqn in loops):
        raise PropertyFailure(
            f"`rolled`'s scan asks XLA to unroll every one of its {MANY_STEPS} steps (`unroll`), so the "
            "compiled program still grows with the step count.",
            example=f"jax.make_jaxpr of {render.call('rolled', (x, MANY_STEPS))}",
        )
    _jitted(submission)


def _no_growth(counts: dict, jaxprs: dict, x) -> None:
    """Fail if the recursive count at some step count exceeds the count at a smaller one."""
    largest = max(counts, key=lambda steps: (counts[steps], -steps))
    smaller = [steps for steps in counts if steps < largest and counts[steps] < counts[largest]]
    if not smaller:
        return
    few = FEW_STEPS if FEW_STEPS in smaller else min(smaller)
    sins = primitive_counts(jaxprs[largest]).get("sin", 0)
    note = f" It holds {sins} `sin` equations at {largest} steps." if sins > 1 else ""
    if counts[MANY_STEPS] < counts[largest]:
        note += (
            f" It is smaller again at {MANY_STEPS} steps ({counts[MANY_STEPS]} equations): some step counts still "
            "run a Python loop that writes the body once per step (kept below a threshold, or for the "
            "`steps % k` steps left over after a structured loop). Stage every step in the structured loop."
        )
    cause = {0: "so some step count writes more into the program than 1 step does.",
             1: "though the loop's body is in it once (one `sin`): the extra equations are not copies of the body, "
                "but no step count may hold more equations than 1 step does."}.get(
        sins, "so the loop is unrolled into the program.")
    raise PropertyFailure(
        f"`rolled`'s jaxpr grows with the step count: {counts[few]} equations at {few} step{'s' * (few != 1)}, "
        f"{counts[largest]} at {largest} steps (counted recursively, inside nested jits and loops), "
        + cause + note,
        example=f"jax.make_jaxpr of {render.call('rolled', (x, largest))}",
    )


#: The cure for a retrace of `rolled` at a repeated signature.
_ROLLED_FIX = ("New values at the same shape, dtype and step count must reuse the compiled program: keep "
               "`x` and (if you can) `steps` dynamic arguments of one jit built at top level.")


def _jitted(submission) -> None:
    """Evidence that `rolled` is compiled with jit: a call at a fresh signature traces it once, and a
    repeat with new values traces nothing. A structured loop run eagerly is traced again on every
    call, even an exact repeat."""
    audit = SignatureAudit(submission, "rolled", _ROLLED_FIX)
    first, again = jax.device_put(_FRESH_X), jax.device_put(_FRESH_X[::-1].copy())
    signature = f"{signature_of(first)}, steps=3"
    audit.require_a_trace(signature, first, 3)
    audit.call(signature, again, 3)
    audit.finish()


# --------------------------------------------------------------------------------- count_equations

_X = np.linspace(-1.0, 1.0, 3, dtype=np.float32)


def _check_count(submission, parts, arity: int) -> None:
    fn, words = programs.program(parts, arity), programs.words(parts, arity)
    args = tuple(jax.device_put(_X) for _ in range(arity))
    closed = jax.make_jaxpr(fn)(*args)
    expected, top = count_recursive(closed), count_top_level(closed)
    text = f"count_equations(fn, {', '.join(render.value(a) for a in args)})"
    got = submission.call("count_equations", fn, *args)
    if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
        if not (hasattr(got, "shape") and np.asarray(got).shape == () and
                np.issubdtype(np.asarray(got).dtype, np.integer)):
            raise PropertyFailure(
                f"`count_equations` returned {render.kind(got)}; it should return a Python int.",
                example=f"{text} with fn {words}",
            )
    got = int(got)
    if got == expected:
        return
    note = ""
    if got == top and expected != top:
        note = (" That is the top-level count: the equations inside the nested jit, scan, while or cond "
                "were left out.")
    elif got == len(str(closed).splitlines()):
        note = " That is the number of lines of the printed jaxpr, not its equations."
    elif got == _count_each_jaxpr_once(closed) and got != expected:
        note = (" That counts each sub-jaxpr only once, although this jaxpr holds the very same sub-jaxpr in "
                "more than one place (JAX reuses the trace of a function met again at the same input types: a "
                "jitted function called twice, two identical `cond` branches, `jnp.round` used twice). Each "
                "equation that holds it runs it, so its equations count every time it is held: do not skip "
                "a jaxpr you have seen before.")
    elif got == expected - _holders(closed):
        note = " The equations that hold a sub-jaxpr (the jit, scan, while or cond itself) were not counted."
    elif got == str(closed).count(" = "):
        note = (" That is the number of ` = ` in the printed jaxpr, not its equations: the printer writes a "
                "sub-jaxpr that is held more than once (or is large) only once, out of line, under a name "
                "(`let name = { lambda ... }`). Count the equations themselves, `.eqns`, and walk into every "
                "jaxpr held in their parameters.")
    raise PropertyFailure(
        f"`count_equations` returned {got} for {words}; counted recursively, its jaxpr has {expected} "
        f"equations ({top} at top level).{note}",
        example=f"{text} with fn {words}",
        got=str(got), expected=str(expected),
    )


def _holders(closed) -> int:
    """How many equations, anywhere, hold a sub-jaxpr."""
    def walk(jaxpr):
        total = 0
        for eqn in jaxpr.eqns:
            subs = sub_jaxprs(eqn)
            total += bool(subs) + sum(walk(s) for s in subs)
        return total

    return walk(closed.jaxpr)


def _count_each_jaxpr_once(closed) -> int:
    """The recursive count with every sub-jaxpr object walked into only the first time it is met
    (a "seen" set): what a count that de-duplicates repeated sub-jaxprs gives."""
    seen: set[int] = set()

    def walk(jaxpr):
        total = 0
        for eqn in jaxpr.eqns:
            total += 1
            for sub in sub_jaxprs(eqn):
                if id(sub) not in seen:
                    seen.add(id(sub))
                    total += walk(sub)
        return total

    return walk(closed.jaxpr)


def _flat_parts():
    return st.tuples(st.integers(0, 6), st.sampled_from((1, 2))).map(lambda t: ((("ops", t[0]),), t[1]))


_OPS_PART = st.integers(1, 3).map(lambda n: ("ops", n))


def _container(inner):
    return st.one_of(
        st.lists(inner, min_size=1, max_size=2).map(lambda body: ("jit", tuple(body))),
        st.tuples(st.integers(1, 5), st.lists(inner, min_size=1, max_size=2)).map(
            lambda t: ("scan", t[0], tuple(t[1]))),
        st.lists(inner, min_size=1, max_size=2).map(lambda body: ("while", tuple(body))),
        st.tuples(st.lists(inner, min_size=1, max_size=2), st.lists(inner, min_size=1, max_size=2)).map(
            lambda t: ("cond", tuple(t[0]), tuple(t[1]))),
        # the same sub-jaxpr held by more than one equation
        st.lists(inner, min_size=1, max_size=2).map(lambda body: ("twice", tuple(body))),
        st.lists(inner, min_size=1, max_size=2).map(lambda body: ("same_cond", tuple(body))),
        st.integers(2, 3).map(lambda n: ("round", n)),
    )


def _nested_parts():
    """Part lists holding at least one container, two levels deep at most."""
    level_one = _container(_OPS_PART)
    inner = st.one_of(_OPS_PART, level_one)
    return st.tuples(
        st.lists(_OPS_PART, max_size=1), _container(inner), st.lists(st.one_of(_OPS_PART, level_one), max_size=1),
        st.sampled_from((1, 2)),
    ).map(lambda t: (tuple(t[0]) + (t[1],) + tuple(t[2]), t[3]))


@prop(
    group="counting",
    points=1,
    title="`count_equations` counts the equations of a flat jaxpr (no nested jit or loop)",
    hint="Count `jax.make_jaxpr(fn)(*args).jaxpr.eqns`: the equations, not the lines of the printed jaxpr "
    "(its header, `let` and `in` lines are not equations).",
)
def test_counts_flat_functions(submission):
    for parts, arity in (((("ops", 0),), 1), ((("ops", 3),), 1), ((("ops", 1),), 2)):
        _check_count(submission, parts, arity)

    @settings(VALUES, max_examples=10)
    @given(case=_flat_parts())
    def check(case):
        _check_count(submission, *case)

    check()


@prop(
    group="counting",
    points=1,
    title="`count_equations` counts recursively, inside nested jits, scans, while loops and both branches "
    "of a cond, every time a sub-jaxpr is held",
    hint="For every equation, count it, then look through `eqn.params.values()`: a `ClosedJaxpr` or `Jaxpr` "
    "there (or a tuple of them, as in `cond`'s `branches`, or `while`'s `cond_jaxpr` and `body_jaxpr`) "
    "holds more equations; count those the same way, every time, even when the same jaxpr is held twice.",
)
def test_counts_nested_equations(submission):
    """Also a large nested jit the printer lifts out of line, and each kind nested two deep.

    Input classes the notebook promises (the calls of `count_equations`):

    - a nested jit: ``"jit" in primitives(fn, *args)``
    - a scan: ``"scan" in primitives(fn, *args)``
    - a while loop: ``"while" in primitives(fn, *args)``
    - a cond: ``"cond" in primitives(fn, *args)``
    - one argument: ``len(args) == 1``
    - two arguments: ``len(args) == 2``
    - a sub-jaxpr held twice: ``shared(fn, *args)``
    """
    for parts in (
        (("ops", 1), ("jit", (("ops", 3),))),
        (("scan", 4, (("ops", 2),)),),
        (("while", (("ops", 2),)),),
        (("cond", (("ops", 1),), (("ops", 3),)),),
        (("jit", (("scan", 2, (("jit", (("ops", 2),)),)),)),),
        (("ops", 1), ("twice", (("ops", 2),))),
        (("same_cond", (("ops", 2),)),),
        (("ops", 1), ("round", 3)),
        (("jit", (("ops", 40),)),),
    ):
        _check_count(submission, parts, 1)

    @settings(VALUES, max_examples=12)
    @given(case=_nested_parts())
    def check(case):
        _check_count(submission, *case)

    check()


# ------------------------------------------------------------------------------------- quantise

#: Leaf shapes of the value property: every new tree (structure and shapes) is one compile.
LEAF_SHAPES = ((3,), (2, 3))

#: The fresh trees of the compile property: shapes nothing else in the course uses, all different.
FEW_LEAVES = {"w": (13,), "b": (2, 9)}
MANY_LEAVES = [{"w": (17,), "b": (3, 7)}, {"w": (5, 11)}, ((19,), (2, 2, 5)), {"gain": (23,)}]


def _reference_quantise(leaf: np.ndarray, scale: float) -> np.ndarray:
    """round(x / scale) * scale in float32, rounding half to even as `jnp.round` does."""
    s = np.float32(scale)
    return (np.round(leaf / s) * s).astype(np.float32)


def _leaf_close(got: np.ndarray, leaf: np.ndarray, scale: float) -> bool:
    """Equal, up to a float32 ulp, except that a quotient within 1e-3 of a half may round either way
    when the division is inexact (XLA may divide by multiplying with the reciprocal). A scale that
    is a power of two divides exactly, so there an exact half must round as `jnp.round` does: to even."""
    expected = _reference_quantise(leaf, scale)
    quotient = leaf.astype(np.float64) / np.float64(np.float32(scale))
    exact = float(np.log2(np.float32(scale))).is_integer()
    extra = precision.excess()  # 0 on a CPU: a backend whose division and rounding err beyond a CPU's
    tie = ~np.bool_(exact) & (np.abs(np.abs(quotient - np.floor(quotient)) - 0.5) < 1e-3 + extra * np.abs(quotient))
    diff = np.abs(got.astype(np.float64) - expected)
    ulp = (2e-7 + extra) * np.abs(expected) + 1e-30
    return bool(np.all((diff <= ulp) | (tie & (diff <= 1.001 * abs(scale) + ulp))))


def _leaf_path_words(path) -> str:
    text = jax.tree_util.keystr(path)
    return f"the leaf at `tree{text}`" if text else "the leaf"


def _rounding_note(got: np.ndarray, leaf: np.ndarray, scale: float) -> str:
    s = np.float32(scale)
    quotient = leaf / s
    floor = np.array_equal(got, (np.floor(quotient) * s).astype(np.float32))
    trunc = np.array_equal(got, (np.trunc(quotient) * s).astype(np.float32))
    if floor and trunc:
        return (" It is as if x / scale were rounded down (`floor`; on positive values casting to an int, "
                "which truncates toward zero, does the same) instead of rounded to the nearest integer.")
    if trunc:
        return (" It is as if x / scale were truncated toward zero (`trunc`, or a cast to an int) instead of "
                "rounded to the nearest integer.")
    if floor:
        return " It is as if x / scale were rounded down (`floor`) instead of rounded to the nearest integer."
    if np.array_equal(got, (np.floor(quotient + 0.5) * s).astype(np.float32)):
        return (" It is as if halves were rounded up (`floor(x / scale + 0.5)`); `jnp.round` rounds an exact "
                "half to the even neighbour, as NumPy does: 0.25 / 0.5 = 0.5 becomes 0, not 1.")
    if np.array_equal(got, (np.ceil(quotient) * s).astype(np.float32)):
        return " It is as if x / scale were rounded up (`ceil`) instead of rounded to the nearest integer."
    if np.allclose(got, quotient, rtol=1e-6, atol=1e-6):
        return " It is x / scale, never multiplied back by `scale`."
    if np.allclose(got, leaf, rtol=1e-6, atol=1e-6):
        return " It is the leaf unchanged."
    return ""


def _leaves(draw_shape):
    return draw_shape.flatmap(
        lambda shape: st.lists(st.floats(-100.0, 100.0, width=32), min_size=int(np.prod(shape)),
                               max_size=int(np.prod(shape))).map(
            lambda flat: np.asarray(flat, np.float32).reshape(shape))
    )


def _trees():
    leaf = _leaves(st.sampled_from(LEAF_SHAPES))
    return st.recursive(
        leaf,
        lambda children: st.one_of(
            st.lists(children, min_size=1, max_size=3),
            st.lists(children, min_size=1, max_size=3).map(tuple),
            st.dictionaries(st.sampled_from(("w", "b", "gain", "bias")), children, min_size=1, max_size=3),
        ),
        max_leaves=6,
    )


_SCALES = st.sampled_from((0.1, 0.25, 0.5, 1.0, 3.0))


def _check_quantised(submission, tree, scale: float, earlier=None) -> None:
    """``earlier``: the ``(tree, scale)`` of a call just before at the same shapes, whose answer a
    program that baked in a value read while tracing would give again."""
    device_tree = jax.tree.map(jax.device_put, tree)
    leaves = len(jax.tree.leaves(tree))
    text = render.call("quantise_jitted", (device_tree, scale))
    got = submission.call("quantise_jitted", device_tree, scale)
    want_structure = jax.tree.structure(tree)
    if jax.tree.structure(got) != want_structure:
        raise PropertyFailure(
            f"`quantise_jitted` returned a pytree shaped {jax.tree.structure(got)}, not the input's "
            f"{want_structure}: return the same containers and keys, with each leaf quantised.",
            example=text,
        )
    before = jax.tree.leaves(earlier[0]) if earlier is not None else []
    for i, ((path, leaf), out) in enumerate(zip(jax.tree_util.tree_flatten_with_path(tree)[0], jax.tree.leaves(got))):
        where = _leaf_path_words(path)
        if not hasattr(out, "shape") or np.asarray(out).shape != leaf.shape or np.asarray(out).dtype != np.float32:
            raise PropertyFailure(
                f"`quantise_jitted` returned {render.kind(out)} for {where}; it should be float32 of shape "
                f"{leaf.shape}, like the leaf.",
                example=text,
            )
        out = np.asarray(out)
        if not _leaf_close(out, leaf, scale):
            note = _rounding_note(out, leaf, scale)
            if before and _leaf_close(out, before[i], earlier[1]):
                note = BAKED
            raise PropertyFailure(
                f"`quantise_jitted` does not quantise {where} (of {leaves}) as `quantise` does, with scale "
                f"{scale}." + note,
                example=text, got=render.value(out), expected=render.value(_reference_quantise(leaf, scale)),
            )


def _check_again(submission, tree, scale: float, other_scale: float) -> None:
    """The call, the same shapes with other values, then those with another scale."""
    other = other_values(tree)
    _check_quantised(submission, tree, scale)
    _check_quantised(submission, other, scale, earlier=(tree, scale))
    if other_scale != scale:
        _check_quantised(submission, other, other_scale, earlier=(other, scale))


@prop(
    group="pytree",
    points=1,
    title="`quantise_jitted(tree, scale)` returns what the eager `quantise` returns, on any pytree",
    hint="Jit the whole map once: `jax.jit` of a function that applies `jax.tree.map` with "
    "`jnp.round(x / scale) * scale` to every leaf. The tree comes back with the same containers and keys.",
)
def test_quantise_matches_eager(submission):
    """Input classes the notebook promises (the calls of `quantise_jitted`):

    - a dict: ``isinstance(tree, dict)``
    - a list: ``isinstance(tree, list)``
    - a tuple: ``isinstance(tree, tuple)``
    - nested containers: ``any(isinstance(c, (dict, list, tuple)) for c in (tree.values() if isinstance(tree, dict) else tree))``
    - an exact half: ``any(np.any(np.abs(np.asarray(l) / scale - np.round(np.asarray(l) / scale)) == 0.5) for l in jax.tree.leaves(tree))``

    Each tree is called again at the same shapes with other values, then another scale: a value
    read from outside the arguments while tracing is baked in, and only a second call shows it.
    """
    for tree, scale in (
        ({"w": np.array([0.26, -0.74, 1.5], np.float32), "b": np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]],
                                                                       np.float32)}, 0.5),
        ([np.array([1.4, -2.6, 7.9], np.float32), (np.array([-0.3, 0.3, 0.0], np.float32),)], 0.25),
        # exact halves: jnp.round rounds them to even (0.25 / 0.5 = 0.5 -> 0), not up
        ({"halves": np.array([0.25, 0.75, -0.25, 1.25], np.float32)}, 0.5),
        ((np.array([1.3, -0.7, 2.2], np.float32), np.array([[0.4, 0.5, -0.6], [1.0, 1.5, 2.0]], np.float32)), 1.0),
    ):
        _check_again(submission, tree, scale, 3.0)

    @settings(VALUES, max_examples=6)
    @given(tree=_trees(), scale=_SCALES, other_scale=_SCALES)
    def check(tree, scale, other_scale):
        _check_again(submission, tree, scale, other_scale)

    check()


def _fresh(structure, seed: int):
    """A tree of the given structure whose leaves are float32 arrays of the given shapes."""
    rng = np.random.default_rng(seed)
    return jax.tree.map(
        lambda shape: jax.device_put(rng.uniform(-4, 4, size=shape).astype(np.float32)),
        structure, is_leaf=lambda node: isinstance(node, tuple) and all(isinstance(d, int) for d in node),
    )


class _Kind:
    """A leaf shown by its dtype and shape only (the fresh trees' values are random and long)."""

    def __init__(self, leaf):
        self.text = f"{leaf.dtype}[{','.join(str(d) for d in leaf.shape)}]"

    def __repr__(self):
        return self.text


def _fresh_call(tree, scale: float) -> str:
    return render.call("quantise_jitted", (jax.tree.map(_Kind, tree), scale)) + " (random values)"


def _compiles(submission, tree, scale: float) -> tuple[int, int]:
    """(the student's compilations, JAX's eager ones) during one call: an eager map over a fresh
    tree compiles JAX's own small programs for every new leaf shape, whatever jitted call sits
    beside it."""
    with CompileLog() as log:
        jax.block_until_ready(submission.call("quantise_jitted", tree, scale))
    return log.count, log.jax_own


@prop(
    group="pytree",
    points=1,
    title="On a fresh pytree, `quantise_jitted` compiles one program whatever the number of leaves, and "
    "a repeat call compiles nothing",
    hint="Build the jitted function once, at top level, with `scale` a dynamic argument, and call it on "
    "the whole tree. An eager `jax.tree.map` (or a small jit called per leaf) compiles for every leaf "
    "shape; a lambda, `functools.partial` or inner `def` made inside the call and handed to `jax.jit` is a new "
    "function, traced and compiled on every call (`jax.jit` of the same top-level function, made again, finds "
    "its cache).",
)
def test_quantise_compiles_once(submission):
    clear_cache_of(submission.function("quantise_jitted"))
    few, many = _fresh(FEW_LEAVES, 1), _fresh(MANY_LEAVES, 2)
    n_few, n_many = len(jax.tree.leaves(few)), len(jax.tree.leaves(many))
    few_count, few_eager = _compiles(submission, few, 0.5)
    if few_count == 0:
        raise PropertyFailure(
            f"On a fresh tree of {n_few} leaves, JAX compiled none of your code: the leaves were quantised "
            "eagerly, one operation at a time (each of which JAX compiles for every new leaf shape), "
            "not in one jitted call.",
            example=_fresh_call(few, 0.5),
        )
    many_count, many_eager = _compiles(submission, many, 0.5)
    if many_count > few_count:
        raise PropertyFailure(
            f"The number of programs compiled grows with the leaves: {few_count} for a fresh tree of {n_few} "
            f"leaves, {many_count} for a fresh tree of {n_many} leaves (each leaf a new shape), as if every "
            "leaf were compiled on its own.",
            example=_fresh_call(many, 0.5),
        )
    if many_eager > few_eager:
        raise PropertyFailure(
            f"Operations still run eagerly, leaf by leaf, outside your jitted program: JAX compiled "
            f"{few_eager} of its own small programs for a fresh tree of {n_few} leaves and {many_eager} for "
            f"a fresh tree of {n_many} leaves (one per operation and new leaf shape).",
            example=_fresh_call(many, 0.5),
        )
    again = _fresh(MANY_LEAVES, 3)
    repeat_count, repeat_eager = _compiles(submission, again, 0.25)
    if repeat_count or repeat_eager:
        raise PropertyFailure(
            f"A repeat call on the {n_many}-leaf tree (same shapes, new values, scale 0.25 instead of 0.5) "
            f"compiled {repeat_count + repeat_eager} program(s) again: the jitted function is created anew "
            "on every call, or `scale` is static.",
            example=_fresh_call(again, 0.25),
        )


# --------------------------------------------------------------------------------- heaviest line

#: The argument every listing is traced with: the line counts do not depend on it.
_LINE_X = np.linspace(-1.0, 1.0, 3, dtype=np.float32)


def _lines(blocks):
    """The listing, its jaxpr, and the equations each of its lines created (the truth)."""
    fn = programs.listing(blocks)
    closed = jax.make_jaxpr(fn)(jax.device_put(_LINE_X))
    return fn, closed, equations_by_line(closed, programs.LISTING_FILE)


def _line(eqn) -> int | None:
    return line_of(eqn, programs.LISTING_FILE)


def _heaviest(counts) -> int | None:
    """The line with strictly the most equations, or None on a tie."""
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def _fair(blocks) -> bool:
    """A listing the property may use: one heaviest line, at least two equations ahead of the next."""
    counts = _lines(blocks)[2]
    ranked = counts.most_common(2)
    return len(ranked) == 2 and ranked[0][1] >= ranked[1][1] + 2


def _misreadings(blocks, closed, counts) -> list[tuple[int, str]]:
    """The line each wrong way of reading the program picks, and what that way got wrong."""
    _, roles = programs.listing_source(blocks)
    turns = {line: blocks[index][1] for line, (index, role) in roles.items()
             if role == "body" and blocks[index][0] != "line"}
    picks = []
    if turns:
        most_turns = max(turns, key=turns.get)
        picks.append((most_turns, "That is the line of the loop with the most turns. A loop's turns are not the "
                      "program's size: a Python loop writes its body once per turn, but `lax.fori_loop` and "
                      "`lax.scan` write theirs once whatever the number of turns, and a short Python loop with "
                      "a long body can outweigh a long one with a short body."))
    weighted = Counter()

    def walk(jaxpr, times):
        for eqn in jaxpr.eqns:
            if (line := _line(eqn)) is not None:
                weighted[line] += times
            for sub in sub_jaxprs(eqn):
                walk(sub, times * int(eqn.params.get("length", 1)))

    walk(closed.jaxpr, 1)
    picks.append((_heaviest(weighted), "That line's count multiplies a `lax.scan` or `lax.fori_loop` body by "
                  "its number of turns: that is how often the body runs, not how many equations the program "
                  "holds. The body is written once, as one sub-jaxpr, whatever the number of turns."))
    top = Counter()
    for eqn in closed.jaxpr.eqns:
        if (line := _line(eqn)) is not None:
            top[line] += 1
    one_level = Counter(top)
    for eqn in closed.jaxpr.eqns:
        for sub in sub_jaxprs(eqn):
            one_level.update(line for inner in sub.eqns if (line := _line(inner)) is not None)
    if one_level != top:
        picks.append((_heaviest(one_level), "That line wins when the walk stops one level down: a loop inside a "
                      "jitted helper is two jaxprs deep (the helper's, then the loop body's), so walk into every "
                      "sub-jaxpr, however deep."))
    picks.append((_heaviest(top), "That line wins when only the top-level equations are counted: the equations "
                  "inside a nested jit, a scan or a loop's body are part of the program too, so walk into every "
                  "sub-jaxpr as `count_equations` does."))
    by_column, holders = Counter(), Counter()

    def walk_frames(jaxpr, holder):
        for eqn in jaxpr.eqns:
            line = _line(eqn)
            if line is not None:
                by_column[(line, str(jax.extend.source_info_util.summarize(eqn.source_info)))] += 1
            if holder if holder is not None else line is not None:
                holders[holder if holder is not None else line] += 1
            for sub in sub_jaxprs(eqn):
                walk_frames(sub, holder if holder is not None else line)

    walk_frames(closed.jaxpr, None)
    column = _heaviest(by_column)
    picks.append((column[0] if column else None, "Counted per place within a line (`summarize` gives "
                  "`file:line:column`), that line wins; the question is about whole lines: add up the "
                  "equations of every column of a line."))
    picks.append((_heaviest(holders), "That line calls a jitted helper, or a loop whose body is written "
                  "elsewhere: it is where those equations were asked for, not where they were written. An "
                  "equation inside a sub-jaxpr carries its own source line, where its operation is written "
                  "(`summarize` names it, and the dump counts it there too): give it to that line, not to the "
                  "line of the equation holding the sub-jaxpr."))
    return picks


def _check_heaviest(submission, blocks) -> None:
    fn, closed, counts = _lines(blocks)
    expected = _heaviest(counts)
    listing = programs.describe_listing(blocks)
    text = "heaviest_line(fn, x) for the function below, x of shape (3,)"
    got = submission.call("heaviest_line", fn, jax.device_put(_LINE_X))
    if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
        raise PropertyFailure(
            f"`heaviest_line` returned {render.kind(got)}; it should return the line's number as a Python int.",
            example=f"{text}:\n{listing}",
        )
    got = int(got)
    if got == expected:
        return
    made = ", ".join(f"line {line}: {count}" for line, count in sorted(counts.items()))
    notes = " ".join(why for line, why in _misreadings(blocks, closed, counts) if line == got)
    raise PropertyFailure(
        f"`heaviest_line` returned {got}, but line {expected} created the most equations: counted recursively "
        f"and given to the line that created them, the lines made {made}." + (f" {notes}" if notes else ""),
        example=f"{text}:\n{listing}",
        got=str(got), expected=str(expected),
    )


_LINE_BLOCK = st.one_of(st.integers(1, 8).map(lambda k: ("line", k)), st.just(("softmax",)))
_LOOP_BLOCK = st.tuples(st.just("loop"), st.integers(1, 24), st.integers(1, 6))
_STAGED_BLOCK = st.tuples(st.sampled_from(("fori", "scan")), st.integers(1, 2000), st.integers(1, 8))
_HELPER_BLOCK = st.one_of(st.tuples(st.just("helper"), st.integers(1, 24), st.integers(1, 6)),
                          st.tuples(st.just("helperloop"), st.integers(1, 2000), st.integers(1, 8)))


@prop(
    group="attribution",
    points=1,
    title="`heaviest_line` finds the line that wrote the most equations: an unrolled loop's body, a long "
    "line, or a staged loop's body counted once, on the line where it is written",
    hint="Give each equation of `jax.make_jaxpr(fn)(*args)` (inside sub-jaxprs too) to the line "
    "`jax.extend.source_info_util.summarize(eqn.source_info)` names, add up per line, and return the line with "
    "the most. A Python loop writes its body once per turn; a `fori_loop` or `scan` body is written once, "
    "however many turns it runs.",
)
def test_heaviest_line_counts_copies(submission):
    """Input classes the notebook promises (the calls of `heaviest_line`):

    - a Python loop: ``any(b[0] == "loop" for b in fn.listing)``
    - a line with no loop: ``any(b[0] == "line" for b in fn.listing)``
    - a fori_loop: ``any(b[0] == "fori" for b in fn.listing)``
    - a scan: ``any(b[0] == "scan" for b in fn.listing)``
    - a fori_loop whose body is a function of its own: ``any(b[0] == "foridef" for b in fn.listing)``
    - a jax.nn function: ``any(b[0] == "softmax" for b in fn.listing)``
    """
    for blocks in (
        (("loop", 20, 1), ("loop", 5, 6)),  # fewer turns, the longer body: 30 equations against 20
        (("fori", 500, 1), ("loop", 5, 1), ("loop", 2, 4)),  # 8 equations over several columns, 5 at one
        (("loop", 3, 2), ("line", 8)),  # one long line outweighs a short loop
        (("loop", 3, 2), ("softmax",)),  # one call that writes nine equations, against six
        (("fori", 1000, 3), ("loop", 3, 2)),  # a thousand turns, written once: 6 against 4
        (("loop", 2, 2), ("scan", 500, 7)),  # a staged body that is simply long
        (("scan", 64, 1), ("loop", 4, 3), ("fori", 7, 2)),
        (("foridef", 300, 4), ("loop", 2, 1)),  # the body's own line, 4 equations; the fori_loop's line, 1
    ):
        _check_heaviest(submission, blocks)

    @settings(VALUES, max_examples=5)
    @given(blocks=st.lists(st.one_of(_LINE_BLOCK, _LOOP_BLOCK, _STAGED_BLOCK), min_size=2, max_size=4)
           .map(tuple).filter(_fair))
    def check(blocks):
        _check_heaviest(submission, blocks)

    check()


@prop(
    group="attribution",
    points=1,
    title="`heaviest_line` looks inside a jitted helper: its equations belong to the helper's lines, not "
    "to the line that calls it",
    hint="A nested jit is one equation holding the helper's jaxpr: walk into it, and give each equation "
    "to the innermost line of its traceback in the file, the line inside the helper that ran the operation "
    "(what `summarize` names; the `eqn_count_pprof` dump gives a helper's equations to the same lines).",
)
def test_heaviest_line_inside_calls(submission):
    """Input classes the notebook promises (the calls of `heaviest_line`):

    - a jitted helper: ``any(b[0] == "helper" for b in fn.listing)``
    - a loop inside a jitted helper: ``any(b[0] == "helperloop" for b in fn.listing)``
    """
    for blocks in (
        (("loop", 3, 2), ("helper", 8, 2)),  # the helper's body, 16 equations; its call line, 1
        (("helperloop", 100, 8), ("loop", 2, 3)),  # a staged body inside a helper, two jaxprs deep: 9 against 6
        (("helper", 2, 1), ("line", 6), ("helper", 1, 3)),  # a long line beats two light helpers
        (("helper", 12, 1), ("fori", 300, 5)),
    ):
        _check_heaviest(submission, blocks)

    @settings(VALUES, max_examples=4)
    @given(blocks=st.tuples(_HELPER_BLOCK, st.lists(st.one_of(_LINE_BLOCK, _LOOP_BLOCK, _STAGED_BLOCK,
                                                               _HELPER_BLOCK), min_size=1, max_size=3))
           .map(lambda t: (t[0],) + tuple(t[1])).filter(_fair))
    def check(blocks):
        _check_heaviest(submission, blocks)

    check()
