"""Correct, unusually: a table of reductions and a membership test before the lookup. A mode
padded with whitespace is not a key of the table, so it raises, as the notebook asks; the
message names the mode with its padding visible (`repr`)."""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 8

REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max}


def choose_reduction(values, mode):
    try:
        known = mode in REDUCTIONS
    except TypeError:  # an unhashable mode (a list) is not a mode either
        known = False
    if not known:
        raise ValueError(f"unknown reduction mode {mode!r}; choose one of {sorted(REDUCTIONS)}")
    return REDUCTIONS[mode](values)


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
