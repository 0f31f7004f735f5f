"""The student renamed the jitted function (`choose_jit`): every use of `choose` fails by name."""
import jax

FAILS = {"sum_matches_numpy", "mean_matches_numpy", "max_matches_numpy", "unknown_mode_raises", "values_only_no_retrace", "traces_bounded_by_signatures"}
SCORE = 0
MESSAGE = r"does not define `choose`"


def choose_reduction(values, mode):
    if mode == "sum":
        return values.sum()
    if mode == "mean":
        return values.mean()
    if mode == "max":
        return values.max()
    raise ValueError("unknown mode")


choose_jit = jax.jit(choose_reduction, static_argnames=("mode",))
