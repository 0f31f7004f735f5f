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
    BAKED, CallRaised, GARBAGE, PropertyFailure, Retraced, SignatureAudit, VALUES, close, first_failure,
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
    - a list of ints: ``isinstance(values, list) and len(values) > 0 and all(type(v) is int for v in values)``
    - a NumPy array: ``isinstance(values, np.ndarray)``
    - a NumPy float64 array: ``isinstance(values, np.ndarray) and values.dtype == np.float64``
    - a JAX array: ``isinstance(values, jax.Array)``
    - no row (all padding): ``len(values) == 0``
    - one row: ``len(values) == 1``
    - a full batch: ``len(values) == size``
    - a full list: ``isinstance(values, list) and len(values) == size``
    - a full NumPy float64 array: ``isinstance(values, np.ndarray) and values.dtype == np.float64 and len(values) == size``
    - some padding: ``1 < len(values) < size``
    - a real row holding nan: ``bool(np.any(np.isnan(np.asarray(values, dtype=np.float32))))``
    """

    @VALUES
    @given(case=_batches(), container=st.sampled_from(tuple(_CONTAINERS)))
    @example(case=(8, _FIVE), container="a JAX array")
    @example(case=(8, np.arange(8, dtype=np.float32)), container="a JAX array")
    @example(case=(4, np.array([-2.5], np.float32)), container="a JAX array")
    # A full batch in every container the notebook names: no padding to add, and still float32.
    @example(case=(4, np.array([0.5, -1.5, 2.0, 3.25], np.float32)), container="a list of floats")
    @example(case=(4, np.array([1.0, -2.0, 3.0, 0.0], np.float32)), container="a list of ints")
    @example(case=(8, np.arange(8, dtype=np.float32) / 4), container="a NumPy float64 array")
    def check(case, container):
        size, values = case
        _check_layout(submission, _CONTAINERS[container](values), size)

    check()
    # What the notebook's own cells pass: a list of ints, a NumPy float64 array (at sizes the
    # search already compiled, so they cost no compile).
    _check_layout(submission, [1, 2, 3], 4)
    _check_layout(submission, np.array([0.5, -1.5]), 8)
    # An empty batch is all padding; a real row may hold nan: the mask says which rows are real
    # from the length, never from what they hold.
    _check_layout(submission, [], 4)
    _check_layout(submission, np.array([1.0, np.nan, 2.0], np.float32), 8)


#: The containers the notebook promises `pad_batch` takes, each made from float32 values.
_CONTAINERS = {
    "a JAX array": jax.device_put,
    "a NumPy float64 array": lambda values: values.astype(np.float64),
    "a list of floats": lambda values: [float(v) for v in values],
    "a list of ints": lambda values: [int(v) for v in np.round(values)],
}


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
        full = f" for a full batch ({n} values in {size} rows)" if n == size else ""
        raise fail(f"`pad_batch` returned padded values{padded_kind} of dtype {padded.dtype}{full}; they should be "
                   "float32 for every input, full batches included.")
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


# --------------------------------------------------------------------------- Part C: the gradient

#: What the notebook promises the padded rows of a Part C batch may hold, in the words feedback uses.
_GARBAGE_KINDS = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "1e30": 1e30, "-1e30": -1e30, "zeros": 0.0}

#: Real rows hold positive values (the loss takes their logarithm), between 2**-10 and 2**10:
#: far enough from 0 and from float32's limits that the float32 loss stays within the tolerance
#: of the float64 reference.
_POSITIVE = st.floats(0.0009765625, 1024.0, width=32)


def _loss_cases():
    """``(size, t, values, mask, kind)``: a size from SIZES, a float32 ``t``, positive values for
    every row, a mask with at least one True anywhere, and what the unmarked rows hold."""
    return st.sampled_from(SIZES).flatmap(
        lambda size: st.tuples(
            st.just(size),
            st.floats(-4.0, 4.0, width=32),
            st.lists(_POSITIVE, min_size=size, max_size=size),
            st.lists(st.booleans(), min_size=size, max_size=size).map(lambda m: m if any(m) else [True] + m[1:]),
            st.sampled_from(sorted(_GARBAGE_KINDS)),
        )
    )


def _loss_case(size, t, real, mask, kind):
    """An explicit case: ``real`` fills the marked rows in order (one value per True)."""
    values = np.ones(size, np.float32)
    values[np.asarray(mask, bool)] = real
    return (size, t, list(values), list(mask), kind)


#: The explicit cases, in the order they run. Each padded size is met first with one case, then
#: with another whose t, values, mask and garbage all differ: a value read from outside the
#: arguments while tracing would be baked into the first program at that size.
_E, _E2 = float(np.e), float(np.e ** 2)
_LOSS_EXAMPLES = (
    # the self-check's batch: three real rows padded with zeros to eight
    _loss_case(8, 0.5, [1.0, _E, _E2], [True] * 3 + [False] * 5, "zeros"),
    # real rows between padded ones, nan in the padding, t negative
    _loss_case(8, -1.25, [0.25, 7.5, 3.0, 40.0], [False, True, False, True, True, False, True, False], "nan"),
    _loss_case(8, 2.0, [2.0, 9.0, 0.5, 30.0, 1.5], [True] * 5 + [False] * 3, "inf"),
    # all but one row padded
    _loss_case(8, 0.0, [3.5], [True] + [False] * 7, "-inf"),
    _loss_case(8, 1.0, [6.0, 0.125], [False] * 6 + [True] * 2, "1e30"),
    _loss_case(8, -0.5, [0.75, 12.0, 5.0], [True, False, True, False, True, False, False, False], "-1e30"),
    # no padding at all
    _loss_case(4, 1.5, [1.25, 4.0, 0.3, 60.0], [True] * 4, "nan"),
    _loss_case(4, -0.75, [8.0], [False, False, True, False], "1e30"),
    _loss_case(4, 3.0, [0.6, 2.5, 20.0], [True, True, True, False], "zeros"),
    _loss_case(4, 0.25, [15.0, 0.05], [False, True, False, True], "inf"),
)


def _with_loss_examples(check):
    for case in reversed(_LOSS_EXAMPLES):  # example() decorators run top to bottom
        check = example(case=case)(check)
    return check


def _reference_loss(t: float, real: np.ndarray) -> tuple[float, float, float, float]:
    """The unpadded loss and its derivative in t, in float64, with the magnitudes their float32
    rounding scales with: (value, value magnitude, slope, slope magnitude)."""
    logs = np.log(np.asarray(real, np.float64))
    t = float(np.float32(t))
    value = float(np.mean((logs - t) ** 2))
    slope = float(-2.0 * np.mean(logs - t))
    size = float(np.mean((np.abs(logs) + abs(t)) ** 2))
    return value, size, slope, float(2.0 * np.mean(np.abs(logs) + abs(t)))


def _padding_words(mask: np.ndarray, kind: str) -> str:
    padded = int((~mask).sum())
    if padded == 0:
        return "no row is padded"
    return f"{padded} of {mask.size} rows are padded and hold {kind}"


def _slopes(submission, case):
    """Call ``loss_and_slope`` compiled and op by op on one case: the call's text, the mask, the
    garbage kind, the reference and the results as ``[(value, slope, how)]``."""
    _, t, values, mask, kind = case
    mask = np.asarray(mask, bool)
    real = np.asarray(values, np.float32)[mask]
    padded = np.where(mask, np.asarray(values, np.float32), np.float32(_GARBAGE_KINDS[kind]))
    args = (jax.device_put(np.float32(t)), jax.device_put(padded), jax.device_put(mask))
    text = render.call("loss_and_slope", args)
    results = []
    compiled = submission.call("loss_and_slope", *args)
    eager = op_by_op(submission.call, "loss_and_slope", *args)
    for got, how in ((compiled, ""), (eager, " run op by op")):
        if got is None:
            continue
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise PropertyFailure(
                f"`loss_and_slope` returned {render.kind(got)}, not the pair (loss, gradient) that "
                "`jax.value_and_grad(masked_loss)` returns; leave the line under `masked_loss` as it is.",
                example=text,
            )
        results.append((scalar(got[0], text), scalar(got[1], text), how))
    return text, mask, kind, _reference_loss(t, real), results


def _search_losses(submission, judge) -> None:
    """Run ``judge(text, mask, kind, reference, results, previous)`` on the explicit cases and a
    search over ``_loss_cases``; ``previous`` is the reference of the last case at the same size.

    Each case's calls are made once per grade cell (``submission.memo``), so a search run again
    in the same cell costs no new calls."""
    seen = submission.memo.setdefault("padded_masking loss calls", {})
    previous: dict = {}

    @VALUES
    @given(case=_loss_cases())
    @_with_loss_examples
    def check(case):
        key = repr(case)
        if key not in seen:
            seen[key] = _slopes(submission, case)
        text, mask, kind, reference, results = seen[key]
        before, previous[case[0]] = previous.get(case[0]), reference
        judge(text, mask, kind, reference, results, before)

    check()


def _baked(got: float, previous, index: int) -> str:
    if previous is None or not math.isfinite(got):
        return ""
    return BAKED if close(got, previous[index], previous[index + 1]) else ""


def _judge_value(text, mask, kind, reference, results, previous) -> None:
    """The loss over the real rows, in every result, or the failure saying what it is instead."""
    expected, magnitude = reference[0], reference[1]
    for value, _, how in results:
        if close(value, expected, magnitude):
            continue
        problem = f"`loss_and_slope`{how} returns the wrong loss when {_padding_words(mask, kind)}."
        marked, size = int(mask.sum()), mask.size
        if math.isfinite(value) and marked < size and close(value * size / marked, expected, magnitude):
            problem += (f" It is the mean over all {size} rows, as if the {size - marked} padded rows were "
                        f"real rows with a zero term: the mean is over the {marked} real rows.")
        elif not math.isfinite(value):
            problem += (f" Every real row holds a positive number, so a loss of {value!r} comes from a row the "
                        "mask leaves out (or from values this call did not pass).")
        problem += _baked(value, previous, 0)
        raise PropertyFailure(problem, example=text, got=repr(value), expected=repr(expected))


@prop(
    group="gradient",
    points=2,
    title="the value of `masked_loss` and its gradient in `t` equal the unpadded loss's, whatever the padded "
    "rows hold",
    hint="The mean is over the real rows only (divide by how many rows the mask marks). And `jnp.where` "
    "chooses values, not derivatives: differentiating it still multiplies a zero by the derivative computed "
    "at every padded row, and 0 * nan and 0 * inf are nan. Whatever you compute from `t` at a padded row must "
    "have a finite derivative there, whatever the row held.",
)
def test_gradient_survives_padding(submission):
    """Input classes the notebook promises (the calls of `loss_and_slope`):

    - nan padding: ``bool(np.all(np.isnan(np.asarray(values)[~np.asarray(mask)]))) and not np.all(mask)``
    - inf padding: ``bool(np.all(np.asarray(values)[~np.asarray(mask)] == np.inf)) and not np.all(mask)``
    - -inf padding: ``bool(np.all(np.asarray(values)[~np.asarray(mask)] == -np.inf)) and not np.all(mask)``
    - huge padding: ``bool(np.all(np.asarray(values)[~np.asarray(mask)] == np.float32(1e30))) and not np.all(mask)``
    - huge negative padding: ``bool(np.all(np.asarray(values)[~np.asarray(mask)] == np.float32(-1e30))) and not np.all(mask)``
    - zero padding: ``bool(np.all(np.asarray(values)[~np.asarray(mask)] == 0.0)) and not np.all(mask)``
    - no padding: ``bool(np.all(mask))``
    - all but one row padded: ``int(np.sum(mask)) == 1``
    - real rows not a prefix: ``bool(np.any(np.diff(np.asarray(mask).astype(int)) == 1))``
    - t negative: ``float(t) < 0``
    - two sizes: ``np.shape(values) == (4,)``
    """
    def judge(text, mask, kind, reference, results, previous):
        if not any(not math.isfinite(slope) for _, slope, _ in results):
            _judge_value(text, mask, kind, reference, results, previous)
        expected, magnitude = reference[2], reference[3]
        for value, slope, how in results:
            if close(slope, expected, magnitude):
                continue
            value_right = close(value, reference[0], reference[1])
            if not math.isfinite(slope) and value_right:
                problem = (
                    f"`loss_and_slope`{how} returns the right loss but a gradient of {slope!r} in `t` when "
                    f"{_padding_words(mask, kind)}: the {kind} stayed out of the value, not out of the gradient."
                )
            else:
                problem = f"`loss_and_slope`{how} returns the wrong gradient in `t` when {_padding_words(mask, kind)}."
                if slope == 0.0:
                    problem += " A gradient of exactly 0 means `t` does not reach the loss through the real rows."
                if not value_right:
                    problem += " The loss itself is wrong there too."
            problem += _baked(slope, previous, 2)
            raise PropertyFailure(problem, example=text, got=repr(slope), expected=repr(expected))

    _search_losses(submission, judge)
