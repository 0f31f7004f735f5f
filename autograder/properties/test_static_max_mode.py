"""static_max_mode: `choose_reduction(values, mode)` and `choose`, its jit with static `mode`."""

from __future__ import annotations

import jax
import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.kit import precision
from autograder.kit import (
    BAKED, CallRaised, PropertyFailure, SignatureAudit, TraceLog, VALUES, close, first_failure, float32_values,
    Retraced, SHAPES, other_values, prop, render, scalar, signature_of, vectors,
)

MODES = ("sum", "mean", "max")
_REFERENCE = {"sum": np.sum, "mean": np.mean, "max": np.max}
_MAGNITUDE = {"sum": lambda a: np.abs(a).sum(), "mean": lambda a: np.abs(a).mean(), "max": lambda a: np.abs(a).max()}

#: Whitespace a mode might be padded with: a mode padded with it is not a mode.
_PADDING = (" ", "  ", "\n", "\t", " \n")

#: Input classes: typos of case, other words, padded modes (drawn here, since hypothesis mines no
#: string constants from loaded modules), the empty string, non-strings.
_NOT_A_MODE = st.one_of(
    st.text(alphabet="abcdemnorstuxSMAX _", max_size=6).filter(lambda s: s not in MODES),
    st.tuples(st.sampled_from(("", *_PADDING)), st.sampled_from(MODES), st.sampled_from(("", *_PADDING))).map(
        "".join).filter(lambda s: s not in MODES),
    st.sampled_from(["Sum", "MAX", "SUM", "Mean", "min", "median", "maximum", "avg", "average", "total", " sum",
                     ""]),
    st.sampled_from([True, 1.5]),
    st.none(),
    st.integers(-2, 2),
)


#: The cure for a retrace at a repeated (shape, dtype, mode).
_FIX = "Values are runtime data: at a shape, dtype and mode already seen, jit must reuse its program."


def _audit(submission, fresh_length: int) -> SignatureAudit:
    """Trace evidence for `choose` (see autograder.kit.traces.SignatureAudit): it traces at a
    length no other check and no lesson cell uses, and no check may then see it trace at a
    signature already met."""
    submission.function("choose")
    audit = SignatureAudit(submission, "choose", _FIX)
    fresh = jax.device_put(np.linspace(-2.0, 2.0, fresh_length, dtype=np.float32))
    audit.require_a_trace(_signature(fresh, "sum"), fresh, mode="sum")
    return audit


def _signature(array, mode) -> str:
    return f"{signature_of(array)}, mode={mode!r}"


#: The notebook promises float32 or int32 `values`; int32 ones small enough that a sum stays exact.
_INT32_VALUES = st.sampled_from(SHAPES).flatmap(
    lambda shape: hnp.arrays(np.int32, shape, elements=st.integers(-1000, 1000)))


def _check_mode(submission, mode: str) -> None:
    """One mode, eagerly and through `choose`, against NumPy over every element, for each dtype
    the notebook promises: a mean of integers is the exact mean, a float (`mean([1, 2])` is 1.5)."""

    @VALUES
    @given(values=st.one_of(float32_values(), _INT32_VALUES))
    @example(values=np.array([-4.0, -1.0, -2.0], np.float32))
    @example(values=np.array([[-3.0, 7.5, 7.5], [0.0, -8.0, 2.0]], np.float32))
    @example(values=np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11.5)  # all axes, not the first two
    @example(values=np.array([-3.0e7, -5.0e7, -4.0e7], np.float32))  # a max that starts from any finite floor
    @example(values=np.array([1, 2], np.int32))  # the notebook's own integer example
    @example(values=np.array([[-7, 2, 4], [1, -1, 0]], np.int32))  # a mean of -1/6, negative and not whole
    def check(values):
        expected = float(_REFERENCE[mode](values.astype(np.float64)))
        magnitude = float(_MAGNITUDE[mode](values.astype(np.float64)))
        for name, args, kwargs in (
            ("choose_reduction", (jax.numpy.asarray(values), mode), {}),
            ("choose", (jax.numpy.asarray(values),), {"mode": mode}),
        ):
            text = render.call(name, args, kwargs)
            got = scalar(submission.call(name, *args, **kwargs), text)
            if not close(got, expected, magnitude):
                raise PropertyFailure(
                    f"`{name}` gives the wrong {mode}." + _integer_note(values, mode, got, expected),
                    example=text, got=repr(got), expected=repr(expected),
                )

    check()


