"""Reads a record only where it starts the line: right on messages alone, blind to every handler's prefix."""
import io
import logging
import re

import jax
import jax.numpy as jnp
import numpy as np

FAILS = {'counts_traces', 'counts_compiles'}
SCORE = 2


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
_TRACED = re.compile(r"Finished tracing (.+?) for jit in \S+ sec")
_COMPILED = re.compile(r"Finished XLA compilation of jit\((.+)\) in \S+ sec")


def compile_counts(log_text):
    counts = {}
    for line in log_text.splitlines():
        for which, pattern in enumerate((_TRACED, _COMPILED)):
            found = pattern.match(line)
            if found:
                traces, compiles = counts.get(found.group(1), (0, 0))
                counts[found.group(1)] = (traces + (which == 0), compiles + (which == 1))
    return counts
