"""Public checks of padded_masking: the padded layout, the masked objective, one trace, the gradient."""

import jax
import jax.numpy as jnp
import numpy as np

from autograder.public.runner import (
    PARTS,
    Mismatch,
    TraceCount,
    close,
    op_by_op,
    public,
    show,
)

ASSIGNMENT = "padded_masking"
PARTS.update({"padding": ("`pad_batch`", "Part A")})


@public("padding", "`pad_batch` puts the values first in a float32 batch of `size` rows, with a mask of the real rows",
        "Compare Got with Expected: the dtype, the rows after the values, or the mask? What must the mask say "
        "of a real row that holds 0? (Part A)")
def layout(names, rng):
    cases = [([1, 2, 3], 4), (np.arange(5, dtype=np.float32) + 0.5, 8), (np.ones(4, dtype=np.float32), 4)]
    cases += [([], 4), (np.array([1.0, np.nan, 3.0], dtype=np.float32), 5), (jnp.array([2.0, -1.0]), 3)]
    cases += [([0.0, 2.0, 0.0], 5)]  # real rows that hold 0: the mask comes from how many values, not from them
    cases += [([0.5, -1.5, 2.0], 3)]  # a full list: nothing to pad, still a float32 batch
    cases += [(rng.uniform(-5, 5, n).astype(np.float32), int(n + rng.integers(0, 4))) for n in (2, 6)]
    for values, size in cases:
        def run(values=values, size=size):
            padded, mask = names.function("pad_batch")(values, size)
            real = len(values)
            if np.shape(padded) != (size,) or np.asarray(padded).dtype != np.float32:
                raise Mismatch("The padded batch should be float32 with `size` rows.", show(padded),
                               f"float32[{size}]")
            if np.shape(mask) != (size,) or np.asarray(mask).dtype != np.bool_:
                raise Mismatch("The mask should be a bool array with `size` rows.", show(mask), f"bool[{size}]")
            if not close(np.asarray(padded)[:real], np.asarray(values, dtype=np.float32), rtol=0, atol=0):
                raise Mismatch("The first rows of the batch should be the values, in order.", show(padded))
            expected = [True] * real + [False] * (size - real)
            if np.asarray(mask).tolist() != expected:
                raise Mismatch("The mask should mark exactly the real rows.", show(mask), str(expected))

        if isinstance(values, list):
            shown = f"the list {values}" + (" (an empty batch: all padding)" if not values else "")
        elif isinstance(values, jax.Array):
            shown = f"the JAX array {show(values)}"
        else:
            shown = show(values) + (" (a real row may hold nan)" if np.isnan(values).any() else "")
        yield f"pad_batch({shown}, {size})", run

    def too_long():
        try:
            got = names.function("pad_batch")(np.ones(9, dtype=np.float32), 8)
        except ValueError:
            return
        raise Mismatch("A batch longer than `size` was accepted.", show(got[0]) if isinstance(got, tuple) else show(got),
                       "ValueError")

    yield "pad_batch(float32[9] ones, 8)", too_long


def _batches(rng):
    yield [0.0, 1.0, 2.0, 3.0, 4.0], 8
    yield [-1.0, 2.5], 8
    yield [0.25, -3.0, 7.0], 3
    for n in (3, 7):
        yield rng.uniform(-3, 3, n).round(3).tolist(), 8


@public("objective", "`masked_score` of a padded batch equals the unpadded sum of (v + 1)**2, whatever the padding holds",
        "The padding changed the score: how does a padded row's content reach your sum? (The idea)",
        uses=("padding",))
def objective(names, rng):
    for batch, size in _batches(rng):
        for junk in (None, np.nan, np.inf, -1e30):
            def run(batch=batch, size=size, junk=junk):
                padded, mask = names.function("pad_batch")(batch, size)
                if junk is not None:
                    padded = jnp.where(jnp.asarray(mask), jnp.asarray(padded), junk)
                got = names.function("masked_score")(padded, mask)
                expected = float(np.sum((np.array(batch, dtype=np.float64) + 1.0) ** 2))
                if not close(got, expected):
                    raise Mismatch("`masked_score` does not give the unpadded objective.", show(got), repr(expected))

            where = "as `pad_batch` left them" if junk is None else f"set to {junk}"
            yield f"batch {batch} padded to {size}, padded rows {where}", run


_NAN, _INF = float("nan"), float("inf")
#: (values, mask, what the notebook says of it): masks that are not a prefix, or mark nothing.
_ANY_MASK = (
    ([1.0, 2.0, 3.0, 4.0], [False, True, False, True], "a mask that is not a prefix"),
    ([_NAN, 2.0, _INF, 0.5, -1e30], [False, True, False, True, False], "a mask that is not a prefix, nan, inf and -1e30 "
                                                                         "in the unmarked rows"),
    ([3.0, _NAN, 1.0], [False, False, False], "a mask that marks no row, nan in an unmarked row"),
    ([1.0, _NAN, 2.0, 0.0], [True, True, False, False], "a marked row that holds nan (a real row: the sum is nan)"),
)