def _integer_note(values, mode: str, got: float, expected: float) -> str:
    """A sentence when an integer mean came back as a whole number near the true one: as if the
    result were kept in the input's integer dtype."""
    if mode != "mean" or values.dtype.kind not in "iu" or not np.isfinite(got) or got != int(got):
        return ""
    if abs(got - expected) >= 1.0:
        return ""
    return (" The input holds integers and the mean came back as a whole number, as if it were rounded to the "
            "input's dtype: the mean of integers is not an integer in general.")


_OVER_EVERY_ELEMENT = "one reduction over every element (all axes), so a 2-D input gives a single number"


@prop(
    group="modes",
    points=1,
    title='mode "sum" agrees with NumPy, eagerly and through `choose`',
    hint=f"`sum` is {_OVER_EVERY_ELEMENT}: `jnp.sum(values)`.",
)
def test_sum_matches_numpy(submission):
    _check_mode(submission, "sum")


@prop(
    group="modes",
    points=1,
    title='mode "mean" agrees with NumPy, eagerly and through `choose`',
    hint=f"`mean` is {_OVER_EVERY_ELEMENT}: the sum divided by the number of elements (`values.size`), not "
    "of rows, and a float whatever the dtype of `values`.",
)
def test_mean_matches_numpy(submission):
    """Input classes the notebook promises (the calls of `choose_reduction`):

    - float32 values: ``np.asarray(values).dtype == np.float32``
    - int32 values: ``np.asarray(values).dtype == np.int32``
    - int32 values whose mean is not whole: ``np.asarray(values).dtype == np.int32 and float(np.mean(np.asarray(values))) % 1 != 0``
    """
    _check_mode(submission, "mean")


@prop(
    group="modes",
    points=1,
    title='mode "max" agrees with NumPy, eagerly and through `choose`',
    hint=f"`max` is {_OVER_EVERY_ELEMENT}, negative values included: `jnp.max(values)`. Python's own `max` "
    "compares elements with `if`, which fails on tracers under jit.",
)
def test_max_matches_numpy(submission):
    """Input classes the notebook promises (the calls of `choose_reduction`):

    - a vector: ``np.ndim(values) == 1``
    - a 2-d array: ``np.ndim(values) == 2``
    - a 3-d array: ``np.ndim(values) == 3``
    - every value negative: ``bool(np.all(np.asarray(values) < 0))``
    """
    _check_mode(submission, "max")


def _normalised(mode) -> str:
    """A sentence when the refused mode differs from a real one only by whitespace or case."""
    if not isinstance(mode, str) or mode in MODES:
        return ""
    if mode.strip() in MODES:
        return (f" It differs from {mode.strip()!r} only by whitespace: the modes are exactly \"sum\", \"mean\" and "
                "\"max\", and cleaning the input (`strip()`) turns a mistake the caller should see into a "
                "silent result. Compare the mode as it is given.")
    if mode.strip().lower() in MODES:
        return (f" It differs from {mode.strip().lower()!r} only by case or whitespace: normalising the mode "
                "(`lower()`, `strip()`) hides the typo the notebook says must stop the program.")
    return ""


