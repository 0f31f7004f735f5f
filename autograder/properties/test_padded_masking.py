"""padded_masking: `pad_batch(values, size)` and `masked_score(values, mask)`, jitted.

A ragged final batch is padded to a fixed `size` and masked, so every batch has one
shape (one compiled program) and the objective, the sum of `(v + 1) ** 2` over the
real rows, is the same as without padding.
"""

from __future__ import annotations

import math

import jax
import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.kit import (
    CallRaised, GARBAGE, PropertyFailure, Retraced, SignatureAudit, VALUES, close, first_failure,
    op_by_op, prop, render, scalar, signature_of, vectors,
)

#: Padded sizes the graders use: every (size, length) pair is a new shape for the
#: student's eager padding, and every size one compile of `masked_score`.
SIZES = (4, 8)

#: The one size at which the trace property compares every length.
TRACE_SIZE = 8

#: Moderate values, so float32 sums of (v + 1) ** 2 stay accurate to the tolerance.
_BOUND = 100.0


#: The lesson's visible example: five values 0..4 padded to eight rows, objective 55.
_FIVE = np.arange(5, dtype=np.float32)


def _batches():
    """``(size, values)``: a size from SIZES and 1 <= n <= size float32 values."""
    return st.sampled_from(SIZES).flatmap(
        lambda size: st.integers(1, size).flatmap(
            lambda n: st.tuples(st.just(size), vectors(n, bound=_BOUND))
        )
    )


def _overflowing():
    """``(size, values)`` with one to three values more than ``size`` rows."""
    return st.sampled_from(SIZES).flatmap(
        lambda size: st.integers(size + 1, size + 3).flatmap(
            lambda n: st.tuples(st.just(size), vectors(n, bound=_BOUND))
        )
    )


def _garbage_batches(size: int = TRACE_SIZE):
    """``(values, mask, garbage)``: any bool mask of ``size`` rows (real rows anywhere, possibly
    none), float32 values for every row and garbage for the unmarked ones. One size: run op by
    op, every new shape compiles each of the student's operations once more."""
    return st.tuples(
        vectors(size, bound=_BOUND),
        st.lists(st.booleans(), min_size=size, max_size=size).map(lambda mask: np.array(mask, dtype=bool)),
        st.lists(GARBAGE, min_size=size, max_size=size),
    )


def _every_length():
    """Every length 1..TRACE_SIZE in a drawn order, and the values (sliced to each length)."""
    return st.tuples(st.permutations(range(1, TRACE_SIZE + 1)), vectors(TRACE_SIZE, bound=_BOUND))


def _objective(values: np.ndarray) -> tuple[float, float]:
    """The reference objective in float64, and the magnitude its float32 rounding scales with."""
    wide = values.astype(np.float64)
    return float(np.sum((wide + 1.0) ** 2)), float(np.sum((np.abs(wide) + 1.0) ** 2))


def _pair(result, call_text: str):
    """The ``(padded, mask)`` a pad_batch call returned, or a failure saying what came back."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise PropertyFailure(
            f"`pad_batch` returned {render.kind(result)}, not a pair `(padded, mask)`.",
            example=call_text,
        )
    return result[0], result[1]


def _padded_rows_note(got: float, expected: float, padded_rows: int) -> str:
    """A sentence when the error is a whole number of padded rows' ones, else nothing."""
    if not (math.isfinite(got) and math.isfinite(expected)):
        return ""
    excess = got - expected
    rows = round(excess)
    if rows < 1 or rows > padded_rows or abs(excess - rows) > 1e-3 * (abs(expected) + 1.0):
        return ""
    return (
        f" It is {rows} too large, as if {rows} padded row(s) were counted: "
        "a zero row's term is (0 + 1)**2 = 1."
    )


def _count(n: int) -> str:
    return f"{n} value" if n == 1 else f"{n} values"


def _scores(submission, padded, mask) -> tuple[str, float, float]:
    """``masked_score(padded, mask)`` compiled and run op by op: (the call, compiled, op by op).

    Both must be right: the compiled result alone can hide a mistake in the arithmetic
    (on CPU, XLA rewrites ``x * mask`` into a select, so a nan never shows there)."""
    text = render.call("masked_score", (padded, mask))
    compiled = scalar(submission.call("masked_score", padded, mask), text)
    eager = op_by_op(submission.call, "masked_score", padded, mask)
    return text, compiled, compiled if eager is None else scalar(eager, text)


