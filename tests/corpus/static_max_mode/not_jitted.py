"""`choose` is `choose_reduction` itself, never compiled: right values, no trace to reuse.

Eager `jnp` calls trace small programs of JAX's own (`_reduce_sum`, `_reduce_max`...); they
must not count as traces of the student's code, or this would pass the trace checks."""
import jax.numpy as jnp

FAILS = {"values_only_no_retrace", "traces_bounded_by_signatures"}
SCORE = 6
MESSAGE = r"JAX traced none of your code: it is not compiled with `jax\.jit`"


def choose_reduction(values, mode):
    if mode == "sum":
        return jnp.sum(values)
    if mode == "mean":
        return jnp.mean(values)
    if mode == "max":
        return jnp.max(values)
    raise ValueError(f"unknown mode {mode!r}")


choose = choose_reduction


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