@prop(
    group="errors",
    points=1,
    title="an unknown mode raises ValueError, eagerly and through `choose`",
    hint='Only "sum", "mean" and "max", exactly as written, are modes: compare the mode as it is given (no '
    '`strip()` or `lower()`) and finish with `raise ValueError(...)` so a typo fails loudly.',
)
def test_unknown_mode_raises(submission):
    """Each asked of `choose` too (by keyword), and drawn besides.

    Input classes the notebook promises (the calls of `choose_reduction`):

    - a typo: ``mode == "typo"``
    - a case change: ``isinstance(mode, str) and mode != mode.lower() and mode.lower() in ("sum", "mean", "max")``
    - padded on the left: ``isinstance(mode, str) and mode != mode.lstrip() and mode.strip() in ("sum", "mean", "max")``
    - padded on the right: ``isinstance(mode, str) and mode != mode.rstrip() and mode.strip() in ("sum", "mean", "max")``
    - the empty string: ``mode == ""``
    - None: ``mode is None``
    - a number: ``isinstance(mode, (int, float)) and not isinstance(mode, bool)``
    - a bool: ``isinstance(mode, bool)``
    """
    values = jax.numpy.asarray(np.array([1.0, -2.0, 3.0], np.float32))

    @VALUES
    @given(mode=_NOT_A_MODE)
    @example(mode="typo")
    @example(mode="Max")
    @example(mode=" max")
    @example(mode="sum\n")
    @example(mode="\tmean ")
    @example(mode="")
    @example(mode=None)
    @example(mode=2)
    def check(mode):
        for name, args, kwargs in (("choose_reduction", (values, mode), {}), ("choose", (values,), {"mode": mode})):
            if submission.raises(ValueError, name, *args, **kwargs) is None:
                raise PropertyFailure(
                    f"`{name}` accepted the mode {mode!r} instead of raising ValueError." + _normalised(mode),
                    example=render.call(name, args, kwargs),
                )

    check()


@prop(
    group="traces",
    points=1,
    title="changing only the values never traces `choose` again",
    hint="Values are runtime data: at a shape, dtype and mode already seen, jit reuses its trace. Build `choose` "
    "once at top level (a plain function that calls it is fine); a lambda, `functools.partial` or inner `def` "
    "made inside each call and handed to `jit` is a new function every time (`jax.jit` of the same top-level "
    "function, made again, is not).",
)
def test_values_only_no_retrace(submission):
    audit = _audit(submission, fresh_length=29)

    def check(case):
        values, mode = case
        first, second = jax.device_put(values), jax.device_put(values + np.float32(1.0))
        audit.call(_signature(first, mode), first, mode=mode)
        audit.call(_signature(second, mode), second, mode=mode)

    first_failure(st.tuples(float32_values(), st.sampled_from(MODES)), check)
    audit.finish()


@prop(
    group="traces",
    points=1,
    title="`choose` traces once per new (shape, dtype, mode) signature, a new mode included, and never for a repeat",
    hint="Count traces per signature, like the call ledger: a new shape or a new static mode traces once, "
    "repeats do not. Distinct traces can never outnumber distinct signatures. `mode` is declared static "
    "(`static_argnames`), so each mode is a program of its own: a mode turned into an index for `lax.switch` "
    "puts every mode in one program, and the mode becomes runtime data.",
)
def test_traces_bounded_by_signatures(submission):
    audit = _audit(submission, fresh_length=31)
    fresh = jax.device_put(np.linspace(-2.0, 2.0, 31, dtype=np.float32))
    try:
        with TraceLog() as log:
            submission.call("choose", fresh, mode="mean")  # the audit met "sum" at this shape: a new static value
    except CallRaised:
        log = None  # a mode that raises under jit is judged by the value properties
    if log is not None and not log.count:
        raise PropertyFailure(
            "`choose` did not trace for a mode it had never met at a shape it had: `mode` is not a static "
            "argument, so one program serves every mode and the mode is runtime data. Part B asks for `mode` "
            "declared static through `static_argnames`, a program per mode.",
            example=render.call("choose", (fresh,), {"mode": "mean"}), got="0 traces", expected="1 trace",
        )

    def check(sequence):
        for values, mode in sequence:
            array = jax.device_put(values)
            audit.call(_signature(array, mode), array, mode=mode)

    first_failure(st.lists(st.tuples(float32_values(), st.sampled_from(MODES)), min_size=1, max_size=5), check)
    audit.finish()


