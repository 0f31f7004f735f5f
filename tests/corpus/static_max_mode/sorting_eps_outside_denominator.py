"""Part C: `y / size + eps` instead of `y / (size + eps)` while rewriting: eps is added to every entry. Roles right, values wrong."""
import functools

import jax
import jax.numpy as jnp

FAILS = {"sorted_values_match"}
SCORE = 7


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


def _normalise_precedence(x, mode, n_iter, eps, clip_at):
    y, size = _smooth_and_size(x, mode, n_iter)
    y = y / size + eps
    peak = jnp.max(jnp.abs(y))
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = jax.jit(_normalise_precedence, static_argnames=("mode", "n_iter"))
