"""Python's builtin `max(values)` for the max mode: right eagerly, but under jit it compares
tracers with `if` and raises. Only the max property fails; the trace properties do not count
calls that raise, and the sum and mean calls show perfect reuse."""
import jax
import jax.numpy as jnp

FAILS = {"max_matches_numpy"}
SCORE = 7
MESSAGE = r"`choose` raised TracerBoolConversionError: a Python `if`"


def choose_reduction(values, mode):
    if mode == "sum":
        return jnp.sum(values)
    if mode == "mean":
        return jnp.mean(values)
    if mode == "max":
        return max(jnp.ravel(values))
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
