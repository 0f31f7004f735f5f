"""Part A is right (StringIO handler on "jax", option restored in finally). Part B pairs compilations with lowerings
correctly but skips argument types already in a function's list, thinking a repeat is the same program; a committed
array, a new static argument, jax.clear_caches() or two functions of the same name make XLA compile a second program
with the same types, which goes missing (Part B 2/4: wrong lists on such sessions, nothing uncompiled listed). TEACHER's Part B is the helper's judgement rescaled from the 2 + 2 it was told to the graders' 1 + 3 (the same concern lost).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'lists_the_compiled_programs'}
SCORE = 5
TEACHER = {'test_capture': 2, 'test_programs': 3}


# %%
def compile_log_of(work):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(name)s - %(message)s"))
    jax_logger = logging.getLogger("jax")
    setting = jax.config.jax_log_compiles
    jax_logger.addHandler(handler)
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", setting)
        jax_logger.removeHandler(handler)
    return stream.getvalue()


# %%
import re


def compiled_programs(log_text):
    lowered = {}
    newest = {}
    programs = {}
    for line in log_text.splitlines():
        low = re.search(r"Compiling jit\((.+?)\) with global shapes and types (.+?)\. Argument mapping", line)
        if low:
            lowered.setdefault(low[1], []).append(low[2])
            newest[low[1]] = low[2]
            continue
        done = re.search(r"Finished XLA compilation of jit\((.+)\) in ", line)
        if done and done[1] in newest:
            name = done[1]
            types = lowered[name].pop() if lowered[name] else newest[name]
            listed = programs.setdefault(name, [])
            if types not in listed:            # same types = same program, list it once
                listed.append(types)
    return programs
