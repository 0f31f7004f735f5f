"""Silences the error by making `gain` static: a new program per gain, and 0-d array gains are rejected.

The boundary is judged with Python-float gains, which a static gain accepts; the 0-d array
gain it rejects belongs to the value property.
"""
import jax
import jax.numpy as jnp

FAILS = {"repaired_matches_branch", "gain_stays_dynamic"}
SCORE = 2
MESSAGE = r"traced again \(1 new trace\) at a signature it had already met.*A static `gain` compiles one program per gain value"


def broken_branch(values, gain):
    if gain > 1.0:
        return jnp.sum(values**2)
    return jnp.sum(values)


repaired = jax.jit(broken_branch, static_argnames=("gain",))
