"""Literal student (run 3, on the final release): Part A adds a StringIO handler to the root logger (WARNING level), turns `jax_log_compiles` on for one `work()` call and restores it; Part B collects, per function, the types from each "Compiling jit(NAME) with global shapes and types (...). Argument mapping" record.

Written by a literal-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"compiled_lowerings_only"}
SCORE = 3


# %%
def compile_log_of(work):
    # The notebook: JAX writes the compile log "through Python's standard `logging` module,
    # at the level of a warning (`WARNING`)". Keep what it writes in a StringIO.
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    # "JAX's option `jax_log_compiles` is the same after the call as it was before"
    before = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)
    try:
        work()  # "calls `work()` once"
    finally:
        jax.config.update("jax_log_compiles", before)
        root.removeHandler(handler)
    return buffer.getvalue()


# %%
import re

_COMPILING = re.compile(
    r"Compiling jit\((?P<name>.*?)\) with global shapes and types (?P<types>\(.*?\))\. Argument mapping"
)


def compiled_programs(log_text):
    # Each "Compiling jit(NAME) with global shapes and types (...). Argument mapping: ..." record
    # names the function and the argument types of one program, perhaps behind a prefix.
    programs = {}
    for line in log_text.splitlines():
        m = _COMPILING.search(line)
        if m:
            programs.setdefault(m.group("name"), []).append(m.group("types"))
    return programs
