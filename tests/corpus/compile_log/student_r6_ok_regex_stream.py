"""Attaches a StreamHandler on a StringIO to the "jax" logger, saves and restores jax_log_compiles with
jax.config.update in try/finally, and reads the log with one regex per record kind, pairing each "Finished XLA
compilation" with the latest not-yet-compiled "Compiling" (lowering) record of the same name. Correct.

Written by an independent-student helper that saw only the release notebook."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = set()
SCORE = 6
TEACHER = {'test_capture': 2, 'test_programs': 4}


# %%
def compile_log_of(work):
    """Run work() once with JAX's compile log on; return what the log wrote meanwhile."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    jax_logger = logging.getLogger("jax")
    was_on = jax.config.jax_log_compiles
    jax_logger.addHandler(handler)
    jax.config.update("jax_log_compiles", True)
    try:
        work()
    finally:
        jax.config.update("jax_log_compiles", was_on)
        jax_logger.removeHandler(handler)
        handler.close()
    return buffer.getvalue()


# %%
import re

# "Compiling jit(f) ..." is written when JAX lowers (f.lower(x) writes it with no XLA compilation after it);
# only "Finished XLA compilation of jit(f)" says XLA compiled a program, so pair the two by name.
_LOWERED = re.compile(r"Compiling jit\((?P<name>.*?)\) with global shapes and types (?P<types>.*?)\. Argument mapping: ")
_COMPILED = re.compile(r"Finished XLA compilation of jit\((?P<name>.*)\) in [0-9.eE+-]+ sec")


def compiled_programs(log_text):
    """{function name: [argument types of each program XLA compiled for it, in order]}."""
    waiting = {}   # name -> argument types of lowerings not compiled yet, oldest first
    last = {}      # name -> argument types of its latest lowering
    programs = {}
    for line in log_text.splitlines():
        lowered = _LOWERED.search(line)
        if lowered:
            waiting.setdefault(lowered["name"], []).append(lowered["types"])
            last[lowered["name"]] = lowered["types"]
            continue
        compiled = _COMPILED.search(line)
        if compiled:
            name = compiled["name"]
            if waiting.get(name):
                types = waiting[name].pop()     # the latest lowering of this name not compiled yet
            elif name in last:
                types = last[name]              # a lowering compiled again (other compiler options)
            else:
                continue                        # lowered before this log began: its types are unknown
            programs.setdefault(name, []).append(types)
    return programs
