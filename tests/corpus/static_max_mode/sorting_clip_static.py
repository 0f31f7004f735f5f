"""Part C: the clip rewritten with jnp.where, but clip_at declared static too ('a threshold is configuration'),
by number. The values are right, but every new clip_at is a new program and a 0-d array clip_at is refused (a
static argument must be hashable)."""
import functools

import jax
import jax.numpy as jnp

FAILS = {"only_program_choices_static"}
SCORE = 7
MESSAGE = r'changed only `clip_at`'


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


def _normalise_clip_static(x, mode, n_iter, eps, clip_at):
    y, size = _smooth_and_size(x, mode, n_iter)
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = jax.jit(_normalise_clip_static, static_argnums=(1, 2, 4))
