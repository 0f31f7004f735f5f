"""`choose` builds a fresh jitted lambda inside every call: right answers, a new trace each time."""
import jax

FAILS = {"values_only_no_retrace", "traces_bounded_by_signatures"}
SCORE = 4
MESSAGE = r"It traces on every call: a lambda, `functools\.partial` or inner `def` created inside the call and handed to `jax\.jit` is a new function"


def choose_reduction(values, mode):
    if mode == "sum":
        return values.sum()
    if mode == "mean":
        return values.mean()
    if mode == "max":
        return values.max()
    raise ValueError("unknown mode")


def choose(values, mode):
    return jax.jit(lambda v: choose_reduction(v, mode))(values)
