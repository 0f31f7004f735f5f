"""An unusual correct answer, from the adversarial pass: `masked_score` keeps one
`jax.jit(masked_objective).lower(values, mask).compile()` executable per signature. An
ahead-of-time executable cannot run op by op ("Disable jit is not supported in the AOT
path"); the grader then judges its compiled result alone instead of failing it."""
import jax
import jax.numpy as jnp

FAILS = set()
SCORE = 8


def pad_batch(values, size):
    values = jnp.asarray(values, jnp.float32)
    n = values.shape[0]
    if n > size:
        raise ValueError(f"{n} values do not fit in {size} rows")
    return jnp.zeros(size, jnp.float32).at[:n].set(values), jnp.arange(size) < n


def masked_objective(values, mask):
    return jnp.sum(jnp.where(mask, (values + 1.0) ** 2, 0.0))


_jitted = jax.jit(masked_objective)
_executables = {}


def masked_score(values, mask):
    key = (jax.typeof(values), jax.typeof(mask))
    if key not in _executables:
        _executables[key] = _jitted.lower(values, mask).compile()
    return _executables[key](values, mask)

# Part C, answered correctly (this file is about another part).
import jax as _jax_for_gradient


def masked_loss(t, values, mask):
    safe = _jax_for_gradient.numpy.where(mask, values, 1.0)
    per_row = (_jax_for_gradient.numpy.log(safe) - t) ** 2
    return _jax_for_gradient.numpy.sum(_jax_for_gradient.numpy.where(mask, per_row, 0.0)) / _jax_for_gradient.numpy.sum(mask)


loss_and_slope = _jax_for_gradient.jit(_jax_for_gradient.value_and_grad(masked_loss))
