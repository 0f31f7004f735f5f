"""Part C: the `if` rewritten as an elementwise clip, jnp.where(|y| > clip_at, sign(y) * clip_at, y): the entries above clip_at are cut instead of the whole vector shrinking by clip_at / peak. Roles right, values wrong."""
import functools

import jax
import jax.numpy as jnp

FAILS = {"sorted_values_match"}
SCORE = 7
MESSAGE = r'does not give the values `normalise` gives'


def choose_reduction(values, mode):
    if mode == "sum":
        return values.sum()
    if mode == "mean":
        return values.mean()
    if mode == "max":
        return values.max()
    raise ValueError(f"unknown mode {mode!r}")


choose = jax.jit(choose_reduction, static_argnames=("mode",))


def _smooth_and_size(x, mode, n_iter):
    y = x
    for _ in range(n_iter):
        y = 0.5 * (y + jnp.roll(y, 1))
    if mode == "l2":
        size = jnp.sqrt(jnp.sum(y * y))
    elif mode == "max":
        size = jnp.max(jnp.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}")
    return y, size


def _normalise_clipped(x, mode, n_iter, eps, clip_at):
    y, size = _smooth_and_size(x, mode, n_iter)
    y = y / (size + eps)
    return jnp.where(jnp.abs(y) > clip_at, jnp.sign(y) * clip_at, y)


normalise_jitted = jax.jit(_normalise_clipped, static_argnames=("mode", "n_iter"))
