"""An unusual correct answer, from the adversarial pass: `repaired` keeps one
`jax.jit(repaired_branch).lower(values, gain).compile()` executable per signature, with
`lax.cond` inside. An ahead-of-time executable cannot run op by op; the grader judges its
compiled result alone instead of failing it."""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 6


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


def repaired_branch(values, gain):
    return jax.lax.cond(gain > 1.0, lambda v: jnp.sum(v**2), jnp.sum, values)


_jitted = jax.jit(repaired_branch)
_executables = {}


def repaired(values, gain):
    key = (jax.typeof(values), jax.typeof(gain))
    if key not in _executables:
        _executables[key] = _jitted.lower(values, gain).compile()
    return _executables[key](values, gain)
