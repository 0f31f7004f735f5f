"""Part C, unusual and correct: static_argnums=(1, 2) and the clip as lax.cond with two branch functions. Full points."""
import functools

import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 8


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


def _normalise_cond(x, mode, n_iter, eps, clip_at):
    y, size = _smooth_and_size(x, mode, n_iter)
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return jax.lax.cond(peak > clip_at, lambda v: v * (clip_at / peak), lambda v: v, y)


normalise_jitted = jax.jit(_normalise_cond, static_argnums=(1, 2))
