"""Part C, unusual and correct: only mode static; the smoothing loop is lax.fori_loop with a traced n_iter, so one program serves every count (the notebook accepts both). Full points."""
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


def _normalise_fori(x, mode, n_iter, eps, clip_at):
    y = jax.lax.fori_loop(0, n_iter, lambda i, v: 0.5 * (v + jnp.roll(v, 1)), x)
    if mode == "l2":
        size = jnp.linalg.norm(y)
    elif mode == "max":
        size = jnp.max(jnp.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}")
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = jax.jit(_normalise_fori, static_argnames="mode")
