"""Part A is right (StreamHandler on the "jax" logger, option saved and restored in try/finally). Part B takes the
record that literally says "Compiling jit(f) with global shapes and types ..." as XLA's compilation, but JAX writes it
when it lowers: a `.lower()` never compiled is listed, and a lowering compiled after a later program comes out in
lowering order (Part B 1/4: right on sessions of plain calls, 0 for "nothing listed that XLA never compiled").

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'compiled_lowerings_only'}
SCORE = 3
TEACHER = {'test_capture': 2, 'test_programs': 1}


# %%
def compile_log_of(work):
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    logger = logging.getLogger("jax")
    prior = jax.config.jax_log_compiles
    logger.addHandler(handler)
    try:
        jax.config.update("jax_log_compiles", True)
        work()
    finally:
        jax.config.update("jax_log_compiles", prior)
        logger.removeHandler(handler)
    return out.getvalue()


# %%
import re

COMPILE_RECORD = re.compile(r"Compiling jit\((?P<name>.*?)\) with global shapes and types (?P<types>.*?)\. Argument mapping")


def compiled_programs(log_text):
    programs = {}
    for line in log_text.splitlines():
        m = COMPILE_RECORD.search(line)
        if m:
            programs.setdefault(m["name"], []).append(m["types"])
    return programs