# ---------------------------------------------------------------- Part C: sort the arguments yourself
#
# `normalise(x, mode, n_iter, eps, clip_at)` is provided; the student writes `normalise_jitted`, a
# compiled version with the same values, deciding which arguments are static. `mode` picks a
# reduction and `n_iter` counts a Python loop (static, or `n_iter` dynamic through `lax.fori_loop`);
# `eps` is added to a denominator and `clip_at` is compared with the data, so both are runtime data.

_NORM_MODES = ("l2", "max")
_LESSON_X = np.array([3.0, -1.0, 4.0, 1.0, -5.0], np.float32)


def _normalise_reference(x, mode, n_iter, eps, clip_at) -> np.ndarray:
    """`normalise` in float64 NumPy."""
    y = np.asarray(x, np.float64)
    for _ in range(int(n_iter)):
        y = 0.5 * (y + np.roll(y, 1))
    size = np.sqrt(np.sum(y * y)) if mode == "l2" else np.max(np.abs(y))
    y = y / (size + float(eps))
    peak = np.max(np.abs(y))
    if peak > float(clip_at):
        y = y * (float(clip_at) / peak)
    return y


def _vector_result(got, text: str, length: int) -> np.ndarray:
    """The vector a call returned, or a sentence saying what came back instead."""
    if not hasattr(got, "shape") or tuple(np.shape(got)) != (length,):
        raise PropertyFailure(
            "`normalise_jitted` should return an array of the same shape as `x`, as `normalise` does.",
            example=text, got=render.kind(got), expected=f"an array of shape ({length},)",
        )
    return np.asarray(got, np.float64)


def _same(got, expected) -> bool:
    return precision.allclose(got, expected, rtol=1e-4, atol=1e-5)


def _short(array) -> str:
    return np.array2string(np.asarray(array, np.float64), precision=4, separator=", ")


@prop(
    group="sorting",
    points=1,
    title="`normalise_jitted` gives the values `normalise` gives, for every mode, loop count, `eps` and `clip_at`, "
    "all of them computed in the compiled program",
    hint="Compile the same computation: the reduction `mode` names, `n_iter` smoothing steps, the division by "
    "size plus `eps`, then the scale-down when the largest magnitude exceeds `clip_at`. The test `peak > "
    "clip_at` compares data, so under jit it must become part of the program (`jnp.where` or `lax.cond` "
    "choosing between the scaled and the unscaled array), not a Python `if`, neither inside the jit nor in a "
    "function around it: a value brought back to Python makes every call wait for the device.",
)
def test_sorted_values_match(submission):
    """Each example is called twice at the same shapes, every number changed the second time; the
    first call is also staged whole (`make_jaxpr`, only `x` traced), which fails where a value
    computed from `x` is read back to Python outside the jit (a decision taken on the host).

    Input classes the notebook promises (the calls of `normalise_jitted`):

    - mode "l2": ``mode == "l2"``
    - mode "max": ``mode == "max"``
    - no smoothing step: ``n_iter == 0``
    - several smoothing steps: ``n_iter >= 2``
    - more than ten smoothing steps: ``n_iter > 10``
    - eps and clip_at Python floats: ``isinstance(eps, float) and isinstance(clip_at, float)``
    - a small clip_at: ``float(clip_at) <= 0.25``
    """
    submission.function("normalise_jitted")

    @VALUES
    @given(
        x=vectors(5, bound=10.0),
        mode=st.sampled_from(_NORM_MODES),
        n_iter=st.integers(0, 3),
        eps=st.floats(0.05, 0.9),
        clip_at=st.floats(0.1, 0.9),
    )
    @example(x=_LESSON_X, mode="max", n_iter=2, eps=0.5, clip_at=0.6)  # the notebook's own call
    @example(x=_LESSON_X, mode="l2", n_iter=0, eps=0.1, clip_at=0.2)
    @example(x=_LESSON_X, mode="l2", n_iter=12, eps=0.3, clip_at=0.7)  # "from 0 up": past any small cap
    @example(x=-_LESSON_X, mode="l2", n_iter=3, eps=0.25, clip_at=0.9)
    @example(x=np.array([-2.0, -6.0, -1.0, -3.0, -0.5], np.float32), mode="max", n_iter=1, eps=0.05, clip_at=0.25)
    def check(x, mode, n_iter, eps, clip_at):
        first = (jax.device_put(x), mode, n_iter, float(eps), float(clip_at))
        x2, eps2, clip2 = other_values((x, float(eps), float(clip_at)), offset=1.0)
        second = (jax.device_put(x2), mode, n_iter, float(eps2), float(clip2))
        for args in (first, second):
            text = render.call("normalise_jitted", args)
            got = _vector_result(submission.call("normalise_jitted", *args), text, len(x))
            expected = _normalise_reference(np.asarray(args[0]), *args[1:])
            earlier = seen.setdefault((mode, n_iter), args)  # the first call at this program's signature
            if not _same(got, expected):
                raise PropertyFailure(
                    "`normalise_jitted` does not give the values `normalise` gives."
                    + (BAKED if _as_if_baked(got, args, earlier) else ""),
                    example=text + (", after the same call with other numbers" if args is second else ""),
                    got=_short(got), expected=_short(expected),
                )

        _require_staged(submission, first)

    seen = {}
    check()


