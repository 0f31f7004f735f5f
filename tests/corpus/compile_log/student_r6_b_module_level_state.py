"""Part A is right (Handler subclass, option via jax.log_compiles). Part B parses correctly but keeps its lowerings and
its result in module-level dicts that are never emptied, so every call returns the programs of all logs read so far:
the second log's `<lambda>` or `broadcast_in_dim` list also holds the first log's programs (Part B 0/4: only the first
call is right; later lists hold programs this session never compiled).

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
class KeepRecords(logging.Handler):
    def __init__(self):
        super().__init__()
        self.kept = []

    def emit(self, record):
        self.kept.append(f"[{record.name}] {record.getMessage()}")


def compile_log_of(work):
    keeper = KeepRecords()
    logging.getLogger("jax").addHandler(keeper)
    try:
        with jax.log_compiles(True):
            work()
    finally:
        logging.getLogger("jax").removeHandler(keeper)
    return "\n".join(keeper.kept)


# %%
import re

PENDING = {}     # function name -> lowerings not compiled yet
NEWEST = {}      # function name -> its newest lowering
PROGRAMS = {}    # the answer


def compiled_programs(log_text):
    for line in log_text.splitlines():
        m = re.search(r"Compiling jit\((.*?)\) with global shapes and types (.*?)\. Argument mapping", line)
        if m:
            PENDING.setdefault(m.group(1), []).append(m.group(2))
            NEWEST[m.group(1)] = m.group(2)
            continue
        m = re.search(r"Finished XLA compilation of jit\((.*)\) in ", line)
        if m and m.group(1) in NEWEST:
            name = m.group(1)
            PROGRAMS.setdefault(name, []).append(PENDING[name].pop() if PENDING[name] else NEWEST[name])
    return PROGRAMS
