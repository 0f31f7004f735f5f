"""branch_repair: `broken_branch` (the lesson's Python `if`) and `repaired`, its jitted repair."""

from __future__ import annotations

import math

import jax
import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.kit import (
    CallRaised, PropertyFailure, SHAPES, SignatureAudit, VALUES, close, first_failure,
    float32_values, op_by_op, prop, render, scalar, signature_of,
)


#: Gains exactly representable in float32, so a Python float and a 0-d float32
#: array always agree about ``gain > 1``. The boundary 1.0 has its own property.
_GAINS = st.floats(-10.0, 10.0, allow_nan=False, width=32).filter(lambda g: g != 1.0)
_VALUES = float32_values()
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _meaning(values: np.ndarray, gain: float) -> tuple[float, float]:
    """The branch's eager meaning, and the magnitude to judge float32 error by.

    Summed exactly (float64); on a float32 batch, a side beyond float32's range is the
    infinity ``broken_branch`` gives (an int32 batch's small sums stay exact)."""
    v = values.astype(np.float64)
    chosen, magnitude = (np.sum(v**2), np.sum(v**2)) if gain > 1.0 else (np.sum(v), np.sum(np.abs(v)))
    if abs(chosen) > _FLOAT32_MAX and values.dtype == np.float32:
        chosen = np.copysign(np.inf, chosen)
    return float(chosen), float(magnitude)


def _gain_forms(gain: float):
    """The same gain as a Python float and as a 0-d float32 array on the device."""
    return (float(gain), jax.device_put(np.float32(gain)))


def _other_side(values: np.ndarray, gain: float) -> tuple[float, float]:
    """The meaning on the side of the threshold that ``gain`` does not select."""
    return _meaning(values, 0.5 if gain > 1.0 else 2.0)


def _batch(values: np.ndarray) -> str:
    return f"an {values.dtype} batch" if values.dtype.name[0] in "ai" else f"a {values.dtype} batch"


def _overflow_note(values: np.ndarray, gain: float, expected: float) -> str:
    """Name the overflow when it is what the example is about."""
    if math.isinf(expected):
        return (" The side taken overflows float32, so the branch gives that infinity; hiding it (a clamp, "
                "`nan_to_num`) changes the result.")
    other, _ = _other_side(values, gain)
    if math.isinf(other):
        return (" The side not taken overflows to inf here: a choice never looks at it, but a 0/1-weighted blend "
                "computes 0 * inf, which is nan.")
    return ""


def _dtype_note(values: np.ndarray, gain: float, got: float) -> str:
    """Name a gain converted to an integer batch's dtype when the result is the other side's."""
    other, magnitude = _other_side(values, gain)
    if np.issubdtype(values.dtype, np.integer) and close(got, other, magnitude):
        return (" The result is the other side's: the threshold compares the gain itself, and a gain converted to "
                "the batch's integer dtype (1.5 becomes 1) lands on the wrong side.")
    return ""


def _check_repaired(submission, values: np.ndarray, gain: float) -> None:
    expected, magnitude = _meaning(values, gain)
    array = jax.device_put(values)
    for form in _gain_forms(gain):
        text = render.call("repaired", (array, form))
        results = [(scalar(submission.call("repaired", array, form), text), "")]
        if not isinstance(form, float):  # once per example is enough: op by op, a float is passed as jit's array
            # Run as written too: XLA may rewrite a 0/1-weighted blend into a select and hide its nan.
            eager = op_by_op(submission.call, "repaired", array, form)
            if eager is not None:
                results.append((scalar(eager, text), " run op by op (under `jax.disable_jit()`)"))
        for got, how in results:
            if close(got, expected, magnitude):
                continue
            side = ("above" if gain > 1.0 else "at or below" if gain <= 1.0
                    else "that is nan (`nan > 1.` is false), not above")
            raise PropertyFailure(
                f"`repaired`{how} gives the wrong result for {_batch(values)} and a gain {side} the threshold 1.0."
                + _overflow_note(values, gain, expected) + _dtype_note(values, gain, got),
                example=text,
                got=repr(got),
                expected=repr(expected),
            )


