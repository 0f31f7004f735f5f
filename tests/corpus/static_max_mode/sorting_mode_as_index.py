"""An unusual correct Part C: mode made dynamic by turning it into an index for lax.switch before the
jit, so one program holds both reductions and a new mode traces nothing. The notebook says an argument
that picks the operations *may* be static, not that it must: the values are right, and eps and clip_at
never trace."""
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


def _normalise_switch(x, mode_index, n_iter, eps, clip_at):
    y = x
    for _ in range(n_iter):
        y = 0.5 * (y + jnp.roll(y, 1))
    size = jax.lax.switch(mode_index, [lambda v: jnp.sqrt(jnp.sum(v * v)), lambda v: jnp.max(jnp.abs(v))], y)
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


_switched = jax.jit(_normalise_switch, static_argnames=("n_iter",))


def normalise_jitted(x, mode, n_iter, eps, clip_at):
    return _switched(x, ("l2", "max").index(mode), n_iter, eps, clip_at)
