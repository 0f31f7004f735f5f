"""Part A: every reduction keeps the dtype of `values`, the mean included
(`jnp.mean(values, dtype=values.dtype)`, "a reduction should not change the dtype"). Right for
float32, but an int32 mean is truncated: the mean of `[1, 2]` comes back 1, where the notebook
says it is 1.5. Only the mean property fails."""
import jax
import jax.numpy as jnp

FAILS = {"mean_matches_numpy"}
SCORE = 7
MESSAGE = r"as if it were rounded to the input's dtype"


def choose_reduction(values, mode):
    if mode == "sum":
        return jnp.sum(values, dtype=values.dtype)
    if mode == "mean":
        return jnp.mean(values, dtype=values.dtype)
    if mode == "max":
        return jnp.max(values)
    raise ValueError(f"unknown mode {mode!r}")


choose = jax.jit(choose_reduction, static_argnames=("mode",))


def _normalise_staged(x, mode, n_iter, eps, clip_at):
    y = x
    for _ in range(n_iter):
        y = 0.5 * (y + jnp.roll(y, 1))
    size = jnp.sqrt(jnp.sum(y * y)) if mode == "l2" else jnp.max(jnp.abs(y))
    y = y / (size + eps)
    peak = jnp.max(jnp.abs(y))
    return jnp.where(peak > clip_at, y * (clip_at / peak), y)


normalise_jitted = jax.jit(_normalise_staged, static_argnames=("mode", "n_iter"))