def _only_compiled_right(compiled: float, expected: float, magnitude: float) -> str:
    """A sentence for a score right only after XLA's rewrite, else nothing."""
    if not close(compiled, expected, magnitude):
        return ""
    return (
        " The compiled `masked_score` happens to be right, because XLA on this CPU rewrites a product with "
        "a bool mask into a selection; run op by op (under `jax.disable_jit()`), your arithmetic gives the "
        "wrong value. Multiplying by the mask is not selecting: select with `jnp.where`."
    )


@prop(
    group="padding",
    points=1,
    title="`pad_batch` puts the values first in `size` float32 rows, with a bool mask on exactly those rows",
    hint="Allocate `size` rows whatever the length: the values first, padding after, and a bool mask "
    "`jnp.arange(size) < n`. The fixed shape plus the mask is what lets every batch reuse one compiled program.",
)
def test_pad_batch_layout(submission):
    """Input classes the notebook promises (the calls of `pad_batch`):

    - a list: ``isinstance(values, list)``
    - a NumPy array: ``isinstance(values, np.ndarray)``
    - a JAX array: ``isinstance(values, jax.Array)``
    - no row (all padding): ``len(values) == 0``
    - one row: ``len(values) == 1``
    - a full batch: ``len(values) == size``
    - some padding: ``1 < len(values) < size``
    - a real row holding nan: ``bool(np.any(np.isnan(np.asarray(values, dtype=np.float32))))``
    """

    @VALUES
    @given(case=_batches())
    @example(case=(8, _FIVE))
    @example(case=(8, np.arange(8, dtype=np.float32)))
    @example(case=(4, np.array([-2.5], np.float32)))
    def check(case):
        size, values = case
        _check_layout(submission, jax.device_put(values), size)

    check()
    # What the notebook's own cells pass: a list of ints, a NumPy float64 array (at sizes the
    # search already compiled, so they cost no compile).
    _check_layout(submission, [1, 2, 3], 4)
    _check_layout(submission, np.array([0.5, -1.5]), 8)
    # An empty batch is all padding; a real row may hold nan: the mask says which rows are real
    # from the length, never from what they hold.
    _check_layout(submission, [], 4)
    _check_layout(submission, np.array([1.0, np.nan, 2.0], np.float32), 8)


def _check_layout(submission, given, size: int) -> None:
    values = np.asarray(given, dtype=np.float32)
    n = len(values)
    text = render.call("pad_batch", (given, size))
    result = submission.call("pad_batch", given, size)
    padded, mask = _pair(result, text)
    got = render.value(result)

    def fail(problem: str, expected: str = "") -> PropertyFailure:
        return PropertyFailure(problem, example=text, got=got, expected=expected)

    padded_kind = "" if isinstance(padded, (np.ndarray, jax.Array)) else f" (a {type(padded).__name__})"
    try:
        padded = np.asarray(padded)
        mask = np.asarray(mask)
    except Exception:
        raise fail("`pad_batch` returned something that does not convert to arrays.") from None
    if padded.dtype != np.float32:
        raise fail(f"`pad_batch` returned padded values{padded_kind} of dtype {padded.dtype}; they should be float32.")
    if padded.shape != (size,):
        raise fail(
            f"`pad_batch` returned padded values of shape {padded.shape}; they should have shape ({size},): "
            f"`size` rows whatever the number of values."
        )
    if not np.array_equal(padded[:n], values, equal_nan=True):
        if np.array_equal(padded[size - n :], values, equal_nan=True):
            raise fail(
                f"`pad_batch` put the {n} values at the end of padded (rows {size - n}..{size - 1}); "
                f"they belong at the front (rows 0..{n - 1}), with the padding after them."
            )
        raise fail(f"The first {n} rows of padded are not the {n} values, in order.")
    if mask.dtype != np.bool_:
        raise fail(f"`pad_batch` returned a mask of dtype {mask.dtype}; it should be bool (True on real rows).")
    if mask.shape != (size,):
        raise fail(f"`pad_batch` returned a mask of shape {mask.shape}; it should have shape ({size},), like padded.")
    marked = int(mask.sum())
    if marked != n:
        raise fail(f"The mask marks {marked} row(s) as real, but {_count(n)} were given.")
    if not mask[:n].all():
        raise fail(f"The mask marks {n} rows, but not the first {n} (rows 0..{n - 1}), where the values are.")


