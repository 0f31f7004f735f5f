"""An unusual correct answer: one jit built at top level, wrapped in a plain function so that
`mode` always reaches it by keyword (the notebook warns that positional and keyword static
arguments are different cache keys). Its traces are perfect; its type is a plain function."""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 8

_REDUCTIONS = {"sum": jnp.sum, "mean": jnp.mean, "max": jnp.max}


def choose_reduction(values, mode):
    try:
        reduce = _REDUCTIONS[mode]
    except (KeyError, TypeError):
        raise ValueError(f"unknown mode {mode!r}; use one of {sorted(_REDUCTIONS)}") from None
    return reduce(values)


_compiled = jax.jit(choose_reduction, static_argnames=("mode",))


def choose(values, mode):
    return _compiled(values, mode=mode)


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
