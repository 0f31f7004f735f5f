"""Part C, unusual and correct: a decorated @functools.partial(jax.jit, static_argnames=...) def, the clip written without a branch as a factor jnp.minimum(1, clip_at / peak) (the same numbers: the factor is 1 exactly when peak <= clip_at), and the eps and clip_at cast to float32 inside. Full points."""
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


@functools.partial(jax.jit, static_argnames=("mode", "n_iter"))
def normalise_jitted(x, mode, n_iter, eps, clip_at):
    eps, clip_at = jnp.float32(eps), jnp.float32(clip_at)
    y, size = _smooth_and_size(x, mode, n_iter)
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return y * jnp.minimum(1.0, clip_at / jnp.maximum(peak, jnp.finfo(jnp.float32).tiny))
