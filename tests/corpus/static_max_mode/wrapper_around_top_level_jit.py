"""An unusual correct answer: one jit built at top level, wrapped in a plain function so that
`mode` always reaches it by keyword (the notebook warns that positional and keyword static
arguments are different cache keys). Its traces are perfect; its type is a plain function."""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 6

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