@prop(
    group="failure",
    points=1,
    title="`broken_branch` is right eagerly and raises TracerBoolConversionError under jit",
    hint="Keep `broken_branch` as the lesson's Python `if gain > 1.`: it works on concrete numbers, but under "
    "jit `gain` is a tracer, and Python cannot turn a tracer into True or False.",
)
def test_broken_branch_fails_under_jit(submission):
    submission.function("broken_branch")

    @VALUES
    @given(values=_VALUES, gain=_GAINS)
    @example(values=np.arange(8, dtype=np.float32), gain=2.0)
    @example(values=np.arange(8, dtype=np.float32), gain=1.0)  # the lesson's `>`: 1.0 takes the plain sum
    def check(values, gain):
        expected, magnitude = _meaning(values, gain)
        array = jax.device_put(values)
        text = render.call("broken_branch", (array, gain))
        got = scalar(submission.call("broken_branch", array, gain), text)
        if not close(got, expected, magnitude):
            raise PropertyFailure("`broken_branch` gives the wrong result eagerly.", example=text, got=repr(got),
                                  expected=repr(expected))

    check()
    values = jax.device_put(np.arange(8, dtype=np.float32))
    gain = jax.device_put(np.float32(2.0))
    call = render.call("jax.jit(broken_branch)", (values, gain))
    try:
        submission.call_staged("jit", "broken_branch", values, gain)
    except CallRaised as failure:
        if issubclass(failure.error_type, jax.errors.TracerBoolConversionError):
            return
        raise PropertyFailure(
            f"`{call}` raised {failure.error_name}, not the TracerBoolConversionError of a Python `if` on a tracer.",
            example=call,
        ) from None
    raise PropertyFailure(
        f"`{call}` ran without error: `broken_branch` no longer branches in Python, so it cannot show the failure.",
        example=call,
        expected="jax.errors.TracerBoolConversionError",
    )


@prop(
    group="repair",
    points=2,
    title="`repaired` matches the branch for any gain, as a Python float or a 0-d array",
    hint="`sum(values ** 2)` when gain > 1, else `sum(values)`; with `lax.cond(gain > 1., ...)` or `jnp.where` "
    "the decision stays in the compiled program, so any gain, float or array, works. A 0/1-weighted blend of "
    "both sides is not a choice: where the unused side overflows to inf, 0 * inf is nan.",
)
def test_repaired_matches_branch(submission):
    """Input classes the notebook promises (the calls of `repaired`):

    - gain above one: ``float(gain) > 1``
    - gain between zero and one: ``0 < float(gain) < 1``
    - gain zero or below: ``float(gain) <= 0``
    - gain as a Python float: ``isinstance(gain, float)``
    - gain as a 0-d array: ``isinstance(gain, jax.Array) and gain.ndim == 0``
    - gain nan (``nan > 1.`` is false: the plain sum): ``bool(np.isnan(float(gain)))``
    - gain infinite: ``bool(np.isinf(float(gain)))``
    - an int32 batch: ``np.asarray(values).dtype == np.int32``
    - values that overflow when squared: ``bool(np.any(np.abs(np.asarray(values)) > 1e19))``
    - a plain sum that overflows: ``bool(abs(np.sum(np.asarray(values, np.float64))) > 3.5e38)``
    """
    submission.function("repaired")

    @VALUES
    @given(values=_VALUES, gain=_GAINS)
    @example(values=np.arange(8, dtype=np.float32), gain=0.5)
    @example(values=np.arange(8, dtype=np.float32), gain=2.0)
    # squares overflow to inf on the side not taken: a 0/1-weighted blend of the two sides gives nan
    @example(values=np.array([3.0e19, 1.0e19, -2.0], np.float32), gain=0.5)
    # ... and on the side taken: the branch gives inf, which no clamp may hide
    @example(values=np.array([3.0e19, 1.0e19, -2.0], np.float32), gain=2.0)
    @example(values=np.array([3.0e38, 3.0e38, 1.0], np.float32), gain=0.5)
    @example(values=np.array([-3.0e38, -3.0e38], np.float32), gain=-1.0)
    # any gain: `nan > 1.` is false, so nan takes the plain sum; infinities lie on their sides
    @example(values=np.array([-1.5, 0.5, 2.0], np.float32), gain=math.nan)
    @example(values=np.array([-1.5, 0.5, 2.0], np.float32), gain=math.inf)
    @example(values=np.array([-1.5, 0.5, 2.0], np.float32), gain=-math.inf)
    # any batch: integers too, where a gain cast to the batch's dtype (1.5 -> 1) moves the threshold
    @example(values=np.arange(8, dtype=np.int32), gain=1.5)
    @example(values=np.array([[3, -2], [0, 5]], np.int32), gain=0.5)
    def check(values, gain):
        _check_repaired(submission, values, gain)

    check()
    # The decision must live in the program, not in Python around it: `repaired` traced as a
    # whole, inside another trace, must not need a concrete gain.
    values, gain = jax.device_put(np.arange(8, dtype=np.float32)), jax.device_put(np.float32(2.0))
    try:
        submission.call_staged("make_jaxpr", "repaired", values, gain)
    except CallRaised as failure:
        if not issubclass(failure.error_type, jax.errors.ConcretizationTypeError):
            return  # e.g. compiled ahead of time, which no trace can enter: nothing Python decides
        raise PropertyFailure(
            "`repaired` cannot be traced as a whole, so its branch still runs in Python, outside the compiled "
            f"program. {failure.problem.split(': ', 1)[-1]}",
            example=f"jax.make_jaxpr(repaired)({render.value(values)}, {render.value(gain)})",
        ) from None