def _require_staged(submission, args) -> None:
    """``normalise_jitted(*args)`` staged whole by `make_jaxpr` with only ``x`` traced (the other
    arguments as given, so converting a Python float on the host stays allowed): it raises only
    where something outside the jit reads a value computed from ``x`` back to Python. Called after
    the same call returned the right values, so a function that fails everywhere is judged above."""
    text = render.call("normalise_jitted", args)
    try:
        submission.call_staged("make_jaxpr", "normalise_jitted", *args, static_argnums=(1, 2, 3, 4))
    except CallRaised as raised:
        raise PropertyFailure(
            "`normalise_jitted` gives the right values, but not all of its work is in the compiled program: "
            f"staged whole with `jax.make_jaxpr` (`x` traced, the other arguments as given) it raised "
            f"{raised.error_name}. Something outside the jit brings a value computed from `x` back to Python, "
            "so every call waits for the device and the decision is taken on the host.",
            example=text, got=f"{raised.error_name} while staging", expected="one staged program",
        ) from None


def _as_if_baked(got, args, earlier) -> bool:
    """Whether ``got`` is what the call gives with one of its numbers (x, eps or clip_at) replaced by
    the one of the first call at the same signature: a value read while tracing and kept."""
    if earlier is args:
        return False
    for position in (0, 3, 4):
        mixed = list(args)
        mixed[position] = earlier[position]
        if _same(got, _normalise_reference(np.asarray(mixed[0]), *mixed[1:])):
            return True
    return False


_SORTING_FIX = ("Keep `eps` and `clip_at` dynamic: they are numbers the computation uses, and a new value of a "
                "runtime argument reuses the program.")


class _Audit(SignatureAudit):
    """A SignatureAudit that keeps the last call that raised, to say which call it was."""

    last_error = None

    def skip(self, failure):
        self.last_error = failure
        super().skip(failure)


def _sorting_signature(x, mode, n_iter, eps, clip_at) -> str:
    numbers = "Python floats" if isinstance(eps, float) else "0-d float32 arrays"
    return f"{signature_of(x)}, mode={mode!r}, n_iter={n_iter}, eps and clip_at {numbers}"


