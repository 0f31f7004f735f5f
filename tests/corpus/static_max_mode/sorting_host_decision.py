"""Part C: the arguments sorted right (mode and n_iter static, eps and clip_at dynamic), but the
decision on data taken on the host: the jitted part returns the array and its peak, and a Python
wrapper runs `if float(peak) > float(clip_at)` after it ("jit can't take an `if` on data"). The
values are right and new numbers never trace again, but every call waits for the device to hand
the peak back, and staged whole (`jax.make_jaxpr`) the function raises: the decision is not in the
program. Only the values property, which stages the whole call, fails."""
import jax
import jax.numpy as jnp

FAILS = {"sorted_values_match"}
SCORE = 7
MESSAGE = r"not all of its work is in the compiled program"


def choose_reduction(values, mode):
    if mode == "sum":
        return values.sum()
    if mode == "mean":
        return values.mean()
    if mode == "max":
        return values.max()
    raise ValueError(f"unknown mode {mode!r}")


choose = jax.jit(choose_reduction, static_argnames=("mode",))


def _smooth_and_divide(x, mode, n_iter, eps):
    y = x
    for _ in range(n_iter):
        y = 0.5 * (y + jnp.roll(y, 1))
    if mode == "l2":
        size = jnp.sqrt(jnp.sum(y * y))
    elif mode == "max":
        size = jnp.max(jnp.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}")
    y = y / (size + eps)
    return y, jnp.max(jnp.abs(y))


_staged = jax.jit(_smooth_and_divide, static_argnames=("mode", "n_iter"))


def normalise_jitted(x, mode, n_iter, eps, clip_at):
    y, peak = _staged(x, mode, n_iter, eps)
    if float(peak) > float(clip_at):  # jit can't take an `if` on data, so decide here
        y = y * (clip_at / peak)
    return y