#: The smallest float32 above the threshold.
_JUST_ABOVE = float(np.nextafter(np.float32(1.0), np.float32(2.0)))


@prop(
    group="repair",
    points=1,
    title="at the boundary: exactly 1.0 is not above the threshold, the next float32 above it is",
    hint="The lesson's branch is `gain > 1.`, strict and exact: at 1.0 it takes the `sum(values)` side, and any "
    "gain above 1.0, however close, takes the sum-of-squares side. Compare with `>` against 1.0, no tolerance.",
)
def test_boundary_gain_one(submission):
    """Which side each boundary gain lands on, judged against the submission's own two sides
    (at 0.5 and at 2.0), so a mistake inside a side is left to the property above."""
    submission.function("repaired")
    for values in (np.array([-1.5, 2.0, 3.0], np.float32), np.arange(4, dtype=np.float32)):
        array = jax.device_put(values)

        def at(gain: float) -> tuple[str, float]:
            text = render.call("repaired", (array, gain))
            return text, scalar(submission.call("repaired", array, gain), text)

        (below_text, below), (above_text, above) = at(0.5), at(2.0)
        magnitude = float(np.sum(values.astype(np.float64) ** 2) + np.sum(np.abs(values)))
        if close(below, above, magnitude):
            raise PropertyFailure(
                "`repaired` gives the same result on both sides of the threshold, so there is no threshold "
                "to check.", example=f"{below_text} and {above_text}", got=f"{below!r} both times",
            )
        for gain, side, value, wrong in ((1.0, "below", below, above), (_JUST_ABOVE, "above", above, below)):
            text, got = at(gain)
            if close(got, value, magnitude):
                continue
            if not close(got, wrong, magnitude):
                problem = f"`repaired` at gain {gain!r} gives neither of its own two sides."
            elif gain == 1.0:
                problem = ("`repaired` treats a gain of exactly 1.0 as above the threshold: the lesson's branch is "
                           "strict, `gain > 1.`, so 1.0 takes the `sum(values)` side. `>=` moves 1.0 across.")
            else:
                problem = (f"`repaired` treats {gain!r}, the next float32 above 1.0, as not above the threshold. "
                           "The threshold is exactly 1.0: a tolerance such as `gain > 1. + 1e-6` moves it.")
            raise PropertyFailure(
                problem, example=text, got=repr(got),
                expected=f"{value!r}, as at gain {0.5 if side == 'below' else 2.0} ({side} the threshold)",
            )


@prop(
    group="traces",
    points=2,
    title="changing `gain` across the threshold does not trace `repaired` again",
    hint="`gain` is runtime data: jit `repaired` once with `gain` dynamic (not static), so both sides of the "
    "threshold share one compiled program. Making `gain` static compiles one program per gain value.",
)
def test_gain_stays_dynamic(submission):
    submission.function("repaired")
    audit = SignatureAudit(
        submission, "repaired",
        "`gain` is runtime data: a new gain, on either side of the threshold, must reuse the program. A static "
        "`gain` compiles one program per gain value.",
    ).cold_start()  # a static gain's programs for gains met in earlier checks must not hide its retraces
    fresh = jax.device_put(np.linspace(-2.0, 2.0, 29, dtype=np.float32))  # a length no other check uses
    audit.require_a_trace(f"values {signature_of(fresh)}, gain a Python float", fresh, 0.5)

    def check(case):
        values, low, high = case
        array = jax.device_put(values)
        signature = f"values {signature_of(array)}, gain a Python float"
        audit.call(signature, array, low)
        audit.call(signature, array, high)

    low_gains = st.floats(-10.0, 1.0, width=32)
    high_gains = st.floats(1.0, 10.0, exclude_min=True, width=32)
    first_failure(st.tuples(float32_values(SHAPES), low_gains, high_gains), check)
    audit.finish()