@prop(
    group="sorting",
    points=1,
    title="only `mode` and the loop count choose the program: new `eps` or `clip_at` values, Python floats or 0-d "
    "arrays, never trace again",
    hint="Sort each argument by what a new value does: one that picks which operations run (the reduction "
    "`mode`, the count of a Python loop) is static, one the computation only uses as a number (`eps`, "
    "`clip_at`) stays dynamic, so changing it reuses the compiled program and a 0-d array is accepted (a "
    "static argument must be hashable, and an array is not).",
)
def test_only_program_choices_static(submission):
    """One argument changes per call, as in a call ledger.

    Input classes the notebook promises (the calls of `normalise_jitted`):

    - eps and clip_at Python floats: ``isinstance(eps, float) and isinstance(clip_at, float)``
    - eps and clip_at 0-d float32 arrays: ``np.ndim(eps) == 0 and hasattr(eps, "dtype") and hasattr(clip_at, "dtype")``
    - mode "max": ``mode == "max"``
    - no smoothing step: ``n_iter == 0``
    """
    submission.function("normalise_jitted")
    audit = _Audit(submission, "normalise_jitted", _SORTING_FIX).cold_start()
    x = jax.device_put(np.linspace(-3.0, 4.0, 11, dtype=np.float32))  # a length no other check uses
    x_other = jax.device_put(other_values(np.asarray(x), offset=1.0))

    def call(args, what):
        try:
            result = audit.call(_sorting_signature(*args), *args)
        except Retraced as retraced:
            # Not "a signature it had already met": a static `eps` makes its value part of JAX's signature.
            raise PropertyFailure(
                f"`normalise_jitted` traced again on a call that matches an earlier one in everything meant to "
                f"choose the program ({_sorting_signature(*args)}). The repeated call was {what}. {retraced.cure}",
                example=retraced.example, got=retraced.got,
                expected="no new trace when only the values of `x`, `eps` or `clip_at` change") from None
        if result is None and audit.last_error is not None:
            raise PropertyFailure(
                f"`normalise_jitted` failed on {what}. {audit.last_error.problem}",
                example=render.call("normalise_jitted", args),
                got=f"{audit.last_error.error_name}", expected="the normalised array",
            )

    start = (x, "l2", 2, 0.1, 0.5)
    audit.require_a_trace(_sorting_signature(*start), *start)
    call(start, "the first call (made a second time)")
    call((x_other, "l2", 2, 0.1, 0.5), "a call that changed only the values of `x`")
    call((x, "l2", 2, 0.3, 0.5), "a call that changed only `eps`")
    call((x, "l2", 2, 0.3, 0.25), "a call that changed only `clip_at`")

    new_mode = (x, "max", 2, 0.1, 0.5)
    call(new_mode, "a call that changed only `mode`")  # a program of its own, or one program for both modes
    call(new_mode, "a call that changed only `mode` (made a second time)")
    call((x, "max", 2, 0.6, 0.5), "a call that changed only `eps`, in mode 'max'")
    call((x, "max", 2, 0.6, 0.15), "a call that changed only `clip_at`, in mode 'max'")
    for n_iter in (3, 0):
        call((x, "l2", n_iter, 0.1, 0.5), f"a call that changed only `n_iter` (to {n_iter})")
        call((x, "l2", n_iter, 0.45, 0.2), f"a call that changed only `eps` and `clip_at`, at n_iter={n_iter}")
    call((x_other, "l2", 2, 0.7, 0.9), "a call back at the first mode and loop count, with new numbers")

    call((x, "l2", 2, jax.device_put(np.float32(0.1)), jax.device_put(np.float32(0.5))),
         "a call with `eps` and `clip_at` as 0-d float32 arrays")
    call((x, "l2", 2, jax.device_put(np.float32(0.35)), jax.device_put(np.float32(0.2))),
         "a call that changed only the values of the 0-d arrays `eps` and `clip_at`")
    call((x, "max", 0, jax.device_put(np.float32(0.2)), jax.device_put(np.float32(0.3))),
         "a call that changed `mode` and `n_iter`, with 0-d arrays for `eps` and `clip_at`")
    call((x, "max", 0, jax.device_put(np.float32(0.8)), jax.device_put(np.float32(0.1))),
         "a call that changed only the values of the 0-d arrays, in mode 'max'")
    audit.finish()
