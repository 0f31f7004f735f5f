"""Part C: `eps` declared static beside mode and n_iter (it is 'a small constant'), the clip rewritten with jnp.where. Right values, but a new eps traces again: eps is only a number in a denominator."""
import functools

import jax
import jax.numpy as jnp

FAILS = {"only_program_choices_static"}
SCORE = 7
MESSAGE = r'The repeated call was a call that changed only `eps`'


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


def _normalise_eps_static(x, mode, n_iter, eps, clip_at):
    y, size = _smooth_and_size(x, mode, n_iter)
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = jax.jit(_normalise_eps_static, static_argnames=("mode", "n_iter", "eps"))
