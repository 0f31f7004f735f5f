"""`choose = jax.jit(choose_reduction)`: the string mode reaches jit as data and is rejected."""
import jax

FAILS = {"sum_matches_numpy", "mean_matches_numpy", "max_matches_numpy", "unknown_mode_raises", "values_only_no_retrace", "traces_bounded_by_signatures"}
SCORE = 0
MESSAGE = r"raised TypeError: jit tried to trace `mode`, which is not an array.*static_argnames"


def choose_reduction(values, mode):
    if mode == "sum":
        return values.sum()
    if mode == "mean":
        return values.mean()
    if mode == "max":
        return values.max()
    raise ValueError("unknown mode")


choose = jax.jit(choose_reduction)
