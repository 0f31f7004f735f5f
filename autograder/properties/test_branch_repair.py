"""branch_repair: `broken_branch` (the lesson's Python `if`) and `repaired`, its jitted repair."""

from __future__ import annotations

import jax
import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from autograder import _render
from autograder._checks import close, first_failure, scalar
from autograder._registry import prop
from autograder._results import PropertyFailure
from autograder._settings import VALUES
from autograder._strategies import SHAPES, float32_values
from autograder._traces import SignatureAudit, signature_of

#: Gains exactly representable in float32, so a Python float and a 0-d float32
#: array always agree about ``gain > 1``. The boundary 1.0 has its own property.
_GAINS = st.floats(-10.0, 10.0, allow_nan=False, width=32).filter(lambda g: g != 1.0)
_VALUES = float32_values()


def _meaning(values: np.ndarray, gain: float) -> tuple[float, float]:
    """The branch's eager meaning, and the magnitude to judge float32 error by."""
    return _side(values, above=gain > 1.0)


def _side(values: np.ndarray, above: bool) -> tuple[float, float]:
    """One side of the branch: the sum of squares above the threshold, else the plain sum."""
    v = values.astype(np.float64)
    if above:
        return float(np.sum(v**2)), float(np.sum(v**2))
    return float(np.sum(v)), float(np.sum(np.abs(v)))


def _gain_forms(gain: float):
    """The same gain as a Python float and as a 0-d float32 array on the device."""
    return (float(gain), jax.device_put(np.float32(gain)))


def _check_repaired(submission, values: np.ndarray, gain: float) -> None:
    expected, magnitude = _meaning(values, gain)
    array = jax.device_put(values)
    for form in _gain_forms(gain):
        text = _render.call("repaired", (array, form))
        got = scalar(submission.call("repaired", array, form), text)
        if not close(got, expected, magnitude):
            side = "above" if gain > 1.0 else "at or below"
            raise PropertyFailure(
                f"`repaired` gives the wrong result for a gain {side} the threshold 1.0.",
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
    broken = submission.function("broken_branch")

    @VALUES
    @given(values=_VALUES, gain=_GAINS)
    @example(values=np.arange(8, dtype=np.float32), gain=2.0)
    def check(values, gain):
        expected, magnitude = _meaning(values, gain)
        array = jax.device_put(values)
        text = _render.call("broken_branch", (array, gain))
        got = scalar(submission.call("broken_branch", array, gain), text)
        if not close(got, expected, magnitude):
            raise PropertyFailure("`broken_branch` gives the wrong result eagerly.", example=text, got=repr(got),
                                  expected=repr(expected))

    check()
    values = jax.device_put(np.arange(8, dtype=np.float32))
    gain = jax.device_put(np.float32(2.0))
    call = _render.call("jax.jit(broken_branch)", (values, gain))
    try:
        jax.jit(broken)(values, gain)
    except jax.errors.TracerBoolConversionError:
        return
    except Exception as error:
        raise PropertyFailure(
            f"`{call}` raised {type(error).__name__}, not the TracerBoolConversionError of a Python `if` on a tracer.",
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
    "the decision stays in the compiled program, so any gain, float or array, works.",
)
def test_repaired_matches_branch(submission):
    submission.function("repaired")

    @VALUES
    @given(values=_VALUES, gain=_GAINS)
    @example(values=np.arange(8, dtype=np.float32), gain=0.5)
    @example(values=np.arange(8, dtype=np.float32), gain=2.0)
    def check(values, gain):
        _check_repaired(submission, values, gain)

    check()


#: The smallest float32 above the threshold.
_JUST_ABOVE = float(np.nextafter(np.float32(1.0), np.float32(2.0)))


def _wrong_side(submission, values: np.ndarray, gain: float) -> str:
    """A sentence when `repaired` gives the other side's value at ``gain``, else nothing."""
    array = jax.device_put(values)
    other, magnitude = _side(values, above=not gain > 1.0)
    for form in _gain_forms(gain):
        try:
            got = scalar(submission.call("repaired", array, form), "repaired")
        except PropertyFailure:
            return ""
        if not close(got, other, magnitude):
            return ""
    if gain == 1.0:
        return ("`repaired` treats a gain of exactly 1.0 as above the threshold: the lesson's branch is strict, "
                "`gain > 1.`, so 1.0 gives `sum(values)`. `>=` moves 1.0 to the other side.")
    return (f"`repaired` treats {gain!r}, the next float32 above 1.0, as not above the threshold. The threshold is "
            "exactly 1.0: a tolerance such as `gain > 1. + 1e-6` moves it, and every gain above 1.0 must give "
            "the sum of squares.")


@prop(
    group="repair",
    points=1,
    title="at the boundary: exactly 1.0 is not above the threshold, the next float32 above it is",
    hint="The lesson's branch is `gain > 1.`, strict and exact: at 1.0 it returns `sum(values)`, and any gain "
    "above 1.0, however close, returns the sum of squares. Compare with `>` against 1.0 and no tolerance.",
)
def test_boundary_gain_one(submission):
    submission.function("repaired")
    for values in (np.array([-1.5, 2.0, 3.0], np.float32), np.arange(4, dtype=np.float32)):
        for gain in (1.0, _JUST_ABOVE):
            try:
                _check_repaired(submission, values, gain)
            except PropertyFailure as failure:
                cause = _wrong_side(submission, values, gain)
                if cause:
                    raise PropertyFailure(cause, example=failure.example, got=failure.got,
                                          expected=failure.expected) from None
                raise


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
    ).start()

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