@prop(
    group="padding",
    points=1,
    title="`pad_batch` raises ValueError when there are more values than rows",
    hint="Padding can only add rows: when `len(values) > size`, raise ValueError. "
    "Dropping the extra values silently changes the objective without a word.",
)
def test_pad_batch_rejects_overflow(submission):
    @VALUES
    @given(case=_overflowing())
    @example(case=(8, np.arange(9, dtype=np.float32)))
    def check(case):
        size, values = case
        args = (jax.device_put(values), size)
        if submission.raises(ValueError, "pad_batch", *args) is None:
            try:
                got = render.value(submission.call("pad_batch", *args))
            except PropertyFailure:
                got = ""
            raise PropertyFailure(
                f"`pad_batch` accepted {len(values)} values for {size} rows instead of raising ValueError.",
                example=render.call("pad_batch", args),
                got=got,
                expected="ValueError",
            )

    check()
    too_long = [1.0] * 6  # a plain list, as a notebook cell would pass it
    if submission.raises(ValueError, "pad_batch", too_long, 4) is None:
        raise PropertyFailure(
            "`pad_batch` accepted a list of 6 values for 4 rows instead of raising ValueError.",
            example=render.call("pad_batch", (too_long, 4)), expected="ValueError",
        )


@prop(
    group="objective",
    points=2,
    title="`masked_score(*pad_batch(v, size))` equals the sum of (v + 1)**2 over the real values",
    hint="Padding must not change the objective. The offset `+ 1` turns every zero pad into (0 + 1)**2 = 1, "
    "so compute each row's term first and then mask the terms, not the values.",
)
def test_objective_preserved(submission):
    raised: list[CallRaised] = []  # pad_batch's own mistakes belong to the padding properties
    judged = []

    @VALUES
    @given(case=_batches())
    @example(case=(8, _FIVE))
    @example(case=(8, np.arange(8, dtype=np.float32) - 3.5))
    @example(case=(4, np.array([2.0], np.float32)))
    def check(case):
        size, values = case
        args = (jax.device_put(values), size)
        text = render.call("pad_batch", args)
        try:
            padded, mask = _pair(submission.call("pad_batch", *args), text)
        except CallRaised as failure:
            raised.append(failure)
            return
        judged.append(case)
        # Compiled only: whether the arithmetic lets garbage through, op by op, is the next
        # property's concern (it fills the unmarked rows itself).
        got = scalar(submission.call("masked_score", padded, mask), render.call("masked_score", (padded, mask)))
        expected, magnitude = _objective(values)
        if not close(got, expected, magnitude):
            raise PropertyFailure(
                "`masked_score(*pad_batch(v, size))` gives the wrong objective."
                + _padded_rows_note(got, expected, size - len(values)),
                example=f"masked_score(*{text}), where pad_batch returned {render.value((padded, mask))}",
                got=repr(got),
                expected=repr(expected),
            )

    check()
    if raised and not judged:
        raise raised[0]


@prop(
    group="objective",
    points=1,
    title="`masked_score` sums exactly the rows its mask marks, whatever the other rows hold (nan, inf, huge)",
    hint="The mask may mark any rows, or none (a score of 0.0), and unmarked rows may hold anything. Compute "
    "every row's term, then select the marked terms with `jnp.where`: arithmetic with the mask keeps nan "
    "(0. * nan and 0. * inf are nan), masking the values before `+ 1` still counts a one per unmarked row, "
    "and counting the True rows assumes they come first.",
)
def test_garbage_in_padding_ignored(submission):
    """Input classes the notebook promises (the calls of `masked_score`):

    - nan padding: ``bool(np.any(np.isnan(np.asarray(values)[~np.asarray(mask)])))``
    - inf padding: ``bool(np.any(np.asarray(values)[~np.asarray(mask)] == np.inf))``
    - -inf padding: ``bool(np.any(np.asarray(values)[~np.asarray(mask)] == -np.inf))``
    - padding between real rows: ``bool(np.any(np.diff(np.asarray(mask).astype(int)) == 1))``
    - no real row: ``not np.any(mask)``
    """
    @VALUES
    @given(case=_garbage_batches())
    @example(case=(np.pad(_FIVE, (0, 3)), np.arange(8) < 5, [np.nan] * 5 + [np.nan, np.inf, -np.inf]))
    @example(case=(np.array([1.5, 2.0, -1.0, 4.0] * 2, np.float32), np.array([False, True, False, True] * 2),
                   [3.0e30, 0.0, -3.0e30, 0.0] * 2))
    @example(case=(np.ones(8, np.float32), np.zeros(8, bool), [np.nan, 1.0, np.inf, 2.0] * 2))
    # a marked row is data even when it is nan: the sum over the marked rows is nan
    @example(case=(np.array([1.0, np.nan, 2.0, 0.0] * 2, np.float32), np.array([True, True, True, False] * 2),
                   [0.0, 0.0, 0.0, np.inf] * 2))
    def check(case):
        values, mask, garbage = case
        # Built here, not by the student's pad_batch: this property is about masked_score alone.
        padded = jax.device_put(np.where(mask, values, np.asarray(garbage, np.float32)))
        mask_array = jax.device_put(mask)
        text, compiled, eager = _scores(submission, padded, mask_array)
        expected, magnitude = _objective(values[mask])
        for got, how in ((compiled, ""), (eager, " run op by op")):
            if close(got, expected, magnitude):
                continue
            rows = [int(i) for i in np.flatnonzero(mask)]
            marked = f"rows {rows}" if rows else "no row"
            if not math.isfinite(got):
                problem = (
                    f"`masked_score`{how} returned {got!r} when the mask marks {marked} and the other rows hold "
                    "garbage: an unmarked row's term reached the sum."
                )
            else:
                problem = (f"`masked_score`{how} gives the wrong objective when the mask marks {marked} and the "
                           "other rows hold garbage.") + _padded_rows_note(got, expected, int((~mask).sum()))
            if how:
                problem += _only_compiled_right(compiled, expected, magnitude)
            raise PropertyFailure(problem, example=text, got=repr(got), expected=repr(expected))

    check()


