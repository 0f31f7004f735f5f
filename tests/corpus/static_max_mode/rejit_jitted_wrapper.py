"""`choose` looks jitted (it has trace and lower) but re-jits a fresh lambda on every call.

Its class does not matter: measured, it traces again at every repeated call, and that is what
the trace checks name."""
import jax

FAILS = {"values_only_no_retrace", "traces_bounded_by_signatures"}
SCORE = 6
MESSAGE = r"`choose` traced again \(1 new trace\) at a signature it had already met .*It traces on every call"


def choose_reduction(values, mode):
    if mode == "sum":
        return values.sum()
    if mode == "mean":
        return values.mean()
    if mode == "max":
        return values.max()
    raise ValueError("unknown mode")


class _Choose:
    """Looks like a jitted function (has trace and lower) but re-jits per call."""

    def __call__(self, values, mode):
        return jax.jit(lambda v: choose_reduction(v, mode))(values)

    def trace(self, *args, **kwargs):
        return jax.jit(choose_reduction, static_argnames=("mode",)).trace(*args, **kwargs)

    def lower(self, *args, **kwargs):
        return jax.jit(choose_reduction, static_argnames=("mode",)).lower(*args, **kwargs)


choose = _Choose()


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
