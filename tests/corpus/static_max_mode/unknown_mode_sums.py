"""Any mode that is not mean or max falls through to a sum: typos pass silently."""
import jax

FAILS = {"unknown_mode_raises"}
SCORE = 5
MESSAGE = r"accepted the mode .* instead of raising ValueError"


def choose_reduction(values, mode):
    if mode == "mean":
        return values.mean()
    if mode == "max":
        return values.max()
    return values.sum()


choose = jax.jit(choose_reduction, static_argnames=("mode",))
