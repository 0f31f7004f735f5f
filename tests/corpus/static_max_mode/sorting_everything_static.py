"""Part C: every argument but x declared static, hoping to silence the error of the Python `if peak > clip_at`.
It does not: `peak` is computed from x, which is still traced, so every call raises TracerBoolConversionError, and
the static eps and clip_at would have cost a new program per number anyway. Neither property can pass."""
import functools

import jax
import jax.numpy as jnp

FAILS = {"sorted_values_match", "only_program_choices_static"}
SCORE = 6
MESSAGE = r'lax.cond` or `jnp.where`'


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


def _normalise_all_static(x, mode, n_iter, eps, clip_at):
    y, size = _smooth_and_size(x, mode, n_iter)
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    if peak > clip_at:
        y = y * (clip_at / peak)
    return y


normalise_jitted = jax.jit(_normalise_all_static, static_argnames=("mode", "n_iter", "eps", "clip_at"))
