"""Strips whitespace from the mode before dispatching, to be forgiving of `" max"` or a mode read
from a file with its newline (`"sum\n"`): a mode that is not one of the three exactly is quietly
computed instead of raising ValueError (issue 26, class 9). Case is kept, so "Max" still raises."""
import jax
import jax.numpy as jnp

FAILS = {"unknown_mode_raises"}
SCORE = 7
MESSAGE = r"accepted the mode ' max' instead of raising ValueError\. It differs from 'max' only by whitespace"


def choose_reduction(values, mode):
    if not isinstance(mode, str):
        raise ValueError(f"mode must be a string, got {mode!r}")
    mode = mode.strip()
    if mode == "sum":
        return jnp.sum(values)
    if mode == "mean":
        return jnp.mean(values)
    if mode == "max":
        return jnp.max(values)
    raise ValueError(f"unknown mode {mode!r}")


choose = jax.jit(choose_reduction, static_argnames=("mode",))


# Part C, answered correctly (this file is about another part).
import jax as _jax_c
import jax.numpy as _jnp_c


def _normalise_staged(x, mode, n_iter, eps, clip_at):
    y = x
    for _ in range(n_iter):
        y = 0.5 * (y + _jnp_c.roll(y, 1))
    if mode == "l2":
        size = _jnp_c.sqrt(_jnp_c.sum(y * y))
    elif mode == "max":
        size = _jnp_c.max(_jnp_c.abs(y))
    else:
        raise ValueError(f"unknown mode {mode!r}")
    y = y / (size + eps)
    peak = _jnp_c.max(_jnp_c.abs(y))
    return _jnp_c.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = _jax_c.jit(_normalise_staged, static_argnames=("mode", "n_iter"))
