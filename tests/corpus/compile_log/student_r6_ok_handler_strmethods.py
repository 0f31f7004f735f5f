"""Collects record.getMessage() with its own logging.Handler subclass on the "jax" logger under the
jax.log_compiles(True) context manager, and reads the log with str.find/partition only: a "Compiling" record is a
lowering, a program exists once a "Finished XLA compilation" of the same name follows, matched to the newest
lowering of that name still waiting. Correct.

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
class _Keep(logging.Handler):
    """Keeps every record it is handed, as its message."""

    def __init__(self):
        super().__init__(level=logging.NOTSET)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())   # getMessage fills in the %s arguments


def compile_log_of(work):
    keeper = _Keep()
    logger = logging.getLogger("jax")
    logger.addHandler(keeper)
    try:
        with jax.log_compiles(True):        # puts the option back as it found it on exit
            work()
    finally:
        logger.removeHandler(keeper)
    return "".join(message + "\n" for message in keeper.messages)


# %%
LOWER_MARK = "Compiling jit("
LOWER_TYPES = ") with global shapes and types "
XLA_MARK = "Finished XLA compilation of jit("


def compiled_programs(log_text):
    lowerings = []          # [name, types, compiled?] per "Compiling" record, in log order
    result = {}
    for line in log_text.splitlines():
        at = line.find(LOWER_MARK)
        if at >= 0 and LOWER_TYPES in line:
            name, _, rest = line[at + len(LOWER_MARK):].partition(LOWER_TYPES)
            types = rest.partition(". Argument mapping: ")[0]
            lowerings.append([name, types, False])
            continue
        at = line.find(XLA_MARK)
        if at < 0:
            continue
        name = line[at + len(XLA_MARK):].rpartition(") in ")[0]
        same = [entry for entry in lowerings if entry[0] == name]
        if not same:
            continue
        waiting = [entry for entry in same if not entry[2]]
        entry = waiting[-1] if waiting else same[-1]
        entry[2] = True
        result.setdefault(name, []).append(entry[1])
    return result
