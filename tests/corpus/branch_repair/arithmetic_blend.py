"""Blends the two sides with a 0/1 weight, `w * sum(v**2) + (1 - w) * sum(v)`, instead of
choosing with `lax.cond` or `jnp.where`. Equal for moderate values; where the squares overflow
to inf on the side not taken, 0 * inf is nan. The threshold itself is right."""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch"}
SCORE = 4
MESSAGE = r"`repaired` run op by op \(under `jax.disable_jit\(\)`\) gives the wrong result for a float32 batch and a gain at or below the threshold 1\.0\. The side not taken overflows to inf here: a choice never looks at it, but a 0/1-weighted blend computes 0 \* inf, which is nan\.\n\s+Example:\s+repaired\(float32\[3\] \[3e\+19, 1e\+19, -2\.0\], float32\[\] 0\.5\)\n\s+Got:\s+nan"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


@jax.jit
def repaired(values, gain):
    w = (gain > 1.0).astype(jnp.float32)
    return w * jnp.sum(values**2) + (1.0 - w) * jnp.sum(values)
