"""Part C: the roles are right, but the wrapper builds a fresh jit of a functools.partial around mode and n_iter on every call: a new function each time, so every call traces again."""
import functools

import jax
import jax.numpy as jnp

FAILS = {"only_program_choices_static"}
SCORE = 7
MESSAGE = r'every call'


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


def _normalise_data(x, eps, clip_at, mode, n_iter):
    y, size = _smooth_and_size(x, mode, n_iter)
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


def normalise_jitted(x, mode, n_iter, eps, clip_at):
    compiled = jax.jit(functools.partial(_normalise_data, mode=mode, n_iter=n_iter))
    return compiled(x, eps, clip_at)
