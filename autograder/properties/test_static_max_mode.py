"""static_max_mode: `choose_reduction(values, mode)` and `choose`, its jit with static `mode`."""

from __future__ import annotations

import jax
import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.kit import (
    CallRaised, PropertyFailure, SignatureAudit, TraceLog, VALUES, close, first_failure, float32_values, prop, render,
    scalar, signature_of,
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


def _check_mode(submission, mode: str) -> None:
    """One mode, eagerly and through `choose`, against NumPy over every element."""

    @VALUES
    @given(values=float32_values())
    @example(values=np.array([-4.0, -1.0, -2.0], np.float32))
    @example(values=np.array([[-3.0, 7.5, 7.5], [0.0, -8.0, 2.0]], np.float32))
    @example(values=np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11.5)  # all axes, not the first two
    @example(values=np.array([-3.0e7, -5.0e7, -4.0e7], np.float32))  # a max that starts from any finite floor
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
                    f"`{name}` gives the wrong {mode}.", example=text, got=repr(got), expected=repr(expected)
                )

    check()


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
    "of rows.",
)
def test_mean_matches_numpy(submission):
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