@prop(
    group="traces",
    points=1,
    title="batches of every length, padded to one size, share one trace of `masked_score`",
    hint="A fixed shape plus a mask keeps one compiled program: every length padded to `size` must reach "
    "`masked_score` with the same shape, dtype and weak type (`jnp.zeros(size, jnp.float32)`, not "
    "`jnp.full(size, 0.)`, which is weakly typed), and `masked_score` is built once, with `jax.jit`, at top level.",
)
def test_lengths_share_one_trace(submission):
    submission.function("masked_score")
    # From a cold cache: a full batch that pad_batch returns weakly typed compiled a second
    # program in an earlier check, and would hide behind it.
    audit = SignatureAudit(submission, "masked_score", "Build it once, with `jax.jit`, at top level.").cold_start()
    # Built here, not by pad_batch: the evidence that masked_score is compiled at all, at a
    # size no other check uses.
    fresh = (jax.device_put(np.linspace(-2.0, 2.0, 29, dtype=np.float32)), jax.device_put(np.arange(29) < 20))
    audit.require_a_trace("values float32[29], mask bool[29]", *fresh)
    # The first call at size 8 traces; every later call pads to the same size and must
    # reuse that program.
    first: list[tuple[int, str, list[str]]] = []

    def check(case):
        lengths, values = case
        for n in lengths:
            args = (jax.device_put(values[:n]), TRACE_SIZE)
            text = render.call("pad_batch", args)
            try:
                pair = _pair(submission.call("pad_batch", *args), text)
            except CallRaised as failure:  # pad_batch's mistake, judged by the padding properties
                audit.skip(failure)
                continue
            call = (n, text, [signature_of(x) for x in pair])
            if not first:
                first.append(call)
            try:
                audit.call(f"every batch padded to {TRACE_SIZE} rows", *pair)
            except Retraced as failure:
                raise _retraced(TRACE_SIZE, first[0], call, failure) from None

    first_failure(_every_length(), check)
    audit.finish()


def _retraced(size: int, before: tuple, after: tuple, failure: Retraced) -> PropertyFailure:
    """The failure for a new trace at a size already compiled, saying what changed."""
    (n_before, text_before, sig_before), (n_after, text_after, sig_after) = before, after
    if n_before != n_after:
        when = f"when only the batch length changed, from {n_before} to {_count(n_after)} in {size} rows"
    else:
        when = f"when called again with {_count(n_after)} in {size} rows (only the values changed)"
    changes = [
        f"{name} {old} for {_count(n_before)} but {new} for {n_after}"
        for name, old, new in zip(("padded", "mask"), sig_before, sig_after)
        if old != new
    ]
    if changes:
        why = "`pad_batch` returned " + "; ".join(changes) + ", and jit compiles once per signature."
    else:
        why = (
            f"`pad_batch` returned the same signature both times (padded {sig_after[0]}, mask {sig_after[1]}), "
            f"so the new trace comes from `masked_score` itself. {failure.cure}"
        ).rstrip()
    return PropertyFailure(
        f"`masked_score` traced again {when}. {why}",
        example=f"masked_score(*{text_before}), then masked_score(*{text_after})",
        got=failure.got,
        expected=f"no new trace: one compiled program for every length at size {size}",
    )
