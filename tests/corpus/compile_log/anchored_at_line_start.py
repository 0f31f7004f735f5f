"""Reads a record only where it starts the line: right on messages alone, blind to every handler's prefix."""
import io
import logging

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {"lists_the_compiled_programs"}
SCORE = 5


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
_COMPILED = re.compile(r"Finished XLA compilation of jit\((.+)\) in \S+ sec")


def compiled_programs(log_text):
    waiting = {}  # each function's lowered programs XLA has not compiled yet, the latest last
    programs = {}
    for line in log_text.splitlines():
        lowered = _LOWERED.match(line)
        if lowered:
            waiting.setdefault(lowered.group(1), []).append(lowered.group(2))
            continue
        compiled = _COMPILED.match(line)
        if compiled and waiting.get(compiled.group(1)):
            programs.setdefault(compiled.group(1), []).append(waiting[compiled.group(1)].pop())
    return programs
