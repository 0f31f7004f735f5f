"""Lists a program at every `Compiling jit(...)` record, which JAX writes when it lowers: a program lowered and never compiled is listed as compiled."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"compiled_lowerings_only"}
SCORE = 3


# %%
class _KeepRecords(logging.Handler):
    """Keeps the text of every record it is handed."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(f"{record.levelname}:{record.name}:{record.getMessage()}")


def compile_log_of(work):
    keep = _KeepRecords()
    jax_logger = logging.getLogger("jax")
    propagate = jax_logger.propagate
    jax_logger.addHandler(keep)
    jax_logger.propagate = False
    try:
        with jax.log_compiles(True):
            work()
    finally:
        jax_logger.removeHandler(keep)
        jax_logger.propagate = propagate
    return "\n".join(keep.lines) + ("\n" if keep.lines else "")


# %%
import re


_LOWERED = re.compile(r"Compiling jit\((.+?)\) with global shapes and types (\(.*\))\. Argument mapping")


def compiled_programs(log_text):
    programs = {}
    for line in log_text.splitlines():
        found = _LOWERED.search(line)
        if found:
            programs.setdefault(found.group(1), []).append(found.group(2))
    return programs