def _objective(values, mask):
    wide = np.asarray(values, dtype=np.float64)[np.asarray(mask)]
    return float(np.sum((wide + 1.0) ** 2))


@public("objective", "`masked_score` honours any mask (not only a prefix, or none), compiled and under "
        "`jax.disable_jit()`",
        "What does your function assume about the mask: that it is a prefix, or that there is one? And op by "
        "op, what is a padded `nan` or `inf` times 0? (The idea)")
def any_mask(names, rng):
    for values, mask, what in _ANY_MASK:
        for eager in (False, True):
            def run(values=values, mask=mask, eager=eager):
                args = jnp.asarray(values, dtype=jnp.float32), jnp.asarray(mask)
                got = names.function("masked_score")(*args)
                if eager:  # a function compiled ahead of time cannot run op by op: its compiled result stands
                    got = op_by_op(names.function("masked_score"), *args)
                    if got is None:
                        return
                expected = _objective(values, mask)
                if not close(got, expected):
                    raise Mismatch("`masked_score` does not give the sum over the marked rows only"
                                   + (" when run op by op, under `jax.disable_jit()`." if eager else "."),
                                   show(got), repr(expected))

            how = " under jax.disable_jit()" if eager else ""
            yield f"masked_score(float32{values}, {mask}){how}: {what}", run


@public("traces", "batches of different lengths, padded to one size, share one trace of `masked_score`",
        "Batches of other lengths traced again: what differed between those calls, as JAX sees a signature? "
        "(Worked example: a short last batch, then a padded one)", uses=("padding",))
def one_trace(names, rng):
    def run():
        lengths = (1, 6, 11, 12)
        batches = [names.function("pad_batch")(np.linspace(-1.0, 1.0, n, dtype=np.float32), 12) for n in lengths]
        with TraceCount() as watch:
            for padded, mask in batches:
                names.function("masked_score")(padded, mask)
        if watch.count > 1:
            raise Mismatch("The padded batches were traced more than once.", f"{watch.count} traces", "at most 1")

    yield "lengths 1, 6, 11 and 12, each padded to 12, then masked_score on each", run


@public("gradient", "`loss_and_slope` gives the unpadded loss and its slope in t, whatever the padding holds, for "
        "any mask, compiled and under `jax.disable_jit()`",
        "The loss can be right while the slope is not, or is `nan`: what does the gradient of a selection "
        "take from the rows it did not select, when those rows hold values `log` cannot take? (Part C)")
def gradient(names, rng):
    def check(real, t, values, mask, eager=False):
        args = jnp.float32(t), jnp.asarray(values, dtype=jnp.float32), jnp.asarray(mask)
        value, slope = names.function("loss_and_slope")(*args)
        if eager:  # a function compiled ahead of time cannot run op by op: its compiled result stands
            both = op_by_op(names.function("loss_and_slope"), *args)
            if both is None:
                return
            value, slope = both
        logs = np.log(np.asarray(real, dtype=np.float64))
        expected = (float(np.mean((logs - t) ** 2)), float(-2.0 * np.mean(logs - t)))
        if not (close(value, expected[0]) and close(slope, expected[1])):
            raise Mismatch("The loss or its slope is not the unpadded one"
                           + (" when run op by op, under `jax.disable_jit()`." if eager else "."),
                           f"loss {show(value)}, slope {show(slope)}", f"loss {expected[0]!r}, slope {expected[1]!r}")

    cases = [(np.array([1.0, np.e, np.e ** 2], dtype=np.float32), 0.5, 8)]
    cases += [(rng.uniform(0.5, 4.0, 5).astype(np.float32), float(rng.uniform(-1, 1)), 8)]
    for real, t, size in cases:
        for junk in (0.0, np.nan, -1.0, np.inf, -np.inf, 1e30, -1e30):
            def run(real=real, t=t, size=size, junk=junk):
                values = np.concatenate([real, np.full(size - len(real), junk, dtype=np.float32)])
                check(real, t, values, np.arange(size) < len(real))

            yield f"t = {t:g}, real rows {show(real)} padded to {size} with {junk}", run

    scattered = np.array([np.nan, 2.0, np.inf, 0.5, -1e30], dtype=np.float32)
    spread = [False, True, False, True, False]
    everything = np.array([0.25, 1.0, 4.0], dtype=np.float32)
    for eager in (False, True):
        how = ", under jax.disable_jit()" if eager else ""
        yield (f"t = -1, values {show(scattered)} with the mask {spread} (real rows not a prefix){how}",
               lambda eager=eager: check(scattered[[1, 3]], -1.0, scattered, spread, eager))
        yield (f"t = 2, values {show(everything)}, every row real (a batch of another size){how}",
               lambda eager=eager: check(everything, 2.0, everything, [True] * 3, eager))
    padded = np.array([2.0, 3.0, np.nan, -np.inf, 1e30, 0.0], dtype=np.float32)
    yield (f"t = 0.5, values {show(padded)} with the first 2 rows real, under jax.disable_jit()",
           lambda: check(padded[:2], 0.5, padded, np.arange(6) < 2, eager=True))
