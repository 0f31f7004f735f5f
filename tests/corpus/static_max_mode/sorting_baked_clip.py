"""Part C: clip_at kept out of the jitted signature and read from a module-level setting that a wrapper updates before each call. The first clip_at seen while tracing is baked into the program, so a later call with another clip_at at the same shapes returns the earlier answer."""
import functools

import jax
import jax.numpy as jnp

FAILS = {"sorted_values_match"}
SCORE = 7
MESSAGE = r'earlier call at the same shapes'


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


_settings = {"clip_at": 1.0}


def _normalise_reads_setting(x, mode, n_iter, eps):
    y, size = _smooth_and_size(x, mode, n_iter)
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    clip_at = _settings["clip_at"]
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


_compiled = jax.jit(_normalise_reads_setting, static_argnames=("mode", "n_iter"))


def normalise_jitted(x, mode, n_iter, eps, clip_at):
    _settings["clip_at"] = clip_at
    return _compiled(x, mode, n_iter, eps)
