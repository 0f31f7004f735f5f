"""Prints each reduction instead of returning it, so every call gives back None."""
import jax

FAILS = {"sum_matches_numpy", "mean_matches_numpy", "max_matches_numpy"}
SCORE = 3
MESSAGE = r"returned a NoneType \(None\), not a single number"


def choose_reduction(values, mode):
    if mode == "sum":
        print(values.sum())
    elif mode == "mean":
        print(values.mean())
    elif mode == "max":
        print(values.max())
    else:
        raise ValueError("unknown mode")


choose = jax.jit(choose_reduction, static_argnames=("mode",))
