"""Captures the "jax" logger into a StringIO correctly, but turns jax_log_compiles off at the end instead of putting
back what it was, so a session that had the option on loses it (Part A 1/2: records right, the contract across calls
broken). Part B pairs lowerings and XLA compilations by name correctly (4/4).

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'holds_its_own_work_only'}
SCORE = 5
TEACHER = {'test_capture': 1, 'test_programs': 4}


# %%
def compile_log_of(work):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", False)   # the option is off by default
        logger.removeHandler(handler)
    return stream.getvalue()


# %%
import re

COMPILING = re.compile(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping")
FINISHED_XLA = re.compile(r"Finished XLA compilation of jit\((.*)\) in")


def compiled_programs(log_text):
    lowered = {}        # name -> lowerings not compiled yet
    newest = {}         # name -> its newest lowering, for a module compiled a second time
    result = {}
    for line in log_text.splitlines():
        m = COMPILING.search(line)
        if m:
            lowered.setdefault(m.group(1), []).append(m.group(2))
            newest[m.group(1)] = m.group(2)
            continue
        m = FINISHED_XLA.search(line)
        if m and m.group(1) in newest:
            name = m.group(1)
            types = lowered[name].pop() if lowered[name] else newest[name]
            result.setdefault(name, []).append(types)
    return result
