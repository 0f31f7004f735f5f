"""Small checks the property modules share: numbers, closeness, sequence search."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given

from autograder.grading import render
from autograder.grading.results import CallRaised, PropertyFailure
from autograder.kit import precision
from autograder.kit.settings import TRACES


def scalar(got, call_text: str) -> float:
    """The single number a call returned, or a failure saying what came back instead."""
    if isinstance(got, bool) or got is None or isinstance(got, (str, bytes, list, tuple, dict)):
        raise PropertyFailure(f"`{call_text}` returned {render.kind(got)}, not a single number.")
    try:
        array = np.asarray(got)
    except Exception:
        raise PropertyFailure(f"`{call_text}` returned {render.kind(got)}, not a single number.") from None
    if array.shape != () or not np.issubdtype(array.dtype, np.number):
        raise PropertyFailure(
            f"`{call_text}` returned {render.kind(got)}; it should return a single number (shape ())."
        )
    return float(array)


def close(got: float, expected: float, magnitude: float, products: bool = False, *, same_program: bool = False) -> bool:
    """float32-tolerant equality: relative to the size of the numbers summed, widened by what this
    backend's float32 delivers beyond a CPU's (:mod:`autograder.kit.precision`; ``products``: the value
    went through matrix products). On a CPU exactly ``1e-5 (|magnitude| + 1) + 1e-6 |expected|``.
    ``same_program``: ``expected`` was computed here, on this backend, by the program that should have
    given ``got``: the backend's rounding is in both, so never widened (a result rounded for display,
    within a TPU's widened tolerance of the exact value, is not the call's result)."""
    if math.isnan(expected):
        return math.isnan(got)
    if math.isinf(expected):  # an overflow the lesson's own code makes: only the same infinity is right
        return got == expected
    if not math.isfinite(got):
        return False
    allowed = 1e-5 * (abs(magnitude) + 1.0) + 1e-6 * abs(expected)
    if abs(got - expected) <= allowed:
        return True
    extra = 0.0 if same_program else precision.excess(products)
    return extra > 0 and abs(got - expected) <= allowed + extra * (abs(magnitude) + 1.0 + abs(expected))


#: Said where a call returned what an earlier call at the same shapes should have: the lesson of a
#: value baked in while tracing.
BAKED = (" It is what the earlier call at the same shapes should have returned: a value the function read "
         "from outside its arguments while JAX traced it (a global, a dict, a closure, an attribute) became a "
         "constant of the compiled program, and later calls at those shapes reuse it. Pass every value that can "
         "change as an argument.")


def other_values(tree, offset: float = 2.75):
    """The same containers, shapes and dtypes as ``tree``, every number changed: the second call
    of a function at shapes it has already seen, which reuses the program the first one traced.
    Floats become ``offset - x``, integers ``x + 1``, booleans their negation; other leaves stay."""
    import jax

    def change(leaf):
        if isinstance(leaf, (bool, np.bool_)) or (hasattr(leaf, "dtype") and np.asarray(leaf).dtype == np.bool_):
            return np.logical_not(leaf) if hasattr(leaf, "dtype") else not leaf
        if isinstance(leaf, (int, np.integer)) or (hasattr(leaf, "dtype") and np.issubdtype(leaf.dtype, np.integer)):
            return leaf + 1
        if isinstance(leaf, (float, np.floating)) or (hasattr(leaf, "dtype") and np.issubdtype(leaf.dtype, np.floating)):
            changed = offset - np.asarray(leaf)
            if isinstance(leaf, jax.Array):
                return jax.numpy.asarray(changed, leaf.dtype)
            return changed.astype(leaf.dtype) if hasattr(leaf, "dtype") else float(changed)
        return leaf
    return jax.tree.map(change, tree)


def first_failure(strategy, check, settings=TRACES) -> None:
    """Search ``strategy`` for an example where ``check`` fails; raise the first one found.

    For properties about JAX's caches: the caches outlive an example, so a failing
    example may pass when replayed. Recording the first failure and raising it after
    the search keeps the reported example exactly the one that failed.
    """
    found: list[PropertyFailure] = []

    @settings
    @given(strategy)
    def search(example):
        if not found:
            try:
                check(example)
            except PropertyFailure as failure:
                found.append(failure)

    search()
    if found:
        raise found[0]


def op_by_op(call, *args):
    """``call(*args)`` with every jit disabled: the student's code run as written, one
    operation at a time, so no compiler rewrite (on CPU, XLA turns ``x * mask`` into a
    select) can hide what the mathematics does. Python numbers are passed as the weakly
    typed arrays jit would make of them (so ``(gain > 1.).astype(...)`` works as under
    jit); use it only for functions whose arguments are all dynamic. Returns None for a
    function compiled ahead of time, which cannot run op by op."""
    import jax
    import jax.numpy as jnp

    arrays = [jnp.asarray(a) if isinstance(a, (bool, int, float)) else a for a in args]
    try:
        with jax.disable_jit():
            return call(*arrays)
    except CallRaised as failure:
        if _AHEAD_OF_TIME in failure.problem:
            return None  # compiled ahead of time (`.lower().compile()`): nothing to run op by op
        raise


#: What JAX says when an ahead-of-time compiled function is called under ``disable_jit``.
_AHEAD_OF_TIME = "not supported in the AOT path"
