"""Part A is right (StringIO handler on "jax", option restored in finally). Part B's types pattern
`types (\\(.*?\\))` stops at the first closing parenthesis, so "(ShapedArray(float32[3]), ...)" comes out as
"(ShapedArray(float32[3])" and no list matches what the log wrote (Part B 0/4: every program's types are wrong, even
though lowerings and compilations are paired correctly).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'compiled_lowerings_only', 'lists_the_compiled_programs'}
SCORE = 2
TEACHER = {'test_capture': 2, 'test_programs': 0}


# %%
def compile_log_of(work):
    captured = io.StringIO()
    handler = logging.StreamHandler(captured)
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    was_on = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", was_on)
        logger.removeHandler(handler)
    return captured.getvalue()


# %%
import re


def compiled_programs(log_text):
    lowered, newest, programs = {}, {}, {}
    for line in log_text.splitlines():
        m = re.search(r"Compiling jit\((.*?)\) with global shapes and types (\(.*?\))", line)
        if m:
            lowered.setdefault(m.group(1), []).append(m.group(2))
            newest[m.group(1)] = m.group(2)
            continue
        m = re.search(r"Finished XLA compilation of jit\((.*)\) in", line)
        if m and m.group(1) in newest:
            name = m.group(1)
            programs.setdefault(name, []).append(lowered[name].pop() if lowered[name] else newest[name])
    return programs
